"""run.json: the whole state, versioned, redacted, without host paths, and read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.loop.state import (
    SCHEMA_VERSION,
    FileSha256,
    FinalCheck,
    RunState,
    Status,
)
from selfcorrect_action.records import evolve
from selfcorrect_action.report import RunJsonError, load_run_json, run_json
from selfcorrect_action.report.audit import audit_markdown
from selfcorrect_action.report.run_json import redacted_state
from selfcorrect_action.sandbox.identity import ImageIdentity

from .runs import (
    AWS_KEY_ID,
    ENV_SECRET,
    GITHUB_TOKEN,
    OPENAI_KEY,
    SECRETS,
    cancelled_run,
    error_run,
    exhausted_run,
    passing_run,
    stopped_run,
)


def test_a_run_survives_dump_and_load(tmp_path: Path) -> None:
    for state in (passing_run(tmp_path), exhausted_run(), stopped_run()):
        # Once redacted and without host paths, the state is a fixed point of the file.
        clean = load_run_json(run_json(state, secrets=SECRETS))
        again = load_run_json(run_json(clean, secrets=SECRETS))

        assert again == clean
        assert again.attempts[0].verdict == clean.attempts[0].verdict is not None
        assert again.attempts[0].packet is not None
        assert [a.execution for a in again.attempts] == [a.execution for a in clean.attempts]


def test_loading_gives_the_redacted_state(tmp_path: Path) -> None:
    state = passing_run(tmp_path)

    assert load_run_json(run_json(state, secrets=SECRETS)) == redacted_state(state, secrets=SECRETS)


def test_the_file_is_pretty_json_with_the_schema_version_first(tmp_path: Path) -> None:
    text = run_json(passing_run(tmp_path), secrets=SECRETS)

    assert text.startswith(f"{{\n  \"schema_version\": {SCHEMA_VERSION},\n")
    assert text.endswith("}\n")
    data = json.loads(text)
    assert data["status"] == "passed"
    assert data["attempts"][1]["verdict"]["passed"] is True
    assert data["attempts"][0]["packet"]["category"] == "contract"


def test_secrets_and_token_shapes_are_redacted(tmp_path: Path) -> None:
    text = run_json(passing_run(tmp_path), secrets=SECRETS)
    data = json.loads(text)
    first = data["attempts"][0]

    for planted in (GITHUB_TOKEN, OPENAI_KEY, AWS_KEY_ID, ENV_SECRET):
        assert planted not in text
    assert 'API_TOKEN = "[REDACTED:github-token]"' in first["code"]
    assert first["execution"]["stdout"]["text"].startswith("using token [REDACTED:github-token]")
    assert "Bearer [REDACTED:openai-key]" in first["execution"]["stderr"]["text"]
    assert "[REDACTED:aws-access-key-id]" in data["spec"]["prompt"]
    assert "[REDACTED:secret]" in data["attempts"][1]["judge"]["reasoning"]


def test_host_artifact_paths_are_dropped(tmp_path: Path) -> None:
    state = passing_run(tmp_path)
    assert state.attempts[1].execution is not None
    assert state.attempts[1].execution.artifacts[0].host_path is not None

    text = run_json(state, secrets=SECRETS)

    assert str(tmp_path) not in text
    record = json.loads(text)["attempts"][1]["execution"]["artifacts"][0]
    assert record == {
        "path": "chart.png",
        "size": record["size"],
        "host_path": None,
        "rejected": None,
    }


def test_a_repairs_baseline_runs_drop_their_host_paths_too(tmp_path: Path) -> None:
    """The baseline's runs of the test command copy out the junit report: its host copy is
    in the runner's temp dir as any attempt's artifact is (and differed run to run, so two
    orchestrators' run.json of one repair did not compare)."""
    from selfcorrect_action.records import evolve
    from selfcorrect_action.repair.records import Baseline, RepairRecord
    from selfcorrect_action.sandbox.models import ArtifactRecord

    from .runs import result

    junit = ArtifactRecord(path=".selfcorrect/repair-junit.xml", size=10,
                           host_path=tmp_path / "baseline-1" / "repair-junit.xml")
    state = evolve(passing_run(tmp_path), {"repair": RepairRecord(
        allowed=["pkg/core.py"], repository_files=3, repository_bytes=100,
        listed_by="git", baseline=Baseline(runs=[result(artifacts=[junit])] * 2))})

    text = run_json(state, secrets=SECRETS)

    assert str(tmp_path) not in text
    runs = json.loads(text)["repair"]["baseline"]["runs"]
    assert [run["artifacts"] for run in runs] == [[{
        "path": ".selfcorrect/repair-junit.xml", "size": 10, "host_path": None,
        "rejected": None}]] * 2
    assert state.repair is not None and state.repair.baseline is not None
    assert state.repair.baseline.runs[0].artifacts[0].host_path is not None, "the live state"


def test_the_live_state_keeps_its_host_paths(tmp_path: Path) -> None:
    state = passing_run(tmp_path)
    run_json(state, secrets=SECRETS)

    assert state.attempts[1].execution is not None
    assert state.attempts[1].execution.artifacts[0].host_path is not None


@pytest.mark.parametrize(
    ("version", "shown"), [(12, "12"), (0, "0"), (True, "True"), ("1", "'1'"), (None, "None")]
)
def test_an_unknown_schema_version_is_refused_clearly(
    tmp_path: Path, version: object, shown: str
) -> None:
    data = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    data["schema_version"] = version

    with pytest.raises(RunJsonError) as caught:
        load_run_json(json.dumps(data))

    assert isinstance(caught.value, UsageError)
    assert caught.value.message == (
        f"run.json has schema version {shown}; this selfcorrect reads versions 1, 2, 3, 4, "
        f"5, 6, 7, 8, 9, 10, {SCHEMA_VERSION}"
    )
    assert caught.value.hint is not None and "re-run the task" in caught.value.hint


def test_a_version_1_run_is_read_as_one_whose_tests_shared_the_candidates_process(
        tmp_path: Path) -> None:
    """Before version 2 the frozen tests always imported the candidate into pytest, and the
    spec had no `isolation`: a report of such a run must not claim a boundary it lacked."""
    data = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    data["schema_version"] = 1
    del data["spec"]["isolation"]

    state = load_run_json(json.dumps(data))

    assert state.schema_version == SCHEMA_VERSION == 11
    assert state.spec.isolation == "in-process"
    fresh = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    assert fresh["schema_version"] == SCHEMA_VERSION and fresh["spec"]["isolation"] == "process"


def test_a_version_2_run_reads_without_the_fields_version_3_added(tmp_path: Path) -> None:
    data = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    data["schema_version"] = 2
    for key in ("server",):
        data.pop(key, None)
    data["spec"].pop("signature", None)
    for attempt in data["attempts"]:
        attempt.pop("temperature", None)
        if attempt.get("packet"):
            attempt["packet"].pop("wanted_shape", None)
    state = load_run_json(json.dumps(data))
    assert state.schema_version == SCHEMA_VERSION and state.spec.signature is None


def test_a_version_2_run_reads_as_a_run_that_was_no_repair(tmp_path: Path) -> None:
    """Version 3 added kind repair's fields, each with a default: a version 2 file, which
    has none of them, reads as the script run it was."""
    data = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    data["schema_version"] = 2
    for name in ("files", "test_command", "failing_tests", "requirements", "review"):
        del data["spec"][name]
    del data["models"]["review"]

    state = load_run_json(json.dumps(data))

    assert state.schema_version == SCHEMA_VERSION and state.spec.kind == "script"
    assert state.spec.files == [] and state.models.review is None


def test_a_version_2_run_reads_as_one_of_no_known_origin(tmp_path: Path) -> None:
    data = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    data["schema_version"] = 2
    del data["origin"]

    state = load_run_json(json.dumps(data))

    assert state.schema_version == SCHEMA_VERSION and state.origin is None
    assert state.spec.isolation == "process"


def test_a_version_3_run_reads_as_one_without_a_connection_log(tmp_path: Path) -> None:
    """Version 4 added the contract's network mapping and each execution's connection log:
    a version 3 file has neither, and its reports show no network table."""
    data = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    data["schema_version"] = 3
    for attempt in data["attempts"]:
        for key in ("execution", "test_execution"):
            if attempt.get(key):
                del attempt[key]["network"]

    state = load_run_json(json.dumps(data))

    assert state.schema_version == SCHEMA_VERSION
    assert all(a.execution is None or a.execution.network is None for a in state.attempts)
    assert "through the egress proxy" not in audit_markdown(state, secrets=SECRETS)


def test_a_version_3_run_reads_as_the_plain_loops(tmp_path: Path) -> None:
    """Version 4 records which orchestrator drove the steps; every run before it was the
    plain loop's."""
    data = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    data["schema_version"] = 3
    del data["orchestrator"]

    state = load_run_json(json.dumps(data))

    assert state.schema_version == SCHEMA_VERSION and state.orchestrator == "plain"


def test_a_version_4_run_reads_as_one_of_cold_starts(tmp_path: Path) -> None:
    """Version 5 records each execution's start (issue 20); every run before it was cold."""
    data = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    data["schema_version"] = 4
    executed = [a for a in data["attempts"] if a.get("execution")]
    assert executed, "the fixture run executed something"
    for attempt in executed:
        for name in ("start", "start_note", "preloaded", "warm_rss_kb"):
            attempt["execution"].pop(name)
    del data["contract"]["warm"]

    state = load_run_json(json.dumps(data))

    assert state.schema_version == SCHEMA_VERSION and state.contract.warm is True
    assert all(a.execution.start == "cold" and a.execution.preloaded == []
               for a in state.attempts if a.execution is not None)


def test_a_version_5_run_reads_as_one_that_drew_each_answer_once(tmp_path: Path) -> None:
    """Version 6 records the run's redraws (issue 21); every run before it drew once."""
    data = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    assert data["redraws"] == 0
    data["schema_version"] = 5
    del data["redraws"]

    state = load_run_json(json.dumps(data))

    assert state.schema_version == SCHEMA_VERSION and state.redraws == 0


def test_a_version_6_run_reads_as_one_whose_tests_always_ran_under_pytest(
        tmp_path: Path) -> None:
    """Version 7 records the spec's tests_runner (issue 20); before it every test run was
    pytest's, and a resumed run goes on that way. A new run's default is auto."""
    data = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    assert data["spec"]["tests_runner"] == "auto"
    data["schema_version"] = 6
    del data["spec"]["tests_runner"]

    state = load_run_json(json.dumps(data))

    assert state.schema_version == SCHEMA_VERSION and state.spec.tests_runner == "pytest"
    data["schema_version"] = 1
    assert load_run_json(json.dumps(data)).spec.tests_runner == "pytest"


def test_a_version_7_run_that_was_interrupted_reads_as_cancelled(tmp_path: Path) -> None:
    """Before version 8 (issue 34) a cancel, SIGINT or SIGTERM ended a run as `error`, only
    `interrupted_by` telling it apart: such a run reads as the cancelled run it was, and an
    infrastructure error stays one."""
    data = json.loads(run_json(cancelled_run(), secrets=SECRETS))
    assert (data["schema_version"], data["status"]) == (SCHEMA_VERSION, "cancelled")
    assert load_run_json(json.dumps(data)) == redacted_state(cancelled_run(), secrets=SECRETS)
    for version in (7, 2, 1):
        old = {**data, "schema_version": version, "status": "error"}

        state = load_run_json(json.dumps(old))

        assert (state.status, state.interrupted_by) == (Status.CANCELLED, "SIGTERM"), version
        failed = json.loads(run_json(error_run(), secrets=SECRETS))
        assert load_run_json(json.dumps({**failed, "schema_version": version})).status is \
            Status.ERROR


def _recorded_run(tmp_path: Path) -> RunState:
    """A passing run with what version 9 records of what its verdict depended on."""
    return evolve(passing_run(tmp_path), {
        "selfcorrect_version": "0.1.0",
        "input_digests": [FileSha256(path="data/sales.csv", sha256="a" * 64)],
        "test_digests": [FileSha256(path="tests/test_chart.py", sha256="b" * 64)],
        "image": ImageIdentity(tag="selfcorrect-sandbox:0.1.0-abc", context_hash="c" * 64,
                               image_id="sha256:" + "d" * 64, packages_digest="e" * 64,
                               packages=267),
        "final_check": FinalCheck(script_sha256="f" * 64, passed=True)})


def test_a_version_9_run_records_its_inputs_image_version_and_final_check(
        tmp_path: Path) -> None:
    """Issue 36: what a later `selfcorrect verify` compares, in run.json as written."""
    data = json.loads(run_json(_recorded_run(tmp_path), secrets=SECRETS))

    assert data["schema_version"] == SCHEMA_VERSION == 11
    assert data["selfcorrect_version"] == "0.1.0"
    assert data["input_digests"] == [{"path": "data/sales.csv", "sha256": "a" * 64}]
    assert data["test_digests"] == [{"path": "tests/test_chart.py", "sha256": "b" * 64}]
    assert data["image"]["packages_digest"] == "e" * 64 and data["image"]["packages"] == 267
    assert data["final_check"] == {"script_sha256": "f" * 64, "passed": True, "evidence": "",
                                   "skipped": ""}
    assert load_run_json(json.dumps(data)) == redacted_state(_recorded_run(tmp_path),
                                                             secrets=SECRETS)


def test_a_version_9_run_reads_as_one_never_resumed(tmp_path: Path) -> None:
    data = json.loads(run_json(_recorded_run(tmp_path), secrets=SECRETS))
    data["schema_version"] = 9
    del data["resumes"]
    state = load_run_json(json.dumps(data))
    assert state.schema_version == SCHEMA_VERSION and state.resumes == []
    assert state.max_attempts == 1 + state.spec.budget.patch_attempts + \
        state.spec.budget.rethink_attempts


def test_a_version_10_run_reads_as_one_whose_prompts_were_whole(tmp_path: Path) -> None:
    """Issue 38's fields are optional: a version 10 run left nothing out of a prompt and
    said no reason for its profile."""
    data = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    data["schema_version"] = 10
    for attempt in data["attempts"]:
        del attempt["prompt_trimmed"]
    del data["profile_reason"], data["profile_open"]
    state = load_run_json(json.dumps(data))
    assert state.schema_version == SCHEMA_VERSION
    assert all(a.prompt_trimmed == [] for a in state.attempts) and state.profile_reason == ""


def test_a_resumed_run_records_what_came_from_the_earlier_one(tmp_path: Path) -> None:
    """Issue 37: schema 10's `resumes`, and the budget each one added."""
    from selfcorrect_action.loop.state import Resume, Status, Usage

    note = Resume(resumed_at="2026-12-08T01:00:00Z", previous_status=Status.EXHAUSTED,
                  attempts_before=2, reexecuted=2, earlier=Usage(tokens=900, llm_calls=3),
                  recorded_calls=1, more_attempts=2, more_tokens=1000)
    state = evolve(passing_run(tmp_path), {"resumes": [note]})
    data = json.loads(run_json(state, secrets=SECRETS))
    assert data["resumes"][0]["previous_status"] == "exhausted"
    assert data["resumes"][0]["earlier"]["tokens"] == 900
    read = load_run_json(json.dumps(data))
    spec = read.spec.budget
    assert read.max_attempts == 1 + spec.patch_attempts + spec.rethink_attempts + 2
    assert read.budget.tokens == spec.tokens + 1000
    assert read.budget.patch_attempts == spec.patch_attempts + 2
    assert read.fresh_from == 2  # more budget: the stall window starts again there
    interrupted = evolve(read, {"resumes": [note.model_copy(update={"more_attempts": 0,
                                                                    "more_tokens": 0})]})
    assert interrupted.fresh_from == 0  # a plain resume goes on as the run would have


def test_a_version_8_run_reads_as_one_that_recorded_none_of_them(tmp_path: Path) -> None:
    data = json.loads(run_json(_recorded_run(tmp_path), secrets=SECRETS))
    data["schema_version"] = 8
    for name in ("selfcorrect_version", "input_digests", "test_digests", "image",
                 "final_check"):
        del data[name]

    state = load_run_json(json.dumps(data))

    assert state.schema_version == SCHEMA_VERSION and state.status is Status.PASSED
    assert (state.selfcorrect_version, state.input_digests, state.test_digests) == ("", [], [])
    assert state.image is None and state.final_check is None


def test_the_recorded_version_1_runs_still_read(tmp_path: Path) -> None:
    fixtures = Path(__file__).parents[2] / "fixtures" / "real_model"
    for path in sorted(fixtures.glob("*.run.json")):
        state = load_run_json(path.read_text(encoding="utf-8"))
        assert state.spec.isolation == "in-process", path.name


def test_a_missing_schema_version_is_refused(tmp_path: Path) -> None:
    data = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    del data["schema_version"]

    with pytest.raises(RunJsonError, match="schema version None"):
        load_run_json(json.dumps(data))


@pytest.mark.parametrize(
    ("text", "problem"),
    [("{not json", "run.json is not valid JSON"), ("[1, 2]", "must hold a JSON object")],
)
def test_text_that_is_no_run_state_is_refused(text: str, problem: str) -> None:
    with pytest.raises(RunJsonError, match=problem):
        load_run_json(text)


def test_a_state_that_does_not_match_the_schema_is_refused(tmp_path: Path) -> None:
    data = json.loads(run_json(passing_run(tmp_path), secrets=SECRETS))
    data["attempts"][0]["strategy"] = "guess"

    expected = f"does not match schema version {SCHEMA_VERSION}"
    with pytest.raises(RunJsonError, match=expected) as caught:
        load_run_json(json.dumps(data))

    assert "attempts.0.strategy" in caught.value.message


def test_a_secret_that_spells_a_schema_word_leaves_the_state_valid(tmp_path: Path) -> None:
    """Statuses, categories and outcomes are our words, not data: a secret equal to one
    (here the status and a category of the run) must not make the state unreadable, while
    the same text inside free text is still redacted."""
    state = exhausted_run().model_copy(update={"stop_reason": "budget exhausted after 2"})
    secrets = ["exhausted", "environment", "contract", "semantic"]

    clean = redacted_state(state, secrets=secrets)
    assert clean.status == state.status
    assert clean.stop_reason == "budget [REDACTED:secret] after 2"
    assert load_run_json(run_json(state, secrets=secrets)) == clean
    categories = [a.verdict.category for a in state.attempts if a.verdict]
    assert categories and [a.verdict.category for a in clean.attempts if a.verdict] == categories
    assert audit_markdown(state, secrets=secrets).startswith("# selfcorrect audit")  # renders
