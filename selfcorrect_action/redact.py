"""Secrets and token-shaped strings taken out of everything a report shows.

Reports (AUDIT.md, comments, run.json) quote scripts, logs and LLM replies, any of which may
hold a token: the run's own (exact values, see secrets_from_env) or one the model or a log
printed. Every pattern has a fixed prefix, most behind a lookbehind that allows a match only
at the start of a run of token characters, and none has nested quantifiers, so a pass is
linear in the input: a megabyte of "ghp_ghp_…" or "eyJeyJ…" costs a fraction of a second,
not minutes. A pattern whose prefix is absent from the text is not run at all.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any, NamedTuple

MIN_SECRET_CHARS = 8  # shorter values ("a", "true") would redact ordinary text everywhere


def _label(kind: str) -> str:
    return f"[REDACTED:{kind}]"


class _Shape(NamedTuple):
    kind: str
    pattern: re.Pattern[str]
    # Substrings one of which a match must contain: a cheap `in` test skips the regex pass
    # for most texts. Lower-case hints are looked for in the lower-cased text.
    hints: tuple[str, ...]
    lower: bool = False


# The whole match is replaced, or only the group named "value" when there is one.
_SHAPES: tuple[_Shape, ...] = (
    _Shape("github-token", re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{20,}"
                                      r"|github_pat_[A-Za-z0-9_]{20,})"),
           ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _Shape("anthropic-key", re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}"),
           ("sk-ant-",)),
    _Shape("openai-key", re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}"), ("sk-",)),
    _Shape("aws-access-key-id",
           re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])"), ("AKIA", "ASIA")),
    _Shape("slack-token", re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}"),
           ("xox",)),
    _Shape("google-api-key", re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}"), ("AIza",)),
    _Shape("jwt", re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}"
                             r"\.[A-Za-z0-9_-]{8,}"), ("eyJ",)),
    _Shape("bearer-token", re.compile(
        r"(?i)(?<![A-Za-z0-9])authorization[\"']?[ \t]*[:=][ \t]*[\"']?[ \t]*bearer[ \t]+"
        r"(?P<value>(?!\[REDACTED)[A-Za-z0-9._~+/-]+=*)"
    ), ("authorization",), lower=True),
    _Shape("authorization", re.compile(
        r"(?i)(?<![A-Za-z0-9])authorization[\"']?[ \t]*[:=][ \t]*[\"']?[ \t]*(?:basic|token)"
        r"[ \t]+(?P<value>(?!\[REDACTED)[A-Za-z0-9._~+/-]+=*)"
    ), ("authorization",), lower=True),
    # A bearer token outside a header, as code or logs print it; a digit tells it from prose.
    _Shape("bearer-token", re.compile(
        r"(?i)(?<![A-Za-z0-9])bearer[ \t]+(?P<value>(?!\[REDACTED)(?=[A-Za-z0-9._~+/-]*[0-9])"
        r"[A-Za-z0-9._~+/-]{8,}=*)"
    ), ("bearer",), lower=True),
    _Shape("url-password",
           re.compile(r"(?<=://)[^\s/:@]{1,256}:(?P<value>[^\s/@]{1,256})@"), ("://",)),
    # `password=hunter2`, `API_KEY: "abc"`, `"client_secret": "..."`: a word naming a secret
    # right before a separator (so `max_tokens=` and `token_count=` are left alone), then a
    # quoted or bare value. The match starts at the word: what precedes it does not matter.
    _Shape("credential", re.compile(
        r"(?i)(?:password|passwd|pwd|passphrase|secret|token|credentials?"
        r"|(?:api|access|private|secret|auth|signing|encryption)[_.-]?key)"
        r"[\"']?[ \t]*[=:][ \t]*"
        r"(?:\"(?P<dq>[^\"\n]{1,512})\"|'(?P<sq>[^'\n]{1,512})'"
        r"|(?P<bare>[^\s\"'&,;()\[\]{}<>$]+))"
    ), ("pass", "pwd", "secret", "token", "credential", "key"), lower=True),
)  # fmt: skip
_VALUE_GROUPS = ("value", "dq", "sq", "bare")
# A bare value that is just a name (`token=token`, `password=None`) is code, not a secret.
_CODE_NAME = re.compile(r"[A-Za-z_][A-Za-z_.]*")

# RSA, EC, OPENSSH, ENCRYPTED, PGP ("PRIVATE KEY BLOCK") and plain PKCS#8 keys.
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# A truncated key (no END line) is still a secret: its base64 body is redacted.
_PEM_BODY = re.compile(r"[A-Za-z0-9+/=\s:,-]*+")

_ENV_SECRET_WORDS = frozenset(
    {"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS",
     "AUTH", "AUTHORIZATION", "APIKEY", "PAT"}
)  # fmt: skip
_ENV_SECRET_SUFFIXES = ("TOKEN", "SECRET", "PASSWORD", "APIKEY")


def redact(text: str, *, secrets: Iterable[str] = ()) -> str:
    """`text` with each known secret value and each token-shaped string replaced by a
    `[REDACTED:<kind>]` label. Idempotent."""
    return _redact(text, _prepared(secrets))


def redact_data(
    obj: Any, *, secrets: Iterable[str] = (), keep: Collection[str] = frozenset(),
    shapes: bool = True,
) -> Any:
    """A copy of a JSON-like structure (dicts, lists, tuples, strings; run.json) with every
    string redacted. Keys are names chosen by our code and are kept, and so is every string
    in `keep`: a schema's own words (enum values), which hold no data and must survive a
    secret that happens to spell one of them. `shapes=False` replaces the known values only:
    for a report read back, whose token-shaped strings went when it was written."""
    prepared = _prepared(secrets)
    return _walk(obj, prepared, keep, shapes)


def secrets_from_env(environ: Mapping[str, str]) -> list[str]:
    """Values of variables whose name says they are secret (GITHUB_TOKEN, INPUT_API-KEY,
    DB_PASSWORD...), longest first, those too short to redact safely left out."""
    values = {
        value.strip()
        for name, value in environ.items()
        if _secret_env_name(name) and len(value.strip()) >= MIN_SECRET_CHARS
    }
    return sorted(values, key=lambda value: (-len(value), value))


def _secret_env_name(name: str) -> bool:
    words = [word for word in re.split(r"[^A-Z0-9]+", name.upper()) if word]
    return any(
        word in _ENV_SECRET_WORDS or word.endswith(_ENV_SECRET_SUFFIXES) for word in words
    )


def _prepared(secrets: Iterable[str]) -> list[str]:
    """Known values longest first, so a secret that contains another is replaced whole."""
    values = {value.strip() for value in secrets if len(value.strip()) >= MIN_SECRET_CHARS}
    return sorted(values, key=lambda value: (-len(value), value))


def _walk(obj: Any, secrets: list[str], keep: Collection[str], shapes: bool = True) -> Any:
    if isinstance(obj, str):
        return obj if obj in keep else _redact(obj, secrets, shapes)
    if isinstance(obj, Mapping):
        return {key: _walk(value, secrets, keep, shapes) for key, value in obj.items()}
    if isinstance(obj, list):
        return [_walk(item, secrets, keep, shapes) for item in obj]
    if isinstance(obj, tuple):
        return tuple(_walk(item, secrets, keep, shapes) for item in obj)
    return obj


def _redact(text: str, secrets: list[str], shapes: bool = True) -> str:
    for value in secrets:
        # str.replace is a linear C search, far cheaper than a regex alternation of values.
        text = text.replace(value, _label("secret"))
    if not shapes:
        return text
    text = _redact_private_keys(text)
    lowered = text.lower()
    for shape in _SHAPES:
        haystack = lowered if shape.lower else text
        if any(hint in haystack for hint in shape.hints):
            text = shape.pattern.sub(functools.partial(_replace, kind=shape.kind), text)
    return text


def _replace(match: re.Match[str], *, kind: str) -> str:
    """The label in place of the match, or of its value group when it has one."""
    named = match.groupdict()
    name = next((group for group in _VALUE_GROUPS if named.get(group) is not None), None)
    if name is None:
        return _label(kind)
    value = match.group(name)
    if value.startswith("[REDACTED:") or (name == "bare" and _CODE_NAME.fullmatch(value)):
        return match.group()
    start, end = match.span(name)
    whole, offset = match.group(), match.start()
    return whole[: start - offset] + _label(kind) + whole[end - offset :]


def _redact_private_keys(text: str) -> str:
    """BEGIN ... END blocks. Procedural rather than one lazy `.*?` regex: with many BEGIN lines
    and no END, a lazy scan from each BEGIN to the end of the text is quadratic."""
    if "PRIVATE KEY" not in text:
        return text
    parts: list[str] = []
    position = 0
    end_seen = True
    while begin := _PEM_BEGIN.search(text, position):
        parts.append(text[position : begin.start()])
        end = _PEM_END.search(text, begin.end()) if end_seen else None
        if end is None:
            end_seen = False  # no END after this point: later BEGINs need not look again
            body = _PEM_BODY.match(text, begin.end())
            position = body.end() if body else begin.end()
        else:
            position = end.end()
        parts.append(_label("private-key"))
    parts.append(text[position:])
    return "".join(parts)
