"""A task from wherever it is given: a spec file, a spec's YAML text, or a plain prompt
(`selfcorrect run --prompt`). Each comes back as a LoadedSpec checked the way `selfcorrect
run` checks a spec file (the files it names included), every problem located.

A prompt becomes the spec `prompt: <the text>` and nothing else, so it is what run.json
records as the spec (its source reads "--prompt"). Its name, which names the script
(`scripts/<name>.py`) and the default output folder (`out/<name>`), is made of the prompt's
first words: the first line lower-cased, its first six runs of ASCII letters and digits
joined by `_`, cut to 40 characters at a word boundary (a longer first word is cut short);
`task` when there are none, and `task_` in front when the name would start with a digit or
be a Python keyword (the spec's own rule for default outputs). "Plot monthly sales from
sales.csv as a bar chart" runs as `scripts/plot_monthly_sales_from_sales_csv.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

from selfcorrect_action.errors import SpecError, UsageError
from selfcorrect_action.spec import (
    LoadedSpec,
    TaskSpec,
    default_output,
    dump_spec,
    load_spec,
    load_spec_text,
    spec_yaml,
)

PROMPT_SOURCE = "--prompt"
NAME_WORDS = 6
NAME_CHARS = 40
DEFAULT_OUT = Path("out")
HINT = "\n  hint: "  # how a located problem's text carries its hint

Task = str | Path | LoadedSpec  # a prompt, a spec file, or a spec loaded already


def load_task(task: Task, *, root: Path | None = None) -> LoadedSpec:
    """`task` checked and ready to run (`selfcorrect run`'s: a str is --prompt's text);
    SpecError or UsageError says what is wrong, as the loaders wrote it."""
    if isinstance(task, LoadedSpec):
        return task
    if isinstance(task, Path):
        return load_spec(task, root=root)
    return _prompt_spec(task, root=root, source=PROMPT_SOURCE)


def spec_from_file(path: Path, *, root: Path | None = None) -> LoadedSpec:
    """A spec file; its tests and inputs are relative to `root` (default: the git
    repository holding it)."""
    with hint_apart():
        return load_spec(path, root=root)


def spec_from_text(text: str, *, root: Path | None = None, source: str = "spec") -> LoadedSpec:
    """A spec's YAML text; `source` names it in problems (`spec:3:5: ...`). Without an
    `output:` its script is `scripts/task.py`."""
    with hint_apart():
        return load_spec_text(text, source, root=root, name="task")


def spec_from_prompt(prompt: str, *, root: Path | None = None,
                     source: str = PROMPT_SOURCE) -> LoadedSpec:
    with hint_apart():
        return _prompt_spec(prompt, root=root, source=source)


def _prompt_spec(prompt: str, *, root: Path | None, source: str) -> LoadedSpec:
    if not prompt.strip():
        raise UsageError(f"{source}: the prompt is empty",
                         hint="describe the task, e.g. --prompt \"Print the first 10 primes\"")
    text = dump_spec(TaskSpec(prompt=prompt))
    return load_spec_text(text, source, root=root, name=f"{prompt_name(prompt)}.yml")


@contextmanager
def hint_apart() -> Iterator[None]:
    """A SpecError of one problem with its hint in `.hint`, not in `.message`, as every
    other error carries it (issue 38: a missing spec's `.hint` was None). The loaders
    write the hint into the problem's located text, which `str()` shows unchanged."""
    try:
        yield
    except SpecError as exc:
        if len(exc.problems) == 1 and HINT in exc.problems[0]:
            exc.message, _, exc.hint = exc.problems[0].partition(HINT)
        raise


def repair_spec(repository: Path, prompt: str, files: Sequence[str], *,
                test_command: str | Sequence[str] | None = None,
                failing_tests: Sequence[str] = (), requirements: str | None = None,
                review: bool = True, budget: Mapping[str, Any] | None = None,
                source: str = "repair") -> LoadedSpec:
    """A kind repair task on `repository` (its root): `files` are the globs the model may
    rewrite, `test_command` runs the repository's tests in the sandbox (default `python -m
    pytest -q`), `failing_tests` the node ids that must pass (default: those failing
    before), `budget` as a spec's (patch_attempts, rethink_attempts, tokens, cost_usd).
    Checked as a spec file is, every problem located in `source`."""
    data: dict[str, Any] = {"kind": "repair", "prompt": prompt, "files": list(files)}
    if test_command is not None:
        data["test_command"] = test_command if isinstance(test_command, str) \
            else list(test_command)
    if failing_tests:
        data["failing_tests"] = list(failing_tests)
    if requirements is not None:
        data["requirements"] = requirements
    if not review:
        data["review"] = False
    if budget:
        data["budget"] = dict(budget)
    with hint_apart():
        return load_spec_text(spec_yaml(data), source, root=repository, name=f"{source}.yml")


def prompt_name(prompt: str) -> str:
    """The name a prompt's task goes by (see the module's docstring)."""
    first_line = prompt.strip().splitlines()[0] if prompt.strip() else ""
    words = re.findall(r"[a-z0-9]+", first_line.lower())[:NAME_WORDS]
    name = ""
    for word in words:
        longer = f"{name}_{word}" if name else word
        if len(longer) > NAME_CHARS:
            name = name or word[:NAME_CHARS]
            break
        name = longer
    return PurePosixPath(default_output(name or "task")).stem


def default_out_dir(loaded: LoadedSpec) -> Path:
    """`out/<spec file's stem>` for a file, as `selfcorrect run` does; `out/<script's
    stem>` for a prompt or a spec's text."""
    if loaded.path is not None:
        return DEFAULT_OUT / loaded.path.stem
    return DEFAULT_OUT / PurePosixPath(str(loaded.spec.output)).stem
