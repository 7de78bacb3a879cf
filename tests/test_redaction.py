"""Every form a secret can take is scrubbed from messages (and from files, where only known secrets are,
so that data is never altered by a look-alike)."""

from __future__ import annotations

import base64
import json
import logging
import warnings
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jbcompile.redaction import (
    MASK,
    known_secrets,
    redact,
    redact_data,
    redact_url,
    register_url,
    scrub_logs_and_warnings,
)

KEY = "sk-live-Secret0123456789/+abc"


def encodings(secret: str) -> list[str]:
    """Every way a secret travels: as it is, percent-encoded, JSON-escaped, base64 and base64url, with and
    without padding, alone and inside longer base64 blobs at each offset."""
    raw = secret.encode()
    found = [secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]]
    for prefix in (b"", b"a", b"ab", b"Bearer ", b"user:"):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            blob = encode(prefix + raw + b"!tail").decode()
            found += [blob, blob.rstrip("=")]
    found.append(base64.b64encode(raw).decode())
    return found


@pytest.fixture(autouse=True)
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def hidden(text: str, secret: str) -> bool:
    """No encoding of the secret is left, nor a run of its characters a server might echo."""
    return not any(form in text for form in encodings(secret)[:4]) and secret[3:15] not in text


@pytest.mark.parametrize("form", encodings(KEY))
def test_every_encoding_of_a_key_leaves_messages_and_files(form: str) -> None:
    line = f"error: server said {form} (retrying)"
    assert form not in redact(line) and MASK in redact(line)
    assert form not in redact_data(line)


def test_url_credentials_their_base64_and_the_headers_leave_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://alice:pa%40ss-word@host.example/v1")
    basic = base64.b64encode(b"alice:pa@ss-word").decode()
    for text in [
        f"401: Authorization: Basic {basic}",
        f"echo {{'authorization': 'Basic {basic}'}}",
        "see http://alice:pa%40ss-word@host.example/v1",
        "password pa@ss-word was wrong",
        f"x-api-key: {KEY}",
    ]:
        shown = redact(text)
        assert "pa@ss-word" not in shown and "pa%40ss-word" not in shown and basic not in shown, shown
        assert KEY not in shown
    assert basic not in redact_data(f"Basic {basic}") and "alice:pa%40ss-word" not in redact_data(
        "http://alice:pa%40ss-word@host/v1"
    )
    assert "pa@ss-word" in known_secrets()


def test_shapes_of_credentials_leave_messages_whatever_their_value() -> None:
    shapes = {
        "token hf_abcdefghijklmnopqrstuvwxyz12 refused": "hf_abcdefghijklmnopqrstuvwxyz12",
        "Authorization: Bearer tok.en-value_123": "tok.en-value_123",
        "Basic dXNlcjpwYXNzd29yZA== denied": "dXNlcjpwYXNzd29yZA==",
        "GET /v1?api_key=abcdef123&x=1": "abcdef123",
        "key 12345678-abcd-abcd-abcd-1234567890ab:fx rejected": "12345678-abcd-abcd-abcd-1234567890ab",
        "https://user:hunter2@example.com/x": "hunter2",
        "key sk-ant-api03-abcdefghijklmnop is wrong": "abcdefghijklmnop",
    }
    for text, secret in shapes.items():
        assert secret not in redact(text), text


def test_files_lose_known_secrets_only_and_never_a_look_alike() -> None:
    reply = "Basic arithmetic; see hf_abcdefghijklmnopqrstuvwxyz1 and sk-notakeyatall-1234567890 at ssh://git@host"
    assert redact_data(reply) == reply  # a model's reply is data: only a known secret is taken out of it
    assert redact("Basic information is here") == "Basic information is here"
    assert redact_data(f'{{"raw_output": "{KEY}"}}') == f'{{"raw_output": "{MASK}"}}'


def test_short_values_are_not_secrets_and_paths_are_not_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")  # what a local server takes
    monkeypatch.setenv("SOME_CREDENTIALS_KEY", "/home/someone/keys/key.json")
    assert "EMPTY" not in known_secrets()
    assert (
        redact("EMPTY stays, /home/someone/keys/key.json too")
        == "EMPTY stays, /home/someone/keys/key.json too"
    )


def test_registered_urls_and_urls_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    register_url("https://bob:s3cr3t-Value@proxy.local:8443/v1?token=q#f")
    assert "s3cr3t-Value" not in redact("retrying with s3cr3t-Value")
    assert (
        redact_url("https://bob:s3cr3t-Value@proxy.local:8443/v1?token=q#f") == "https://proxy.local:8443/v1"
    )
    assert redact_url("http://[::1]:8000/v1") == "http://[::1]:8000/v1"
    assert "bob" not in (redact_url("http://bob:pw@host:99999/v1") or "")  # a port out of range


def test_log_records_and_warnings_of_any_library_are_scrubbed(caplog: pytest.LogCaptureFixture) -> None:
    scrub_logs_and_warnings()
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="httpx")  # a command run before may have quietened it
    logging.getLogger("httpx").debug("HTTP Request: headers=%s", {"authorization": f"Bearer {KEY}"})
    logging.getLogger("some.lib").warning("key was %s", KEY)
    assert KEY not in caplog.text and KEY[3:12] not in caplog.text and "authorization" in caplog.text
    with warnings.catch_warnings(record=True):
        shown = warnings.formatwarning(f"serialized {KEY}", UserWarning, "x.py", 1)
    assert KEY not in shown


@settings(max_examples=200, deadline=None)
@given(
    secret=st.text(st.characters(min_codepoint=33, max_codepoint=0x2FFF), min_size=8, max_size=40),
    before=st.text(max_size=20),
    after=st.text(max_size=20),
    which=st.integers(min_value=0, max_value=7),
)
def test_any_secret_in_any_encoding_anywhere_is_scrubbed(
    secret: str, before: str, after: str, which: int
) -> None:
    from jbcompile import redaction

    redaction.register_secret(secret)
    form = encodings(secret)[[0, 1, 2, 3, 4, 6, 9, 14][which]]
    text = f"{before}{form}{after}"
    assert form not in redact(text)
    assert form not in redact_data(text)


def test_the_scrubbing_installs_itself_again_where_a_library_replaced_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A library (or a test) that sets its own record factory or warning formatter, dropping ours, does
    not turn the scrubbing off for good: the next call puts it back, and calling twice wraps once."""
    original_factory, original_format = logging.getLogRecordFactory(), warnings.formatwarning
    try:
        logging.setLogRecordFactory(logging.LogRecord)
        warnings.formatwarning = lambda message, category, filename, lineno, line=None: f"{message}\n"
        scrub_logs_and_warnings()
        scrub_logs_and_warnings()
        caplog.set_level(logging.DEBUG)
        logging.getLogger("some.lib").warning("key was %s", KEY)
        assert KEY not in caplog.text and "key was ***" in caplog.text
        assert KEY not in warnings.formatwarning(f"serialized {KEY}", UserWarning, "x.py", 1)
        assert logging.getLogRecordFactory().__closure__[0].cell_contents is logging.LogRecord  # type: ignore[attr-defined]
    finally:
        logging.setLogRecordFactory(original_factory)
        warnings.formatwarning = original_format


def test_the_token_hf_auth_login_saved_is_scrubbed_without_the_hub_client(tmp_path) -> None:
    """The saved token is a secret too; it is read from its file alone, in a fresh process: not through
    huggingface_hub.get_token, which would exchange a token over the network where HF_OIDC_RESOURCE is
    set (the exchange fails here: no network), and would load the Hub client's HTTP stack at start-up."""
    import os
    import subprocess
    import sys

    saved = "hf_SavedByLogin0123456789abcdefXYZ"
    (tmp_path / "token").write_text(saved + "\n", encoding="utf-8")
    script = (
        "import sys\n"
        "from jbcompile.redaction import known_secrets, redact\n"
        f"print(redact('the token is {saved} and its part {saved[3:20]}'))\n"
        f"print({saved!r} in known_secrets())\n"
        "print(sorted(m for m in sys.modules if m.startswith(('huggingface_hub.utils', 'httpx'))))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_TOKEN", "HUGGING_FACE_HUB"))}
    env.update(HF_HOME=str(tmp_path), HF_OIDC_RESOURCE="user/model", HF_HUB_OFFLINE="1")
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    message, held, loaded = done.stdout.splitlines()
    assert saved not in message and saved[3:20] not in message and MASK in message
    assert held == "True"
    assert loaded == "[]"


def test_a_fifo_where_the_saved_token_should_be_is_not_opened(tmp_path) -> None:
    """Opening a FIFO blocks until something writes to it: a message must never wait on one."""
    import os
    import subprocess
    import sys

    os.mkfifo(tmp_path / "token")
    script = "from jbcompile.redaction import redact\nprint(redact('nothing to hide'))\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_TOKEN", "HUGGING_FACE_HUB"))}
    env.update(HF_HOME=str(tmp_path), HF_HUB_OFFLINE="1")
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "nothing to hide", done.stderr


def test_the_word_token_in_a_message_is_not_a_credential() -> None:
    """ "Token" is an auth scheme and an English word: a message about token limits keeps its words."""
    for text in ("up to 10 token limits apply", "Token counts differ", "the token budget of 1,024"):
        assert redact(text) == text
    for text, secret in (("Token abc123def456", "abc123def456"), ("token " + "q" * 24, "q" * 24)):
        assert secret not in redact(text), text
    assert "limits" not in redact("Authorization: Bearer limits")  # after Bearer, any value is hidden
