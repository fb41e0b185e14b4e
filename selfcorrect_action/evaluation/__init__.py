"""Judging an execution: layer 1 (execution), layer 2 (contract), and failure classification."""
