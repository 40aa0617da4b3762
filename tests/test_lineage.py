"""An entry's lineage: the superseded lines just above it, oldest first; removed lines and other entries are not."""

from __future__ import annotations

from memtui.core.timeline.lineage import earlier

TEXT = """# MEMORY.md

## User
- ~~[stated] Unrelated old fact (2026-01-01)~~ removed 2026-02-01
- ~~[stated] Works from Faro (2026-01-01)~~ superseded 2026-03-02
- ~~[observed] Works from Lisbon (2026-03-02)~~ superseded 2026-08-20
- [stated] Works from Lisbon and Porto (2026-08-20, chat)
- [stated] Leads the platform team (2026-03-02)
"""


def test_the_versions_an_entry_replaced_oldest_first() -> None:
    assert earlier(TEXT, "User", "Lisbon and Porto") == [
        "- ~~[stated] Works from Faro (2026-01-01)~~ superseded 2026-03-02",
        "- ~~[observed] Works from Lisbon (2026-03-02)~~ superseded 2026-08-20",
    ]


def test_nothing_for_a_new_entry_an_unknown_one_or_a_missing_section() -> None:
    assert earlier(TEXT, "User", "platform team") == []
    assert earlier(TEXT, "User", "Berlin") == []
    assert earlier(TEXT, "Nope", "Lisbon") == []
