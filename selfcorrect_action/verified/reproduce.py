"""`selfcorrect verify`'s comparison (issue 36, item 6): a recorded verdict beside the same
script's re-run with no model call, and what differs between them. Pure.

The verdict is what is reproduced: the recorded one is `passed` (only a passing run is
recorded as verified), and the re-run's verdict of layers 1-2 either is too or is not.
Everything else the verdict depended on is compared and listed, never hidden: the script's,
inputs' and tests' digests, the spec's prompt and fields (a record holds them), the image's
identity, the runtime, the selfcorrect version, and which tests ran with which outcome. A
difference beside a reproduced verdict does not fail it (exit 0, listed): the question
verify answers is "does this verdict hold again", and `selfcorrect check` is what fails on
drift. What the record does not hold (an older run.json's input digests or image) is said
to be not compared.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from selfcorrect_action.loop.state import Attempt
from selfcorrect_action.taxonomy import TestOutcome, Verdict
from selfcorrect_action.verified.changes import image_difference
from selfcorrect_action.verified.record import FileDigest, ImageRecord

SHORT_DIGEST = 12


class Aspect(StrEnum):
    PROMPT = "prompt"
    SPEC = "spec"
    SCRIPT = "script"
    INPUT = "input"
    TEST = "test"
    IMAGE = "image"
    RUNTIME = "runtime"
    VERSION = "selfcorrect version"
    TEST_RUN = "test run"


@dataclass(frozen=True)
class Difference:
    aspect: Aspect
    path: str  # the file, test id or image tag it is about ("" for the runtime)
    detail: str

    def __str__(self) -> str:
        if self.aspect in (Aspect.IMAGE, Aspect.RUNTIME, Aspect.VERSION):
            return f"the {self.aspect.value} differs: {self.detail}"
        if self.aspect is Aspect.TEST_RUN:
            return f"test {self.path}: {self.detail}"
        return f"{self.aspect.value} {self.path}: {self.detail}"


@dataclass(frozen=True)
class Digests:
    """The files a verdict depended on, as digests. `inputs` None: not recorded."""

    script: FileDigest
    inputs: tuple[FileDigest, ...] | None
    tests: tuple[FileDigest, ...]
    prompt_sha256: str = ""  # "" on either side: not compared (a run.json holds the spec)
    fields_sha256: str = ""


@dataclass(frozen=True)
class Recorded:
    """A verdict as its verification record or run.json holds it."""

    source: str  # what was named: the record's path, or the run.json's
    run_id: str
    digests: Digests
    image: ImageRecord | None  # None: not recorded
    image_id: str = ""  # the engine's id of it, when recorded (a run.json of schema 9)
    runtime: str | None = None  # None: not recorded (a record)
    tests_run: tuple[TestOutcome, ...] | None = None  # None: not recorded (a record)
    judge: str = ""  # the model that judged it (layer 3); "" when no judge did
    selfcorrect_version: str = ""  # "": not recorded (a run.json before schema 9)


@dataclass(frozen=True)
class Rerun:
    """The same script run again: what it was run with, and the attempt layers 1-2 judged."""

    digests: Digests
    image: ImageRecord
    image_id: str
    runtime: str
    attempt: Attempt
    selfcorrect_version: str
    duration_ms: int = 0


@dataclass(frozen=True)
class Reproduction:
    recorded: Recorded
    rerun: Rerun
    differences: tuple[Difference, ...]
    not_compared: tuple[str, ...]

    @property
    def verdict(self) -> Verdict | None:
        return self.rerun.attempt.verdict

    @property
    def reproduced(self) -> bool:
        return self.verdict is not None and self.verdict.passed

    @property
    def exit_code(self) -> int:
        """0 reproduced (with or without differences), 1 the verdict differs."""
        return 0 if self.reproduced else 1


def reproduce(recorded: Recorded, rerun: Rerun) -> Reproduction:
    was, now = recorded.digests, rerun.digests
    found = [*_spec(was, now, recorded.source), *_script(was.script, now.script)]
    if was.inputs is not None and now.inputs is not None:
        found += _files(Aspect.INPUT, was.inputs, now.inputs)
    found += _files(Aspect.TEST, was.tests, now.tests)
    found += _image(recorded, rerun)
    found += _named(Aspect.RUNTIME, recorded.runtime, rerun.runtime)
    found += _named(Aspect.VERSION, recorded.selfcorrect_version, rerun.selfcorrect_version)
    # Tests that never ran (the script failed before them) are its verdict's to explain.
    if recorded.tests_run is not None and rerun.attempt.test_execution is not None:
        found += tests_run(recorded.tests_run, rerun.attempt.tests)
    return Reproduction(recorded, rerun, tuple(found), not_compared(recorded, rerun))


def same_image_id(recorded: Recorded, rerun: Rerun) -> bool:
    """One image id is one image, its every file: nothing more to compare."""
    return bool(recorded.image_id) and recorded.image_id == rerun.image_id


def not_compared(recorded: Recorded, rerun: Rerun) -> tuple[str, ...]:
    """What the record does not hold (a run.json written before schema 9 holds neither the
    inputs' digests nor the image; a local run's image may have no package listing)."""
    notes = []
    if recorded.digests.inputs is None:
        notes.append("the inputs' digests were not recorded (a run.json older than schema "
                     "9): they were read from the repository as they are now")
    if recorded.image is None:
        notes.append("the image's identity was not recorded (a run.json older than schema 9)")
    elif not recorded.image.packages_digest and not same_image_id(recorded, rerun):
        notes.append("the image's installed packages were not listed when the verdict was "
                     "recorded: only its build context is compared")
    return tuple(notes)


def tests_run(recorded: Sequence[TestOutcome], now: Sequence[TestOutcome]) -> list[Difference]:
    """Each test whose outcome is not the recorded one, or that ran on one side only."""
    before = {test.test_id: test.outcome for test in recorded}
    after = {test.test_id: test.outcome for test in now}
    found = [Difference(Aspect.TEST_RUN, name, f"{before[name]} recorded, {after[name]} now")
             for name in before if name in after and before[name] != after[name]]
    found += [Difference(Aspect.TEST_RUN, name, f"{before[name]} recorded, not run now")
              for name in before if name not in after]
    found += [Difference(Aspect.TEST_RUN, name, f"not recorded, {after[name]} now")
              for name in after if name not in before]
    return sorted(found, key=lambda difference: difference.path)


def judge_note(recorded: Recorded) -> str:
    """What verify says when layer 3 judged the recorded verdict: never asked again."""
    if not recorded.judge:
        return ""
    return (f"the judge's verdict (layer 3, {recorded.judge}) is not reproduced: verify "
            "re-runs layers 1-2 (the execution, the contract, the tests) and asks no model")


def verify_command(ref: str) -> str:
    """The one line that reproduces a verdict, for check runs and pull request bodies: a
    record's path (.selfcorrect/lock/<task>.json), a run id, or a run.json's path."""
    return f"selfcorrect verify {shlex.quote(ref)}"


def short(digest: str) -> str:
    return digest[:SHORT_DIGEST]


def _spec(was: Digests, now: Digests, source: str) -> list[Difference]:
    found = []
    if was.prompt_sha256 and now.prompt_sha256 and was.prompt_sha256 != now.prompt_sha256:
        found.append(Difference(Aspect.PROMPT, source, "changed (layers 1-2 do not read "
                                "it: only the judge or a regeneration can say whether the "
                                "script still does what is asked)"))
    if was.fields_sha256 and now.fields_sha256 and was.fields_sha256 != now.fields_sha256:
        found.append(Difference(Aspect.SPEC, source, "its fields other than the prompt "
                                "changed (what the contract, tests, inputs or output ask)"))
    return found


def _image(recorded: Recorded, rerun: Rerun) -> list[Difference]:
    if recorded.image is None or same_image_id(recorded, rerun):
        return []
    difference = image_difference(recorded.image, rerun.image)
    return [Difference(Aspect.IMAGE, rerun.image.tag, difference)] if difference else []


def _named(aspect: Aspect, recorded: str | None, now: str) -> list[Difference]:
    """A value the record names ("" or None: not recorded, nothing to compare)."""
    if not recorded or recorded == now:
        return []
    return [Difference(aspect, "", f"{recorded} recorded, {now} now")]


def _script(was: FileDigest, now: FileDigest) -> list[Difference]:
    if was == now:
        return []
    if was.path != now.path:
        return [Difference(Aspect.SCRIPT, was.path, f"now {now.path}")]
    return [Difference(Aspect.SCRIPT, was.path, _changed(was.sha256, now.sha256))]


def _files(aspect: Aspect, recorded: Sequence[FileDigest], now: Sequence[FileDigest]
           ) -> list[Difference]:
    before = {item.path: item.sha256 for item in recorded}
    after = {item.path: item.sha256 for item in now}
    found = [Difference(aspect, path, "recorded, no longer named")
             for path in before if path not in after]
    found += [Difference(aspect, path, "named now, not recorded")
              for path in after if path not in before]
    found += [Difference(aspect, path, _changed(before[path], after[path]))
              for path in after if path in before and before[path] != after[path]]
    return sorted(found, key=lambda difference: difference.path)


def _changed(was: str, now: str) -> str:
    return f"its digest differs ({short(was)} recorded, {short(now)} now)"
