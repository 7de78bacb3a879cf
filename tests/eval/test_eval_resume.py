"""Resuming a run: the model is loaded only when a row is left to compute, and a run folder does not
depend on where the package, a prompt file or a release file lie, nor names the user's home folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from jbcompile.evaluate import backends
from jbcompile.evaluate.backends.openai import OpenAIBackend
from jbcompile.evaluate.backends.vllm import VllmBackend
from jbcompile.evaluate.promptfiles import PROMPTS_DIR, prompt_folders

from tests.eval.fake_api import FakeAPI
from tests.eval.test_eval_formats import jubaku_release, write_jsonl
from tests.eval.test_eval_run import eval_args, lines, run_cli

pytest.importorskip("transformers")

# a run.json of 0.2.0 as another install wrote it: the bundled release prompt by its install path
OLD_INSTALL_PROMPT = (
    "/opt/venv-0.2.0/lib/python3.11/site-packages/jbcompile/evaluate/prompts/release/verbatim.j2"
)


def outputs(out: Path) -> dict[str, bytes]:
    """Every file of a run folder (charts included), by its path in the folder."""
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def constructions(monkeypatch: pytest.MonkeyPatch, cls: type) -> list[str]:
    """The models ``cls`` is constructed for from now on (its ``__init__`` still runs)."""
    built: list[str] = []
    real = cls.__init__

    def counting(self, config) -> None:
        built.append(config.model)
        real(self, config)

    monkeypatch.setattr(cls, "__init__", counting)
    return built


def never_built(monkeypatch: pytest.MonkeyPatch, cls: type) -> None:
    def refuse(self, config) -> None:
        raise AssertionError(f"{cls.__name__} was built on a resume with every row done")

    monkeypatch.setattr(cls, "__init__", refuse)


def run_json(out: Path) -> dict:
    return json.loads((out / "run.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "extra", [(), ("--chat", "--scoring", "generate", "--max-new-tokens", "4")], ids=["logprob", "chat"]
)
def test_a_complete_resume_loads_no_model_and_writes_the_same_outputs(
    tiny_model: Path, build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: tuple
) -> None:
    out = tmp_path / "run"
    built = constructions(monkeypatch, backends.TransformersBackend)
    code, output = run_cli(*eval_args(tiny_model, build_dir, out, *extra))
    assert code == 0, output
    assert built == [str(tiny_model)]
    first = outputs(out)
    (out / "results.json").unlink()  # e.g. stopped while the bootstrap ran: every prediction is there

    code, output = run_cli(*eval_args(tiny_model, build_dir, out, *extra))
    assert code == 0, output
    assert built == [str(tiny_model)]  # not built again: a chat template needs the tokenizer alone
    assert outputs(out) == first


def test_a_partial_resume_loads_the_model_and_computes_only_the_missing_rows(
    tiny_model: Path, build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    code, output = run_cli(*eval_args(tiny_model, build_dir, out))
    assert code == 0, output
    first = outputs(out)
    log = out / "predictions.jsonl"
    first_records = lines(log)
    kept = log.read_text(encoding="utf-8").splitlines(keepends=True)[:-5]
    log.write_text("".join(kept), encoding="utf-8")

    built = constructions(monkeypatch, backends.TransformersBackend)
    scored: list[int] = []
    real_score = backends.TransformersBackend.score
    monkeypatch.setattr(
        backends.TransformersBackend,
        "score",
        lambda self, sequences, keys, ids: (
            scored.append(len(sequences)) or real_score(self, sequences, keys, ids)
        ),
    )
    code, output = run_cli(*eval_args(tiny_model, build_dir, out))
    assert code == 0, output
    assert built == [str(tiny_model)] and sum(scored) == 5
    again = outputs(out)
    assert again.pop("predictions.jsonl") != b"" and first.pop("predictions.jsonl") != b""
    assert again == first  # rows in other batches may differ in a log-probability's last digit only
    resumed = lines(log)
    assert [(r["example_id"], r["pred"]) for r in resumed] == [
        (r["example_id"], r["pred"]) for r in first_records
    ]


def test_a_model_that_cannot_load_leaves_no_run_folder(build_dir: Path, tmp_path: Path) -> None:
    """The backend is built before anything is written, as before it was built lazily."""
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "config.json").write_text("{}", encoding="utf-8")
    code, output = run_cli(*eval_args(broken, build_dir, tmp_path / "run"))
    assert code == 2 and "EV050" in output
    assert not (tmp_path / "run").exists()


def test_a_complete_vllm_resume_starts_no_engine(
    tiny_model: Path, build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prompt hashes do not depend on the backend (no chat template): a log written by one backend is
    complete for the other, and the vllm engine (never started here) describes itself from its options."""
    source = tmp_path / "transformers"
    code, output = run_cli(*eval_args(tiny_model, build_dir, source))
    assert code == 0, output
    out = tmp_path / "vllm"
    out.mkdir()
    for name in ("predictions.jsonl", "results.json"):
        shutil.copy(source / name, out / name)
    never_built(monkeypatch, VllmBackend)
    code, output = run_cli(*eval_args(tiny_model, build_dir, out, "--backend", "vllm"))
    assert code == 0, output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["model"]["dtype"] == "float32"
    assert results["backend"]["name"] == "vllm" and results["backend"]["server_model"] == str(tiny_model)
    assert results["backend"]["usage"] == {"requests": 0, "input_tokens": 0, "output_tokens": 0}
    before = json.loads((source / "results.json").read_text(encoding="utf-8"))
    assert results["metrics"] == before["metrics"] and results["metrics_ci"] == before["metrics_ci"]


@pytest.mark.parametrize("samples", [1, 2])
def test_a_complete_remote_resume_needs_neither_server_nor_key(
    build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, samples: int
) -> None:
    """Every (row, sample) done: no client is made, so neither the key nor the server is asked for."""
    from jbcompile.evaluate.backends import BackendOptions, SamplingConfig
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.requests import EvalRequest
    from jbcompile.evaluate.run import run_eval

    sampling = SamplingConfig(temperature=0.7, seed=3) if samples > 1 else SamplingConfig()

    def request(url: str) -> EvalRequest:
        return EvalRequest(
            model="fake-model",
            dataset=str(build_dir),
            out=tmp_path / "run",
            options=EvalOptions(scoring="generate", chat=True),
            bootstrap=20,
            backend="openai",
            backend_options=BackendOptions(
                base_url=url, backoff_seconds=0.01, timeout=5.0, sampling=sampling
            ),
            samples=samples,
        )

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-resume")
    with FakeAPI() as api:
        first = run_eval(request(api.url + "/v1")).results.to_json()
        url = api.url + "/v1"
    monkeypatch.delenv("OPENAI_API_KEY")  # and the server is gone
    never_built(monkeypatch, OpenAIBackend)
    again = run_eval(request(url)).results.to_json()
    assert again["metrics"] == first["metrics"]
    assert again["backend"]["usage"]["requests"] == 0 and again["backend"]["base_url"] == url


def test_a_local_dataset_spelled_otherwise_resumes(
    build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--dataset build``, then ``./build``, ``build/`` or its absolute path into the same --out: the same
    rows from the same place, so the run resumes (nothing is sent again) rather than EV007 over the
    spelling; another folder holding the same rows is another setting still."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-resume")
    monkeypatch.chdir(build_dir.parent)
    out = tmp_path / "run"
    with FakeAPI() as api:

        def run(dataset: str) -> tuple[int, str]:
            return run_cli("eval", "-m", "fake-model", "-d", dataset, "--out", str(out), "--backend",
                           "openai", "--base-url", api.url + "/v1", "--scoring", "generate", "--limit",
                           "4", "--bootstrap", "0", "--quiet")  # fmt: skip

        code, output = run(build_dir.name)
        assert code == 0, output
        sent = api.state.requests
        for spelled in (f"./{build_dir.name}", f"{build_dir.name}/", str(build_dir)):
            code, output = run(spelled)
            assert code == 0 and "EV007" not in output, output
            assert api.state.requests == sent
        copy = tmp_path / "copy"
        shutil.copytree(build_dir, copy)
        code, output = run(str(copy))
        assert code == 2 and "EV007" in output and "dataset:" in output, output


def test_a_path_is_one_setting_however_spelled_and_a_hub_id_is_its_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jbcompile.evaluate.resume import settings_differ

    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "m").mkdir(parents=True)
    stored = {"model": "models/m", "dataset": "org/name"}
    assert settings_differ(stored, {**stored, "model": str(tmp_path / "models" / "m")}) == []
    assert settings_differ(stored, {**stored, "model": "./models/../models/m"}) == []
    # a Hub id (no such folder here) is compared as written
    assert settings_differ(stored, {**stored, "dataset": "./org/name"}) == [
        'dataset: "org/name" → "./org/name"'
    ]
    assert settings_differ(stored, {**stored, "dataset": "Org/Name"}) != []


# ---- run.json: what names the prompt, not where it lies ------------------------------------------


def jubaku_run(model: Path, data: Path, out: Path, *extra: str) -> tuple[int, str]:
    return run_cli("eval", "--model", str(model), "--dataset", str(data), "--out", str(out), "--quiet",
                   "--bootstrap", "20", *extra)  # fmt: skip


def test_a_release_run_resumes_after_the_package_moved(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_jsonl(tmp_path / "jubaku_ver2.jsonl", jubaku_release())
    out = tmp_path / "run"
    code, output = jubaku_run(tiny_model, data, out)
    assert code == 0, output
    assert run_json(out)["options"]["prompt_file"] == "release/verbatim.j2"
    for name in ("run.json", "results.json", "report.md"):
        assert str(PROMPTS_DIR) not in (out / name).read_text(encoding="utf-8")
    first = outputs(out)

    settings = run_json(out)  # as 0.2.0 wrote it, in an install that has since moved
    settings["options"]["prompt_file"] = OLD_INSTALL_PROMPT
    (out / "run.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    never_built(monkeypatch, backends.TransformersBackend)
    code, output = jubaku_run(tiny_model, data, out)
    assert code == 0, output
    assert outputs(out) == first  # run.json written again in the new form

    settings["template_sha256"] = "0" * 64  # the same name, another prompt
    (out / "run.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    code, output = jubaku_run(tiny_model, data, out)
    assert code == 2 and "EV007" in output and "template_sha256" in output


def test_a_prompt_file_is_known_by_name_and_content(
    tiny_model: Path, build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wording = (prompt_folders()["bbq"] / "basic.j2").read_text(encoding="utf-8")
    here, moved, other = (tmp_path / name for name in ("here", "moved", "other"))
    for folder, text in ((here, wording), (moved, wording), (other, wording + "\n")):
        folder.mkdir()
        (folder / "mine.j2").write_text(text, encoding="utf-8")
    out = tmp_path / "run"
    code, output = run_cli(*eval_args(tiny_model, build_dir, out, "--prompt-file", str(here / "mine.j2")))
    assert code == 0, output
    assert run_json(out)["options"]["prompt_file"] == "mine.j2"
    never_built(monkeypatch, backends.TransformersBackend)
    code, output = run_cli(*eval_args(tiny_model, build_dir, out, "--prompt-file", str(moved / "mine.j2")))
    assert code == 0, output
    code, output = run_cli(*eval_args(tiny_model, build_dir, out, "--prompt-file", str(other / "mine.j2")))
    assert code == 2 and "EV007" in output and "template_sha256" in output
    assert len(lines(out / "predictions.jsonl")) > 0  # the refused run changed nothing


def test_other_settings_are_named_in_the_refusal(tiny_model: Path, build_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, output = run_cli(*eval_args(tiny_model, build_dir, out, "--limit", "4"))
    assert code == 0, output
    code, output = run_cli(*eval_args(tiny_model, build_dir, out, "--limit", "4", "--setting", "warning"))
    assert code == 2 and "EV007" in output
    assert 'options.setting: "basic" → "warning"' in " ".join(output.split())


# ---- shared results: no home folder, data named by content ----------------------------------------


def test_results_write_the_home_folder_as_a_tilde(
    tiny_model: Path, build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = str(tiny_model.parent)
    monkeypatch.setenv("HOME", home)
    out = tmp_path / "run"
    code, output = run_cli(*eval_args(tiny_model, build_dir, out, "--limit", "4"))
    assert code == 0, output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["model"]["name"] == "~/" + tiny_model.name
    for name in ("results.json", "report.md"):
        assert home not in (out / name).read_text(encoding="utf-8")
    again = tmp_path / "again"  # a second run (other shots): a run is compared with another, not itself
    code, output = run_cli(*eval_args(tiny_model, build_dir, again, "--limit", "4", "--seed", "1"))
    assert code == 0, output
    monkeypatch.setenv("HOME", str(tmp_path))  # run folders in the home folder, named by their path
    code, output = run_cli(
        "compare", str(out), str(again), "--out", str(tmp_path / "cmp"), "--bootstrap", "20"
    )
    assert code == 0, output
    assert "~/run" in (tmp_path / "cmp" / "compare.csv").read_text(encoding="utf-8")
    for name in ("compare.csv", "compare.json", "compare.md"):
        assert str(tmp_path) not in (tmp_path / "cmp" / name).read_text(encoding="utf-8")


def test_compare_knows_a_release_file_by_its_content(tiny_model: Path, tmp_path: Path) -> None:
    rows = jubaku_release()
    for folder in "abc":
        (tmp_path / folder).mkdir()
    first = write_jsonl(tmp_path / "a" / "jubaku_ver2.jsonl", rows)
    copy = write_jsonl(tmp_path / "b" / "jubaku_ver2.jsonl", rows)  # the same file elsewhere
    rows[0] = {**rows[0], "instruction": rows[0]["instruction"].replace("テスト用", "試験用")}
    edited = write_jsonl(tmp_path / "c" / "jubaku_ver2.jsonl", rows)
    for name, data in (("one", first), ("two", copy), ("three", edited), ("four", first)):
        code, output = jubaku_run(tiny_model, data, tmp_path / name)
        assert code == 0, output
    results = json.loads((tmp_path / "four" / "results.json").read_text(encoding="utf-8"))
    del results["dataset"]["sha256"]  # as written before results.json named the file's content
    (tmp_path / "four" / "results.json").write_text(json.dumps(results), encoding="utf-8")
    code, output = run_cli("compare", str(tmp_path / "one"), str(tmp_path / "four"), "--out",
                           str(tmp_path / "cmp0"), "--bootstrap", "20")  # fmt: skip
    assert code == 0, output  # compared by the path, as then
    code, output = run_cli("compare", str(tmp_path / "one"), str(tmp_path / "two"), "--out",
                           str(tmp_path / "cmp"), "--bootstrap", "20")  # fmt: skip
    assert code == 0, output
    code, output = run_cli("compare", str(tmp_path / "one"), str(tmp_path / "three"), "--out",
                           str(tmp_path / "cmp2"), "--bootstrap", "20")  # fmt: skip
    assert code == 2 and "EV212" in output


def test_weights_saved_again_into_the_model_folder_stop_a_resume(
    tiny_model: Path, build_dir: Path, tmp_path: Path
) -> None:
    model = tmp_path / "model"
    shutil.copytree(tiny_model, model)
    out = tmp_path / "run"
    code, output = run_cli(*eval_args(model, build_dir, out, "--limit", "4"))
    assert code == 0, output
    recorded = run_json(out)["model_files"]
    assert any(name.endswith(".safetensors") for name in recorded)
    code, output = run_cli(*eval_args(model, build_dir, out, "--limit", "4"))
    assert code == 0, output  # the same weights: the run resumes
    weights = next(model.glob("*.safetensors"))
    changed = bytearray(weights.read_bytes())
    changed[-8] ^= 0xFF  # the same size, other values (a model trained again and saved in its place)
    weights.write_bytes(bytes(changed))
    code, output = run_cli(*eval_args(model, build_dir, out, "--limit", "4"))
    assert code == 2 and "EV007" in output and "model_files" in output
    settings = run_json(out)  # a run.json written before the files were recorded still resumes
    del settings["model_files"]
    (out / "run.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    code, output = run_cli(*eval_args(model, build_dir, out, "--limit", "4"))
    assert code == 0, output


def test_a_run_that_stopped_its_replies_elsewhere_is_not_resumed(
    tiny_model: Path, build_dir: Path, tmp_path: Path
) -> None:
    """run.json records where generation stopped (the kind's stop strings): a version of the package that
    stops elsewhere refuses to add its replies to those; a run.json from before they were recorded resumes."""
    out = tmp_path / "run"
    args = eval_args(
        tiny_model, build_dir, out, "--limit", "4", "--scoring", "generate", "--max-new-tokens", "3"
    )
    code, output = run_cli(*args)
    assert code == 0, output
    settings = run_json(out)
    assert settings["stop_strings"] == ["###"]
    (out / "run.json").write_text(json.dumps({**settings, "stop_strings": []}), encoding="utf-8")
    code, output = run_cli(*args)
    assert code == 2 and "EV007" in output and "stop_strings" in output
    del settings["stop_strings"]
    (out / "run.json").write_text(json.dumps(settings), encoding="utf-8")
    code, output = run_cli(*args)
    assert code == 0, output
