"""One module per CLI verb; each takes typed values and returns an exit code."""
