"""The core's agent-facing messages, reworded for the person in the app with the key that resolves each."""

from __future__ import annotations

from memtui.core.grammar import update
from memtui.core.grammar.document import Document
from memtui.tui.for_people import decided, for_person

TEXT = ("# MEMORY.md\n\n## User\n- [stated] Works from Lisbon (2026-03-02, chat)\n"
        "- [stated] Works from Porto (2026-03-02, chat)\n")


def refusal(fn) -> str:
    try:
        fn()
    except update.Refused as exc:
        return str(exc)
    raise AssertionError("not refused")


def test_the_cores_own_messages_are_matched_not_copies_of_them() -> None:
    sec = update._require_section(Document(TEXT), "User")
    gone = refusal(lambda: update.find_current(sec, "Berlin"))
    assert "send the exact text" in gone  # the agent's wording stays in the core
    said = for_person("the file moved on and " + gone)
    assert said.startswith("the entry this changes is no longer in User")
    assert "e to revise it against the current text" in said and "send" not in said
    many = refusal(lambda: update.find_current(sec, "Works from"))
    assert "matches 2 entries of User — e to revise it" in for_person(many)


def test_flags_and_the_gate_are_said_with_their_keys() -> None:
    assert for_person("candidate: 1 of 3 signals across 1 of 2 sessions") == (
        "an agent's lesson, 1 of 3 signals across 1 of 2 sessions — a approves it as your confirmation, "
        "r rejects it")
    said = for_person("downgraded [stated] → [suggested]: no user words were passed; a person can restore "
                      "[stated] on approval")
    assert "[stated]" in said and "e to make it [stated]" in said


def test_unknown_messages_are_shown_as_written_and_hostile_text_stays_text() -> None:
    assert for_person("something new [@click=app.quit]") == "something new [@click=app.quit]"
    hostile = "replaces '[/]x' matches no current entry of [b]U; send the exact text of one of the current entries"
    assert "[b]U" in for_person(hostile) and "[/]" not in for_person(hostile)  # only the section name is quoted
    assert decided("p-1", "applied", "done") == "p-1: applied. done"


def test_what_a_person_typed_is_refused_in_words_for_them() -> None:
    from memtui.core.grammar.document import FormatSpec
    from memtui.tui.for_people import typed

    untagged = refusal(lambda: update._new_line("Name is Wes", None, None, "2026-12-01", FormatSpec(), None))
    assert "pass provenance" in untagged and "your conclusion" in untagged  # the agent's wording, kept for tools
    said = typed(untagged)
    assert said.startswith("start the entry with its provenance: [stated] you said it")
    assert "pass provenance" not in said and "your" not in said
    empty = refusal(lambda: update._new_line("", "stated", None, "2026-12-01", FormatSpec(), None))
    assert "send" in empty and "send" not in typed(empty) and "write" in typed(empty)


def test_a_hand_written_line_with_its_tag_elsewhere_is_revised_with_the_tag_in_front() -> None:
    from memtui.core.grammar.entries import parse_entry
    from memtui.core.hygiene.curate import editable_text

    assert editable_text(parse_entry("- Name is Wes [stated] (2024-01-02)")) == "[stated] Name is Wes"
    assert editable_text(parse_entry("- Uses uv not pip [observed]")) == "[observed] Uses uv not pip"
    assert editable_text(parse_entry("- [inferred] Ships on Fridays (2026-01-01)")) == "[inferred] Ships on Fridays"
    # No tag, or two: left for the person to tag, word for word.
    assert editable_text(parse_entry("- plain fact")) == "plain fact"
    assert editable_text(parse_entry("- a [stated] b [observed]")) == "a [stated] b [observed]"


def test_the_feed_says_a_refusal_to_the_person_reading_it() -> None:
    from memtui.core.grammar.document import FormatSpec
    from memtui.tui.feed import activity_from_audit

    untagged = refusal(lambda: update._new_line("Name is Wes", None, None, "2026-12-01", FormatSpec(), None))
    line = activity_from_audit({"ts": "2026-12-01T11:55:00", "actor": "wes", "action": "revise", "file": "MEMORY.md",
                        "section": "About Wes", "status": "refused", "reason": untagged})
    assert line.kind == "refused" and "start the entry with its provenance" in line.text
    assert "pass provenance" not in line.text


def test_a_name_memtui_refuses_is_said_with_the_key_that_decides_it() -> None:
    from memtui.core.writing.proposals import Proposal
    from memtui.core.writing.refused_names import approval_refused

    p = Proposal(id="x-abc123", created="", actor="external", file="evil\x1b[8m.md", action="create")
    said = for_person(approval_refused(p, "path contains a NUL or control character: 'evil\\x1b[8m.md'").message)
    assert said.startswith("evil\x1b[8m.md has a name memtui never takes into memory")
    assert "r to reject it" in said and "Reject x-abc123" not in said
