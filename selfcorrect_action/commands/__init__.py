"""One module per CLI verb; each exposes a function taking typed values and returning an exit code."""
