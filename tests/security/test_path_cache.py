"""The path checks keep their answers (they read the string alone): a refusal is never kept as a pass, input that
is no plain str is checked uncached (so a str subclass that lies about equality cannot borrow a checked path's
answer), and input that cannot be a key is refused as a path, not a TypeError."""

from __future__ import annotations

import pytest

from memtui.core.paths import PathRefused, check_rel, clean_rel

HOSTILE = ["../etc/passwd", "notes/../../x", ".git/config", "%2e%2e/x", "a\u202eb.md", ".memtui/queue/p-1.json",
           "/abs.md", "memory-log.jsonl", ".GIT/HEAD", "a\x00b"]


@pytest.mark.parametrize("path", HOSTILE)
def test_a_refused_path_is_refused_every_time(path: str) -> None:
    for _ in range(3):
        with pytest.raises(PathRefused):
            check_rel(path)


class Lying(str):
    """Equal to everything, hashed as a path that passes: a cache keyed on it would hand it that path's answer."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("notes/fine.md")


def test_a_str_subclass_is_checked_by_its_own_value() -> None:
    assert check_rel("notes/fine.md") == "notes/fine.md"  # cached now
    with pytest.raises(PathRefused):
        check_rel(Lying("../../etc/passwd"))
    with pytest.raises(PathRefused):
        clean_rel(Lying("../../etc/passwd"))


@pytest.mark.parametrize("value", [["MEMORY.md"], {"a": 1}, None, b"MEMORY.md", 3])
def test_what_is_not_a_string_is_refused_as_a_path(value: object) -> None:
    with pytest.raises(PathRefused):
        check_rel(value)  # type: ignore[arg-type]
    with pytest.raises(PathRefused):
        clean_rel(value)  # type: ignore[arg-type]
