"""Every write the action makes to GitHub, through one door (door.py): the plan of a
finished run as data (plan.py, build.py), applied at once (apply.py) or saved for a later
job (store.py) and applied there against its own event (targets.py, publish.py)."""
