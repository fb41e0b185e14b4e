"""The loop's steps for `kind: repair` (docs/repair.md): a baseline before any model call,
a plan that locates the fault, whole-file generations, a reviewer before each run, the
repository's own test command in the sandbox, and a verdict against the baseline. The
orchestrator runs them in the same order and with the same reflect as the other kinds."""
