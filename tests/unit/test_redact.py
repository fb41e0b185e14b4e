"""Redaction of secrets and token shapes. Fake tokens are assembled here at run time, so no
secret scanner mistakes this file for a leak."""

from __future__ import annotations

import time

import pytest

from selfcorrect_action.redact import redact, redact_data, secrets_from_env

ALNUM = "aB3dE5fG7h"  # 10 characters, repeated to a token's length

GITHUB_PAT_CLASSIC = "ghp_" + (ALNUM * 4)[:36]
GITHUB_PAT_FINE = "github_pat_" + (ALNUM * 3)[:22] + "_" + (ALNUM * 6)[:59]
GITHUB_APP = "ghs_" + (ALNUM * 4)[:36]
OPENAI_KEY = "sk-proj-" + (ALNUM * 5)[:48]
ANTHROPIC_KEY = "sk-ant-api03-" + (ALNUM * 10)[:95] + "-AA"
AWS_KEY_ID = "AKIA" + "Q7RZ" * 4
SLACK_TOKEN = "xoxb-" + "1234567890-" + "0987654321-" + ALNUM * 2
GOOGLE_KEY = "AIza" + (ALNUM * 4)[:35]
JWT = ".".join(["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
                (ALNUM * 5)[:43]])  # fmt: skip
PEM_BODY = "\n".join([(ALNUM * 7)[:64]] * 4)
PRIVATE_KEY = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"


@pytest.mark.parametrize(
    ("token", "kind"),
    [
        (GITHUB_PAT_CLASSIC, "github-token"),
        (GITHUB_PAT_FINE, "github-token"),
        (GITHUB_APP, "github-token"),
        (OPENAI_KEY, "openai-key"),
        (ANTHROPIC_KEY, "anthropic-key"),
        (AWS_KEY_ID, "aws-access-key-id"),
        (SLACK_TOKEN, "slack-token"),
        (GOOGLE_KEY, "google-api-key"),
        (JWT, "jwt"),
        (PRIVATE_KEY, "private-key"),
    ],
)
def test_token_shapes_are_redacted_in_context(token: str, kind: str) -> None:
    text = f"calling the API with {token} (from the environment)\nnext line"

    redacted = redact(text)

    assert redacted == f"calling the API with [REDACTED:{kind}] (from the environment)\nnext line"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"Authorization: Bearer {ALNUM}.{ALNUM}", "Authorization: Bearer [REDACTED:bearer-token]"),
        ("authorization=bearer abcdefgh", "authorization=bearer [REDACTED:bearer-token]"),
        ('headers = {"Authorization": "Basic dXNlcjpwYXNzd29yZA=="}',
         'headers = {"Authorization": "Basic [REDACTED:authorization]"}'),
        (f"curl -H 'Authorization: token {GITHUB_PAT_CLASSIC}'",
         "curl -H 'Authorization: token [REDACTED:github-token]'"),
        (f"sent Bearer {ALNUM}123 upstream", "sent Bearer [REDACTED:bearer-token] upstream"),
        ("git clone https://bot:pa55w0rd-x@example.com/repo.git",
         "git clone https://bot:[REDACTED:url-password]@example.com/repo.git"),
    ],
)  # fmt: skip
def test_authorization_headers_and_url_credentials(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter2", "password=[REDACTED:credential]"),
        ("DB_PASSWORD='s3cr3t value!'", "DB_PASSWORD='[REDACTED:credential]'"),
        ('{"api_key": "abc123xyz", "model": "gpt"}',
         '{"api_key": "[REDACTED:credential]", "model": "gpt"}'),
        ("client_secret: f00ba4", "client_secret: [REDACTED:credential]"),
        ("X-Api-Key: 9f8e7d6c", "X-Api-Key: [REDACTED:credential]"),
        ("GET /data?token=abc123&page=2", "GET /data?token=[REDACTED:credential]&page=2"),
        ("note: password=pw1 was rejected", "note: password=[REDACTED:credential] was rejected"),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG",
         "aws_secret_access_key = [REDACTED:credential]"),
    ],
)  # fmt: skip
def test_assignments_lose_their_values(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "completion = client.create(model=m, max_tokens=512, temperature=0)",
        "token_count: 3",
        "rows.sort(key=len)",
        "login(user, password=password)",
        'token = os.environ["GITHUB_TOKEN"]',
        "password = None",
        "TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        "the secret ingredient is love; the token economy; a key insight",
        "Bearer of bad news, bearer bonds",
        "pip install scikit-learn; task-management; risk-analysis-2024-final-report",
        "ghp_short and sk-tiny are not tokens",
        "https://example.com:8080/path?x=1",
        "df['amount'].sum() / len(df)",
    ],
)
def test_ordinary_text_and_code_are_kept(text: str) -> None:
    assert redact(text) == text


def test_known_secret_values_are_replaced_exactly() -> None:
    long_secret = "correct-horse-battery-staple"
    text = f"user=a; pw={long_secret}; note=a; again {long_secret}"

    redacted = redact(text, secrets=[long_secret, "a", "  short  "])

    assert long_secret not in redacted
    assert redacted.count("[REDACTED:secret]") == 2
    assert "user=a;" in redacted and "note=a;" in redacted


def test_the_longer_of_two_overlapping_secrets_goes_whole() -> None:
    text = "value: prefix-0123456789-suffix"

    redacted = redact(text, secrets=["0123456789", "prefix-0123456789-suffix"])

    assert redacted == "value: [REDACTED:secret]"


def test_truncated_private_key_is_still_redacted() -> None:
    text = f"key follows\n-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n[... 4,096 bytes omitted ...]"

    redacted = redact(text)

    assert PEM_BODY.splitlines()[0] not in redacted
    assert redacted.startswith("key follows\n[REDACTED:private-key]")
    assert "omitted" in redacted


def test_pgp_private_key_block() -> None:
    block = "PGP PRIVATE KEY BLOCK-----"
    text = f"-----BEGIN {block}\n\n{PEM_BODY}\n=AbCd\n-----END {block}\n"

    assert redact(text) == "[REDACTED:private-key]\n"


def test_text_after_a_private_key_is_kept() -> None:
    text = f"{PRIVATE_KEY}\nthen: it worked.\n{PRIVATE_KEY}"

    assert redact(text) == "[REDACTED:private-key]\nthen: it worked.\n[REDACTED:private-key]"


def test_redaction_is_idempotent() -> None:
    text = "\n".join([
        f"Authorization: Bearer {JWT}", f"token={GITHUB_PAT_CLASSIC}", PRIVATE_KEY,
        f"export OPENAI_API_KEY={OPENAI_KEY}", "password: 'x y z'", "plain text",
    ])  # fmt: skip

    once = redact(text, secrets=["plain text"])

    assert redact(once, secrets=["plain text"]) == once
    for secret in (JWT, GITHUB_PAT_CLASSIC, PEM_BODY, OPENAI_KEY, "x y z", "plain text"):
        assert secret not in once


def test_redact_data_walks_json_like_structures() -> None:
    run = {
        "attempts": [
            {"index": 1, "stderr": f"401 for {GITHUB_PAT_CLASSIC}", "cost": 0.1, "ok": False},
            {"index": 2, "code": "print('hi')", "tags": ("a", f"key {AWS_KEY_ID}")},
        ],
        "prompt": "uses correct-horse-battery-staple",
        "nothing": None,
    }

    clean = redact_data(run, secrets=["correct-horse-battery-staple"])

    assert clean == {
        "attempts": [
            {"index": 1, "stderr": "401 for [REDACTED:github-token]", "cost": 0.1, "ok": False},
            {"index": 2, "code": "print('hi')", "tags": ("a", "key [REDACTED:aws-access-key-id]")},
        ],
        "prompt": "uses [REDACTED:secret]",
        "nothing": None,
    }
    assert run["prompt"] == "uses correct-horse-battery-staple"  # the input is not modified


def test_secrets_from_env_picks_values_by_name() -> None:
    environ = {
        "GITHUB_TOKEN": GITHUB_PAT_CLASSIC,
        "INPUT_API-KEY": "input-api-key-value",
        "DB_PASSWORD": "  padded-password  ",
        "AWS_SECRET_ACCESS_KEY": "aws-secret-value-123",
        "MY_CREDENTIALS": "creds-value-456",
        "GHTOKEN": "concatenated-token",
        "SHORT_TOKEN": "abc",
        "GIT_AUTHOR_NAME": "github-actions[bot]",
        "MAX_TOKENS": "100000000",
        "KEYBOARD_LAYOUT": "us-international",
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/github/home",
    }

    found = secrets_from_env(environ)

    assert set(found) == {
        GITHUB_PAT_CLASSIC, "input-api-key-value", "padded-password", "aws-secret-value-123",
        "creds-value-456", "concatenated-token",
    }  # fmt: skip
    assert [len(value) for value in found] == sorted((len(value) for value in found), reverse=True)


MEGABYTE = 1_000_000
ADVERSARIAL = {
    "one-long-run": "a" * MEGABYTE,
    "github-prefixes": "ghp_" * (MEGABYTE // 4),
    "jwt-prefixes": "eyJ" * (MEGABYTE // 3),
    "jwt-segments": ("eyJ" + "a" * 8 + ".") * (MEGABYTE // 12),
    "pem-begins-without-end": "-----BEGIN PRIVATE KEY-----\n" * (MEGABYTE // 28),
    "pem-begins-with-breaks": "-----BEGIN RSA PRIVATE KEY-----.\n" * (MEGABYTE // 33),
    "assignments": "token: " * (MEGABYTE // 7),
    "open-quotes": 'password="' * (MEGABYTE // 10),
    "bearer-words": "Bearer " * (MEGABYTE // 7),
    "headers": "Authorization: Bearer " * (MEGABYTE // 22),
    "url-schemes": "://a:" * (MEGABYTE // 5),
    "long-identifiers": ("x" * 47 + "token ") * (MEGABYTE // 53),
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_a_megabyte_is_redacted_in_linear_time(text: str) -> None:
    started = time.perf_counter()
    redact(text, secrets=["known-secret-value"])
    elapsed = time.perf_counter() - started

    # Well under a second here; a quadratic pattern would take minutes on a megabyte.
    assert elapsed < 5, f"{elapsed:.1f} s"
