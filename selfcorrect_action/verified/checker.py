"""`selfcorrect check` as a function (issue 36): for each spec, its record against the
repository's digests; a change re-verified in the sandbox with no model call; with
`update_lock`, a passing re-verification recorded; with `judges` (--judge), a stale spec's
passing re-verification judged with its new prompt (check_judge.py). Every spec is looked at
first (digests, the image), then the re-verifications run: what --judge will ask is said,
and refused when it cannot be asked, before anything runs. The decisions are check.py's;
this module reads the files, runs the sandbox (check_sandbox.py) and writes records.

Paths are repository-relative and `/`-separated, as records name them. What only a
re-verification needs (the loop's steps) is imported when one runs: a check of specs that
all match starts no container and should not pay for the loop's imports either (issue
36's target: 50 verified specs in under 2 s)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from selfcorrect_action.choices import Runtime
from selfcorrect_action.errors import SpecError, UsageError
from selfcorrect_action.fileio import FileProblem, read_bounded
from selfcorrect_action.redact import redact, secrets_from_env
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.docker_engine import DockerEngine
from selfcorrect_action.sandbox.egress.policy import require_credentials, secret_values
from selfcorrect_action.sandbox.models import Limits
from selfcorrect_action.spec import LoadedSpec, load_repo_spec
from selfcorrect_action.verified.answered import answered_here
from selfcorrect_action.verified.changes import Change, changes
from selfcorrect_action.verified.check import (
    CheckStatus,
    after_reverify,
    asks_judge,
    first_look,
    may_update_lock,
)
from selfcorrect_action.verified.check_judge import (
    JudgeModels,
    announcement,
    judge_result,
    said_of,
)
from selfcorrect_action.verified.check_sandbox import CheckSandbox
from selfcorrect_action.verified.fingerprint import MAX_FILE_BYTES, Fingerprint, fingerprint
from selfcorrect_action.verified.record import (
    LOCK_DIR,
    VerifiedRecord,
    load_record,
    lock_path,
    save_record,
)
from selfcorrect_action.verified.results import CheckResult
from selfcorrect_action.verified.script_lines import script_lines

if TYPE_CHECKING:
    from selfcorrect_action.loop.deps import Executor
    from selfcorrect_action.loop.state import RunState

Say = Callable[[str], None]
ISSUE = "issue #"


BaseRecords = Callable[[str], "VerifiedRecord | None"]


@dataclasses.dataclass(frozen=True)
class _Reverify:
    """A spec the first look sends to the sandbox, and what that look found."""

    loaded: LoadedSpec
    record: VerifiedRecord | None
    now: Fingerprint
    found: list[Change]
    base: CheckResult


def check_specs(root: Path, specs: Sequence[str], *, records: Sequence[str] = (),
                update_lock: bool = False, runtime: Runtime = "runc",
                sandbox_image: str | None = None, environ: Mapping[str, str] | None = None,
                on_progress: Say | None = None, engine: DockerEngine | None = None,
                stoppable: Callable[[Sandbox], Executor] | None = None,
                base_records: BaseRecords | None = None, judges: JudgeModels | None = None,
                own_records: bool = False) -> list[CheckResult]:
    """Each of `specs` (its record at lock_path), then each of `records` that no spec of
    `specs` owns: its spec checked through it when the file is there, else orphaned.
    `stoppable`: what a re-verification's sandbox is wrapped in (a cancel from another
    thread kills its script: runs/stoppable.py). `base_records`: a pull request's check
    (issue 36, item 3): each record is read from the base branch (record path -> record),
    never from the pull request, which may have changed it together with its script;
    every spec is re-verified, with at most the network its base record allowed.
    `judges`: --judge, the model a stale spec's judge is asked through. `own_records`: a
    pull request's check, where a regeneration's record in it may answer a new prompt
    (verified/answered.py)."""
    environ = os.environ if environ is None else environ
    say = on_progress or (lambda line: None)
    found_specs, early = record_targets(root, specs, records)
    targets = [(spec, lock_path(spec)) for spec in specs] + found_specs
    with CheckSandbox(runtime=runtime, environ=environ, say=say, engine=engine,
                      sandbox_image=sandbox_image, stoppable=stoppable) as sandbox:
        checker = _Checker(root, sandbox, environ, say, update_lock=update_lock,
                           base_records=base_records, judges=judges,
                           own_records=own_records)
        looks = [checker.look(spec, record) for spec, record in targets]
        checker.prepare_judges(looks)
        results = [checker.finish(look) for look in looks]
    for result in early:
        say(f"{result.spec}: {result.status.value} ({result.record})")
    return results + early


def all_records(root: Path) -> list[str]:
    """Every record under .selfcorrect/lock/."""
    return sorted(f"{LOCK_DIR}/{path.name}" for path in (root / LOCK_DIR).glob("*.json")
                  if path.is_file())


def is_record_path(path: str) -> bool:
    pure = PurePosixPath(path)
    return pure.parent.as_posix() == LOCK_DIR and pure.suffix == ".json"


def record_targets(root: Path, specs: Sequence[str], records: Sequence[str]
                   ) -> tuple[list[tuple[str, str]], list[CheckResult]]:
    """The records no spec of `specs` owns: (spec, record) for those whose spec is there
    (a spec outside the tasks glob), results for the orphaned and the unreadable."""
    owned = {lock_path(spec) for spec in specs}
    targets: list[tuple[str, str]] = []
    results: list[CheckResult] = []
    for path in records:
        if path in owned:
            continue
        try:
            record = load_record(root / path, shown=path)
        except SpecError as exc:
            results.append(_invalid(path, path, exc.problems))
            continue
        if record is None:
            results.append(_invalid(path, path, [f"{path}:1:1: no such record"]))
        elif record.spec not in specs and ((root / record.spec).is_file()
                                           or is_issue_born(record)):
            targets.append((record.spec, path))
        else:
            results.append(CheckResult(spec=record.spec, status=CheckStatus.ORPHANED,
                                       record=path, script=record.script.path))
    return targets, results


def touched(root: Path, specs: Sequence[str], files: Sequence[str]
            ) -> tuple[list[str], list[str]]:
    """The specs whose spec file, record, inputs, tests or script are among `files` (what a
    commit touches), and the records no spec of `specs` owns whose files are among them
    (an issue's script, a spec outside the tasks glob)."""
    changed = set(files)
    chosen = [spec for spec in specs if changed & _files_of(root, spec)]
    owned = {lock_path(spec) for spec in specs}
    return chosen, [path for path in all_records(root)
                    if path not in owned and changed & _record_files(root, path)]


def _files_of(root: Path, spec: str) -> set[str]:
    try:
        loaded = load_repo_spec(root, spec)
    except SpecError:
        return {spec, lock_path(spec)}  # checked when its own file is touched
    found = {*loaded.spec.inputs, *loaded.spec.tests, loaded.spec.output or ""}
    return found | _record_files(root, lock_path(spec)) | {spec}


def _record_files(root: Path, path: str) -> set[str]:
    try:
        record = load_record(root / path)
    except SpecError:
        return {path}
    if record is None:
        return {path}
    return {path, record.spec, record.script.path,
            *(item.path for item in [*record.inputs, *record.tests])}


def is_issue_born(record: VerifiedRecord) -> bool:
    """A script born of an issue: its record names the issue (`issue #12`, as the action
    labels the task) and the committed run.json that holds its spec (action/task_run.py)."""
    return record.spec.startswith(ISSUE) and bool(record.run_record)


def issue_spec(root: Path, record: VerifiedRecord, where: str) -> LoadedSpec:
    """The spec of an issue's script, from the run.json its record points at."""
    from selfcorrect_action.report.run_json import load_run_json  # the loop's state: lazily

    try:
        data = read_bounded(root / record.run_record, MAX_FILE_BYTES)
        state = load_run_json(data.decode("utf-8", errors="replace"))
    except FileProblem as exc:
        raise SpecError([f"{where}:1:1: its run record {record.run_record}: {exc.problem}"
                         f"\n  hint: {exc.hint}"]) from exc
    except UsageError as exc:
        raise SpecError([f"{record.run_record}:1:1: {exc.message}\n  hint: {exc.hint}"]
                        ) from exc
    return LoadedSpec(state.spec, record.spec, root.resolve())


def _invalid(spec: str, record: str | None, problems: list[str]) -> CheckResult:
    return CheckResult(spec=spec, status=CheckStatus.INVALID, record=record,
                       problems=problems)


class _Checker:
    def __init__(self, root: Path, sandbox: CheckSandbox, environ: Mapping[str, str],
                 say: Say, *, update_lock: bool, base_records: BaseRecords | None = None,
                 own_records: bool = False,
                 judges: JudgeModels | None = None) -> None:
        self.root = root
        self.base_records = base_records
        self.own_records = own_records and base_records is not None
        self.judges = judges
        self.sandbox = sandbox
        self.environ = environ
        self.update_lock = update_lock
        self._say = say
        self._secrets = secrets_from_env(environ)
        self._runs = 0

    def prepare_judges(self, looks: list[CheckResult | _Reverify]) -> None:
        """--judge: say what will be asked, and refuse it now if it cannot be."""
        if self.judges is None:
            return
        stale = [look.loaded for look in looks if isinstance(look, _Reverify)
                 and asks_judge(look.found, judge=True)]
        self.say(announcement([loaded.source for loaded in stale],
                              no_engine=bool(self.sandbox.no_engine)))
        if stale:
            self.judges.prepare(stale)

    def finish(self, look: CheckResult | _Reverify) -> CheckResult:
        self._secrets = secrets_from_env(self.environ)
        if isinstance(look, _Reverify):
            self._secrets = self._secrets_of(look.loaded)
        result = look if isinstance(look, CheckResult) else self._reverify(look)
        said = result.status.value.replace("_", " ")
        if result.status is CheckStatus.CHANGED and result.no_docker:
            said += " (not re-verified: no Docker engine)"
        self.say(f"{result.spec}: {said}" + (
            f" ({result.category}: {result.evidence})" if result.evidence else "") + (
            f" [{said_of(result.judge)}]" if result.judge else ""))
        return result

    def _secrets_of(self, loaded: LoadedSpec) -> list[str]:
        return [*secrets_from_env(self.environ),
                *secret_values(loaded.spec.contract.network, self.environ)]

    def say(self, line: str) -> None:
        self._say(redact(line, secrets=self._secrets))

    def look(self, spec: str, record_path: str) -> CheckResult | _Reverify:
        """The spec's status from its digests, or the re-verification it needs."""
        try:
            loaded, record = self._load(spec, record_path)
            now = fingerprint(loaded) if loaded.spec.kind != "repair" else None
        except SpecError as exc:
            return _invalid(spec, record_path if (self.root / record_path).exists() else None,
                            exc.problems)
        except FileProblem as exc:
            return _invalid(spec, None, [f"{spec}:1:1: {exc.problem}\n  hint: {exc.hint}"])
        if now is None:
            return CheckResult(spec=spec, status=CheckStatus.NOT_APPLICABLE)
        return self._compare(loaded, record, now, record_path if record else None)

    def _load(self, spec: str, record_path: str
              ) -> tuple[LoadedSpec, VerifiedRecord | None]:
        if not spec.startswith(ISSUE):
            loaded = load_repo_spec(self.root, spec)
            return loaded, self._record(loaded, spec, record_path)
        record = (self.base_records(record_path) if self.base_records is not None
                  else load_record(self.root / record_path, shown=record_path))
        if record is None:
            raise SpecError([f"{record_path}:1:1: no such record"])
        return issue_spec(self.root, record, record_path), record

    def _record(self, loaded: LoadedSpec, spec: str, path: str) -> VerifiedRecord | None:
        if loaded.spec.kind == "repair":
            return None
        record = (self.base_records(path) if self.base_records is not None
                  else load_record(self.root / path, shown=path))
        if record is not None and record.spec != spec:
            raise SpecError([f"{path}:1:1: this record is for {record.spec}, not {spec}: two "
                             "specs of one file name share one record\n  hint: rename one "
                             "of the specs"])
        return record

    def _compare(self, loaded: LoadedSpec, record: VerifiedRecord | None, now: Fingerprint,
                 record_path: str | None) -> CheckResult | _Reverify:
        image = self.sandbox.image() if record is not None and now.script else None
        found = changes(record, now, image) if record is not None else []
        status = first_look(loaded.spec.kind, record, now, found)
        base = CheckResult(spec=loaded.source, status=status, record=record_path,
                           script=str(loaded.spec.output), changes=[str(c) for c in found],
                           no_docker=bool(self.sandbox.no_engine))
        if status is CheckStatus.CHANGED and self.sandbox.no_engine:
            return base
        if self.base_records is not None and now.script is not None and status in (
                CheckStatus.VERIFIED, CheckStatus.MISSING) and not self.sandbox.no_engine:
            # A pull request touched it: shown to work on its head, whatever the digests.
            return _Reverify(loaded, record, now, found, base)
        if status is CheckStatus.CHANGED or (
                status is CheckStatus.MISSING and self.update_lock and now.script is not None
                and self.sandbox.image() is not None):
            return _Reverify(loaded, record, now, found, base)
        return base

    def _reverify(self, look: _Reverify) -> CheckResult:
        loaded, record, now, found, base = (look.loaded, look.record, look.now, look.found,
                                            look.base)
        judging = asks_judge(found, judge=self.judges is not None)
        try:
            require_credentials(loaded.spec.contract.network, self.environ)
        except UsageError as exc:
            return base.model_copy(update={"status": CheckStatus.INVALID,
                                           "problems": [f"{loaded.source}:1:1: {exc}"]})
        what = ", ".join(base.changes) or "no record"
        self.say(f"{loaded.source}: {what}: re-verifying {base.script} in the sandbox "
                 f"({self.sandbox.runtime}" + ("; then the judge, with the new prompt)"
                                               if judging else ", no model call)"))
        done = self._run(loaded, record, _script_text(loaded), judging=judging)
        attempt = done.last
        assert attempt is not None and attempt.verdict is not None
        verdict = attempt.verdict
        judged = judge_result(done, secrets=self._secrets) if judging else None
        status = after_reverify(found, passed=verdict.passed,
                                judged=judged is not None and judged.verdict == "pass")
        answered = (answered_here(self.root, loaded, now, record)
                    if status is CheckStatus.STALE and self.own_records else None)
        if answered is not None:
            status = CheckStatus.PASSES
            base = base.model_copy(update={"changes": [*base.changes, answered]})
        result = base.model_copy(update={
            "judge": judged,
            "status": status, "reverified": "passed" if verdict.passed else "failed",
            "failed_layer": verdict.failed_layer, "took_ms": attempt.duration_ms,
            "sandbox_ms": sum(run.duration_ms for run in (
                attempt.execution, attempt.test_execution) if run is not None),
            "category": verdict.category.value if verdict.category else None,
            "evidence": redact(verdict.evidence, secrets=self._secrets),
            "locations": [] if verdict.passed else [
                line.model_copy(update={"message": redact(line.message,
                                                          secrets=self._secrets)})
                for line in script_lines(attempt, done.output_name)]})
        return self._lock(loaded, record, now, done, result)

    def _run(self, loaded: LoadedSpec, record: VerifiedRecord | None, code: str, *,
             judging: bool = False) -> RunState:
        from selfcorrect_action.verified.reverify import reverify, reverify_state

        asked = (self.judges.model_for(loaded) if judging and self.judges is not None
                 else None)
        state = reverify_state(loaded, record, code, runtime=self.sandbox.runtime,
                               judged_by=asked.models if asked is not None else None)
        if self.base_records is not None:
            # A pull request's spec cannot open the network its base branch did not.
            allowed = record.contract.network if record is not None else "none"
            state = state.model_copy(update={"contract": state.contract.model_copy(
                update={"network": allowed})})
        executor = self.sandbox.executor(Limits(memory_mb=state.contract.memory_mb), code)
        assert self.sandbox.work_root is not None
        self._runs += 1
        return reverify(state, loaded, executor, self.sandbox.work_root / str(self._runs),
                        on_event=lambda step, message: self.say(f"{loaded.source}: {message}"),
                        with_model=asked.with_model if asked is not None else None)

    def _lock(self, loaded: LoadedSpec, record: VerifiedRecord | None, now: Fingerprint,
              done: RunState, result: CheckResult) -> CheckResult:
        image = self.sandbox.image()
        if not self.update_lock or image is None or not may_update_lock(result.status):
            return result
        from selfcorrect_action.verified.lock_update import accepted, first_record

        at = datetime.now(UTC).isoformat(timespec="seconds")
        if record is None:
            save_record(self.root, first_record(loaded, done, now, image, verified_at=at))
            return result.model_copy(update={"lock": "written", "record": lock_path(
                loaded.source)})
        save_record(self.root, accepted(record, now, image, verified_at=at))
        return result.model_copy(update={"lock": "updated", "record": lock_path(
            loaded.source)})


def _script_text(loaded: LoadedSpec) -> str:
    """The committed script as its bytes decode (what Python would read)."""
    try:
        data = read_bounded(loaded.output_path, MAX_FILE_BYTES)
    except FileProblem as exc:
        raise UsageError(f"{loaded.spec.output}: {exc.problem}", hint=exc.hint) from exc
    return data.decode("utf-8", errors="replace")
