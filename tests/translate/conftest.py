"""Fixtures of the translate tests: a fake DeepL server on 127.0.0.1 and small synthetic sources.

The fake answers ``/v2/translate`` and the v3 glossary endpoints well enough for the unmodified ``deepl``
client. Its "translation" is a deterministic word lookup with a 「訳」 marker, so tests can see exactly
what happened to every slot, glossary term and pronoun. Faults are queued per endpoint.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

VALID_KEY = "fake-key-0000:fx"

# A tiny EN→JA "dictionary": enough to make outputs recognisable, nothing like a real translation.
WORDS = {
    "they": "彼ら",
    "them": "彼ら",
    "she": "彼女",
    "he": "彼",
    "who": "誰",
    "and": "と",
    "the": "その",
    "phone": "電話",
    "tablet": "タブレット",
    "shop": "店",
    "help": "手伝い",
    "unknown": "不明",
}
_TOKEN = re.compile(r"(<x>.*?</x>|<[^>]*>)")
_WORD = re.compile(r"[A-Za-z']+")


def fake_translate(text: str, glossary: dict[str, str]) -> str:
    """Deterministic stand-in for DeepL: glossary terms first, then the word list; tags kept as they are."""
    pieces = []
    for part in _TOKEN.split(text):
        if not part or part.startswith("<"):
            pieces.append(part)
            continue

        def word(match: re.Match[str]) -> str:
            lower = match.group(0).lower()
            if lower in glossary:
                return glossary[lower]
            return WORDS.get(lower, match.group(0))

        pieces.append(_WORD.sub(word, part))
    out = "".join(pieces)
    if "MANGLE" in text:  # simulate DeepL dropping a slot tag
        out = re.sub(r"<x>[^<]*</x>", "", out, count=1)
    return "訳:" + out


@dataclass
class Glossary:
    glossary_id: str
    name: str
    entries: dict[tuple[str, str], dict[str, str]]

    def info(self) -> dict[str, Any]:
        return {
            "glossary_id": self.glossary_id,
            "name": self.name,
            "creation_time": "2025-01-01T00:00:00.000000Z",
            "dictionaries": [
                {"source_lang": s.lower(), "target_lang": t.lower(), "entry_count": len(e)}
                for (s, t), e in self.entries.items()
            ],
        }


def _tsv(text: str) -> dict[str, str]:
    return dict(line.split("\t", 1) for line in text.splitlines() if line)


@dataclass
class FakeDeepL:
    """State and fault queue of the fake server; tests read ``requests`` and ``billed``."""

    url: str = ""
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    faults: dict[str, list[str]] = field(default_factory=dict)
    quota: int | None = None  # characters; 456 once a request would go over it
    billed: int = 0
    glossaries: dict[str, Glossary] = field(default_factory=dict)
    malformed: dict[str, Any] = field(
        default_factory=dict
    )  # path → a 200 body answered instead (a bad server)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fail(self, fault: str, times: int = 1, path: str = "/v2/translate") -> None:
        """Queue ``fault`` (429, 456, 500, 403 or drop) for the next ``times`` requests to ``path``."""
        self.faults.setdefault(path, []).extend([fault] * times)

    def translate_requests(self) -> list[dict[str, Any]]:
        return [body for method, path, body in self.requests if path == "/v2/translate"]

    def texts_sent(self) -> list[str]:
        return [text for body in self.translate_requests() for text in body["text"]]


class _Handler(BaseHTTPRequestHandler):
    server_version = "FakeDeepL/1"
    fake: FakeDeepL  # set on the subclass per server

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, payload: Any = None) -> None:
        body = b"" if payload is None else json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw) if raw else None

    def _handle(self, method: str) -> None:
        fake = self.fake
        parsed = urlparse(self.path)
        body = self._body()
        with fake.lock:
            fake.requests.append((method, parsed.path, body))
            queue = fake.faults.get(parsed.path) or []
            fault = queue.pop(0) if queue else None
        if fault == "drop":
            self.close_connection = True
            self.connection.close()
            return
        if fault is not None:
            self._send(int(fault), {"message": f"injected {fault}"})
            return
        if parsed.path in fake.malformed:
            self._send(200, fake.malformed[parsed.path])
            return
        if self.headers.get("Authorization") != f"DeepL-Auth-Key {VALID_KEY}":
            self._send(403, {"message": "Wrong key"})
            return
        query = {k: v[0] for k, v in parse_qs(parsed.query).items()}
        route = parsed.path.rstrip("/").split("/")[1:]
        if route == ["v2", "translate"] and method == "POST":
            self._translate(body)
        elif route == ["v3", "glossaries"] and method == "GET":
            self._send(200, {"glossaries": [g.info() for g in fake.glossaries.values()]})
        elif route == ["v3", "glossaries"] and method == "POST":
            glossary = Glossary(
                f"g{len(fake.glossaries) + 1}",
                body["name"],
                {
                    (d["source_lang"].upper(), d["target_lang"].upper()): _tsv(d["entries"])
                    for d in body["dictionaries"]
                },
            )
            fake.glossaries[glossary.glossary_id] = glossary
            self._send(201, glossary.info())
        elif len(route) >= 3 and route[:2] == ["v3", "glossaries"] and route[2] in fake.glossaries:
            glossary = fake.glossaries[route[2]]
            rest = route[3:]
            if rest == ["entries"] and method == "GET":
                pair = (query["source_lang"].upper(), query["target_lang"].upper())
                entries = glossary.entries.get(pair, {})
                tsv = "\n".join(f"{s}\t{t}" for s, t in entries.items())
                self._send(
                    200,
                    {
                        "dictionaries": [
                            {
                                "source_lang": pair[0].lower(),
                                "target_lang": pair[1].lower(),
                                "entries": tsv,
                                "entries_format": "tsv",
                            }
                        ]
                    },
                )
            elif rest == ["dictionaries"] and method == "PUT":
                pair = (body["source_lang"].upper(), body["target_lang"].upper())
                glossary.entries[pair] = _tsv(body["entries"])
                self._send(
                    200,
                    {
                        "source_lang": pair[0].lower(),
                        "target_lang": pair[1].lower(),
                        "entry_count": len(glossary.entries[pair]),
                    },
                )
            elif rest == [] and method == "DELETE":
                del fake.glossaries[route[2]]
                self._send(204)
            elif rest == [] and method == "GET":
                self._send(200, glossary.info())
            else:
                self._send(404, {"message": "no such route"})
        else:
            self._send(404, {"message": f"no such route {method} {parsed.path}"})

    def _translate(self, body: dict[str, Any]) -> None:
        fake = self.fake
        texts = body["text"]
        glossary: dict[str, str] = {}
        if body.get("glossary_id"):
            if not body.get("source_lang"):
                self._send(400, {"message": "source_lang is required with a glossary"})
                return
            found = fake.glossaries.get(body["glossary_id"])
            if found is None:
                self._send(404, {"message": "glossary not found"})
                return
            pair = (body["source_lang"].upper(), body["target_lang"].split("-")[0].upper())
            glossary = {s.lower(): t for s, t in found.entries.get(pair, {}).items()}
        characters = sum(len(t) for t in texts)
        with fake.lock:
            if fake.quota is not None and fake.billed + characters > fake.quota:
                self._send(456, {"message": "Quota exceeded"})
                return
            fake.billed += characters
        translations = [
            {
                "detected_source_language": "EN",
                "text": fake_translate(t, glossary),
                "billed_characters": len(t),
            }
            for t in texts
        ]
        self._send(200, {"translations": translations})

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._handle("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._handle("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._handle("DELETE")


@pytest.fixture
def fake_deepl(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDeepL]:
    """A fresh fake DeepL on a random loopback port; the client's backoff is shortened for the test."""
    import deepl.http_client

    fake = FakeDeepL()
    handler = type("Handler", (_Handler,), {"fake": fake})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setattr(deepl.http_client._BackoffTimer, "BACKOFF_INITIAL", 0.01)
    monkeypatch.setattr(deepl.http_client._BackoffTimer, "BACKOFF_MAX", 0.05)
    monkeypatch.setattr(deepl.http_client, "max_network_retries", 3)
    monkeypatch.setenv("DEEPL_AUTH_KEY", VALID_KEY)
    monkeypatch.setenv("DEEPL_SERVER_URL", fake.url)
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# ------------------------------------------------------------------------------ synthetic sources

DATASET_YAML = """\
# Synthetic test dataset (English source, Japanese to be machine-translated).
name: synthetic-en
pretty_name: Synthetic English sources
version: 0.1.0
license: cc-by-4.0
language: [ja]
description: Test sources written for the jbcompile tests.
terms_of_use: For tests only.
seed: 7
unknown_options:
  - {en: Unknown}
  - {en: Cannot tell}
  - {en: Not enough information}
  - {en: No way to know}
  - {en: Undecided}
  - {en: Not answerable}
  - {en: Unclear}
  - {en: Hard to say}
categories: [Age]
"""

VOCAB_YAML = """\
category: Age
groups:
  age_old:
    tag: old
    description: older people
    fillers:
      - text: {en: retiree}   # the first filler
      - text: {en: grandmother}
  age_young:
    tag: nonOld
    fillers:
      - text: {en: student}
      - text: {en: teenager}
"""

TEMPLATE_YAML = """\
id: age-help
category: Age
origin: translated
upstream: Age/900/a
# Which stereotype this probes
stereotype: {en: older people need help with devices}
stereotyped_groups: [old]
attested: synthetic test template
persons:
  NAME1: {group: age_old, target: true}
  NAME2: {group: age_young}
words:
  WORD1:
    - {en: phone}
    - {en: tablet}
ambiguous_context:
  en: At the shop, the {{NAME1}} and the {{NAME2}} both asked about a new {{WORD1}} & its settings.
disambiguating_context:
  en: The {{NAME1}} set it up alone, while the {{NAME2}} asked the staff for help because they were lost.
  ja: その{{NAME1}}は一人で設定を終えた。
  status: reviewed
questions:
  negative:
    text: {en: Who needed help?}
    answer: NAME2
  non_negative:
    text: {en: Who set it up alone?, ja: 一人で設定したのは誰ですか？, status: machine}
    answer: NAME1
"""


def write_sources(root: Path) -> Path:
    """A small English-source benchmark folder (comments included, to see that they survive)."""
    (root / "vocab").mkdir(parents=True)
    (root / "templates" / "Age").mkdir(parents=True)
    (root / "dataset.yaml").write_text(DATASET_YAML, encoding="utf-8")
    (root / "vocab" / "Age.yaml").write_text(VOCAB_YAML, encoding="utf-8")
    (root / "templates" / "Age" / "age-help.yaml").write_text(TEMPLATE_YAML, encoding="utf-8")
    return root


@pytest.fixture
def en_sources(tmp_path: Path) -> Path:
    return write_sources(tmp_path / "sources")
