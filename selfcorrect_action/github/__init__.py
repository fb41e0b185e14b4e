"""The GitHub side: events turned into typed triggers, who may trigger, the issue body as a
task spec, every write computed as data (plan.py) and applied in one place (apply.py), over
one seam (forge.py) with PyGithub behind it (pygithub_forge.py). Nothing outside this
package imports PyGithub."""
