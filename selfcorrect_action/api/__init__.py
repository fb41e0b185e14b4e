"""selfcorrect from Python: the loop, the sandbox and the validator as functions, through
the same code as the command line (README, "Python API").

    from selfcorrect_action import api

    result = api.run_task(prompt="Print the first 10 primes, one a line",
                          model="openai/gpt-4o-mini")
    print(result.status, result.output, result.audit)
    replayed = api.run_task(spec="examples/tasks/two_sum.yml",
                            replay="examples/replays/two_sum.jsonl")

    checked = api.exec_script(Path("chart.py"), inputs=[Path("sales.csv")])
    problems = api.validate(".selfcorrect/tasks/chart.yml").problems

Expected failures (a bad spec, no model configured, no Docker engine) raise
`selfcorrect_action.errors.SelfcorrectError` subclasses, whose `message` and `hint` say what
to do (`NoModelConfigured` when there is no model to call and no recording to play); a run
that fails to pass is a RunResult, not an exception. `cancel=CancelToken()` lets another
thread stop a run or a script: call `token.cancel()`.
"""

from selfcorrect_action.api.exec import exec_script
from selfcorrect_action.api.results import (
    ExecResult,
    Problem,
    RunResult,
    ValidationResult,
)
from selfcorrect_action.api.run import (
    NoModelConfigured,
    PreparedTask,
    prepare_task,
    run_prepared,
    run_settings,
    run_task,
)
from selfcorrect_action.api.tasks import (
    prompt_name,
    repair_spec,
    spec_from_file,
    spec_from_prompt,
    spec_from_text,
)
from selfcorrect_action.api.validation import validate
from selfcorrect_action.runs.cancel import CancelToken

__all__ = [
    "CancelToken",
    "ExecResult",
    "NoModelConfigured",
    "PreparedTask",
    "Problem",
    "RunResult",
    "ValidationResult",
    "exec_script",
    "prepare_task",
    "prompt_name",
    "repair_spec",
    "run_prepared",
    "run_settings",
    "run_task",
    "spec_from_file",
    "spec_from_prompt",
    "spec_from_text",
    "validate",
]
