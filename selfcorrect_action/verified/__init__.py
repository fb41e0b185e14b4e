"""Scripts that stay verified (issue 36): the record of what a run verified, one file per
spec (record.py), the repository's state as digests (fingerprint.py), what changed since
(changes.py)."""
