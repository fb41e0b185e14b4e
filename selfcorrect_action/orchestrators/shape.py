"""The loop as a graph, described as data: which steps are the nodes for a kind of task, where
each one leads, and how many steps a run can still take. Pure and free of LangGraph, so the
routing the graph follows is the plain loop's (loop/orchestrator.py), written once, and read
and tested without the extra.

The plain loop, node by node: the steps before the first attempt (a repair's baseline, the
plan) run while the plan is missing; an attempt is generate (a repair's review), execute,
evaluate, reflect; the run goes on after a step only while its status is `running`, and
reflect's decision is what sets that status. The edges that test it are the conditional
ones; execute → evaluate → reflect go on unconditionally, as in the plain loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from selfcorrect_action.loop.given import awaits_execution
from selfcorrect_action.loop.orchestrator import Step, Steps, unchanged
from selfcorrect_action.loop.state import RunState, Status

END = "__end__"  # LangGraph's name for the end (langgraph.graph.END), checked by the tests
# The plain loop checks for a cancel before these steps (and once before the first).
CANCEL_BEFORE = frozenset({"generate", "execute"})


@dataclass(frozen=True)
class Shape:
    before: tuple[str, ...]  # once, before the first attempt
    attempt: tuple[str, ...]  # once per attempt, reflect last
    steps: Mapping[str, Step]  # every node but reflect: its step function

    @property
    def nodes(self) -> tuple[str, ...]:
        return (*self.before, *self.attempt)

    @property
    def conditional(self) -> frozenset[str]:
        """The nodes after which the run goes on only while it is running."""
        before_execute = self.attempt[self.attempt.index("execute") - 1]
        return frozenset({*self.before, before_execute, "reflect"})


def shape_for(steps: Steps) -> Shape:
    """The nodes of a kind of task: a step it does not have (`unchanged`) is no node."""
    before = {"baseline": steps.prepare, "plan": steps.plan}
    attempt = {"generate": steps.generate, "review": steps.review,
               "execute": steps.execute, "evaluate": steps.evaluate}
    kept = {name: step for name, step in {**before, **attempt}.items()
            if step is not unchanged}
    return Shape(before=tuple(name for name in before if name in kept),
                 attempt=(*(name for name in attempt if name in kept), "reflect"),
                 steps=kept)


def first(shape: Shape, state: RunState) -> str:
    """Where a run starts: the plan (and what comes before it) unless it has one."""
    if state.plan is None:
        return shape.before[0]
    return _attempt_start(shape, state) if state.status is Status.RUNNING else END


def following(shape: Shape, node: str) -> str:
    """The node after `node` while the run goes on."""
    order = shape.nodes
    index = order.index(node)
    return order[index + 1] if index + 1 < len(order) else shape.attempt[0]


def after(shape: Shape, node: str, state: RunState) -> str:
    """Where the run goes once `node` has returned `state`."""
    if node in shape.conditional and state.status is not Status.RUNNING:
        return END
    then = following(shape, node)
    return _attempt_start(shape, state) if then == shape.attempt[0] else then


def destinations(shape: Shape, node: str) -> list[str]:
    """Every node `after` can lead to from `node`: the graph's path map."""
    then = following(shape, node)
    starts = [then, given_start(shape)] if then == shape.attempt[0] else [then]
    return [*starts, END]


def given_start(shape: Shape) -> str:
    """Where an attempt whose code is already there starts: the step after generate (a
    repair's review, else execute)."""
    return shape.attempt[1]


def _attempt_start(shape: Shape, state: RunState) -> str:
    """An attempt starts with its generation, or after it when the code was given
    (loop/given.py) or is a resumed run's to execute again, as in the plain loop."""
    return given_start(shape) if awaits_execution(state) else shape.attempt[0]


def steps_left(shape: Shape, next_node: str, *, attempts: int, cap: int,
               given: bool = False) -> int:
    """How many steps a run can still take from `next_node` with `attempts` made (the one
    in progress included) of at most `cap`: LangGraph's recursion bound is the budget.
    `given`: the first attempt is given code not yet run."""
    if next_node == END:
        return 0
    per_attempt = len(shape.attempt)
    if next_node in shape.before:
        # A given first attempt (loop/given.py) is executed, never generated: the steps
        # before its execution are not taken, and the bound stays exact.
        skipped = shape.attempt.index(given_start(shape)) if given and cap > 0 else 0
        return len(shape.before) - shape.before.index(next_node) + cap * per_attempt - skipped
    index = shape.attempt.index(next_node)
    this_attempt = per_attempt - index if index > 0 else 0
    return this_attempt + max(0, cap - attempts) * per_attempt
