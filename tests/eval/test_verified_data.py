"""A build folder is verified against its manifest before a row is read, and its rows are the bytes
that were verified: altered builds are refused (eval and score --dataset alike), a second folder at the
same path never gets the first one's rows, and a folder without a manifest is allowed but says so."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from jbcompile.cli import app
from jbcompile.diagnostics import DiagnosticError
from jbcompile.evaluate.dataset import PROXY_VARIABLES, load_rows
from jbcompile.evaluate.results import read_results
from typer.testing import CliRunner

LITE = "data/lite/test-00000-of-00001.parquet"


@pytest.fixture
def build(build_dir: Path, tmp_path: Path) -> Path:
    """A writable copy of the evaluator's fixture build."""
    copy = tmp_path / "build"
    shutil.copytree(build_dir, copy)
    return copy


def rewrite(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    table = pq.read_table(path)
    pq.write_table(change(table), path)


def rotate_labels(table: pa.Table) -> pa.Table:
    labels = [(label + 1) % 3 for label in table.column("label").to_pylist()]
    index = table.schema.get_field_index("label")
    return table.set_column(index, "label", pa.array(labels, table.schema.field("label").type))


def refused(build: Path, config: str = "lite") -> list[str]:
    with pytest.raises(DiagnosticError) as error:
        load_rows(str(build), config)
    return [f"{d.code} {d.message}" for d in error.value.diagnostics]


def edit_manifest(build: Path, change) -> None:  # type: ignore[no-untyped-def]
    manifest = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
    change(manifest)
    (build / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_a_build_is_read_from_the_bytes_its_manifest_vouches_for(build: Path) -> None:
    loaded = load_rows(str(build), "lite")
    assert loaded.verification == "manifest" and len(loaded.sha256 or "") == 64
    assert len(loaded.rows) == json.loads((build / "manifest.json").read_text())["rows"]["lite"]


def test_rotated_labels_are_refused(build: Path) -> None:
    rewrite(build / LITE, rotate_labels)
    (problem,) = refused(build)
    assert problem.startswith("P005") and "changed after the build" in problem


def test_a_removed_row_is_refused_with_or_without_the_hash_edited_to_match(build: Path) -> None:
    rewrite(build / LITE, lambda table: table.slice(1))
    assert refused(build)[0].startswith("P005")
    from jbcompile.emit.manifest import file_sha256

    edit_manifest(build, lambda m: m["files"].__setitem__(LITE, file_sha256(build / LITE)))
    (problem,) = refused(build)
    assert problem.startswith("P016") and "holds 35 rows; its manifest says 36" in problem


def test_missing_unlisted_and_unreadable_data_files_are_refused(build: Path) -> None:
    shutil.copy(build / LITE, build / "data/lite/test-extra.parquet")
    assert any("test-extra.parquet is not listed" in p for p in refused(build))
    (build / "data/lite/test-extra.parquet").unlink()
    (build / LITE).write_bytes((build / LITE).read_bytes()[:100])  # truncated …
    from jbcompile.emit.manifest import file_sha256

    edit_manifest(build, lambda m: m["files"].__setitem__(LITE, file_sha256(build / LITE)))  # … and "vouched"
    (problem,) = refused(build)
    assert problem.startswith("P016") and "cannot be read" in problem
    (build / LITE).unlink()
    assert "listed in the manifest but missing" in refused(build)[0]


def test_an_unknown_config_and_a_broken_manifest_are_refused(build: Path) -> None:
    assert refused(build, "nope")[0].startswith("EV004")
    (build / "manifest.json").write_text("{not json", encoding="utf-8")
    assert refused(build)[0].startswith("P003")


def test_a_second_folder_at_the_same_path_gets_its_own_rows(build: Path, tmp_path: Path) -> None:
    first = [row["label"] for row in load_rows(str(build), "lite").rows]
    # another build (here: the same one with its labels rotated and its manifest made to match), put at
    # the very same path with the same name and card
    other = tmp_path / "other"
    shutil.copytree(build, other)
    rewrite(other / LITE, rotate_labels)
    from jbcompile.emit.manifest import file_sha256

    edit_manifest(other, lambda m: m["files"].__setitem__(LITE, file_sha256(other / LITE)))
    shutil.rmtree(build)
    other.rename(build)
    second = [row["label"] for row in load_rows(str(build), "lite").rows]
    assert second == [(label + 1) % 3 for label in first]


def test_a_folder_without_a_manifest_is_allowed_unverified_and_never_cached(build: Path) -> None:
    (build / "manifest.json").unlink()
    loaded = load_rows(str(build), "lite")
    assert loaded.verification == "unverified" and loaded.manifest is None
    rewrite(build / LITE, rotate_labels)
    again = load_rows(str(build), "lite")  # the same path, changed: its new rows, not a cached copy
    assert [row["label"] for row in again.rows] == [(row["label"] + 1) % 3 for row in loaded.rows]
    assert again.sha256 != loaded.sha256


def test_eval_and_score_refuse_an_altered_build_and_record_what_was_verified(
    build: Path, tmp_path: Path
) -> None:
    predictions = tmp_path / "predictions.jsonl"
    rows = load_rows(str(build), "lite").rows
    predictions.write_text(
        "".join(json.dumps({"example_id": row["example_id"], "pred": row["label"]}) + "\n" for row in rows),
        encoding="utf-8",
    )
    args = [
        "score",
        str(predictions),
        "--dataset",
        str(build),
        "--prediction-field",
        "pred",
        "--bootstrap",
        "10",
    ]
    ok = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "ok")])
    assert ok.exit_code == 0, ok.output
    source = read_results(tmp_path / "ok" / "results.json").source
    assert source is not None and source.verification == "manifest" and source.dataset_sha256
    rewrite(build / LITE, rotate_labels)
    bad = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "P005" in bad.output and not (tmp_path / "bad").exists()
    evaluated = CliRunner().invoke(
        app, ["eval", "-m", "m", "-d", str(build), "--out", str(tmp_path / "run"), "--quiet"]
    )
    assert (
        evaluated.exit_code == 2 and "P005" in evaluated.output and "nothing was written" in evaluated.output
    )


def test_a_resume_on_rows_that_changed_since_is_refused(
    build: Path, tmp_path: Path, api, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jbcompile.emit.manifest import file_sha256

    from tests.eval.fake_api import eval_request

    monkeypatch.setenv("OPENAI_API_KEY", "sk-resume-0123456789")
    from jbcompile.evaluate.run import run_eval

    out = tmp_path / "run"
    run_eval(eval_request(build, out, api.url, limit=4))
    rewrite(build / LITE, rotate_labels)  # another build at the same path: its golds differ
    edit_manifest(build, lambda m: m["files"].__setitem__(LITE, file_sha256(build / LITE)))
    with pytest.raises(DiagnosticError) as refused_resume:
        run_eval(eval_request(build, out, api.url, limit=4))
    (problem,) = refused_resume.value.diagnostics
    assert problem.code == "EV007" and "data:" in problem.message


def test_labels_of_the_wrong_type_are_refused_even_when_the_manifest_vouches_for_them(
    build: Path, tmp_path: Path
) -> None:
    from jbcompile.emit.manifest import file_sha256

    def as_text(table: pa.Table) -> pa.Table:
        index = table.schema.get_field_index("label")
        return table.set_column(index, "label", pa.array([str(x) for x in table.column("label").to_pylist()]))

    rewrite(build / LITE, as_text)
    edit_manifest(build, lambda m: m["files"].__setitem__(LITE, file_sha256(build / LITE)))
    result = CliRunner().invoke(
        app, ["eval", "-m", "m", "-d", str(build), "--out", str(tmp_path / "run"), "--quiet"]
    )
    assert result.exit_code == 2 and "EV125 label must be an option index 0–2, found '0'" in result.output
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("name", ["out-bild", "./bild/out", "~/no-such-build", "results.parquet"])
def test_a_missing_path_that_is_no_hub_id_is_said_at_once(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mistyped folder is not looked up on the Hub (whose client retries for about 25 s offline)."""
    import datasets

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the Hub was asked")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(datasets, "load_dataset", never)
    with pytest.raises(DiagnosticError) as refused:
        load_rows(name, "lite")
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "EV005" and "no such file or folder" in diagnostic.message


def test_a_hub_id_that_cannot_be_loaded_says_no_folder_has_that_name_either(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    def offline(*args: object, **kwargs: object) -> None:
        raise ConnectionError("Couldn't reach 'org/bench' on the Hub")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(DiagnosticError) as refused:
        load_rows("org/bench", "lite")
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "EV005" and "nor is there a file or folder so named" in diagnostic.message


def _closed_port() -> int:
    import socket

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return free.getsockname()[1]


@pytest.fixture
def hub_online(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """Hub ids looked up as online (the tests run with HF_HUB_OFFLINE=1), from an empty folder, with no
    proxy in the environment."""
    import datasets.config
    from huggingface_hub import constants
    from huggingface_hub.utils import close_session

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    for name in (*PROXY_VARIABLES, "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    close_session()  # the client reads the proxy variables when it is made
    return monkeypatch


def test_a_hub_that_cannot_be_reached_is_said_at_once_not_after_the_clients_retries(
    hub_online: pytest.MonkeyPatch,
) -> None:
    """No network (here: a refused connection on loopback): EV005 names the endpoint, before the Hub
    client is asked (it would retry for about 25 s, then maybe take an old cached copy)."""
    import datasets
    from huggingface_hub import constants

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the Hub client was asked")

    hub_online.setattr(constants, "ENDPOINT", f"http://user:hunter2hunter2@127.0.0.1:{_closed_port()}")
    hub_online.setattr(datasets, "load_dataset", never)
    with pytest.raises(DiagnosticError) as refused:
        load_rows("org/bench", "lite")
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "EV005" and "cannot reach the Hub at http://127.0.0.1:" in diagnostic.message
    assert "hunter2" not in diagnostic.message and "HF_HUB_OFFLINE=1" in (diagnostic.hint or "")


@contextmanager
def _answering(status: int) -> Iterator[str]:
    """A loopback endpoint that answers every HEAD request with ``status``; its URL."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Answer(BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self.send_response(status)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with ThreadingHTTPServer(("127.0.0.1", 0), Answer) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()


def test_a_hub_that_answers_is_asked_for_the_dataset(hub_online: pytest.MonkeyPatch) -> None:
    """An endpoint that answers at all (here: 404 for everything) is left to the Hub client."""
    import datasets
    from huggingface_hub import constants

    asked = []

    def missing(*args: object, **kwargs: object) -> None:
        asked.append(args)
        raise ConnectionError("Couldn't reach 'org/bench' on the Hub")

    with _answering(404) as endpoint:
        hub_online.setattr(constants, "ENDPOINT", endpoint)
        hub_online.setattr(datasets, "load_dataset", missing)
        with pytest.raises(DiagnosticError) as refused:
            load_rows("org/bench", "lite")
    assert asked and refused.value.diagnostics[0].code == "EV005"
    assert "cannot reach" not in refused.value.diagnostics[0].message


@pytest.mark.parametrize("offline", ["hub", "datasets"])
def test_offline_mode_asks_no_endpoint(offline: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """HF_HUB_OFFLINE=1, or HF_DATASETS_OFFLINE=1 that the datasets library alone reads (the user chose
    the cache): nothing is sent, the Hub client reads its cache."""
    import datasets.config
    from huggingface_hub import constants

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", offline == "hub")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    asked = []

    def cached(*args: object, **kwargs: object) -> None:
        asked.append(args)
        raise ConnectionError("Couldn't find 'org/bench' in the cache")

    monkeypatch.setattr(datasets, "load_dataset", cached)
    with pytest.raises(DiagnosticError):
        load_rows("org/bench", "lite")
    assert asked


def _never(*args: object, **kwargs: object) -> None:
    raise AssertionError("the Hub client was asked")


def test_a_hub_that_answers_it_is_unavailable_is_said_at_once(hub_online: pytest.MonkeyPatch) -> None:
    """An endpoint answering 503 to everything: the Hub client would retry for about 27 s, then fail."""
    import datasets
    from huggingface_hub import constants

    with _answering(503) as endpoint:
        hub_online.setattr(constants, "ENDPOINT", endpoint)
        hub_online.setattr(datasets, "load_dataset", _never)
        with pytest.raises(DiagnosticError) as refused:
            load_rows("org/bench", "lite")
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "EV005" and "is unavailable (it answers HTTP 503)" in diagnostic.message
    assert "try again later" in (diagnostic.hint or "")


def test_a_hub_that_trickles_its_answer_is_given_a_deadline_in_all(hub_online: pytest.MonkeyPatch) -> None:
    """One byte at a time, each within the read timeout: the probe still ends at its deadline."""
    import socket
    import threading
    import time

    import datasets
    from huggingface_hub import constants
    from jbcompile.evaluate import dataset

    listener = socket.create_server(("127.0.0.1", 0))

    def trickle() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(4096)
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 40:
                try:
                    connection.send(bytes([byte]))
                except OSError:
                    return
                time.sleep(0.2)

    threading.Thread(target=trickle, daemon=True).start()
    hub_online.setattr(dataset, "REACH_TIMEOUT", 1.0)
    hub_online.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{listener.getsockname()[1]}")
    hub_online.setattr(datasets, "load_dataset", _never)
    started = time.monotonic()
    with pytest.raises(DiagnosticError) as refused:
        load_rows("org/bench", "lite")
    elapsed = time.monotonic() - started
    listener.close()
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "EV005" and "no whole answer within 1 s" in diagnostic.message
    assert elapsed < 3, elapsed


def test_a_refusing_proxy_is_named_not_the_hub(hub_online: pytest.MonkeyPatch) -> None:
    """Through a proxy that refuses the connection: the proxy (its user info scrubbed) is to blame."""
    import datasets
    from huggingface_hub import constants
    from huggingface_hub.utils import close_session

    proxy = f"http://user:hunter2hunter2@127.0.0.1:{_closed_port()}"
    hub_online.setenv("HTTPS_PROXY", proxy)
    hub_online.setenv("HTTP_PROXY", proxy)
    hub_online.setattr(constants, "ENDPOINT", "https://hub.invalid")
    hub_online.setattr(datasets, "load_dataset", _never)
    close_session()
    try:
        with pytest.raises(DiagnosticError) as refused:
            load_rows("org/bench", "lite")
    finally:
        close_session()
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "EV005" and "through the proxy http://127.0.0.1:" in diagnostic.message
    assert "hunter2" not in diagnostic.message
    assert "HTTPS_PROXY" in (diagnostic.hint or "") and "check the network" not in (diagnostic.hint or "")


def test_the_hub_clients_retries_are_worded_not_its_raw_lines(
    hub_online: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The Hub client retrying a 503 logs "Retrying in 1s [Retry 1/5]."; the command line words it."""
    import logging
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.utils import http_backoff
    from jbcompile.services import word_hub_retries

    class Unavailable(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    word_hub_retries()
    with ThreadingHTTPServer(("127.0.0.1", 0), Unavailable) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        with caplog.at_level(logging.WARNING), pytest.raises(HfHubHTTPError):
            http_backoff(
                "GET", f"http://127.0.0.1:{server.server_address[1]}/", max_retries=1, base_wait_time=0.01
            )
        server.shutdown()
    lines = [record.getMessage() for record in caplog.records]
    assert lines and all(line.startswith("the Hugging Face Hub ") for line in lines), lines
    assert "answered HTTP 503 to GET http://127.0.0.1:" in lines[0]
    assert any("the Hugging Face Hub did not answer as it should" in line for line in lines), lines
