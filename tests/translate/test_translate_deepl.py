"""`jbcompile translate` against the fake DeepL server: slots, memory, glossary, faults, resume."""

from __future__ import annotations

from pathlib import Path

import pytest
from jbcompile.cli import app
from jbcompile.loader import load_yaml
from jbcompile.translate.client import DeepLTranslator
from jbcompile.translate.pipeline import Settings
from jbcompile.translate.runner import prepare, run
from typer.testing import CliRunner

from .conftest import VALID_KEY, FakeDeepL, write_sources

TEMPLATE = Path("templates/Age/age-help.yaml")


def _invoke(*args: str):
    return CliRunner().invoke(app, ["translate", *args])


def _load(root: Path, relative: Path | str) -> dict:
    """Read a file as jbcompile does (libyaml), which accepts `{en: Who?}` where PyYAML's parser does not."""
    return load_yaml(root / relative).data


def _translate(
    sources: Path, fake: FakeDeepL, batch_size: int = 50, only_missing: bool = False, max_retries=None
):
    prepared = prepare(sources, [], Settings(only_missing=only_missing))
    return run(
        prepared,
        lambda: DeepLTranslator(VALID_KEY, server_url=fake.url, max_retries=max_retries),
        batch_size=batch_size,
    )


def test_translates_writes_back_and_keeps_slots_comments_and_reviewed_text(fake_deepl, en_sources):
    result = _invoke("--sources", str(en_sources))
    assert result.exit_code == 0, result.output
    template = _load(en_sources, TEMPLATE)
    ambiguous = template["ambiguous_context"]
    assert ambiguous["status"] == "machine"
    assert ambiguous["ja"].startswith("訳:")
    for slot in ("{{NAME1}}", "{{NAME2}}", "{{WORD1}}"):
        assert slot in ambiguous["ja"]
    assert "&" in ambiguous["ja"] and "&amp;" not in ambiguous["ja"]
    # A reviewed translation is never touched, even when its English changed since.
    assert template["disambiguating_context"]["ja"] == "その{{NAME1}}は一人で設定を終えた。"
    assert template["disambiguating_context"]["status"] == "reviewed"
    text = (en_sources / TEMPLATE).read_text(encoding="utf-8")
    assert "# Which stereotype this probes" in text
    assert "# the first filler" in (en_sources / "vocab/Age.yaml").read_text(encoding="utf-8")
    vocab = _load(en_sources, "vocab/Age.yaml")
    assert vocab["groups"]["age_old"]["fillers"][0]["text"]["ja"] == "訳:retiree"
    dataset = _load(en_sources, "dataset.yaml")
    assert all(option["status"] == "machine" for option in dataset["unknown_options"])
    # Every request asked DeepL to keep the slot tags.
    for body in fake_deepl.translate_requests():
        assert body["tag_handling"] == "xml" and body["ignore_tags"] == ["x"]
        assert body["source_lang"] == "EN" and body["target_lang"] == "JA"
    sent = fake_deepl.texts_sent()
    assert any("<x>NAME1</x>" in text for text in sent)
    assert not any("{{" in text for text in sent)
    assert not any("set it up alone, while" in text for text in sent)  # the reviewed text is not billed


def test_short_texts_travel_with_their_context(fake_deepl, en_sources):
    _translate(en_sources, fake_deepl)
    bodies = {tuple(body["text"]): body for body in fake_deepl.translate_requests()}
    question = next(body for texts, body in bodies.items() if "Who needed help?" in texts)
    assert "At the shop" in question["context"]  # the template's long texts
    fillers = next(body for texts, body in bodies.items() if "retiree" in texts)
    assert fillers["context"].startswith("older people:") and "grandmother" in fillers["context"]
    long_text = next(
        body for texts, body in bodies.items() if any(t.startswith("At the shop") for t in texts)
    )
    assert "context" not in long_text


def test_memory_prevents_rebilling_and_edits_rebill_only_what_changed(fake_deepl, en_sources):
    first = _translate(en_sources, fake_deepl)
    billed_once = fake_deepl.billed
    assert first.billed_characters == billed_once > 0
    second = _translate(en_sources, fake_deepl)
    assert fake_deepl.billed == billed_once and second.translated == 0
    assert second.unchanged == len(first.written)  # nothing to write either
    # Change one English text: exactly that text is billed again.
    path = en_sources / TEMPLATE
    path.write_text(
        path.read_text(encoding="utf-8").replace("Who needed help?", "Who asked for help?"), "utf-8"
    )
    third = _translate(en_sources, fake_deepl)
    assert third.translated == 1
    assert fake_deepl.texts_sent()[-1] == "Who asked for help?"
    assert _load(en_sources, TEMPLATE)["questions"]["negative"]["text"]["ja"] == "訳:誰 asked for 手伝い?"


def test_only_missing_leaves_machine_texts_alone(fake_deepl, en_sources):
    _translate(en_sources, fake_deepl, only_missing=True)
    template = _load(en_sources, TEMPLATE)
    assert template["questions"]["non_negative"]["text"]["ja"] == "一人で設定したのは誰ですか？"
    assert "Who set it up alone?" not in fake_deepl.texts_sent()
    _translate(en_sources, fake_deepl)  # without the flag the machine text is refreshed
    assert _load(en_sources, TEMPLATE)["questions"]["non_negative"]["text"]["ja"].startswith("訳:")


def test_glossary_is_created_used_and_updated(fake_deepl, en_sources):
    glossary = en_sources / "translations" / "glossary.yaml"
    glossary.parent.mkdir()
    glossary.write_text("entries:\n  they: かれら\n", encoding="utf-8")
    # the disambiguating context holds "they" but is reviewed: put "they" into a translatable text
    path = en_sources / TEMPLATE
    path.write_text(
        path.read_text(encoding="utf-8").replace("Who needed help?", "Who said they needed help?"), "utf-8"
    )
    _translate(en_sources, fake_deepl)
    assert len(fake_deepl.glossaries) == 1
    (info,) = fake_deepl.glossaries.values()
    assert info.entries[("EN", "JA")] == {"they": "かれら"}
    question = _load(en_sources, TEMPLATE)["questions"]["negative"]["text"]["ja"]
    assert "かれら" in question and "彼ら" not in question
    uses = [b for b in fake_deepl.translate_requests() if "glossary_id" in b]
    assert uses and all(any("they" in t.lower() for t in b["text"]) for b in uses)
    # Editing the glossary updates the same DeepL glossary and re-bills only texts with the term.
    glossary.write_text("entries:\n  they: かれら\n  help: 支援\n", encoding="utf-8")
    before = len(fake_deepl.texts_sent())
    _translate(en_sources, fake_deepl)
    assert len(fake_deepl.glossaries) == 1
    assert info.entries[("EN", "JA")] == {"help": "支援", "they": "かれら"}
    resent = fake_deepl.texts_sent()[before:]
    assert resent and all("help" in t.lower() for t in resent)


def test_pronoun_rules_apply_to_machine_output(fake_deepl, en_sources):
    path = en_sources / TEMPLATE
    path.write_text(
        path.read_text(encoding="utf-8").replace("Who needed help?", "Did they need help?"), "utf-8"
    )
    _translate(en_sources, fake_deepl)
    question = _load(en_sources, TEMPLATE)["questions"]["negative"]["text"]["ja"]
    assert "かれら" in question and "彼ら" not in question
    memory = _load(en_sources, "translations/memory.yaml")
    raw = next(e for e in memory["entries"] if e["source"] == "Did they need help?")
    assert "彼ら" in raw["translation"]  # the memory keeps DeepL's own output


def test_dry_run_prints_billed_characters_and_calls_nothing(fake_deepl, en_sources):
    prepared = prepare(en_sources, [], Settings())
    expected = prepared.plan.billed_characters
    result = _invoke("--sources", str(en_sources), "--dry-run")
    assert result.exit_code == 0, result.output
    assert f"{expected:,} characters would be billed" in result.output
    assert "Who needed help?" in result.output
    assert fake_deepl.requests == []
    assert "0 answered by the memory, 0 repeating a text billed once" in result.output  # no memory yet
    _translate(en_sources, fake_deepl)
    assert fake_deepl.billed == expected  # the estimate is what the (fake) service counts
    again = _invoke("--sources", str(en_sources), "--dry-run")
    assert "0 text(s), 0 characters would be billed" in again.output
    assert f"{len(prepared.plan.planned)} answered by the memory, 0 repeating" in again.output


def test_a_text_met_twice_is_billed_once_and_not_credited_to_the_memory(en_sources):
    """The plan tells a text the memory holds from one repeated in this run (billed once): a dry run
    without any memory credited the repeats to it."""
    from jbcompile.translate.pipeline import make_plan

    prepared = prepare(en_sources, [], Settings())
    units = [item.unit for item in prepared.plan.planned]
    plan = make_plan([*units, units[0]], prepared.memory, prepared.glossary, Settings())
    assert (len(plan.planned), len(plan.to_bill), plan.remembered) == (len(units) + 1, len(units), 0)


def test_quota_exhausted_mid_run_keeps_finished_batches_and_resumes(fake_deepl, en_sources):
    prepared = prepare(en_sources, [], Settings())
    total = prepared.plan.billed_characters
    fake_deepl.quota = total // 2
    stopped = _translate(en_sources, fake_deepl, batch_size=2)
    assert stopped.stopped is not None and stopped.stopped.code == "TR002"
    assert 0 < stopped.translated < len(prepared.plan.to_bill)
    memory = _load(en_sources, "translations/memory.yaml")
    assert len(memory["entries"]) == stopped.translated
    assert len(stopped.written) == stopped.translated  # finished texts are already in the sources
    fake_deepl.quota = None
    resumed = _translate(en_sources, fake_deepl, batch_size=2)
    assert resumed.stopped is None
    assert fake_deepl.billed == total  # nothing was billed twice
    assert stopped.translated + resumed.translated == len(prepared.plan.to_bill)


def test_quota_error_through_the_cli_is_a_clear_message(fake_deepl, en_sources):
    fake_deepl.fail("456", times=1)
    result = _invoke("--sources", str(en_sources))
    assert result.exit_code == 2
    assert "TR002" in result.output and "quota" in result.output
    assert "Re-run the same command" in result.output
    assert "Traceback" not in result.output


def test_rate_limit_is_retried_with_backoff(fake_deepl, en_sources):
    fake_deepl.fail("429", times=2)
    result = _translate(en_sources, fake_deepl)
    assert result.stopped is None
    first_texts = fake_deepl.translate_requests()
    assert first_texts[0]["text"] == first_texts[1]["text"] == first_texts[2]["text"]  # retried, same request


def test_persistent_rate_limit_stops_after_bounded_retries(fake_deepl, en_sources):
    fake_deepl.fail("429", times=50)
    result = _translate(en_sources, fake_deepl, max_retries=2)
    assert result.stopped is not None and result.stopped.code == "TR003"
    assert len(fake_deepl.translate_requests()) == 3  # one try + two retries
    assert not (en_sources / "translations" / "memory.yaml").exists()


@pytest.mark.parametrize("fault", ["500", "drop"])
def test_transient_server_errors_and_dropped_connections_are_retried(fake_deepl, en_sources, fault):
    fake_deepl.fail(fault, times=1)
    result = _translate(en_sources, fake_deepl)
    assert result.stopped is None and result.translated > 0


def test_network_failure_stops_cleanly_and_keeps_earlier_batches(fake_deepl, en_sources):
    _translate(en_sources, fake_deepl, batch_size=2)
    path = en_sources / TEMPLATE
    path.write_text(path.read_text(encoding="utf-8").replace("Who needed help?", "Who was helped?"), "utf-8")
    fake_deepl.fail("drop", times=20)
    result = _translate(en_sources, fake_deepl, max_retries=1)
    assert result.stopped is not None and result.stopped.code == "TR004"
    assert _load(en_sources, TEMPLATE)["ambiguous_context"]["status"] == "machine"  # earlier work intact


def test_bad_key_is_reported_without_leaking_it(fake_deepl, en_sources, monkeypatch):
    monkeypatch.setenv("DEEPL_AUTH_KEY", "wrong-secret-key")
    result = _invoke("--sources", str(en_sources))
    assert result.exit_code == 2
    assert "TR001" in result.output
    assert "wrong-secret-key" not in result.output
    assert "ja:" not in (en_sources / TEMPLATE).read_text(encoding="utf-8").split("disambiguating_context")[0]


def test_missing_key_is_an_input_error(fake_deepl, en_sources, monkeypatch):
    monkeypatch.delenv("DEEPL_AUTH_KEY")
    result = _invoke("--sources", str(en_sources))
    assert result.exit_code == 2 and "TR000" in result.output
    assert fake_deepl.requests == []


def test_output_that_lost_a_slot_is_kept_out_of_the_sources(fake_deepl, en_sources):
    path = en_sources / TEMPLATE
    text = path.read_text(encoding="utf-8").replace("both asked", "MANGLE both asked")
    path.write_text(text, "utf-8")
    result = _translate(en_sources, fake_deepl)
    problems = [d for d in result.diagnostics if d.code == "TR006"]
    assert len(problems) == 1 and "lost {{NAME1}}" in problems[0].message
    assert "ja" not in _load(en_sources, TEMPLATE)["ambiguous_context"]
    billed = fake_deepl.billed
    again = _translate(en_sources, fake_deepl)
    assert fake_deepl.billed == billed  # the bad output is remembered, not bought again
    assert [d.code for d in again.diagnostics] == ["TR006"]


def test_paths_limit_what_is_translated(fake_deepl, en_sources):
    result = _invoke("--sources", str(en_sources), str(en_sources / "vocab"))
    assert result.exit_code == 0, result.output
    assert set(fake_deepl.texts_sent()) == {"retiree", "grandmother", "student", "teenager"}


def test_a_file_changed_during_the_run_is_reported_and_the_rest_written(fake_deepl, en_sources):
    prepared = prepare(en_sources, [], Settings())
    vocab = en_sources / "vocab" / "Age.yaml"
    vocab.write_text("category: Age\ngroups:\n  age_old:\n    tag: old\n    fillers: []\n", encoding="utf-8")
    result = run(prepared, lambda: DeepLTranslator(VALID_KEY, server_url=fake_deepl.url))
    assert [d.code for d in result.diagnostics] == ["TR013"]
    assert result.diagnostics[0].path.endswith("Age.yaml")
    assert _load(en_sources, TEMPLATE)["ambiguous_context"]["status"] == "machine"
    assert all(unit.path != vocab for unit, _ in result.written)


def test_the_write_back_changes_every_file_or_none(fake_deepl, en_sources, monkeypatch):
    """The translations of every file are one commit: a rename that fails takes back those done (TR013
    for each file), the memory keeps what was billed, and the next run writes them without billing."""
    from jbcompile import outputs

    sources = {p: p.read_bytes() for p in en_sources.rglob("*.yaml")}
    real, calls = outputs.os.replace, []

    def second_fails(source, target):  # the second source file the write-back renames into place
        if Path(target) in sources:
            calls.append(target)
        if len(calls) == 2 and Path(target) in sources:
            raise PermissionError(13, "Permission denied", target)
        real(source, target)

    monkeypatch.setattr(outputs.os, "replace", second_fails)
    result = _translate(en_sources, fake_deepl)
    monkeypatch.setattr(outputs.os, "replace", real)
    assert len(calls) >= 2 and result.written == []
    assert {d.code for d in result.diagnostics} == {"TR013"}
    assert {p: p.read_bytes() for p in sources} == sources
    assert sorted(p.name for p in en_sources.parent.iterdir()) == ["sources"]
    billed = len(fake_deepl.translate_requests())
    again = _translate(en_sources, fake_deepl)
    assert again.diagnostics == [] and len(again.written) > 0
    assert len(result.diagnostics) == len({unit.path for unit, _ in again.written}) > 1  # one per file
    assert len(fake_deepl.translate_requests()) == billed  # the memory answered


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v3/glossaries", {"glossaries": "not a list"}),  # the client iterates a string: TypeError
        ("/v3/glossaries", {"glossaries": [{"name": "x"}]}),  # a glossary without an id: KeyError
        (
            "/v3/glossaries",
            {
                "glossaries": [
                    {"glossary_id": "g", "name": "x", "creation_time": "yesterday", "dictionaries": []}
                ]
            },
        ),  # fmt: skip
        ("/v3/glossaries", [1, 2]),  # not an object: no glossaries, one is created …
        ("/v2/translate", {"translations": [{"text": 5, "billed_characters": "many"}]}),
        ("/v2/translate", {"translations": "x"}),
        ("/v2/translate", {}),
        ("/v2/translate", {"translations": [None]}),
    ],
)
def test_a_malformed_reply_stops_with_a_diagnostic_naming_deepl_never_a_traceback(
    fake_deepl, en_sources, path, body
):
    glossary = en_sources / "translations" / "glossary.yaml"
    glossary.parent.mkdir()
    glossary.write_text("entries:\n  they: かれら\n", encoding="utf-8")  # the glossary is read and synced
    fake_deepl.malformed[path] = body  # for the list, and for the creation of a glossary as well
    before = {p: p.read_bytes() for p in en_sources.rglob("*.yaml")}
    result = _invoke("--sources", str(en_sources))
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "TR005" in result.output and "DeepL" in result.output and "Traceback" not in result.output
    assert VALID_KEY not in result.output
    assert {p: p.read_bytes() for p in en_sources.rglob("*.yaml")} == before  # nothing was translated


@pytest.mark.parametrize("error_type", [TypeError, KeyError, AttributeError, ValueError])
def test_an_error_inside_the_deepl_client_is_tr005(fake_deepl, en_sources, monkeypatch, error_type):
    import deepl

    def broken(*args, **kwargs):
        raise error_type(f"inside deepl, key {VALID_KEY}")

    monkeypatch.setattr(deepl.DeepLClient, "translate_text", broken)
    result = _invoke("--sources", str(en_sources))
    assert result.exit_code == 2 and "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert f"TR005 DeepL failed while translating ({error_type.__name__}:" in text, text
    assert VALID_KEY not in result.output and "fake-key-0000" not in result.output


def test_slot_damage_is_reported_where_the_english_text_starts(fake_deepl, en_sources):
    path = en_sources / TEMPLATE
    text = path.read_text(encoding="utf-8").replace("both asked", "MANGLE both asked")
    path.write_text(text, "utf-8")
    [problem] = [d for d in _translate(en_sources, fake_deepl).diagnostics if d.code == "TR006"]
    line = text.splitlines()[problem.line - 1]
    assert problem.col == line.index("en:") + len("en: ") + 1  # the value, not the line's first column


@pytest.mark.parametrize("key", ["SECRETキー:fx", "SECRET\x07key:fx", "SECRET key:fx", "SECRET\nkey:fx"])
def test_a_key_that_cannot_be_sent_is_malformed_not_a_network_error(fake_deepl, en_sources, monkeypatch, key):
    monkeypatch.setenv("DEEPL_AUTH_KEY", key)
    result = _invoke("--sources", str(en_sources))
    assert result.exit_code == 2, result.output
    assert "TR007" in result.output and "malformed" in result.output and "TR004" not in result.output
    assert "SECRET" not in result.output and "key:fx" not in result.output
    assert fake_deepl.requests == []  # refused before any request
    with pytest.raises(Exception, match="malformed"):  # the library refuses it too
        DeepLTranslator(key, server_url=fake_deepl.url)


def test_a_path_outside_the_sources_folder_is_refused(fake_deepl, en_sources, tmp_path):
    other = write_sources(tmp_path / "other" / "sources")
    before = (other / "vocab" / "Age.yaml").read_text(encoding="utf-8")
    result = _invoke("--sources", str(en_sources), str(other / "vocab" / "Age.yaml"))
    assert result.exit_code == 2, result.output
    assert "TR015" in result.output and fake_deepl.requests == []
    assert (other / "vocab" / "Age.yaml").read_text(encoding="utf-8") == before
    # a link inside the folder that leads out of it: named, or met in the whole folder
    (en_sources / "vocab" / "Linked.yaml").symlink_to(other / "vocab" / "Age.yaml")
    for args in ([str(en_sources / "vocab" / "Linked.yaml")], [str(en_sources / "vocab")], []):
        result = _invoke("--sources", str(en_sources), *args)
        assert result.exit_code == 2 and "TR015" in result.output and "link" in result.output, args
    assert (other / "vocab" / "Age.yaml").read_text(encoding="utf-8") == before
    assert fake_deepl.requests == []
