"""What a Python caller passes, taken one way only (issue 38, item 5).

A task is `spec=` (a spec file, as a str or a Path, or a spec loaded already) or `prompt=`
(the task in words). README's first calls passed a str for both, positionally, and
`api.run_task("examples/tasks/two_sum.yml", replay=...)` ran the path as a prompt (its
replay then refused as "made for a different task"). Those calls still work, with a
DeprecationWarning naming the new call; a str that names a spec file is never run as a
prompt (it is the spec, or a clear error), and a path is a str or a Path, nothing else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action.api.tasks import spec_from_file, spec_from_prompt
from selfcorrect_action.errors import UsageError
from selfcorrect_action.spec import LoadedSpec

SPEC_SUFFIXES = (".yml", ".yaml")

PathGiven = str | os.PathLike[str]
SpecGiven = str | os.PathLike[str] | LoadedSpec
PositionalTask = str | os.PathLike[str] | LoadedSpec  # README's first calls: a str a prompt


@dataclass(frozen=True)
class GivenTask:
    """How a call gave its task: a spec (file or loaded) or a prompt (`prompt` set), and
    the warning its caller is owed for the old positional str."""

    spec: Path | LoadedSpec | None = None
    prompt: str | None = None
    deprecation: str | None = None

    def load(self, root: Path | None) -> LoadedSpec:
        if isinstance(self.spec, LoadedSpec):
            return self.spec
        if self.spec is not None:
            return spec_from_file(self.spec, root=root)
        return spec_from_prompt(self.prompt or "", root=root, source="prompt")


def given_task(task: PositionalTask | None, *, spec: SpecGiven | None, prompt: str | None,
               call: str) -> GivenTask:
    """The one task of `api.<call>(task, spec=..., prompt=...)`; UsageError when it is given
    twice, not at all, or as something that is no task."""
    given = [name for name, value in (("a positional task", task), ("spec", spec),
                                      ("prompt", prompt)) if value is not None]
    if len(given) != 1:
        got = " and ".join(given) or "neither"
        raise UsageError(f"give the task once: spec= or prompt=; got {got}",
                         hint=f"api.{call}(spec='tasks/chart.yml') for a spec file, "
                         f"api.{call}(prompt='Print the first 10 primes') for the task in "
                         "words")
    if spec is not None:
        return GivenTask(spec=_spec(spec))
    if prompt is not None:
        return GivenTask(prompt=_prompt(prompt, call))
    return _positional(task, call)


def _spec(spec: SpecGiven) -> Path | LoadedSpec:
    if isinstance(spec, LoadedSpec):
        return spec
    if isinstance(spec, str | os.PathLike):
        return Path(spec)
    raise UsageError(f"spec: expected a spec file's path (str or Path) or a loaded spec, got "
                     f"{type(spec).__name__}",
                     hint="spec='tasks/chart.yml', or spec=api.spec_from_text(yaml_text)")


def _prompt(prompt: str, call: str) -> str:
    if not isinstance(prompt, str):
        raise UsageError(f"prompt: expected the task in words (a str), got "
                         f"{type(prompt).__name__}",
                         hint=f"a spec file goes in spec=: api.{call}(spec=...)")
    if not prompt.strip():
        raise UsageError("prompt: the prompt is empty",
                         hint=f"describe the task: api.{call}(prompt='Print the first 10 "
                         "primes')")
    if names_spec_file(prompt):
        raise UsageError(f"prompt {prompt!r} names the spec file {prompt}: a prompt is the "
                         "task in words", hint=f"to run that spec, call api.{call}"
                         f"(spec={prompt!r})")
    return prompt


def _positional(task: PositionalTask | None, call: str) -> GivenTask:
    """README's `run_task("Print...")` and `run_task(Path(...))`: a Path or a loaded spec
    says what it is; a str is read as it always was, a prompt, unless it names a file."""
    assert task is not None
    if not isinstance(task, str):
        return GivenTask(spec=_spec(task))
    if names_spec_file(task):
        return GivenTask(spec=Path(task), deprecation=(
            f"api.{call}(str) takes a str as a prompt, but this one names a spec file and "
            f"runs that spec: call api.{call}(spec={task!r})"))
    if looks_like_spec_path(task):
        raise UsageError(f"{task}: no such spec file",
                         hint=f"check the path (relative to the current folder, {Path.cwd()}); "
                         f"for the task in words, call api.{call}(prompt=...)")
    return GivenTask(prompt=_prompt(task, call), deprecation=(
        f"a str as api.{call}'s first argument is taken as a prompt: call "
        f"api.{call}(prompt=...) (or api.{call}(spec=...) for a spec file)"))


def as_path(value: PathGiven | None, name: str) -> Path | None:
    """A path argument as a Path; a str is one too, anything else is refused by name."""
    if value is None or isinstance(value, Path):
        return value
    if isinstance(value, str | os.PathLike):
        return Path(value)
    raise UsageError(f"{name}: expected a path (str or Path), got {type(value).__name__}",
                     hint=f"for example {name}=Path('...')")


def names_file(text: str) -> bool:
    """`text` is one line naming a file that exists (relative to the current folder)."""
    if "\n" in text or not text.strip():
        return False
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # too long a name, a NUL byte
        return False


def names_spec_file(text: str) -> bool:
    return looks_like_spec_path(text) and names_file(text)


def looks_like_spec_path(text: str) -> bool:
    """One word ending in .yml or .yaml: a spec file's name, not a task in words ("Print
    the rows of config.yml" has spaces)."""
    return (bool(text) and not any(char.isspace() for char in text)
            and text.lower().endswith(SPEC_SUFFIXES))
