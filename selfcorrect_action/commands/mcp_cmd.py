"""`selfcorrect mcp`: the MCP server over stdio (selfcorrect_action/mcp/), once what it was
given is checked. The SDK is an optional extra: without it the command says how to get it
instead of failing on an import. Its runs are kept in the history folder (mcp/run_folder.py),
never under the root: without a history folder it does not start."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from selfcorrect_action.errors import UsageError
from selfcorrect_action.runs.settings import RunSettings

INSTALL_HINT = "pip install 'selfcorrect-action[mcp]' (the MCP SDK is an optional extra)"


def serve_mcp(*, root: Path, settings: RunSettings, max_runs: int,
              environ: Mapping[str, str]) -> int:
    if not root.is_dir():
        raise UsageError(f"--root {root}: not a folder",
                         hint="name the folder whose files the server's clients may use")
    if root.resolve() == Path(root.resolve().anchor):
        # Clients often start servers in / (Claude Desktop does): a default of "." there
        # would hand the client every file of the machine.
        raise UsageError(f"--root {root}: is the whole file system",
                         hint="name the project's folder: --root /path/to/project")
    if max_runs < 1:
        raise UsageError(f"--max-runs {max_runs}: at least 1 run must be allowed at once",
                         hint="1 on a machine with two cores; more where there are more")
    if settings.mlflow_traces and max_runs > 1:
        raise UsageError("--mlflow-traces traces one run at a time (MLflow's tracking URI "
                         "for traces is the process's)", hint="use --max-runs 1")
    if settings.history is None:
        # Not the root instead: that is the user's repository (issue 38).
        raise UsageError("the server keeps its runs in the history folder, and there is "
                         "none: neither HOME, XDG_DATA_HOME nor SELFCORRECT_HISTORY is set",
                         hint="pass --history DIR (or set SELFCORRECT_HISTORY=DIR in the "
                         "server's env): a folder outside the project")
    try:
        from selfcorrect_action.mcp.run_folder import runs_folder
        from selfcorrect_action.mcp.server import serve
        from selfcorrect_action.mcp.tools import ServerConfig
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] != "mcp":
            raise
        raise UsageError(f"`selfcorrect mcp` needs the mcp package ({exc})",
                         hint=INSTALL_HINT) from exc
    return serve(ServerConfig(root=root.resolve(), settings=settings, environ=environ,
                              runs=runs_folder(settings.history, root)), max_runs=max_runs)
