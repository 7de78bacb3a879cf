"""Slots survive the trip through DeepL's XML handling; damaged output is recognised."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from jbcompile.translate.protect import protect, restore, slot_problem

_pieces = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="{}"), max_size=12),
    st.sampled_from(["{{NAME1}}", "{{NAME2}}", "{{WORD1}}", "&", "<", ">", "&amp;", "<x>", "'", '"']),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_pieces, max_size=8).map("".join))
def test_restore_inverts_protect(text: str) -> None:
    assert restore(protect(text)) == text


def test_slots_become_ignored_tags_and_markup_is_escaped() -> None:
    sent = protect("The {{NAME1}} & the <b>{{NAME2}}</b>")
    assert sent == "The <x>NAME1</x> &amp; the &lt;b&gt;<x>NAME2</x>&lt;/b&gt;"


def test_moved_slots_are_restored() -> None:
    # DeepL reorders the tags to fit Japanese word order; whitespace inside a tag is tolerated.
    assert restore("<x> NAME2 </x>と<x>NAME1</x>が来た") == "{{NAME2}}と{{NAME1}}が来た"


def test_slot_problem_names_lost_added_and_leftover_markup() -> None:
    source = "The {{NAME1}} met the {{NAME2}}."
    assert slot_problem(source, "{{NAME2}}と{{NAME1}}が会った。") is None
    assert "lost {{NAME2}}" in (slot_problem(source, "{{NAME1}}が会った。") or "")
    assert "added {{NAME1}}" in (slot_problem(source, "{{NAME1}}と{{NAME1}}と{{NAME2}}") or "")
    assert "markup" in (slot_problem(source, "{{NAME1}}と{{NAME2}}<x>") or "")
    assert "empty" in (slot_problem("Hello", "  ") or "")
