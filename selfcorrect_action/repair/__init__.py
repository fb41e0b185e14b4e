"""Repository repair (`kind: repair`): make failing tests pass in an existing repository by
rewriting whole files the spec allows, judged by the repository's own test suite run in the
sandbox against a baseline taken before any model call (docs/repair.md)."""
