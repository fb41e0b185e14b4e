"""A run's page, from realistic runs (tests/unit/report/runs.py): it says what AUDIT.md says
(the same view-model), shows each attempt's pictures and tables inline, charts tokens and
cost, holds nothing that needs the network, and allows only its own style by hash."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image

from selfcorrect_action.history.artifacts import KeptArtifact
from selfcorrect_action.loop.state import Attempt
from selfcorrect_action.report.audit import audit_markdown
from selfcorrect_action.report.run_json import load_run_json, redacted_state, run_json
from selfcorrect_action.report.view import run_view
from selfcorrect_action.viewer.page import page_name, page_view, render_page
from tests.unit.report.runs import (
    PLANTED,
    SECRETS,
    cancelled_run,
    exhausted_run,
    passing_run,
    stopped_run,
)
from tests.unit.viewer.html_checks import parse, sha256_source, structure_problems

FIXTURES = Path(__file__).parents[2] / "fixtures" / "real_model"


def _png(colour: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (30, 20), colour).save(out, format="PNG")
    return out.getvalue()


KEPT = (
    KeptArtifact(1, "Chart.png", "png", 100, _png("red")),
    KeptArtifact(2, "chart.png", "png", 100, _png("green")),
    KeptArtifact(2, "totals.csv", "csv", 16, b"month,total\nJan,10\nFeb,<b>20</b>\n"),
    KeptArtifact(2, "huge.png", "png", 99_000_000, note="not kept: larger than 4 MiB"),
)


def test_the_page_says_what_the_audit_says(tmp_path: Path) -> None:
    state = passing_run(tmp_path)
    html = render_page(state, KEPT, secrets=SECRETS)
    page = parse(html)
    view = run_view(redacted_state(state, secrets=SECRETS))
    audit = audit_markdown(state, secrets=SECRETS)
    assert view.headline in page.text and view.headline in audit
    for row in view.summary:
        assert row.label in page.text and row.value in page.text
    ids = {attrs.get("id") for _, attrs in page.elements}
    for a in view.attempts:
        assert f"attempt-{a.index}" in ids
        for words in (a.progress, a.tokens, a.cost, a.result, a.evidence, a.code.splitlines()[0]):
            assert words in page.text, words
    assert view.outcome.best in page.text


def test_each_attempt_shows_its_pictures_and_tables(tmp_path: Path) -> None:
    page = parse(render_page(passing_run(tmp_path), KEPT, secrets=SECRETS))
    sources = [attrs["src"] or "" for attrs in page.all("img")]
    # Each attempt's picture in its own section, and once more in the strip at the top.
    assert sources.count("data:image/png;base64," + base64.b64encode(_png("red")).decode()) == 2
    assert sources.count("data:image/png;base64," + base64.b64encode(_png("green")).decode()) == 2
    assert all(attrs.get("alt") for attrs in page.all("img"))
    assert "all 2 rows of 16 bytes" in page.text and "<b>20</b>" in page.text  # as text
    assert "huge.png: not kept: larger than 4 MiB" in " ".join(page.text.split())


def test_tokens_and_cost_are_charted_per_attempt(tmp_path: Path) -> None:
    state = passing_run(tmp_path)
    view = page_view(state, ())
    assert [bar.index for bar in view.tokens.bars] == [1, 2]
    assert [bar.result for bar in view.tokens.bars] == ["failed", "passed"]
    tallest = max(view.tokens.bars, key=lambda bar: bar.height)
    assert tallest.height == 100 and view.tokens.top.endswith("tokens")
    page = parse(render_page(state, (), secrets=SECRETS))
    assert len(page.all("svg")) == 2 and len(page.all("rect")) == 4


def test_the_page_needs_nothing_and_runs_nothing(tmp_path: Path) -> None:
    html = render_page(exhausted_run(), KEPT, secrets=SECRETS)
    page = parse(html)
    assert structure_problems(page) == []
    assert page.all("script") == [] and page.all("link") == []
    policy = page.policy
    assert policy["default-src"] == ["'none'"] and policy["script-src"] == ["'none'"]
    assert policy["img-src"] == ["data:"] and policy["base-uri"] == ["'none'"]
    (style,) = page.styles
    assert policy["style-src"] == [sha256_source(style)], "the inline style is allowed by hash"
    assert not any(attrs.get("style") for _, attrs in page.elements)  # blocked by the policy
    assert "http://" not in html and "https://" not in html


@pytest.mark.parametrize("make", [passing_run, exhausted_run, stopped_run, cancelled_run])
def test_no_secret_reaches_the_page(make, tmp_path: Path) -> None:
    state = make(tmp_path) if make is passing_run else make()
    html = render_page(state, KEPT, secrets=SECRETS)
    assert [secret for secret in PLANTED if secret in html] == []


def test_a_page_from_a_run_json_looks_for_the_secrets_known_now(tmp_path: Path) -> None:
    state = load_run_json(run_json(passing_run(tmp_path), secrets=[]))
    html = render_page(state, (), secrets=["Read the CSV with"], from_report=True)
    assert "Read the CSV with" not in html and "[REDACTED:secret]" in html


def test_runs_of_every_schema_version_render(tmp_path: Path) -> None:
    """The recorded real-model runs are schema version 1; passing_run is the current one."""
    texts = [path.read_text() for path in sorted(FIXTURES.glob("*.run.json"))]
    assert texts, "the fixtures are there"
    for text in [*texts, run_json(passing_run(tmp_path), secrets=[])]:
        state = load_run_json(text)
        page = parse(render_page(state, (), secrets=[], from_report=True))
        assert structure_problems(page) == []
        assert f"attempt {len(state.attempts)}" in page.text or not state.attempts


def test_a_cancelled_run_is_shown_cancelled_not_as_a_failure() -> None:
    """Issue 34: a run stopped by SIGTERM says so, in a colour of its own, not the red of
    "the run could not continue"."""
    page = parse(render_page(cancelled_run(), (), secrets=SECRETS))
    (badge,) = [attrs for tag, attrs in page.elements if "badge" in (attrs.get("class") or "")]
    assert badge["class"] == "badge cancelled"
    assert "cancelled: stopped before it ended" in page.text
    assert "Stopped because: interrupted by SIGTERM" in page.text
    assert "could not continue" not in page.text
    (style,) = page.styles
    assert ".badge.cancelled {" in style and ".result.cancelled {" in style


def test_a_long_run_shows_its_first_and_last_attempts_in_full(tmp_path: Path) -> None:
    state = exhausted_run()
    first = state.attempts[0]
    many = [first.model_copy(update={"index": n}) for n in range(1, 121)]
    view = page_view(state.model_copy(update={"attempts": many}), ())
    assert [a.index for a in view.in_full] == [*range(1, 11), *range(81, 121)]
    assert len(view.timeline) == 120 and "Attempts 11 to 80 (70 of them)" in view.left_out
    assert view.run.attempts[20].code == "" and view.run.attempts[100].code == first.code.rstrip()


def test_a_page_name_is_the_run_id_only_when_that_is_a_plain_name() -> None:
    assert page_name("3fa2b1c9d0e1") == "3fa2b1c9d0e1.html"
    for hostile in ("../../etc/passwd", ".hidden", "a/b", "<script>", "", "x" * 100):
        name = page_name(hostile)
        assert name.startswith("run-") and name.endswith(".html") and "/" not in name
    assert page_name("../x") != page_name("../y")


def test_an_attempt_that_never_ran_says_so(tmp_path: Path) -> None:
    state = passing_run(tmp_path)
    pending = Attempt(index=3, strategy=state.attempts[0].strategy, tier="cheap", model="m",
                      code="print(1)\n", code_sha="x")
    state = state.model_copy(update={"attempts": [*state.attempts, pending]})
    page = parse(render_page(state, (), secrets=[]))
    assert "not evaluated" in page.text and "Not run: the run ended before" in page.text
