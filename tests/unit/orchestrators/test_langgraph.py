"""The LangGraph orchestrator's own guarantees, over the loop's fakes: its nodes are the step
functions themselves, its recursion bound is the attempt budget, and its SQLite checkpoints
let an interrupted run go on from its last finished step to the end an uninterrupted run
reaches. (Every loop scenario under both orchestrators: tests/unit/loop/.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import langgraph.graph
import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.loop import orchestrator
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.orchestrator import REPAIR_STEPS, SCRIPT_STEPS, Steps, run_loop
from selfcorrect_action.loop.reflect import reflect
from selfcorrect_action.loop.resume import MoreBudget, resume_state
from selfcorrect_action.loop.state import NextStep, RunState, Status, Strategy
from selfcorrect_action.orchestrators import shape
from selfcorrect_action.orchestrators.checkpoints import saved_state
from selfcorrect_action.orchestrators.langgraph import GraphOrchestrator, build_graph
from selfcorrect_action.records import evolve
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.sandbox.models import ExecutionResult
from selfcorrect_action.spec import Budget, TaskSpec
from tests.fakes.scripted_llm import ScriptedLLM
from tests.orchestration import comparable
from tests.unit.loop.test_orchestrator import (
    CRASH,
    PASS,
    PLAN,
    CannedSandbox,
    code,
    ok_if,
    state,
)

# A run of two attempts: a crash, patched, then judged to pass.
ANSWERS = [PLAN, ("generate", code("boom()")), ("repair", code("print('good')")), PASS]


def resumable(path: Path, run_id: str, fresh: RunState) -> RunState:
    """The state a resume goes on from, as loop/resume.py makes it from LangGraph's file."""
    saved = saved_state(path, run_id)
    if saved is None:
        raise UsageError(f"no checkpoint of {run_id} in {path}")
    return resume_state(saved, fresh, more=MoreBudget(), now="t1")


def deps(llm: ScriptedLLM, tmp_path: Path, **more: object) -> Deps:
    return Deps(llm=llm, sandbox=CannedSandbox(ok_if("good")), work_root=tmp_path,
                now=lambda: "t1", **more)  # type: ignore[arg-type]


def test_langgraphs_end_is_the_shapes() -> None:
    assert shape.END == langgraph.graph.END


@pytest.mark.parametrize("steps", [SCRIPT_STEPS, REPAIR_STEPS], ids=["script", "repair"])
def test_every_node_is_the_step_function_itself(steps: Steps, tmp_path: Path) -> None:
    wanted = {"baseline": steps.prepare, "plan": steps.plan, "generate": steps.generate,
              "review": steps.review, "execute": steps.execute, "evaluate": steps.evaluate}
    loop_deps = deps(ScriptedLLM([]), tmp_path)
    graph = build_graph(shape.shape_for(steps), loop_deps)
    assert function_of(graph.nodes["reflect"]) is reflect
    for name, spec in graph.nodes.items():
        if name != "reflect":
            node = function_of(spec)
            assert (node.func, node.args, node.keywords) == (wanted[name], (),
                                                            {"deps": loop_deps})


def function_of(node: Any) -> Any:
    """What a LangGraph node calls (its StateNodeSpec's RunnableCallable's function)."""
    return node.runnable.func


def endless(state: RunState) -> RunState:
    """A decision that never ends the run (the bug the attempt cap guards against)."""
    return evolve(state, {"next_step": NextStep(strategy=Strategy.RETHINK, tier="cheap")})


def test_the_attempt_budget_bounds_the_graph_as_it_bounds_the_plain_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    budget = Budget(patch_attempts=1, rethink_attempts=1)
    answers = [PLAN, *(("generate", code(f"boom{i}()")) for i in range(5))]

    def run(drive: GraphOrchestrator | None) -> RunState:
        sandbox = CannedSandbox(lambda candidate: CRASH)
        return run_loop(state(budget=budget), Deps(llm=ScriptedLLM(list(answers)),
                                                   sandbox=sandbox, work_root=tmp_path),
                        drive=drive)

    graph = run(GraphOrchestrator(decide=endless))
    monkeypatch.setattr(orchestrator, "reflect", endless)
    plain = run(None)
    for final in (graph, plain):
        assert (final.status, final.stop_reason) == (Status.EXHAUSTED, "all 3 attempts used")
        assert len(final.attempts) == 3


def test_an_interrupted_run_resumes_from_its_last_step_to_the_same_end(tmp_path: Path
                                                                      ) -> None:
    checkpoints = tmp_path / "checkpoints.sqlite"
    whole = run_loop(state(), deps(ScriptedLLM(list(ANSWERS)), tmp_path / "whole"),
                     drive=GraphOrchestrator(checkpoints))
    assert whole.status is Status.PASSED and len(whole.attempts) == 2

    token = CancelToken()

    def cancel_after_attempt_1(seen: RunState) -> None:
        if len(seen.attempts) == 1:
            token.cancel()

    stopped = run_loop(state(), deps(ScriptedLLM(list(ANSWERS)), tmp_path / "stopped",
                                     on_state=cancel_after_attempt_1,
                                     check_cancelled=token.check),
                       drive=GraphOrchestrator(checkpoints))
    assert stopped.status is Status.CANCELLED and stopped.interrupted_by == "cancelled"

    saved = resumable(checkpoints, "r", state())
    assert len(saved.attempts) == 1 and saved.status is Status.RUNNING
    assert saved.resumes[0].reexecuted == 1 and saved.attempts[0].execution is None
    # Where a replay stands is in the state: one exchange per call made.
    left = ScriptedLLM(ANSWERS[saved.usage.llm_calls:])
    resumed = run_loop(saved, deps(left, tmp_path / "resumed"),
                       drive=GraphOrchestrator(checkpoints))
    assert left.answers == []
    assert comparable(evolve(resumed, {"resumes": []}).model_dump(mode="json")) == comparable(
        whole.model_dump(mode="json"))


def test_a_run_that_passed_leaves_no_checkpoints(tmp_path: Path
                                                                     ) -> None:
    checkpoints = tmp_path / "checkpoints.sqlite"
    run_loop(state(), deps(ScriptedLLM(list(ANSWERS)), tmp_path),
             drive=GraphOrchestrator(checkpoints))
    with sqlite3.connect(checkpoints) as db:
        assert db.execute("SELECT count(*) FROM checkpoints").fetchone() == (0,)
    assert saved_state(checkpoints, "r") is None


def test_both_orchestrators_save_the_same_state_after_every_step(tmp_path: Path) -> None:
    """The run's checkpoint folder is written from Deps.on_step (issue 37): the same
    states, in the same order, whichever orchestrator drives the steps."""
    seen: dict[str, list[tuple[int, str, bool]]] = {"plain": [], "langgraph": []}
    for name, drive in (("plain", None), ("langgraph", GraphOrchestrator())):
        def saved(state: RunState, into: list[tuple[int, str, bool]] = seen[name]) -> None:
            last = state.last
            into.append((len(state.attempts), state.status.value,
                         last is not None and last.verdict is not None))
        run_loop(state(), deps(ScriptedLLM(list(ANSWERS)), tmp_path / name, on_step=saved),
                 drive=drive)
    assert seen["plain"] == seen["langgraph"]
    assert seen["plain"][0] == (0, "running", False)  # the first state, before any step
    assert seen["plain"][-1] == (2, "passed", True)


def test_a_spent_run_keeps_its_langgraph_checkpoints(tmp_path: Path) -> None:
    """Issue 37: a run that ran out of budget can be given more, so its checkpoints stay."""
    checkpoints = tmp_path / "checkpoints.sqlite"
    spent = evolve(state(), {"spec": evolve(state().spec, {"budget": Budget(
        patch_attempts=0, rethink_attempts=0)})})
    ended = run_loop(spent, deps(ScriptedLLM(ANSWERS[:2]), tmp_path),
                     drive=GraphOrchestrator(checkpoints))
    assert ended.status is Status.EXHAUSTED
    saved = saved_state(checkpoints, "r")
    assert saved is not None and len(saved.attempts) == 1


def test_an_interrupt_inside_a_step_keeps_the_steps_before_it(tmp_path: Path) -> None:
    """SIGINT in the middle of execute: the run resumes at execute, with attempt 1's code."""
    checkpoints = tmp_path / "checkpoints.sqlite"

    def interrupted(candidate: str) -> ExecutionResult:
        raise KeyboardInterrupt

    stopped = run_loop(state(), Deps(llm=ScriptedLLM(list(ANSWERS)),
                                     sandbox=CannedSandbox(interrupted), work_root=tmp_path),
                       drive=GraphOrchestrator(checkpoints))
    assert stopped.interrupted_by == "SIGINT"
    saved = resumable(checkpoints, "r", state())
    assert "boom()" in saved.attempts[0].code and saved.attempts[0].execution is None
    resumed = run_loop(saved, deps(ScriptedLLM(ANSWERS[2:]), tmp_path),
                       drive=GraphOrchestrator(checkpoints))
    assert resumed.status is Status.PASSED and len(resumed.attempts) == 2


def test_resuming_is_refused_for_another_task_or_an_unknown_file(tmp_path: Path) -> None:
    checkpoints = tmp_path / "checkpoints.sqlite"
    token = CancelToken()
    run_loop(state(), deps(ScriptedLLM(list(ANSWERS)), tmp_path, check_cancelled=token.check,
                           on_state=lambda seen: token.cancel()),
             drive=GraphOrchestrator(checkpoints))  # stopped after its plan
    other = evolve(state(), {"spec": TaskSpec(prompt="do another thing")})
    with pytest.raises(UsageError, match="another task"):
        resumable(checkpoints, "r", other)
    with pytest.raises(UsageError, match="called a model; resume it the same way"):
        resumable(checkpoints, "r", evolve(state(), {"replayed": True}))
    assert saved_state(tmp_path / "nowhere.sqlite", "r") is None


def test_the_loop_is_a_node_of_a_larger_application(tmp_path: Path) -> None:
    """docs/langgraph.md's embedding: the compiled loop as one node of an application whose
    state is RunState, followed by a node of the application's own."""
    from langgraph.graph import END, START, StateGraph

    def notify(state: RunState) -> RunState:
        return evolve(state, {"guidance": f"notified: {state.status.value}"})

    loop = build_graph(shape.shape_for(SCRIPT_STEPS),
                       deps(ScriptedLLM(list(ANSWERS)), tmp_path)).compile()
    app: StateGraph[Any] = StateGraph(RunState)
    app.add_node("selfcorrect", loop)
    app.add_node("notify", notify)
    app.add_edge(START, "selfcorrect")
    app.add_edge("selfcorrect", "notify")
    app.add_edge("notify", END)
    final = RunState.model_validate(app.compile().invoke(state(), {"recursion_limit": 200}))
    assert final.status is Status.PASSED and len(final.attempts) == 2
    assert final.guidance == "notified: passed"


def _drawings() -> list[str]:
    loop_deps = Deps(llm=ScriptedLLM([]), sandbox=CannedSandbox(ok_if("x")), work_root=Path())
    return [build_graph(shape.shape_for(steps), loop_deps).compile().get_graph().draw_mermaid()
            .strip() for steps in (SCRIPT_STEPS, REPAIR_STEPS)]


def test_the_docs_show_langgraphs_own_drawing_of_the_graphs() -> None:
    page = (Path(__file__).parents[3] / "docs" / "langgraph.md").read_text()
    shown = [block.split("```", 1)[0].strip() for block in page.split("```mermaid\n")[1:]]
    assert shown == _drawings()
