"""The values and bounds every layer agrees on, named once: for the command line's parser,
the spec's contract, the sandbox's records and the settings table. Import-light on purpose
(the CLI builds its parser from it before anything heavy loads)."""

from __future__ import annotations

from typing import Literal, get_args

Runtime = Literal["runc", "runsc"]
RUNTIMES: tuple[str, ...] = get_args(Runtime)

# How structured answers are asked for (llm/formats.py).
StructuredOutput = Literal["auto", "json-schema", "json-object-schema", "json-object", "off"]
STRUCTURED_CHOICES: tuple[str, ...] = get_args(StructuredOutput)

# The longest a script may run (seconds): the contract's ceiling and the sandbox's.
MAX_TIMEOUT_S = 3600.0
