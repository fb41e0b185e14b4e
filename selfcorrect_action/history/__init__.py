"""The run history: every run kept in one SQLite database (its run.json and the pictures
and tables its attempts drew), to list, show, prune and view later. Written once per run,
at its end, by runs/pipeline.py, whichever front end started it."""
