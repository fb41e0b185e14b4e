"""`--orchestrator langgraph` (the `langgraph` extra): the loop's steps as the nodes of a
LangGraph StateGraph over RunState, unchanged (each node is the step function itself, its
Deps bound), reflect's decision as the conditional edge, and the attempt budget as the
recursion bound. Nothing here decides anything the plain loop does not: the routing is
shape.py's, written once, and a run ends the same way (run_loop settles usage and the end
time for both), which is what the identical-run.json tests prove on every example.

What LangGraph adds is its checkpointer: with a SQLite file every finished step is saved
(durably, before the next step starts), so a run that was killed resumes from its last
finished step (checkpoints.py). Progress lines are the steps' own events; the graph's
stream of node updates drives the rest of what a front end sees, as the plain loop does:
the state after the plan and after every attempt, and a cancel checked before each
generation and each execution.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphRecursionError
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StreamMode

from selfcorrect_action.errors import SelfcorrectError
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.given import awaits_execution
from selfcorrect_action.loop.orchestrator import (
    Step,
    attempt_cap,
    out_of_attempts,
    steps_for,
    stopped_by,
)
from selfcorrect_action.loop.reflect import reflect
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.orchestrators.checkpoints import (
    RESUMABLE,
    SqliteSaver,
    open_checkpoints,
    thread,
)
from selfcorrect_action.orchestrators.shape import (
    CANCEL_BEFORE,
    END,
    Shape,
    after,
    destinations,
    first,
    following,
    given_start,
    shape_for,
    steps_left,
)

Decide = Callable[[RunState], RunState]
# Each step's update (which node ran), then the whole state after it.
STREAM_MODES: list[StreamMode] = ["updates", "values"]


def build_graph(shape: Shape, deps: Deps, *, decide: Decide = reflect) -> StateGraph[Any]:
    """The StateGraph of `shape`'s steps, not compiled: a larger application can add it as
    a subgraph, or compile it with its own checkpointer (docs/langgraph.md)."""
    graph: StateGraph[Any] = StateGraph(RunState)
    for name in shape.nodes:
        node = decide if name == "reflect" else bound(shape.steps[name], deps)
        graph.add_node(name, cast(Any, node))  # its _Node protocol names the parameter
    graph.add_conditional_edges(START, partial(first, shape),
                                [shape.before[0], shape.attempt[0], given_start(shape), END])
    for name in shape.nodes:
        if name in shape.conditional:
            graph.add_conditional_edges(name, partial(after, shape, name),
                                        destinations(shape, name))
        else:
            graph.add_edge(name, following(shape, name))
    return graph


def bound(step: Step, deps: Deps) -> Callable[[RunState], RunState]:
    """The node of `step`: the step function itself with its Deps given (its `.func` is
    the step, which the tests check: the graph runs the steps, not copies of them)."""
    node: Callable[[RunState], RunState] = partial(cast(Any, step), deps=deps)
    return node


def compiled(state: RunState, deps: Deps, checkpointer: SqliteSaver | None = None, *,
             decide: Decide = reflect) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The graph for `state`'s kind of task, ready to run."""
    return build_graph(shape_for(steps_for(state)), deps, decide=decide).compile(
        checkpointer=checkpointer)


@dataclass
class _Progress:
    """What the graph's stream tells the run: the latest state, and after which node."""

    shape: Shape
    deps: Deps
    state: RunState
    node: str | None = None

    def saw(self, mode: str, chunk: Any) -> None:
        if mode == "updates":
            (self.node,) = chunk
            return
        self.state = RunState.model_validate(chunk)
        if self.node is None:  # the state the graph started from
            return
        self.deps.on_step(self.state)
        upcoming = after(self.shape, self.node, self.state)
        if self.node == "reflect" or (self.node in self.shape.before
                                      and upcoming not in self.shape.before):
            self.deps.on_state(self.state)
        if upcoming in CANCEL_BEFORE:
            self.deps.check_cancelled()

    def out_of_attempts(self) -> None:
        if self.state.status is Status.RUNNING:
            self.state = out_of_attempts(self.state)
            self.deps.on_step(self.state)


@dataclass(frozen=True)
class GraphOrchestrator:
    """A `drive` for loop.orchestrator.run_loop. With `checkpoints` (a SQLite file) every
    finished step is saved under the run's id as well. A resumed run starts from the state
    it is given, as the plain loop does (loop/resume.py decides it for both)."""

    checkpoints: Path | None = None
    decide: Decide = field(default=reflect)

    def __call__(self, state: RunState, deps: Deps) -> RunState:
        shape = shape_for(steps_for(state))
        progress = _Progress(shape, deps, state)
        with open_checkpoints(self.checkpoints) as saver:
            graph = compiled(state, deps, saver, decide=self.decide)
            config: RunnableConfig = thread(state.run_id)  # type: ignore[assignment]
            try:
                deps.check_cancelled()
                start = first(shape, state)
                self._run(graph, config, state, progress, steps_left(
                    shape, start, attempts=len(state.attempts), cap=attempt_cap(state),
                    given=awaits_execution(state)))
            except (SelfcorrectError, KeyboardInterrupt) as exc:
                return stopped_by(progress.state, exc)
            if saver is not None and progress.state.status not in RESUMABLE:
                saver.delete_thread(state.run_id)  # a run that ended cannot be resumed
        return progress.state

    @staticmethod
    def _run(graph: CompiledStateGraph[Any, Any, Any, Any], config: RunnableConfig,
             start: RunState, progress: _Progress, limit: int) -> None:
        """Stream the graph from `start` for at most
        `limit` steps, the budget's. LangGraph's bound is exact but for one thing: a run
        that takes all `limit` steps is out of steps even when its last step ended it,
        so whether the budget ran out is the last state's status."""
        if limit == 0:  # not even one step: the budget is used (a recursion limit is >= 1)
            progress.out_of_attempts()
            return
        try:
            # "sync": a step's checkpoint is on disk before the next step starts, so a run
            # killed in any step resumes from the one before it.
            for mode, chunk in graph.stream(
                    start, {**config, "recursion_limit": limit}, stream_mode=STREAM_MODES,
                    durability="sync" if graph.checkpointer else None):
                progress.saw(mode, chunk)
        except GraphRecursionError:
            progress.out_of_attempts()

