"""`selfcorrect bench humaneval`: HumanEval through selfcorrect's own sandbox and evaluation,
side by side with the reference harness (docs: benchmarks/humaneval.md)."""
