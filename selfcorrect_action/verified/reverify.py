"""Re-verification with no model call: the committed script through the loop's own
execute and evaluate steps (the sandbox, the contract, the frozen or recorded tests), as
its first and only attempt. The seam a regeneration, a resumed run or the benchmark starts
from given code through: `given_attempt` makes the attempt, `reverify` judges it.

The judge (layer 3) is not asked: a re-verification costs no tokens (`check --judge` asks
it of a stale spec, through the model it hands in: verified/check_judge.py). What the
record holds beyond the spec (the contract as planned, tests a model wrote) is used as
recorded; fields the spec itself writes win, as they do in a run."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from selfcorrect_action.choices import Runtime
from selfcorrect_action.llm.models import ChatRequest, ChatResponse, ModelTiers
from selfcorrect_action.loop.deps import Deps, Executor, utc_now
from selfcorrect_action.loop.evaluate import evaluate
from selfcorrect_action.loop.execute import execute
from selfcorrect_action.loop.given import given_attempt
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.records import evolve
from selfcorrect_action.sandbox.models import InputFile
from selfcorrect_action.spec import LoadedSpec, user_contract_fields
from selfcorrect_action.verified.record import VerifiedRecord


class NoModel:
    """The LLM seam of a run that must not call a model: any call is a bug."""

    def complete(self, request: ChatRequest) -> ChatResponse:
        raise AssertionError(f"a re-verification asked a model ({request.purpose})")


def reverify_state(loaded: LoadedSpec, record: VerifiedRecord | None, code: str, *,
                   runtime: Runtime = "runc", judged_by: ModelTiers | None = None
                   ) -> RunState:
    """The state a re-verification runs: the spec as it is now, the contract and the
    model-written tests from the record, the given code as attempt 1, no judge; with
    `judged_by` (the tiers a run of the spec resolves), the judge, whatever the spec's
    `judge:` says (`check --judge` asks it)."""
    spec = evolve(loaded.spec, {"judge": judged_by is not None})
    written = user_contract_fields(loaded.spec)
    contract = loaded.spec.contract
    if record is not None:
        # Whole top-level fields, as the plan step merges them: `artifacts.0.kind` is in
        # `written` too, and a user-written `artifacts` list wins whole.
        top = {name.split(".", 1)[0] for name in written}
        contract = evolve(record.contract, {name: getattr(loaded.spec.contract, name)
                                            for name in top})
    tests = {path.name: path.read_text(encoding="utf-8") for path in loaded.test_paths}
    from_model = not tests and record is not None and bool(record.model_tests)
    if from_model and record is not None:
        tests = dict(record.model_tests)
    models = judged_by or (ModelTiers.model_validate(record.models) if record and record.models
                           else ModelTiers())
    return RunState(
        run_id=uuid.uuid4().hex[:12], started_at=utc_now(), spec_source=loaded.source,
        spec=spec, user_contract_fields=sorted(written),
        output_name=PurePosixPath(str(loaded.output_path)).name, contract=contract,
        tests=tests, tests_written_by_plan=from_model,
        inputs=[path.name for path in loaded.input_paths], models=models,
        runtime=runtime,
        attempts=[given_attempt(code)])


def reverify(state: RunState, loaded: LoadedSpec, sandbox: Executor, work_root: Path, *,
             on_event: Callable[[str, str], None] = lambda step, message: None,
             with_model: Callable[[Deps], Deps] | None = None) -> RunState:
    """`state` (reverify_state) with its one attempt executed and judged by layers 1-2, and
    by the judge when `state.spec.judge`: asked through `with_model` (the deps given a
    model client), else the model is never called."""
    deps = Deps(llm=NoModel(), sandbox=sandbox, work_root=work_root,
                inputs=[InputFile(path=path.name, data=path.read_bytes())
                        for path in loaded.input_paths], on_event=on_event)
    if with_model is not None:
        deps = with_model(deps)
    return evaluate(execute(state, deps), deps)
