"""The entry grammar and documents: parsing, formatting, sections from a real markdown parse, byte-exact round trips."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memtui.core.grammar.document import Document, parse_spec
from memtui.core.grammar.entries import TAGS, Entry, format_entry, parse_entry, strike


def test_parses_the_three_forms_of_design_md() -> None:
    e = parse_entry("- [stated] Public API uses tRPC (2026-08-20, meeting/api-review)")
    assert (e.tag, e.text, e.date, e.source, e.current) == (
        "stated", "Public API uses tRPC", "2026-08-20", "meeting/api-review", True)
    s = parse_entry("- ~~[stated] Public API uses GraphQL (2026-04-10, meeting/q2-planning)~~ superseded 2026-08-20")
    assert s.struck and s.struck_kind == "superseded" and s.struck_date == "2026-08-20"
    assert (s.tag, s.text, s.source) == ("stated", "Public API uses GraphQL", "meeting/q2-planning")
    log = parse_entry("- 14:05 [observed] Deploy of v2.3 failed on migration 0042")
    assert (log.time, log.tag, log.text, log.date) == ("14:05", "observed", "Deploy of v2.3 failed on migration 0042", None)


def test_tolerant_bullets_and_untagged() -> None:
    assert parse_entry("* [inferred] likes tea").tag == "inferred"
    assert parse_entry("+ [observed] x").bullet == "+"
    assert parse_entry("1. [suggested] y").bullet == "1."
    untagged = parse_entry("- just a note")
    assert untagged.tag is None and untagged.text == "just a note"
    assert parse_entry("- [unknown] z").tag is None  # an unknown tag stays text
    assert parse_entry("not a bullet") is None
    assert parse_entry("## Heading") is None


def test_removed_and_struck_without_date() -> None:
    e = parse_entry("- ~~[stated] old fact (2026-01-01)~~ removed 2026-02-02")
    assert e.struck and e.struck_kind == "removed" and e.struck_date == "2026-02-02"
    bare = parse_entry("- ~~[stated] struck by hand~~")
    assert bare.struck and bare.struck_kind is None


def test_strike_keeps_the_entry_whole() -> None:
    e = parse_entry("  - [stated] Uses Redis (2026-01-02, chat)")
    assert strike(e, "superseded", "2026-03-04") == "  - ~~[stated] Uses Redis (2026-01-02, chat)~~ superseded 2026-03-04"


_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="()~[]"), min_size=1, max_size=40
).map(str.strip).filter(lambda t: t and not t[0].isdigit() and not t.startswith(("~", "-", "*", "+")))


@given(
    tag=st.sampled_from(TAGS), text=_text,
    date=st.one_of(st.none(), st.dates().map(lambda d: d.strftime("%Y-%m-%d")).filter(lambda d: len(d) == 10)),
    source=st.one_of(st.none(), st.from_regex(r"[a-z]{1,8}/[a-z0-9-]{1,12}", fullmatch=True)),
    struck=st.sampled_from([None, "superseded", "removed"]),
)
def test_parse_format_is_the_identity_on_canonical_entries(tag, text, date, source, struck) -> None:
    e = Entry(raw="", tag=tag, text=text, date=date, source=source if date else None,
              struck=struck is not None, struck_kind=struck, struck_date="2026-01-01" if struck else None)
    line = format_entry(e)
    again = parse_entry(line)
    assert again is not None
    assert format_entry(again) == line
    assert (again.tag, again.text, again.date, again.struck_kind) == (tag, text, date, struck)


@given(st.text(max_size=400))
def test_document_round_trips_any_text(text: str) -> None:
    assert Document(text).render() == text


def test_document_round_trip_keeps_crlf_and_missing_final_newline() -> None:
    text = "# M\r\n\r\n## User\r\n- [stated] a (2026-01-01)\r\n- b"
    doc = Document(text)
    assert doc.render() == text
    assert doc.newline == "\r\n"
    assert [e.text for _, e in doc.section("User").entries] == ["a", "b"]


SAMPLE = """<!-- memtui:format
caps: Project Facts=2, Known Issues & Failed Approaches=30
always: Preferences, Known Issues & Failed Approaches
entry-max: 120
-->
# MEMORY.md

## Project Facts
- [stated] Uses Postgres (2026-01-01)

```md
## Not a section
- [stated] not an entry
```

## Preferences
- [stated] Tabs (2026-01-01)
"""


def test_sections_come_from_a_real_markdown_parse() -> None:
    doc = Document(SAMPLE)
    assert doc.section_names == ["Project Facts", "Preferences"]
    facts = doc.section("project facts")
    assert [e.text for _, e in facts.entries] == ["Uses Postgres"]
    assert doc.section("Not a section") is None


def test_format_spec_comment() -> None:
    spec = parse_spec(SAMPLE)
    assert spec.present and spec.entry_max == 120
    assert spec.cap_for("Project Facts") == 2
    assert spec.cap_for("known issues & failed approaches") == 30
    assert spec.is_always("Preferences") and spec.is_always("Known Issues & Failed Approaches")
    assert parse_spec("no comment").present is False
    spaced = parse_spec("<!-- memtui:format\ncaps: User=30 Preferences=10\nalways: Preferences\n-->")
    assert spaced.caps == {"User": 30, "Preferences": 10}
