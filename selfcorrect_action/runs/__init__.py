"""Building and running one task the same way from every front end (`selfcorrect run`, the
GitHub Action, the benchmarks): settings, model policy, the initial state, the wired-up
session (LLM, Docker, sandbox), publishing the outcome, and its exit code."""
