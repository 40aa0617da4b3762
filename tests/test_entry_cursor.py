"""The entry cursor as a helper object: given a view's loaded state, the memory and the person, it says what it can
stand on and which keys act, without a host app (the viewer only draws and hands it the keys)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from memtui.core.storage.init import init_root
from memtui.core.writing.memory import Memory
from memtui.tui.entry_cursor import EntryCursor, version_of
from memtui.tui.viewer import scan

TEXT = """# Memory

- [stated] Above every heading (2026-01-01)

## User

- [stated] Wes leads the platform team (2026-01-01)
- [inferred] Prefers short answers (2026-01-02)
- ~~[stated] Works from Lisbon (2026-01-01)~~ superseded 2026-01-03

## Projects

- Orion is paused (2026-01-04)
"""


def cursor_over(tmp_path: Path, text: str = TEXT) -> tuple[EntryCursor, SimpleNamespace]:
    root = tmp_path / "memory"
    init_root(root)
    view = SimpleNamespace(state=scan("MEMORY.md", text, None), rel="MEMORY.md")
    return EntryCursor(view, Memory(root), "ana"), view  # type: ignore[arg-type]


def test_the_cursor_stands_on_current_entries_only_and_knows_their_sections(tmp_path: Path) -> None:
    cursor, view = cursor_over(tmp_path)
    assert cursor.person == "ana" and cursor.rel == "MEMORY.md" and cursor.entries_known()
    lines = view.state.lines
    shown = cursor.shown_lines()
    assert [lines[i] for i in shown] == [
        "- [stated] Above every heading (2026-01-01)", "- [stated] Wes leads the platform team (2026-01-01)",
        "- [inferred] Prefers short answers (2026-01-02)", "- Orion is paused (2026-01-04)"]
    assert [cursor.section_at(i) for i in shown] == ["", "User", "User", "Projects"]
    struck = lines.index("- ~~[stated] Works from Lisbon (2026-01-01)~~ superseded 2026-01-03")
    assert cursor.entry_at(struck) is None  # struck history is read, not edited


def test_a_filter_shows_only_its_entries_under_their_headings(tmp_path: Path) -> None:
    cursor, view = cursor_over(tmp_path)
    lines = view.state.lines
    cursor.entry_filter = "untagged"
    assert [lines[i] for i in cursor.filtered_rows()] == ["## Projects", "- Orion is paused (2026-01-04)"]
    cursor.entry_filter = "agent"
    assert [lines[i] for i in cursor.filtered_rows()] == ["## User", "- [inferred] Prefers short answers (2026-01-02)"]


def test_the_edit_keys_act_only_with_the_cursor_on_an_entry(tmp_path: Path) -> None:
    cursor, view = cursor_over(tmp_path)
    assert not cursor.check_action("revise_entry", ())  # no cursor yet: e is the review panel's
    assert cursor.check_action("undo_own", (True,)) and not cursor.check_action("undo_own", ())  # a reader's u
    cursor.cursor = cursor.shown_lines()[1]
    assert cursor.check_action("revise_entry", ()) and cursor.check_action("undo_own", ())
    cursor.cursor = view.state.lines.index("## User")
    assert not cursor.check_action("remove_entry", ())  # a heading is not an entry


def test_a_file_nobody_here_wrote_is_not_its_own_write(tmp_path: Path) -> None:
    cursor, view = cursor_over(tmp_path)
    assert not cursor.own_write(view.state)
    cursor.own_versions.add(version_of(TEXT))
    assert cursor.own_write(view.state)  # a version this viewer's write left: drawn without live-diff marks


def test_a_file_too_big_to_parse_has_no_entries_to_stand_on(tmp_path: Path) -> None:
    cursor, _ = cursor_over(tmp_path, "# Log\n\n" + "- [stated] x (2026-01-01)\n" * 60_000)
    assert not cursor.entries_known() and cursor.shown_lines() == []
    assert not cursor.check_action("cursor_down", ())  # j/k only scroll a big log
