"""The attempt viewer: one self-contained HTML page per run, rendered from run.json by the
view-model AUDIT.md uses (report/view.py), with the pictures and tables the attempts made,
and a static site of the run history (an index with filters, and the pages)."""
