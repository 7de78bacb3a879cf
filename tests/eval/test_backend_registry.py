"""Backends by name, each owning its options, and the typed prompt they receive (text or chat messages)."""

from __future__ import annotations

import hashlib
import json

import pytest
from jbcompile.diagnostics import DiagnosticError
from jbcompile.evaluate.backends import BACKENDS, BackendConfig, BackendOptions, Options, SamplingConfig
from jbcompile.evaluate.backends.registry import backend_class, check_options
from jbcompile.evaluate.backends.remote import MessagesTemplate
from jbcompile.evaluate.prompting import ChatPrompt, as_messages, as_text, prompt_hash

# every option some backend takes (beside sampling, which all take), with a value in its range
VALID = {
    "tensor_parallel_size": 2,
    "pipeline_parallel_size": 2,
    "data_parallel_size": 2,
    "engine_args": (("max_model_len", 512),),
    "base_url": "http://127.0.0.1:1/v1",
    "concurrency": 4,
    "max_attempts": 2,
    "backoff_seconds": 0.5,
    "timeout": 30.0,
    "top_logprobs": 5,
    "thinking_budget": 2048,
}
OWNERS = {
    "transformers": set(),
    "vllm": {"tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "engine_args"},
    "openai": {"base_url", "concurrency", "max_attempts", "backoff_seconds", "timeout", "top_logprobs"},
    "anthropic": {"base_url", "concurrency", "max_attempts", "backoff_seconds", "timeout", "thinking_budget"},
}


@pytest.mark.parametrize("name", sorted(OWNERS))
def test_each_backend_is_found_by_its_name_and_names_its_options(name: str) -> None:
    cls = backend_class(name)
    assert cls.name == name and cls.__module__ == BACKENDS[name].partition(":")[0]
    assert issubclass(cls.Options, Options)
    assert set(cls.Options.model_fields) - {"sampling"} == OWNERS[name]


def test_an_unknown_backend_is_refused_with_the_names_it_could_be() -> None:
    with pytest.raises(DiagnosticError) as error:
        backend_class("nope")
    (diagnostic,) = error.value.diagnostics
    assert diagnostic.code == "EV300" and "transformers, vllm, openai, anthropic" in (diagnostic.hint or "")
    assert [d.code for d in check_options("nope", BackendOptions())] == ["EV300"]


@pytest.mark.parametrize("name", sorted(OWNERS))
def test_each_backend_takes_its_own_options_and_refuses_the_others(name: str) -> None:
    own = {option: VALID[option] for option in OWNERS[name]}
    assert check_options(name, BackendOptions(**own)) == []
    for option in sorted(set(VALID) - OWNERS[name]):
        problems = check_options(name, BackendOptions(**{option: VALID[option]}))
        owners = sorted(n for n, taken in OWNERS.items() if option in taken)
        assert [d.code for d in problems] == ["EV308"], option
        assert problems[0].message.endswith("backends" if len(owners) > 1 else f"the {owners[0]} backend")
        assert all(owner in problems[0].message for owner in owners)


@pytest.mark.parametrize("name", sorted(OWNERS))
def test_a_backend_built_directly_refuses_options_it_does_not_take(name: str) -> None:
    foreign = next(option for option in VALID if option not in OWNERS[name])
    config = BackendConfig(model="never-loaded", options=BackendOptions(**{foreign: VALID[foreign]}))
    with pytest.raises(DiagnosticError) as error:
        backend_class(name)(config)
    assert error.value.diagnostics[0].code == "EV308"


@pytest.mark.parametrize(
    ("name", "given", "message"),
    [
        ("openai", {"concurrency": 0}, "--concurrency must be 1 or more"),
        ("anthropic", {"max_attempts": 0}, "--max-attempts must be 1 or more"),
        ("openai", {"timeout": 0.0}, "--timeout must be more than 0 seconds"),
        ("openai", {"top_logprobs": 0}, "--top-logprobs must be 1 or more"),
        ("anthropic", {"thinking_budget": 100}, "--thinking-budget must be 1024 or more"),
        ("vllm", {"data_parallel_size": 0}, "--data-parallel-size must be 1 or more"),
        ("transformers", {"sampling": SamplingConfig(temperature=-1.0)}, "--temperature must be 0 or more"),
        ("vllm", {"sampling": SamplingConfig(top_p=0.0)}, "--top-p must be more than 0 and at most 1"),
        ("openai", {"concurrency": "many"}, "--concurrency: Input should be a valid integer"),
    ],
)
def test_each_backend_checks_the_range_of_its_options(name: str, given: dict, message: str) -> None:
    problems = check_options(name, BackendOptions(**given))
    assert [d.code for d in problems] == ["EV308"] and message in problems[0].message


def test_a_chat_prompt_travels_as_messages_and_is_hashed_as_before() -> None:
    messages = [{"role": "system", "content": "答えだけ"}, {"role": "user", "content": "質問 0, 1, 2"}]
    prompt = MessagesTemplate().apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert isinstance(prompt, ChatPrompt) and as_messages(prompt) == messages
    # predictions.jsonl's prompt_hash of a chat prompt since 0.2.0: the messages' JSON behind a marker
    logged = "\x00messages:" + json.dumps(messages, ensure_ascii=False)
    assert prompt_hash(prompt) == hashlib.sha256(logged.encode("utf-8")).hexdigest()[:16]
    assert len(prompt) == len(logged)  # batches are planned by this length, as they were
    assert as_messages("質問") == [{"role": "user", "content": "質問"}] and as_text("質問") == "質問"
    with pytest.raises(TypeError):
        as_text(prompt)  # a local tokenizer never gets messages


def test_the_openai_backend_sends_a_chat_prompt_as_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-registry")
    config = BackendConfig(model="m", chat=True, options=BackendOptions(base_url="http://127.0.0.1:1/v1"))
    backend = backend_class("openai")(config)
    try:
        messages = [{"role": "user", "content": "質問"}]
        body = backend.generate_request(ChatPrompt(tuple(messages)), 8, ("###",))
        assert body["messages"] == messages and body["endpoint"] == "chat.completions"
        assert backend.score_request(ChatPrompt(tuple(messages)))["messages"] == messages
    finally:
        backend.close()
