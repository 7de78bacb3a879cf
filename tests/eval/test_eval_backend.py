"""The transformers backend on the tiny model: prefix reuse changes nothing but speed; OOM halves."""

from __future__ import annotations

from pathlib import Path

import pytest
from jbcompile.designs.bbq.evaluate import BBQ
from jbcompile.evaluate.backends import BackendConfig, TransformersBackend, common_prefix_length, plan_batches
from jbcompile.evaluate.kind import EvalOptions
from jbcompile.evaluate.promptfiles import load_prompt_template


@pytest.fixture(scope="module")
def prompts(lite_rows: list[dict]):
    options = EvalOptions(shots=3)
    return BBQ.prepare(lite_rows, options, load_prompt_template("bbq", "basic")).items


def backend(model: Path, **config) -> TransformersBackend:
    return TransformersBackend(BackendConfig(model=str(model), **config))


def test_plan_batches_fills_batches_keeps_groups_contiguous_longest_first() -> None:
    lengths = [10, 12, 30, 31, 5, 6, 7, 20]
    keys = [
        ("a", "q1"),
        ("a", "q1"),
        ("b", "q2"),
        ("b", "q2"),
        ("a", "q3"),
        ("a", "q3"),
        ("a", "q3"),
        ("b", "q4"),
    ]
    batches = plan_batches(lengths, keys, batch_size=3)
    assert sorted(i for b in batches for i in b) == list(range(8))
    assert sorted(len(b) for b in batches) == [2, 3, 3]  # full batches: fewer forward passes
    line = [i for b in sorted(batches, key=lambda b: min(b)) for i in b]
    for group in ([0, 1], [2, 3], [4, 5, 6]):
        # a group is never interleaved with another; it is split at most at a batch boundary
        spans = [b for b in batches if set(group) & set(b)]
        assert len(spans) <= 2
        flat = [i for b in spans for i in b if i in group]
        assert sorted(flat) == group
    assert len(line) == 8
    longest = [max(lengths[i] for i in b) for b in batches]
    assert longest[0] == max(longest)  # memory trouble shows at once
    assert plan_batches(lengths, keys, 3) == batches
    assert [len(b) for b in plan_batches([5] * 7, [("a", "q")] * 7, batch_size=3)] == [3, 3, 1]
    # a category's batches follow one another (its shared prefix stays warm), longest first within it
    many = [("a", "q1")] * 4 + [("b", "q2")] * 4 + [("a", "q3")] * 4 + [("b", "q4")] * 4
    sizes = [9, 9, 9, 9, 5, 5, 5, 5, 3, 3, 3, 3, 7, 7, 7, 7]
    planned = plan_batches(sizes, many, batch_size=2)
    outer = [many[b[0]][0] for b in planned]
    assert outer == ["a"] * 4 + ["b"] * 4
    assert [sizes[b[0]] for b in planned] == [9, 9, 3, 3, 7, 7, 5, 5]


def test_common_prefix_length() -> None:
    assert common_prefix_length([[1, 2, 3, 4], [1, 2, 5, 6]], 0, 3) == 2
    assert common_prefix_length([[1, 2, 3], [1, 2, 3]], 0, 2) == 2  # capped: each keeps a token to run
    assert common_prefix_length([[1, 2], [9, 2]], 1, 1) == 1


def test_prefix_reuse_gives_the_same_log_probs_as_whole_prompts(tiny_model: Path, prompts) -> None:
    reuse = backend(tiny_model, batch_size=8, prefix_cache=True)
    plain = backend(tiny_model, batch_size=8, prefix_cache=False)
    texts = [item.text for item in prompts]
    keys = [item.prefix_keys for item in prompts]
    encoded = reuse.encode(texts, chat=False)
    labels = reuse.label_token_ids(["0", "1", "2"], texts[0], chat=False)
    order = [i for batch in plan_batches([len(e) for e in encoded], keys, 8) for i in batch]
    computed = {"reuse": 0, "plain": 0}

    def counting(name, forward):
        def run(*args, **kwargs):
            computed[name] += int(kwargs["attention_mask"][:, -kwargs["input_ids"].shape[1] :].sum())
            return forward(*args, **kwargs)

        return run

    reuse.model.forward = counting("reuse", reuse.model.forward)
    plain.model.forward = counting("plain", plain.model.forward)
    with_reuse = reuse.score([encoded[i] for i in order], [keys[i] for i in order], labels)
    without = plain.score([encoded[i] for i in order], [keys[i] for i in order], labels)
    # the instruction and shots of a category are computed once per batch, not once per prompt
    assert computed["plain"] == sum(len(e) for e in encoded)
    assert computed["reuse"] < 0.6 * computed["plain"]
    alone = [plain.score([encoded[i]], [keys[i]], labels)[0] for i in order[:6]]
    for a, b in zip(with_reuse, without, strict=True):
        assert a == pytest.approx(b, abs=1e-4)
    for a, b in zip(with_reuse[:6], alone, strict=True):
        assert a == pytest.approx(b, abs=1e-4)
    assert reuse.prefix_cache  # the tiny Llama's cache is reusable
    argmax = lambda rows: [max(range(3), key=r.__getitem__) for r in rows]  # noqa: E731
    assert argmax(with_reuse) == argmax(without)
    assert len(set(argmax(with_reuse))) > 1  # the scaled random model does not answer one option always


def test_tuned_attention_gives_what_transformers_itself_gives(tiny_model: Path, prompts) -> None:
    """On CPU the grouped-head model runs our attention call and ready decoding masks: the log-probs and
    greedy tokens of a batch equal those of the same model loaded plainly, each prompt run alone."""
    import torch
    from jbcompile.evaluate.backends.transformers import CPU_ATTENTION
    from transformers import AutoModelForCausalLM

    ours = backend(tiny_model, batch_size=6)
    assert ours.model.config._attn_implementation == CPU_ATTENTION
    assert ours._additive_mask
    assert ours._last_layer == ours.model.config.num_hidden_layers - 1  # its last layer: the last query
    plain = AutoModelForCausalLM.from_pretrained(tiny_model, attn_implementation="sdpa")
    items = prompts[:6]
    encoded = ours.encode([i.text for i in items], chat=False)
    keys = [i.prefix_keys for i in items]
    labels = ours.label_token_ids(["0", "1", "2"], items[0].text, chat=False)
    scores = ours.score(encoded, keys, labels)
    generated = ours.generate(encoded, keys, max_new_tokens=8)
    for sequence, row, text in zip(encoded, scores, generated, strict=True):
        ids = torch.tensor([list(sequence)])
        with torch.inference_mode():
            last = torch.log_softmax(plain(input_ids=ids).logits[0, -1].float(), dim=-1)
            tokens = plain.generate(input_ids=ids, max_new_tokens=8, do_sample=False, pad_token_id=0)
        assert row == pytest.approx([float(last[i]) for i in labels], abs=1e-4)
        continuation = tokens[0, ids.shape[1] :].tolist()
        eos = [i for i, token in enumerate(continuation) if token in ours.eos_ids]
        assert text == ours.tokenizer.decode(
            continuation[: eos[0] + 1 if eos else None], skip_special_tokens=True
        )


def test_the_last_layer_attends_only_the_last_query(tiny_model: Path, prompts, monkeypatch) -> None:
    """A forward pass reads only its last position's logits, so the last layer attends for that query
    alone (the earlier layers for every position); the probe keeps this only where the logits agree."""
    from jbcompile.evaluate.backends import transformers as module

    ours = backend(tiny_model, batch_size=6)
    queries: dict[int, list[int]] = {}
    sdpa = module._sdpa

    def spy(attention, query, *args, **kwargs):
        queries.setdefault(attention.layer_idx, []).append(query.shape[2])
        return sdpa(attention, query, *args, **kwargs)

    monkeypatch.setattr(module, "_sdpa", spy)
    items = prompts[:6]
    encoded = ours.encode([i.text for i in items], chat=False)
    ours.score(encoded, [i.prefix_keys for i in items], [5, 6, 7])
    first, last = queries[0], queries[ours.model.config.num_hidden_layers - 1]
    assert len(first) == len(last) and min(first) > 1 and set(last) == {1}
    # a wrong layer (here the first, as if the model had one layer) changes the logits: not kept
    monkeypatch.setattr(module, "_sdpa", sdpa)
    last = ours.model.config.num_hidden_layers - 1
    for layer, kept in ((last, last), (0, None)):
        ours.model.set_attn_implementation("sdpa")  # as loaded
        monkeypatch.setattr(module, "_last_layer_index", lambda config, layer=layer: layer)
        assert module._tune_attention(ours.model).last_layer == kept


def test_a_decoding_step_mask_is_what_transformers_builds(tiny_model: Path, prompts) -> None:
    """The ready mask of a decoding step, with padding mid-sequence, gives the logits of the row mask."""
    import copy

    import torch
    from jbcompile.evaluate.backends.transformers import _additive_mask

    ours = backend(tiny_model, batch_size=6)
    items = prompts[:6]
    encoded = ours.encode([i.text for i in items], chat=False)
    state = ours._shared_prefixes(encoded, [i.prefix_keys for i in items])
    suffixes = [list(seq[end:]) for seq, end in zip(encoded, state.ends, strict=True)]
    cache, logits = ours._extend(state, suffixes, state.row_of)
    mask = torch.cat([state.mask, torch.ones((len(items), 1), dtype=state.mask.dtype)], dim=1)
    assert int((mask == 0).sum()) > 0  # padding sits inside the rows
    step = {"input_ids": logits[:, -1].argmax(-1)[:, None], "position_ids": state.mask.sum(-1, keepdim=True)}
    with torch.inference_mode():
        additive = _additive_mask(mask, 1, ours.model.dtype)
        ready = ours.model(attention_mask=additive, **{ours._cache_name: copy.deepcopy(cache)}, **step)
        rows = ours.model(attention_mask=mask, **{ours._cache_name: copy.deepcopy(cache)}, **step)
    assert torch.allclose(ready.logits, rows.logits, atol=1e-5)
    # which positions each new token may see: the tokens of its row up to itself, never padding
    rows_mask = torch.tensor([[1, 1, 0, 0, 1, 1], [1, 1, 1, 0, 1, 1]])
    seen = _additive_mask(rows_mask, 2, torch.float32) == 0
    assert seen.shape == (2, 1, 2, 6)
    assert seen[0, 0].int().tolist() == [[1, 1, 0, 0, 1, 0], [1, 1, 0, 0, 1, 1]]
    assert seen[1, 0].int().tolist() == [[1, 1, 1, 0, 1, 0], [1, 1, 1, 0, 1, 1]]
    assert float(_additive_mask(rows_mask, 1, torch.float32).min()) == torch.finfo(torch.float32).min


def test_label_tokens_are_the_digits(tiny_model: Path, prompts) -> None:
    b = backend(tiny_model)
    ids = b.label_token_ids(["0", "1", "2"], prompts[0].text, chat=False)
    assert [b.tokenizer.decode([i]) for i in ids] == ["0", "1", "2"]


def test_prefix_reuse_generates_the_same_tokens(tiny_model: Path, prompts) -> None:
    reuse = backend(tiny_model, batch_size=6, prefix_cache=True)
    plain = backend(tiny_model, batch_size=6, prefix_cache=False)
    items = prompts[:6]
    encoded = reuse.encode([i.text for i in items], chat=False)
    keys = [i.prefix_keys for i in items]
    a = reuse.generate(encoded, keys, max_new_tokens=6)
    b = plain.generate(encoded, keys, max_new_tokens=6)
    alone = [plain.generate([e], [k], max_new_tokens=6)[0] for e, k in zip(encoded, keys, strict=True)]
    assert a == b == alone
    assert all(isinstance(text, str) and text for text in a)


def test_out_of_memory_halves_the_batch_and_keeps_results(tiny_model: Path, prompts, monkeypatch) -> None:
    import torch

    b = backend(tiny_model, batch_size=8, prefix_cache=False)
    encoded = b.encode([i.text for i in prompts[:8]], chat=False)
    keys = [i.prefix_keys for i in prompts[:8]]
    labels = b.label_token_ids(["0", "1", "2"], prompts[0].text, chat=False)
    expected = b.score(encoded, keys, labels)
    forward = b.model.forward
    seen: list[int] = []

    def limited(*args, **kwargs):
        rows = kwargs["input_ids"].shape[0]
        seen.append(rows)
        if rows > 2:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return forward(*args, **kwargs)

    monkeypatch.setattr(b.model, "forward", limited)
    got = b.score(encoded, keys, labels)
    assert b.batch_size == 2
    assert seen[:3] == [8, 4, 2]
    for x, y in zip(got, expected, strict=True):
        assert x == pytest.approx(y, abs=1e-5)


def test_a_missing_model_is_a_diagnostic(tmp_path: Path) -> None:
    from jbcompile.diagnostics import DiagnosticError

    with pytest.raises(DiagnosticError) as error:
        backend(tmp_path / "no-model")
    assert error.value.diagnostics[0].code == "EV050"


@pytest.mark.parametrize(
    ("files", "said"),
    [
        ((), "the folder holds no model (no config.json, no tokenizer files, no weights)"),
        (("config.json",), "the folder holds no complete model (no tokenizer files, no weights)"),
    ],
)
def test_a_folder_without_a_model_says_what_it_lacks(
    tmp_path: Path, files: tuple[str, ...], said: str
) -> None:
    """An empty --model folder said "Couldn't instantiate the backend tokenizer from one of: —"."""
    from jbcompile.diagnostics import DiagnosticError

    folder = tmp_path / "model"
    folder.mkdir()
    for name in files:
        (folder / name).write_text('{"model_type": "gpt2"}', encoding="utf-8")
    with pytest.raises(DiagnosticError) as error:
        backend(folder)
    [problem] = error.value.diagnostics
    assert problem.code == "EV050" and said in problem.message, problem.message
    assert "save_pretrained" in (problem.hint or "") and "instantiate" not in problem.message


def _first_outputs(b: TransformersBackend, prompts, count: int, **kwargs) -> tuple[list, list, list[str]]:
    items = prompts[:count]
    encoded = b.encode([i.text for i in items], chat=False)
    keys = [i.prefix_keys for i in items]
    return encoded, keys, b.generate(encoded, keys, **kwargs)


def test_greedy_loop_equals_model_generate_with_stops_and_eos(tiny_model: Path, prompts) -> None:
    ours = backend(tiny_model, batch_size=8)
    encoded, keys, free = _first_outputs(ours, prompts, 8, max_new_tokens=12)
    # a stop string that the random model really produces mid-way, and an end token it really emits
    middles = [text[4:6] for text in free if len(text) > 8]
    stop = next(m for m in middles if m.strip() and "\ufffd" not in m)
    eos = ours.encode([free[1]], chat=False)[0][2]
    reference = backend(tiny_model, batch_size=8)
    for b in (ours, reference):
        b.eos_ids = frozenset({eos})
    reference._plain_cache = False  # whole prompts through model.generate and its StopStringCriteria
    got = ours.generate(encoded, keys, max_new_tokens=12, stop_strings=(stop,))
    expected = reference.generate(encoded, keys, max_new_tokens=12, stop_strings=(stop,))
    assert got == expected
    assert any(stop in text for text in got)  # the stop string did end some rows ...
    assert any(len(g) < len(f) for g, f in zip(got, free, strict=True))  # ... early


def test_finished_rows_leave_the_batch(tiny_model: Path, prompts) -> None:
    b = backend(tiny_model, batch_size=8, prefix_cache=False)
    encoded, keys, free = _first_outputs(b, prompts, 8, max_new_tokens=10)
    import torch

    with torch.inference_mode():
        first_token = int(b.model(input_ids=torch.tensor([encoded[0]])).logits[0, -1].argmax())
    b.eos_ids = b.eos_ids | {first_token}  # row 0 ends at its first token
    rows_per_step: list[int] = []
    forward = b.model.forward

    def spy(*args, **kwargs):
        if kwargs["input_ids"].shape[1] == 1:
            rows_per_step.append(kwargs["input_ids"].shape[0])
        return forward(*args, **kwargs)

    b.model.forward = spy
    out = b.generate(encoded, keys, max_new_tokens=10)
    assert rows_per_step and max(rows_per_step) < 8  # row 0 was not decoded after it ended
    assert out[0] == b.tokenizer.decode([first_token], skip_special_tokens=True)
    for text, unlimited in zip(out[1:], free[1:], strict=True):
        assert unlimited.startswith(text.rstrip("\ufffd"))  # the others are unchanged up to that token


def test_decoding_steps_write_the_cache_in_place(tiny_model: Path, prompts) -> None:
    b = backend(tiny_model, batch_size=8)
    encoded, keys, free = _first_outputs(b, prompts, 8, max_new_tokens=10)
    addresses: list[tuple[int, ...]] = []
    forward = b.model.forward

    def spy(*args, **kwargs):
        out = forward(*args, **kwargs)
        if kwargs["input_ids"].shape[1] == 1:  # a decoding step: where each layer's keys now live
            layers = kwargs[b._cache_name].layers
            addresses.append(
                tuple(p for layer in layers for p in (layer.keys.data_ptr(), layer.values.data_ptr()))
            )
        return out

    b.model.forward = spy
    assert b.generate(encoded, keys, max_new_tokens=10) == free
    # the first step makes room for all ten tokens; no later step moves (copies) the cache
    assert len(addresses) == 9 and len(set(addresses)) == 1


def test_a_category_prefix_is_computed_once_across_batches(tiny_model: Path, prompts) -> None:
    warm = backend(tiny_model, batch_size=6)
    cold = backend(tiny_model, batch_size=6)
    same_category = [i for i in prompts if i.prefix_keys[0] == prompts[0].prefix_keys[0]][:12]
    encoded = warm.encode([i.text for i in same_category], chat=False)
    keys = [i.prefix_keys for i in same_category]
    labels = warm.label_token_ids(["0", "1", "2"], same_category[0].text, chat=False)
    tokens_run: list[int] = []
    forward = warm.model.forward

    def counting(*args, **kwargs):
        tokens_run.append(int(kwargs["attention_mask"][:, -kwargs["input_ids"].shape[1] :].sum()))
        return forward(*args, **kwargs)

    warm.model.forward = counting
    first = warm.score(encoded[:6], keys[:6], labels)
    first_cost = sum(tokens_run)
    tokens_run.clear()
    second = warm.score(encoded[6:], keys[6:], labels)
    shared = common_prefix_length(encoded, 0, min(len(e) for e in encoded) - 1)
    assert shared > 50
    assert sum(tokens_run) <= first_cost - shared + 6  # the shared instruction and shots were not rerun
    expected = cold.score(encoded, keys, labels)
    for a, b in zip(first + second, expected, strict=True):
        assert a == pytest.approx(b, abs=1e-4)


def test_a_model_without_position_ids_runs_whole_prompts(tiny_model: Path, prompts, tmp_path: Path) -> None:
    """ALiBi models (BLOOM) place tokens themselves: batched results still equal prompts run alone."""
    import shutil

    import torch
    from transformers import AutoTokenizer, BloomConfig, BloomForCausalLM

    folder = tmp_path / "bloom"
    shutil.copytree(tiny_model, folder, ignore=shutil.ignore_patterns("*.safetensors", "config.json", "gen*"))
    tokenizer = AutoTokenizer.from_pretrained(folder)
    torch.manual_seed(0)
    config = BloomConfig(
        vocab_size=len(tokenizer), hidden_size=32, n_layer=2, n_head=4, initializer_range=1.0
    )
    config.pad_token_id, config.eos_token_id = tokenizer.pad_token_id, tokenizer.eos_token_id
    BloomForCausalLM(config).save_pretrained(folder)
    b = backend(folder, batch_size=6, prefix_cache=True)
    assert not b.prefix_cache
    items = prompts[:6]
    encoded = b.encode([i.text for i in items], chat=False)
    keys = [i.prefix_keys for i in items]
    labels = b.label_token_ids(["0", "1", "2"], items[0].text, chat=False)
    together = b.score(encoded, keys, labels)
    alone = [b.score([e], [k], labels)[0] for e, k in zip(encoded, keys, strict=True)]
    for x, y in zip(together, alone, strict=True):
        assert x == pytest.approx(y, abs=1e-4)
    generated = b.generate(encoded, keys, max_new_tokens=5)
    one_by_one = [b.generate([e], [k], max_new_tokens=5)[0] for e, k in zip(encoded, keys, strict=True)]
    assert generated == one_by_one


def test_rows_stop_once_their_answer_is_final(tiny_model: Path, prompts, monkeypatch) -> None:
    b = backend(tiny_model, batch_size=8)
    encoded, keys, free = _first_outputs(b, prompts, 8, max_new_tokens=12)

    def line_ended(text: str) -> bool:
        return b._may_end_line(b.encode([text], chat=False)[0])

    assert line_ended("x\n") and not line_ended("xあ")
    # a character in byte pieces: a line break completed by its last piece counts, other characters not
    assert [b._token_text(t) for t in b.encode(["\u2028"], chat=False)[0]] == [None, None, None]
    assert line_ended("x\u2028") and line_ended("\u2028") and not line_ended("x齉") and not line_ended("齉")
    # the line gate opened for every token, so that the random model's rare line breaks are not needed
    monkeypatch.setattr(b, "_may_end_line", lambda row: True)
    final = lambda text: len(text) >= 6  # noqa: E731
    out = b.generate(encoded, keys, max_new_tokens=12, answer_is_final=final)
    for short, full in zip(out, free, strict=True):
        assert full.startswith(short.rstrip("\ufffd"))
        assert final(short) or short == full
    assert sum(len(s) < len(f) for s, f in zip(out, free, strict=True)) >= 4


def test_an_eval_prints_no_deprecation_warning(
    tiny_model: Path, build_dir: Path, tmp_path: Path, caplog
) -> None:
    """transformers' cache API as it is supported now: no deprecated argument in any path we run."""
    import warnings

    from jbcompile.evaluate.requests import EvalRequest
    from jbcompile.evaluate.run import run_eval
    from transformers.utils import logging as hf_logging

    hf_logging.enable_propagation()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for scoring in ("logprob", "generate"):
                request = EvalRequest(
                    model=str(tiny_model),
                    dataset=str(build_dir),
                    out=tmp_path / scoring,
                    options=EvalOptions(scoring=scoring),
                    bootstrap=10,
                    limit=8,
                )
                run_eval(request)
    finally:
        hf_logging.disable_propagation()
    # every deprecation, wherever Python places it: transformers' own (``deprecate_kwarg``) names the
    # caller of ``forward``, which is torch's module call, not a file of transformers or of ours
    deprecated = [
        f"{w.filename}: {w.message}"
        for w in caught
        if issubclass(w.category, DeprecationWarning | FutureWarning)
    ]
    assert not deprecated
    assert "deprecat" not in caplog.text.lower()


def test_sampled_runs_are_seeded_and_summarized(tiny_model: Path, build_dir: Path, tmp_path: Path) -> None:
    """--temperature with --samples K on transformers: K seeded runs, the same seed the same replies."""
    import json

    from jbcompile.evaluate.backends import BackendOptions, SamplingConfig
    from jbcompile.evaluate.requests import EvalRequest
    from jbcompile.evaluate.run import run_eval

    def run(out: Path, samples: int) -> dict:
        sampling = SamplingConfig(temperature=1.5, top_p=0.95, seed=3)
        request = EvalRequest(
            model=str(tiny_model), dataset=str(build_dir), out=out, options=EvalOptions(scoring="generate"),
            bootstrap=10, limit=12, backend_options=BackendOptions(sampling=sampling), samples=samples,
        )  # fmt: skip
        return run_eval(request).results.to_json()

    results = run(tmp_path / "k", 2)
    assert results["samples"]["seeds"] == [3, 4]
    assert set(results["samples"]["metrics_sd"]["overall"]) >= {"acc", "ooc_ratio"}

    def replies(folder: Path) -> list[str]:
        lines = (folder / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
        return [json.loads(line)["raw_output"] for line in lines]

    first, second = replies(tmp_path / "k" / "sample-1"), replies(tmp_path / "k" / "sample-2")
    assert first != second  # different seeds sample differently
    run(tmp_path / "again", 2)
    assert replies(tmp_path / "again" / "sample-1") == first  # the same seed, the same replies
