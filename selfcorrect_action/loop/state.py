"""The single run state every step reads and returns, and the records inside it.

It is also the audit trail: run.json is this model dumped (see SCHEMA_VERSION), and AUDIT.md
is rendered from it, so nothing the report says can drift from what the loop did.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from selfcorrect_action.choices import Orchestrator, Runtime
from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.llm.models import ModelTiers, Tier
from selfcorrect_action.llm.server_probe import ServerInfo
from selfcorrect_action.records import evolve
from selfcorrect_action.repair.records import RepairRecord, ReviewOutcome
from selfcorrect_action.sandbox.identity import ImageIdentity
from selfcorrect_action.sandbox.models import ExecutionResult
from selfcorrect_action.spec import Budget, TaskSpec
from selfcorrect_action.taxonomy import Category, TestOutcome, Verdict

# 2: the spec records `isolation` (runs of version 1 always imported the candidate into
# pytest's process; report/run_json.py reads them as `isolation: in-process`).
# 3: kind repair (issue 18): the spec's repair fields, the run's `repair` record, and each
# attempt's rewritten files, review and regressions; for small local models (issue 21) the
# spec's `signature` and `generation`, a repair packet's `wanted_shape`, the run's
# `profile`, `generation` and detected `server`, each attempt's `temperature`; `origin`, the
# repository a run was made for and its visibility (the action sets it; `view --site` warns
# before publishing a private repository's runs; issue 22). Every new field has a default,
# so a version 2 run reads as it was (standard profile, chat, no known origin).
# 4: network by allowlist (issue 19): the contract's `network` may be a mapping ({allow:
# [...], ports, credentials} or {observe: true}), and each execution result carries the
# egress proxy's connection log (`network`, None without network and in older runs); and the
# `orchestrator` that drove the steps (issue 23: plain or langgraph), plain before.
# 5: warm interpreters (issue 20): the contract's `warm`, and each execution result's
# `start` (cold or warm), `start_note`, `preloaded` and `warm_rss_kb`; older runs read as
# cold starts with the contract's default.
# 6: the run's `redraws` (issue 21): how many fresh answers a generation that does not parse
# gets before it counts as an attempt (the answers drawn again are each attempt's
# `rejected`); older runs drew once (0).
# 7: the spec's `tests_runner` (issue 20): `auto` judges a pass of tests that need nothing of
# pytest's without it; older runs ran pytest every time (`pytest`).
# 8: status `cancelled` (issue 34): a run stopped from outside before it ended (a person's or
# a client's cancel, SIGINT, SIGTERM), `interrupted_by` saying which. Such runs were status
# `error` before; report/run_json.py reads an older `error` with `interrupted_by` set as one.
# 9: what a verdict depended on (issue 36): the `selfcorrect_version`, the digests of the
# spec's inputs and test files as the run read them (`input_digests`, `test_digests`), the
# sandbox `image`'s identity, and the `final_check` of a script published into a repository
# (its header in). Each optional: an older run reads as one that recorded none of them.
# 10: resumed runs (issue 37): the run's `resumes`, one per `--resume` or `/selfcorrect
# resume`, saying which attempts came from the earlier run, which one was executed again,
# what was spent before, what was played back from its recording, and the budget added.
# Older runs were never resumed this way (none).
# 11: what a small model taught the run (issue 38): the server's `context_tokens`, each
# attempt's `prompt_trimmed` (what its prompt left out to fit the context window), and the
# run's `profile_reason` and `profile_open` (why its profile, and whether the model's
# first answer may still switch it to small). Older runs: none left out, no reason said.
SCHEMA_VERSION = 11


class Status(StrEnum):
    RUNNING = "running"
    PASSED = "passed"
    EXHAUSTED = "exhausted"  # a retry, token or cost budget ran out
    STOPPED = "stopped"  # no progress (or a cycle) even after escalating, or no usable answer
    # Stopped from outside before it ended: a cancel (MCP, API), SIGINT or SIGTERM; which
    # one is `interrupted_by`. Not a failure: the attempts so far are kept, and a run with
    # checkpoints can go on (issue 34: one status for all three, as GitHub's check runs
    # have `cancelled` and MLflow KILLED, since a reader acts on each the same way).
    CANCELLED = "cancelled"
    ERROR = "error"  # infrastructure: sandbox, LLM API, a bug


class Strategy(StrEnum):
    INITIAL = "initial"
    PATCH = "patch"  # fix the same approach
    RETHINK = "rethink"  # a different approach


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LLMCall(_Record):
    purpose: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    cost_known: bool
    latency_ms: int
    replayed: bool
    resumed: bool = False  # played back from the earlier run's recording (issue 37)


MAX_REJECTED_CHARS = 4000


class RejectedReply(_Record):
    """A model answer the run refused, kept (bounded) with why: the reports show what the
    model said instead of only that it failed (issue 9)."""

    purpose: str
    reason: str
    text: str = Field(max_length=MAX_REJECTED_CHARS + 100)
    finish_reason: str | None = None
    chars: int = 0  # the whole reply's length, when the text kept is cut

    @classmethod
    def of(cls, purpose: str, reason: str, text: str, finish_reason: str | None = None
           ) -> RejectedReply:
        kept = text if len(text) <= MAX_REJECTED_CHARS else (
            text[:MAX_REJECTED_CHARS] + f"\n[... {len(text) - MAX_REJECTED_CHARS:,} more "
            "characters ...]")
        return cls(purpose=purpose, reason=reason, text=kept, finish_reason=finish_reason,
                   chars=len(text))


class JudgeOutcome(_Record):
    passed: bool
    reasoning: str
    unmet_criteria: list[str] = Field(default_factory=list)
    raw_verdict: str = ""


class Progress(_Record):
    """How far an attempt got; compared as a tuple, larger is better."""

    layer: int = 0  # 0 nothing ran, 1 executed cleanly, 2 contract + tests passed, 3 judge passed
    tests_passed: int = 0
    checks_passed: int = 0

    def key(self) -> tuple[int, int, int]:
        return (self.layer, self.tests_passed, self.checks_passed)


class RepairPacket(_Record):
    """What the next generation is told about this attempt's failure: distilled, bounded."""

    attempt: int
    max_attempts: int
    strategy: Strategy
    category: Category
    evidence: str
    failing_tests: list[TestOutcome] = Field(default_factory=list)
    tests_summary: str = ""  # "3 passed, 2 failed": counts over every test, not only the listed
    failed_checks: list[str] = Field(default_factory=list)
    location: str = ""  # "script.py:12 in main: <source line>"
    judge_reasoning: str = ""
    already_tried: list[str] = Field(default_factory=list)
    output_excerpt: str = ""
    file_name: str = ""  # the candidate file the repair returns whole
    base_attempt: int | None = None  # whose code the repair starts from (None: from scratch)
    # After a syntax failure: two lines of the code an answer should hold (issue 21: a small
    # model told only "SyntaxError" wrote prose again).
    wanted_shape: str = ""


class Attempt(_Record):
    index: int  # 1-based
    strategy: Strategy
    tier: Tier
    model: str
    code: str
    code_sha: str
    base_attempt: int | None = None  # the attempt whose code this one repaired
    cycle_of: int | None = None  # set when the code equals an earlier attempt's (not re-run)
    execution: ExecutionResult | None = None
    test_execution: ExecutionResult | None = None
    tests: list[TestOutcome] = Field(default_factory=list)
    verdict: Verdict | None = None
    judge: JudgeOutcome | None = None
    progress: Progress = Field(default_factory=Progress)
    packet: RepairPacket | None = None  # the repair packet that followed this attempt
    llm_calls: list[LLMCall] = Field(default_factory=list)
    rejected: list[RejectedReply] = Field(default_factory=list)  # answers refused on the way
    duration_ms: int = 0
    # Why this attempt was made: the NextStep reason reflect gave (empty for the first). The
    # audit trail shows it per attempt; next_step only holds the latest decision.
    reason: str = ""
    temperature: float | None = None  # what the generation asked for (None: the model's own)
    # kind repair: the files the answer rewrote (path -> whole content), their diff against
    # the repository, the reviewer's word before the run, and the tests that passed at
    # baseline and did not now. `code` stays empty for a repair.
    files: dict[str, str] = Field(default_factory=dict)
    diff: str = ""
    review: ReviewOutcome | None = None
    regressions: list[str] = Field(default_factory=list)
    # What its prompt left out to fit the model's context window (loop/code_request.py's
    # TRIMS, in order; issue 38), none when the whole prompt fitted.
    prompt_trimmed: list[str] = Field(default_factory=list)


class Origin(_Record):
    """The repository a run was made for, as the forge described it (the action's event):
    whether its runs may be shown to anyone is the repository's visibility."""

    repository: str
    visibility: Literal["public", "private", "internal"]


class FileSha256(_Record):
    """A file the verdict depended on, as the run read it (issue 36)."""

    path: str  # relative to the spec's root (the repository), / separated
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class FinalCheck(_Record):
    """The passing script as it is published into a repository, its header in, run once
    more through the execute and evaluate steps with no model call (runs/published.py): a
    script that reads its own source may not pass with a comment it did not have."""

    script_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")  # the script as published
    passed: bool
    evidence: str = ""  # why it did not pass
    # Why it was not run again ("" when it was): a contract that opens the network, whose
    # second run would reach the outside again (another request to someone's API).
    skipped: str = ""


class Usage(_Record):
    patch_attempts: int = 0
    rethink_attempts: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    cost_known: bool = True
    llm_calls: int = 0


class NextStep(_Record):
    """What reflect decided: the generation the next attempt makes."""

    strategy: Strategy
    tier: Tier
    base_attempt: int | None = None
    reason: str = ""


class PlanRecord(_Record):
    approach: str = ""
    filled_fields: list[str] = Field(default_factory=list)  # contract fields the planner set
    wrote_tests: bool = False
    llm_calls: list[LLMCall] = Field(default_factory=list)
    # Why there was no usable plan and the run went on without one ("" when it had one).
    skipped: str = ""
    rejected: list[RejectedReply] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)  # kind repair: the files to rewrite


class Resume(_Record):
    """One going-on of an interrupted or spent run from its checkpoint (issue 37): the
    attempts up to `attempts_before` came from the earlier run; `reexecuted` is the one it
    continued from, run again in the sandbox (a checkpoint carries answers, not verdicts).
    What the earlier run had spent is `earlier`; the calls it had made but not yet put in a
    step, played back from its recording, are counted as they are replayed (their
    `replayed` is true), and everything else after is new."""

    resumed_at: str
    previous_status: Status  # how the earlier run was when it stopped (running: killed)
    previous_reason: str = ""
    attempts_before: int = 0
    reexecuted: int | None = None  # the attempt executed again (None: none had run yet)
    baseline_retaken: bool = False  # kind repair: the baseline was taken again
    earlier: Usage = Field(default_factory=Usage)
    recorded_calls: int = 0  # exchanges the earlier run's recording held past its state
    # Of those, what this run played back (their `resumed` is true), once it ended.
    played_back: Usage = Field(default_factory=Usage)
    more_attempts: int = Field(default=0, ge=0)
    more_tokens: int = Field(default=0, ge=0)
    more_usd: float = Field(default=0.0, ge=0)


class RunState(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    run_id: str
    started_at: str
    finished_at: str | None = None
    spec_source: str  # a file path, or "issue #12"
    spec: TaskSpec
    user_contract_fields: list[str] = Field(default_factory=list)  # what the planner keeps
    output_name: str  # the candidate's file name in the work dir (the basename of spec.output)
    contract: ExecutionContract  # the spec's contract, gaps filled by the plan step
    tests: dict[str, str] = Field(default_factory=dict)  # frozen test files: name -> content
    tests_written_by_plan: bool = False
    inputs: list[str] = Field(default_factory=list)  # input file names in the work dir
    models: ModelTiers
    runtime: Runtime = "runc"
    replayed: bool = False
    replay_file: str = ""  # the recording a replayed run played back: reports name it
    plan: PlanRecord | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    next_step: NextStep | None = None
    status: Status = Status.RUNNING
    stop_reason: str = ""
    guidance: str = ""  # extra guidance from a `/selfcorrect retry` comment or --guidance
    # What cancelled the run ("cancelled" for a caller's cancel, "SIGINT", "SIGTERM"): set
    # with status cancelled, None otherwise. Added after schema 1 shipped; optional, so older
    # run.json files still read.
    interrupted_by: str | None = None
    # For status error: the exit code of the error that ended the run, as the CLI reports
    # such errors up front (2: a replay that does not fit the run; 3: infrastructure).
    error_exit_code: int | None = None
    # kind repair: the repository, its baseline and the targets (None for other kinds).
    repair: RepairRecord | None = None
    # How code is asked for (issue 21), decided when the run's model connection opens:
    # the profile (`small`: short prompts, the code's start given, temperature 0 first),
    # the generation (`completion`: the model continues the function's code), and the
    # server found at the API base, if one was asked.
    profile: Literal["standard", "small"] = "standard"
    generation: Literal["chat", "completion"] = "chat"
    server: ServerInfo | None = None
    # Why that profile (issue 38): a setting, what the server or the name says of the
    # model's size, or, where nothing says it, the model's own answers: `profile_open`
    # while the first unrunnable answer may still switch the run to small (loop/profile.py).
    profile_reason: str = ""
    profile_open: bool = False
    # How many times a generation whose answer is not runnable Python (no code, an echo, a
    # SyntaxError) is asked again, warmer, before it counts as a failed attempt: a fresh
    # draw costs a small model's few hundred tokens and no sandbox run; a repair round costs
    # a longer prompt, which a small model follows worse (loop/generate.py).
    redraws: int = Field(default=0, ge=0)
    origin: Origin | None = None  # None: not made for a known repository (a local run)
    orchestrator: Orchestrator = "plain"  # what drove the steps (the same steps either way)
    # What the verdict depended on (issue 36; "" and empty in runs before version 9): the
    # selfcorrect that ran it, the spec's inputs and test files as read when the run
    # started, the sandbox image (its packages listed only for a run that publishes into a
    # repository, or known from an earlier listing), and the published script's final check.
    selfcorrect_version: str = ""
    input_digests: list[FileSha256] = Field(default_factory=list)
    test_digests: list[FileSha256] = Field(default_factory=list)
    image: ImageIdentity | None = None
    final_check: FinalCheck | None = None
    # Every time the run went on from its checkpoint (issue 37), oldest first.
    resumes: list[Resume] = Field(default_factory=list)

    @property
    def budget(self) -> Budget:
        """The spec's budget with what each resume added: more attempts may go to either
        strategy (the total is bounded by max_attempts)."""
        budget = self.spec.budget
        attempts = sum(resume.more_attempts for resume in self.resumes)
        tokens = sum(resume.more_tokens for resume in self.resumes)
        usd = sum(resume.more_usd for resume in self.resumes)
        if not (attempts or tokens or usd):
            return budget
        return budget.model_copy(update={
            "patch_attempts": budget.patch_attempts + attempts,
            "rethink_attempts": budget.rethink_attempts + attempts,
            "tokens": budget.tokens + tokens,
            "cost_usd": None if budget.cost_usd is None else budget.cost_usd + usd})

    @property
    def max_attempts(self) -> int:
        spec = self.spec.budget
        return (1 + spec.patch_attempts + spec.rethink_attempts
                + sum(resume.more_attempts for resume in self.resumes))

    @property
    def fresh_from(self) -> int:
        """The attempt the latest resume that gave more budget continued from (0: none):
        the window in which no progress counts as a stall starts there again, or the more
        attempts would stop at once. A resume of an interrupted run changes nothing there:
        it goes on as the run would have."""
        for resume in reversed(self.resumes):
            if resume.more_attempts or resume.more_tokens or resume.more_usd:
                return resume.reexecuted or resume.attempts_before
        return 0

    @property
    def last(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None

    def best(self) -> Attempt | None:
        """The attempt that got furthest (earliest on ties): repairs restart from it."""
        if not self.attempts:
            return None
        ran = [a for a in self.attempts if a.cycle_of is None] or self.attempts
        return max(ran, key=lambda a: (a.progress.key(), -a.index))


def end_run(state: RunState, status: Status, reason: str, *, usage: Usage | None = None
            ) -> RunState:
    """The state with the run over: `status` must be a final one."""
    if status is Status.RUNNING:
        raise ValueError("end_run needs a final status")
    changes: dict[str, object] = {"status": status, "stop_reason": reason}
    if usage is not None:
        changes["usage"] = usage
    return evolve(state, changes)


def with_last_attempt(state: RunState, attempt: Attempt) -> RunState:
    """The state with its latest attempt replaced by `attempt` (same index)."""
    if not state.attempts or state.attempts[-1].index != attempt.index:
        raise ValueError(f"attempt {attempt.index} is not the latest attempt")
    return evolve(state, {"attempts": [*state.attempts[:-1], attempt]})
