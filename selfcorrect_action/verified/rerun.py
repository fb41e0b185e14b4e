"""What `selfcorrect verify` re-runs, read from where a verdict is recorded, and the re-run
itself (issue 36, item 6). reproduce.py compares the two.

- A verification record (`.selfcorrect/lock/<task>.json`), or a spec whose record it is:
  the script committed at the spec's output, the spec, inputs and tests as the repository
  holds them now, the contract and the model's tests as recorded (reverify.py).
- A run.json (a run folder, or a run of the history): the passing attempt's code, the run's
  spec, contract and tests as it recorded them; the inputs its spec names, from the
  repository, since a run folder keeps none.

Reading the repository and building the re-run's state come first; the engine, the image
and the sandbox are the thin part at the bottom.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action import __version__
from selfcorrect_action.choices import Runtime
from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import FileMissing, FileProblem, read_bounded
from selfcorrect_action.loop.deps import utc_now
from selfcorrect_action.loop.given import given_attempt
from selfcorrect_action.loop.state import Attempt, RunState, Status
from selfcorrect_action.records import evolve
from selfcorrect_action.report.run_json import load_run_json
from selfcorrect_action.sandbox import engine
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.egress.policy import require_credentials, settings_from_environ
from selfcorrect_action.sandbox.identity import image_identity
from selfcorrect_action.sandbox.image import ensure_image
from selfcorrect_action.sandbox.prebuilt import require_image
from selfcorrect_action.spec import LoadedSpec, load_spec
from selfcorrect_action.spec_files import repo_root
from selfcorrect_action.verified.fingerprint import (
    MAX_FILE_BYTES,
    file_digest,
    fingerprint,
    sha256_bytes,
)
from selfcorrect_action.verified.record import (
    LOCK_DIR,
    MAX_RECORD_BYTES,
    RECORD_FORMAT,
    FileDigest,
    ImageRecord,
    VerifiedRecord,
    load_record,
    lock_path,
    relative,
)
from selfcorrect_action.verified.reproduce import Digests, Recorded, Rerun
from selfcorrect_action.verified.reverify import reverify, reverify_state

Progress = Callable[[str], None]
MAX_RUN_JSON_BYTES = 128 * 1024 * 1024  # as the history reads one (history/folders.py)


@dataclass(frozen=True)
class Subject:
    """A recorded verdict and what re-runs it: `state` holds the script as its only
    attempt, no judge; `digests` are what the re-run is given."""

    recorded: Recorded
    loaded: LoadedSpec
    state: RunState
    digests: Digests


def is_record(path: Path) -> bool:
    """Whether `path` is a verification record (by its `format`), rather than a run.json."""
    try:
        raw = json.loads(read_bounded(path, MAX_RECORD_BYTES))
    except (FileProblem, ValueError):
        return False
    return isinstance(raw, dict) and raw.get("format") == RECORD_FORMAT


def from_spec(path: Path, *, runtime: Runtime) -> Subject:
    loaded = load_spec(path)
    try:
        where = lock_path(relative(loaded.root, path))
    except ValueError as exc:
        raise UsageError(f"{path}: the spec is outside its repository ({loaded.root})",
                         hint="verify a spec of the repository you are in") from exc
    record = load_record(loaded.root / where, shown=where)
    if record is None:
        raise UsageError(f"{path}: no verification record ({where})",
                         hint="a run published by the action (or `selfcorrect check "
                         "--update-lock`) writes it; or verify a run: `selfcorrect verify "
                         "RUN`, a run id or a run.json")
    return _from_record(loaded, record, where, runtime=runtime)


def from_record(path: Path, *, runtime: Runtime) -> Subject:
    record = load_record(path)
    if record is None:
        raise UsageError(f"{path}: no such file")
    root = record_root(path)
    return _from_record(record_spec(root, record, str(path)), record, str(path),
                        runtime=runtime)


def record_spec(root: Path, record: VerifiedRecord, source: str) -> LoadedSpec:
    """The spec a record names: its file, or for a script born of an issue (`issue #12`,
    no spec file) the spec its committed run.json holds."""
    spec = root / record.spec
    if spec.is_file():
        return load_spec(spec, root=root)
    if not record.run_record:
        raise UsageError(f"{source}: its spec {record.spec} is not in the repository ({spec})",
                         hint="verify from the repository the record belongs to")
    try:
        text = read_bounded(root / record.run_record, MAX_RUN_JSON_BYTES)
    except FileProblem as exc:
        raise UsageError(f"{source}: the run.json that holds its spec, {record.run_record}: "
                         f"{exc.problem}", hint="verify from the repository the record "
                         "belongs to, with the run records it committed") from exc
    state = load_run_json(text.decode("utf-8", errors="replace"))
    return LoadedSpec(state.spec, record.spec, root.resolve())


def record_root(path: Path) -> Path:
    """The repository a record belongs to: the folder holding `.selfcorrect/lock/`."""
    folder = path.resolve().parent
    if folder.as_posix().endswith(f"/{LOCK_DIR}"):
        return folder.parents[len(Path(LOCK_DIR).parts) - 1]
    return repo_root(folder) or Path.cwd()


def _from_record(loaded: LoadedSpec, record: VerifiedRecord, source: str, *,
                 runtime: Runtime) -> Subject:
    if loaded.spec.kind not in ("script", "function"):
        raise UsageError(f"{loaded.source}: a {loaded.spec.kind} spec has no script to verify")
    script = relative(loaded.root, loaded.output_path)
    try:
        data = read_bounded(loaded.output_path, MAX_FILE_BYTES)
    except FileMissing as exc:
        raise UsageError(f"{source}: the script {script} is not in the repository "
                         f"({loaded.output_path})", hint="restore it from git, or run the "
                         "spec again to generate it") from exc
    except FileProblem as exc:
        raise UsageError(f"{source}: the script {script}: {exc.problem}",
                         hint=exc.hint) from exc
    try:
        now = fingerprint(loaded)  # load_spec found every input and test there
    except FileProblem as exc:
        raise UsageError(f"{source}: {exc.problem}", hint=exc.hint) from exc
    code = data.decode("utf-8", errors="replace")
    digests = Digests(script=FileDigest(path=script, sha256=sha256_bytes(data)),
                      inputs=now.inputs, tests=now.tests, prompt_sha256=now.prompt_sha256,
                      fields_sha256=now.fields_sha256)
    recorded = Recorded(
        source=source, run_id=record.run_id,
        digests=Digests(script=record.script, inputs=tuple(record.inputs),
                        tests=tuple(record.tests), prompt_sha256=record.prompt_sha256,
                        fields_sha256=record.fields_sha256),
        image=record.image, selfcorrect_version=record.selfcorrect_version,
        judge=record.models.get("judge", "a model") if loaded.spec.judge else "")
    return Subject(recorded, loaded, reverify_state(loaded, record, code, runtime=runtime),
                   digests)


def from_run(state: RunState, source: str, *, root: Path, runtime: Runtime | None) -> Subject:
    """`runtime` None: the run's own."""
    attempt = passing_attempt(state, source)
    loaded = LoadedSpec(state.spec, state.spec_source, root.resolve())
    script = FileDigest(path=state.spec.output or state.output_name,
                        sha256=sha256_bytes(attempt.code.encode("utf-8")))
    tests = tuple(FileDigest(path=name, sha256=sha256_bytes(text.encode("utf-8")))
                  for name, text in sorted(state.tests.items()))
    recorded = Recorded(
        source=source, run_id=state.run_id,
        digests=Digests(script=script, inputs=recorded_inputs(state), tests=tests),
        image=recorded_image(state), image_id=state.image.image_id if state.image else "",
        runtime=state.runtime, tests_run=tuple(attempt.tests),
        judge=state.models.judge if attempt.judge is not None else "",
        selfcorrect_version=state.selfcorrect_version)
    digests = Digests(script=script, inputs=input_digests(loaded, source), tests=tests)
    return Subject(recorded, loaded, rerun_state(state, attempt, runtime or state.runtime),
                   digests)


def recorded_inputs(state: RunState) -> tuple[FileDigest, ...] | None:
    """The inputs' digests as the run read them; None for a run.json written before schema
    9, which has no version either (every run since records its version)."""
    if not state.selfcorrect_version:
        return None
    return tuple(FileDigest(path=item.path, sha256=item.sha256)
                 for item in state.input_digests)


def recorded_image(state: RunState) -> ImageRecord | None:
    image = state.image
    if image is None:
        return None
    return ImageRecord(tag=image.tag, context_hash=image.context_hash,
                       packages_digest=image.packages_digest)


def passing_attempt(state: RunState, source: str) -> Attempt:
    attempt = state.last
    if state.spec.kind not in ("script", "function"):
        raise UsageError(f"{source}: a {state.spec.kind} run has no script to verify",
                         hint="verify runs of script and function specs")
    if state.status is not Status.PASSED or attempt is None or not attempt.code:
        raise UsageError(f"{source}: run {state.run_id} did not pass ({state.status}): it "
                         "recorded no verdict of a script to reproduce",
                         hint="verify a run that passed")
    return attempt


def run_root(state: RunState, cwd: Path) -> Path:
    """The repository a run's inputs are read from: its spec's, when the spec file is
    there (seen from `cwd`), else the repository `cwd` is in, else `cwd`."""
    spec = cwd / state.spec_source
    if spec.is_file():
        return repo_root(spec.resolve().parent) or cwd
    return repo_root(cwd.resolve()) or cwd


def input_digests(loaded: LoadedSpec, source: str) -> tuple[FileDigest, ...]:
    """The inputs the run's spec names, as the repository holds them now."""
    found = []
    for name, path in zip(loaded.spec.inputs, loaded.input_paths, strict=True):
        try:
            found.append(file_digest(loaded.root, path))
        except FileMissing as exc:
            raise UsageError(
                f"{source}: the input {name} that the run's spec names is not in the "
                f"repository ({path}); a run folder keeps no inputs",
                hint=f"run `selfcorrect verify` in the repository the run was made in (the "
                f"inputs are read from {loaded.root}), or restore {name}") from exc
        except FileProblem as exc:
            raise UsageError(f"{source}: the input {name}: {exc.problem}",
                             hint=exc.hint) from exc
    return tuple(found)


def rerun_state(state: RunState, attempt: Attempt, runtime: Runtime) -> RunState:
    """A run's verdict to reach again: its spec (no judge), contract and tests, the passing
    attempt's code as attempt 1."""
    return RunState(
        run_id=uuid.uuid4().hex[:12], started_at=utc_now(), spec_source=state.spec_source,
        spec=evolve(state.spec, {"judge": False}),
        user_contract_fields=state.user_contract_fields, output_name=state.output_name,
        contract=state.contract, tests=dict(state.tests),
        tests_written_by_plan=state.tests_written_by_plan, inputs=list(state.inputs),
        models=state.models, runtime=runtime, attempts=[given_attempt(attempt.code)])


# ---- The engine, the image and the sandbox: thin, each failure translated below us. ----


def rerun(subject: Subject, *, environ: Mapping[str, str], sandbox_image: str | None,
          on_progress: Progress) -> Rerun:
    """The subject's script through the loop's execute and evaluate steps, in the image a
    run would use now (`sandbox_image`, else the one built from sandbox/), whose identity
    is read to compare with the recorded one."""
    state = subject.state
    require_credentials(state.contract.network, environ)
    started = time.monotonic()
    with contextlib.closing(engine.connect(environ)) as client:
        image = (require_image(client, sandbox_image, progress=on_progress) if sandbox_image
                 else ensure_image(client, progress=on_progress))
        identity = image_identity(client, image, environ=environ)
        with tempfile.TemporaryDirectory(prefix="selfcorrect-verify-") as scratch, \
                Sandbox(client, image, egress=settings_from_environ(environ)) as sandbox:
            on_progress(f"running {state.output_name} again in {image} ({state.runtime})")
            done = reverify(state, subject.loaded, sandbox, Path(scratch),
                            on_event=lambda step, message: on_progress(message))
    assert done.last is not None  # reverify judges the one attempt it was given
    return Rerun(digests=subject.digests, runtime=state.runtime, attempt=done.last,
                 selfcorrect_version=__version__, image_id=identity.image_id,
                 image=ImageRecord(tag=identity.tag, context_hash=identity.context_hash,
                                   packages_digest=identity.packages_digest),
                 duration_ms=int((time.monotonic() - started) * 1000))
