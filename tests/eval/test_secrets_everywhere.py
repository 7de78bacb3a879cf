"""A secret planted in every option and environment variable that can hold one — API keys, URL user
info, a proxy's credentials, a DeepL key and server URL — never appears, in any encoding, in what eval,
score and translate print, log or write, even when the server echoes every header it got (in a 401, and
in a 200's answer that lands in the predictions, the request cache and the report)."""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from urllib.parse import quote

import pytest
from jbcompile.cli import app
from typer.testing import CliRunner

from tests.eval.fake_api import FakeAPI

KEY = "sk-planted-KEY-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-planted-9876543210fedcba"
USER, PASSWORD = "alice", "pw-Planted-55/+x"
PROXY_PASSWORD = "proxy-Planted-77"
SECRETS = [KEY, ANTHROPIC_KEY, PASSWORD, PROXY_PASSWORD, f"{USER}:{PASSWORD}"]


def encodings(secret: str) -> set[str]:
    raw = secret.encode()
    found = {
        secret,
        quote(secret, safe=""),
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode(),
    }
    for prefix in (b"Bearer ", b"x", b"xy"):
        found.add(base64.b64encode(prefix + raw).decode()[len(prefix) * 4 // 3 + 2 : -4])
    return {form for form in found if len(form) >= 8}


def leaks(text: str) -> list[str]:
    return [form for secret in SECRETS for form in encodings(secret) if form in text]


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("HTTPS_PROXY", f"http://bob:{PROXY_PASSWORD}@proxy.invalid:3128")
    monkeypatch.setenv("HTTP_PROXY", f"http://bob:{PROXY_PASSWORD}@proxy.invalid:3128")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
@pytest.mark.parametrize("where", ["option", "environment"])
def test_no_secret_in_any_output_log_or_file(
    build_dir: Path,
    tmp_path: Path,
    planted,
    monkeypatch: pytest.MonkeyPatch,
    caplog,
    backend: str,
    where: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    with FakeAPI() as api:
        port = api.url.rpartition(":")[2]
        url = f"http://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{port}" + (
            "/v1" if backend == "openai" else ""
        )
        args = ["eval", "-m", "fake-model", "-d", str(build_dir), "--quiet", "--bootstrap", "10",
                "--backend", backend, "--scoring", "generate", "--chat", "--limit", "6",
                "--max-attempts", "2"]  # fmt: skip
        if where == "option":
            args += ["--base-url", url]
        else:
            monkeypatch.setenv(f"{backend.upper()}_BASE_URL", url)
        api.state.faults = ["echo_in_reply"]
        ok = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "ok")])
        assert ok.exit_code == 0, ok.output
        assert any(PASSWORD in json.dumps(h) or "Basic" in json.dumps(h) for h in api.state.headers_seen)
        api.state.sticky = "echo_headers"  # every header it got, in the message of a 401
        refused = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "refused")])
        assert refused.exit_code == 2 and "EV305" in refused.output, refused.output
        score = CliRunner().invoke(
            app,
            [
                "score",
                str(tmp_path / "ok" / "predictions.jsonl"),
                "--out",
                str(tmp_path / "score"),
                "--bootstrap",
                "10",
            ],  # fmt: skip
        )
        assert score.exit_code == 0, score.output
    written = {p: p.read_text(encoding="utf-8", errors="replace") for p in tmp_path.rglob("*") if p.is_file()}
    assert tmp_path / "ok" / "requests.jsonl" in written and tmp_path / "ok" / "report.md" in written
    echoed = [json.loads(line) for line in written[tmp_path / "ok" / "predictions.jsonl"].splitlines()]
    assert any("***" in (record.get("raw_output") or "") for record in echoed)  # the echo was scrubbed…
    for name, text in [("ok", ok.output), ("refused", refused.output), ("log", caplog.text)] + [
        (str(path), text) for path, text in written.items()
    ]:
        assert not leaks(text), (name, leaks(text))  # …and no form of any secret is anywhere


def test_no_deepl_key_or_server_credentials_in_what_translate_prints(
    fake_deepl_url_with_credentials, en_sources_for_secrets: Path
) -> None:
    result = CliRunner().invoke(app, ["translate", "--sources", str(en_sources_for_secrets)])
    assert result.exit_code == 2 and "TR001" in result.output, result.output
    assert not leaks(result.output)
    for path in en_sources_for_secrets.rglob("*"):
        if path.is_file():
            assert not leaks(path.read_text(encoding="utf-8", errors="replace"))


@pytest.fixture
def fake_deepl_url_with_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A server that answers 403 echoing every header it got (the DeepL key, Basic auth of the URL)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    class Echo(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # type: ignore[no-untyped-def]
            pass

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("content-length") or 0))
            data = json.dumps({"message": f"denied {dict(self.headers)}"}).encode()
            self.send_response(403)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("DEEPL_AUTH_KEY", KEY)
    monkeypatch.setenv(
        "DEEPL_SERVER_URL", f"http://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{server.server_address[1]}"
    )
    yield
    server.shutdown()


@pytest.fixture
def en_sources_for_secrets(tmp_path: Path) -> Path:
    from tests.translate.conftest import write_sources

    return write_sources(tmp_path / "en")
