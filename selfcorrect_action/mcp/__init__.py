"""`selfcorrect mcp`: the loop, the sandbox and the validator as MCP tools over stdio (the
optional `mcp` extra). server.py speaks the protocol; tools.py does the work through the
Python API (selfcorrect_action.api); jobs.py runs it on threads, at most N runs at once."""
