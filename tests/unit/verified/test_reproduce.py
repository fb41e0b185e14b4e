"""`selfcorrect verify`'s comparison (issue 36, item 6): a recorded verdict beside its
re-run, every branch: the same, a script, input or test whose digest differs, the image,
the runtime, the version, a test's outcome, the verdict itself, the judge never asked
again, and what an older run.json cannot say; and the text and JSON verify prints."""

from __future__ import annotations

import dataclasses

from selfcorrect_action.commands.verify_cmd import reproduction_json
from selfcorrect_action.loop.state import Attempt, Strategy
from selfcorrect_action.sandbox.models import ExecutionResult
from selfcorrect_action.taxonomy import Category, TestOutcome, Verdict
from selfcorrect_action.templating import render
from selfcorrect_action.verified.record import FileDigest, ImageRecord
from selfcorrect_action.verified.reproduce import (
    Aspect,
    Difference,
    Digests,
    Recorded,
    Reproduction,
    Rerun,
    judge_note,
    reproduce,
    verify_command,
)

SCRIPT = FileDigest(path="scripts/totals.py", sha256="a" * 64)
INPUT = FileDigest(path="data/sales.csv", sha256="b" * 64)
TEST = FileDigest(path="tests/test_totals.py", sha256="c" * 64)
IMAGE = ImageRecord(tag="selfcorrect-sandbox:0.1.0-abc", context_hash="abc",
                    packages_digest="d" * 64)
DIGESTS = Digests(script=SCRIPT, inputs=(INPUT,), tests=(TEST,),
                  prompt_sha256="e" * 64, fields_sha256="f" * 64)
PASSED = TestOutcome(test_id="test_totals.py::test_the_totals", outcome="passed")
RECORDED = Recorded(source=".selfcorrect/lock/totals.json", run_id="3fa2b1c9", digests=DIGESTS,
                    image=IMAGE, image_id="sha256:1", runtime="runc", tests_run=(PASSED,),
                    selfcorrect_version="0.1.0")


def attempt(verdict: Verdict | None = None, tests: tuple[TestOutcome, ...] = (PASSED,),
            *, tests_ran: bool = True) -> Attempt:
    return Attempt(index=1, strategy=Strategy.INITIAL, tier="cheap", model="given",
                   code="print(1)\n", code_sha="0" * 64, verdict=verdict or Verdict(passed=True),
                   tests=list(tests),
                   test_execution=ExecutionResult(exit_code=0) if tests_ran else None)


RERUN = Rerun(digests=DIGESTS, image=IMAGE, image_id="sha256:1", runtime="runc",
              attempt=attempt(), selfcorrect_version="0.1.0", duration_ms=1400)


def rerun(**changes: object) -> Rerun:
    return dataclasses.replace(RERUN, **changes)  # type: ignore[arg-type]


def now(**changes: object) -> Digests:
    return dataclasses.replace(DIGESTS, **changes)  # type: ignore[arg-type]


def lines(result: Reproduction) -> list[str]:
    return [str(difference) for difference in result.differences]


def text(result: Reproduction) -> str:
    return render("reports/verify.txt.j2", result=result, differences=lines(result),
                  not_compared=result.not_compared, judge=judge_note(result.recorded))


def test_the_same_verdict_with_the_same_everything_is_reproduced_and_says_only_that() -> None:
    result = reproduce(RECORDED, RERUN)

    assert (result.reproduced, result.differences, result.not_compared) == (True, (), ())
    assert result.exit_code == 0
    assert text(result).splitlines()[0] == "reproduced: passed"
    assert "differ" not in text(result) and "note:" not in text(result)


def test_a_script_that_differs_is_named_with_both_digests_and_the_verdict_still_holds() -> None:
    result = reproduce(RECORDED, rerun(digests=now(script=SCRIPT.model_copy(
        update={"sha256": "9" * 64}))))

    assert lines(result) == ["script scripts/totals.py: its digest differs (aaaaaaaaaaaa "
                             "recorded, 999999999999 now)"]
    assert (result.reproduced, result.exit_code) == (True, 0)
    shown = text(result)
    assert shown.startswith("reproduced: passed, but 1 thing differs from the record:\n")
    assert "  script scripts/totals.py: its digest differs" in shown


def test_a_script_at_another_path_says_where_it_is_now() -> None:
    moved = FileDigest(path="scripts/sums.py", sha256=SCRIPT.sha256)
    assert lines(reproduce(RECORDED, rerun(digests=now(script=moved)))) == [
        "script scripts/totals.py: now scripts/sums.py"]


def test_an_input_that_differs_added_or_no_longer_named_is_listed_by_path() -> None:
    changed = INPUT.model_copy(update={"sha256": "1" * 64})
    added = FileDigest(path="data/costs.csv", sha256="2" * 64)

    assert lines(reproduce(RECORDED, rerun(digests=now(inputs=(changed, added))))) == [
        "input data/costs.csv: named now, not recorded",
        "input data/sales.csv: its digest differs (bbbbbbbbbbbb recorded, 111111111111 now)"]
    assert lines(reproduce(RECORDED, rerun(digests=now(inputs=())))) == [
        "input data/sales.csv: recorded, no longer named"]


def test_a_test_file_that_differs_is_listed() -> None:
    changed = TEST.model_copy(update={"sha256": "3" * 64})
    assert [d.aspect for d in reproduce(RECORDED, rerun(digests=now(tests=(changed,))))
            .differences] == [Aspect.TEST]


def test_a_changed_prompt_and_changed_fields_are_said_for_a_record() -> None:
    result = reproduce(RECORDED, rerun(digests=now(prompt_sha256="4" * 64,
                                                   fields_sha256="5" * 64)))

    assert [d.aspect for d in result.differences] == [Aspect.PROMPT, Aspect.SPEC]
    assert "only the judge or a regeneration" in lines(result)[0]
    assert result.reproduced


def test_an_image_with_other_packages_is_said_not_hidden() -> None:
    newer = IMAGE.model_copy(update={"packages_digest": "6" * 64})
    result = reproduce(RECORDED, rerun(image=newer, image_id="sha256:2"))

    assert lines(result) == ["the image differs: its installed packages differ: "
                             "dddddddddddd recorded, 666666666666 now"]
    assert (result.reproduced, result.exit_code) == (True, 0)


def test_the_same_image_id_is_the_same_image_whatever_else_was_listed() -> None:
    unlisted = dataclasses.replace(RECORDED, image=IMAGE.model_copy(
        update={"packages_digest": "", "context_hash": "old"}))

    result = reproduce(unlisted, RERUN)
    assert (result.differences, result.not_compared) == ((), ())


def test_an_image_recorded_without_its_packages_is_compared_by_its_build_context() -> None:
    unlisted = dataclasses.replace(RECORDED, image_id="", image=IMAGE.model_copy(
        update={"packages_digest": ""}))

    same = reproduce(unlisted, rerun(image_id="sha256:2"))
    assert same.differences == ()
    assert same.not_compared == ("the image's installed packages were not listed when the "
                                 "verdict was recorded: only its build context is compared",)
    rebuilt = reproduce(unlisted, rerun(image_id="sha256:2", image=ImageRecord(
        tag="selfcorrect-sandbox:0.1.0-new", context_hash="new", packages_digest="7" * 64)))
    assert lines(rebuilt) == ["the image differs: selfcorrect-sandbox:0.1.0-abc recorded, "
                              "selfcorrect-sandbox:0.1.0-new now"]


def test_another_runtime_and_another_selfcorrect_are_listed() -> None:
    result = reproduce(RECORDED, rerun(runtime="runsc", selfcorrect_version="0.2.0"))

    assert lines(result) == ["the runtime differs: runc recorded, runsc now",
                             "the selfcorrect version differs: 0.1.0 recorded, 0.2.0 now"]


def test_a_test_whose_outcome_differs_or_that_ran_on_one_side_only_is_listed() -> None:
    skipped = PASSED.model_copy(update={"outcome": "skipped"})
    extra = TestOutcome(test_id="test_totals.py::test_new", outcome="passed")

    result = reproduce(RECORDED, rerun(attempt=attempt(tests=(skipped, extra))))
    assert lines(result) == [
        "test test_totals.py::test_new: not recorded, passed now",
        "test test_totals.py::test_the_totals: passed recorded, skipped now"]
    assert lines(reproduce(RECORDED, rerun(attempt=attempt(tests=())))) == [
        "test test_totals.py::test_the_totals: passed recorded, not run now"]


def test_a_verdict_that_differs_is_not_reproduced_with_its_category_and_evidence() -> None:
    failed = Verdict(passed=False, failed_layer="execution", category=Category.RUNTIME,
                     evidence="KeyError: 'amount' at totals.py:7 in <module>")
    changed = INPUT.model_copy(update={"sha256": "1" * 64})

    result = reproduce(RECORDED, rerun(attempt=attempt(failed, tests=(), tests_ran=False),
                                       digests=now(inputs=(changed,))))
    assert (result.reproduced, result.exit_code) == (False, 1)
    # The tests never ran: the verdict says why, not a line per test.
    assert [d.aspect for d in result.differences] == [Aspect.INPUT]
    assert text(result).splitlines()[:4] == [
        "not reproduced: passed when recorded, now failed at the execution layer (runtime)",
        "  evidence: KeyError: 'amount' at totals.py:7 in <module>",
        "what differs from the record:",
        "  input data/sales.csv: its digest differs (bbbbbbbbbbbb recorded, 111111111111 now)"]


def test_a_verdict_that_differs_with_nothing_else_lists_nothing_more() -> None:
    failed = Verdict(passed=False, failed_layer="contract", category=Category.CONTRACT,
                     evidence="totals.csv: missing")
    shown = text(reproduce(RECORDED, rerun(attempt=attempt(failed, tests=(), tests_ran=False))))
    assert "what differs" not in shown and "(contract)" in shown


def test_the_judge_is_never_reproduced_and_verify_says_so() -> None:
    judged = dataclasses.replace(RECORDED, judge="openai/gpt-4o-mini")
    result = reproduce(judged, RERUN)

    assert judge_note(RECORDED) == ""
    assert judge_note(judged).startswith("the judge's verdict (layer 3, openai/gpt-4o-mini) "
                                         "is not reproduced")
    assert result.reproduced and result.differences == ()
    assert "note: the judge's verdict (layer 3, openai/gpt-4o-mini) is not reproduced" in (
        text(result))
    assert reproduction_json(result, "x")["judge_not_reproduced"] == judge_note(judged)


def test_a_run_json_before_schema_9_says_what_it_could_not_compare() -> None:
    older = dataclasses.replace(RECORDED, digests=dataclasses.replace(DIGESTS, inputs=None),
                                image=None, image_id="", selfcorrect_version="")
    changed = INPUT.model_copy(update={"sha256": "1" * 64})

    result = reproduce(older, rerun(digests=now(inputs=(changed,)), selfcorrect_version="0.2"))
    assert result.differences == ()
    assert result.not_compared == (
        "the inputs' digests were not recorded (a run.json older than schema 9): they were "
        "read from the repository as they are now",
        "the image's identity was not recorded (a run.json older than schema 9)")
    assert "not compared: the inputs' digests were not recorded" in text(result)


def test_the_json_says_reproduced_identical_and_each_difference() -> None:
    result = reproduce(RECORDED, rerun(runtime="runsc"))
    shown = reproduction_json(result, ".selfcorrect/lock/totals.json")

    assert (shown["reproduced"], shown["identical"], shown["exit_code"]) == (True, False, 0)
    assert shown["differences"] == [{"what": "runtime", "path": "", "detail":
                                     "runc recorded, runsc now", "text":
                                     "the runtime differs: runc recorded, runsc now"}]
    assert shown["command"] == "selfcorrect verify .selfcorrect/lock/totals.json"


def test_the_command_is_one_line_a_shell_reads_back_as_the_reference() -> None:
    assert verify_command("3fa2b1c9") == "selfcorrect verify 3fa2b1c9"
    assert verify_command(".selfcorrect/lock/sales chart.json") == (
        "selfcorrect verify '.selfcorrect/lock/sales chart.json'")
    assert verify_command("x;rm -rf /") == "selfcorrect verify 'x;rm -rf /'"


def test_a_difference_reads_as_one_line_by_its_aspect() -> None:
    assert str(Difference(Aspect.IMAGE, "t", "its installed packages differ: a, b")) == (
        "the image differs: its installed packages differ: a, b")
    assert str(Difference(Aspect.INPUT, "data/x.csv", "changed")) == "input data/x.csv: changed"
