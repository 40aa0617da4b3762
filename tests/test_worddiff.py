"""Word-level diffs: the changed words of a revise marked on the old and the new line, and the side-by-side rows."""

from __future__ import annotations

from rich.style import Style

from memtui.tui.diff import diff_rows, unified
from memtui.tui.worddiff import line_spans, side_by_side, split_text, strikes, word_spans

OLD = "- [stated] Atlas: the billing service rewrite, due October (2026-05-20, planning)"
STRUCK = "- ~~[stated] Atlas: the billing service rewrite, due October (2026-05-20, planning)~~ superseded 2026-08-20"
NEW = "- [suggested] Atlas: billing rewrite, due November after the slip (2026-08-20, standup)"


def revise_rows():
    before = f"## Projects\n{OLD}\n- kept\n"
    after = f"## Projects\n{STRUCK}\n{NEW}\n- kept\n"
    return diff_rows(unified("MEMORY.md", before, after))


def changed(spans) -> list[str]:
    return [s.text for s in spans if s.changed]


def test_words_that_changed_are_marked_on_both_sides() -> None:
    old, new = word_spans("due October (2026-05-20)", "due November (2026-05-20)")
    assert changed(old) == ["October"] and changed(new) == ["November"]
    assert "".join(s.text for s in old) == "due October (2026-05-20)"


def test_adjacent_changed_words_are_one_mark() -> None:
    _, new = word_spans("due October", "due November after the slip")
    assert changed(new) == ["November after the slip"]


def test_a_revise_pairs_old_with_new_and_the_strike_with_what_it_strikes() -> None:
    rows = revise_rows()
    spans = line_spans(rows)
    by_text = {row[3]: s for row, s in zip(rows, spans) if row[0] in ("add", "remove")}
    assert changed(by_text[OLD]) == ["stated", "the", "service", "October", "05", "planning"]
    assert changed(by_text[NEW]) == ["suggested", "November after the slip", "08", "standup"]
    assert changed(by_text[STRUCK]) == ["~~", "~~ superseded 2026-08-20"]
    assert strikes(STRUCK, OLD) and not strikes(NEW, OLD)


def test_unlike_lines_are_shown_whole() -> None:
    rows = diff_rows(unified("f.md", "- alpha beta gamma\n", "- totally different words here\n"))
    assert all(s is None for s in line_spans(rows))


def test_side_by_side_puts_old_level_with_new() -> None:
    sides = side_by_side(revise_rows())
    changes = [(o.text, n.text) for kind, o, n in sides if kind == "change"]
    assert changes == [("", STRUCK), (OLD, NEW)]
    context = [(o.number, n.number) for kind, o, n in sides if kind == "context"]
    assert context[-1] == (3, 4)


def test_side_by_side_wraps_long_lines_within_its_half_and_shows_controls() -> None:
    rows = diff_rows(unified("f.md", "- x " + "word " * 40 + "\n", "- x\x1b[2J " + "word " * 40 + "end\n"))
    text = split_text(rows, lambda _name: Style(), 60)
    lines = text.plain.split("\n")
    assert all(len(line) <= 60 for line in lines)
    assert "\x1b" not in text.plain and "␛" in text.plain
    assert "end" in text.plain  # wrapped, not cut


def test_unified_wrap_keeps_numbers_and_signs_in_their_column() -> None:
    from memtui.tui.worddiff import unified_wrapped

    long = "- [stated] " + "word " * 30 + "end (2026-08-20, chat)"
    rows = diff_rows(unified("f.md", "- x\n", f"- x\n{long}\n"))
    lines = unified_wrapped(rows, lambda _name: Style(), 40).plain.split("\n")
    assert all(len(line) <= 40 for line in lines)
    added = [line for line in lines if line.startswith("  2 + ") or line.startswith("      ")]
    assert added[0].startswith("  2 + - [stated]") and len(added) > 3
    assert all(line.startswith("      ") for line in added[1:])  # continuations: blank gutter, under the text
    assert "".join(line[6:] for line in added).replace(" ", "") == long.replace(" ", "")
