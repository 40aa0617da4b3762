"""The path checks keep their answers (they read the string alone): a refusal is never kept as a pass, input that
is no plain str is checked uncached (so a str subclass that lies about equality cannot borrow a checked path's
answer), and input that cannot be a key is refused as a path, not a TypeError."""

from __future__ import annotations

import pytest

from memtui.core.grammar.paths import PathRefused, check_rel, clean_rel

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


def _reference_clean(rel: str) -> str:
    """`_clean_rel` as it was before its plain-ASCII fast path: every candidate through every check."""
    import posixpath
    from urllib.parse import unquote

    from memtui.core.grammar.paths import MAX_NAME, MAX_PATH, _bad_char

    if not isinstance(rel, str) or not rel.strip():
        raise PathRefused("empty")
    if len(rel) > MAX_PATH:
        raise PathRefused("long")
    for candidate in {rel, unquote(rel), unquote(unquote(rel))}:
        if any(ord(c) < 32 or c == "\x7f" for c in candidate):
            raise PathRefused("control")
        if _bad_char(candidate) is not None:
            raise PathRefused("invisible")
        if ".." in candidate.replace("\\", "/").split("/"):
            raise PathRefused("leaves")
    p = rel.replace("\\", "/")
    if p.startswith("/memories/") or p == "/memories":
        p = p[len("/memories"):]
    if p.startswith(("/", "~")) or (len(p) > 1 and p[1] == ":"):
        raise PathRefused("absolute")
    norm = posixpath.normpath(p)
    if norm in ("", "."):
        raise PathRefused("root")
    if any(len(part) > MAX_NAME for part in norm.split("/")):
        raise PathRefused("name")
    return norm


def test_the_plain_ascii_fast_path_answers_as_every_check_does() -> None:
    import random

    from memtui.core.grammar.paths import _clean_rel

    rng = random.Random(19)
    alphabet = list("ab./\\%2eE~: -_") + ["..", "%2e%2e", "%252e", "\x00", "\x1f", "\x7f", "\u202e", "\u200b",
                                          "\u3164", "é", "\u2028", "\u00a0", "/memories/"]
    for _ in range(20000):
        rel = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        try:
            want: object = _reference_clean(rel)
        except PathRefused:
            want = PathRefused
        try:
            got: object = _clean_rel(rel)
        except PathRefused:
            got = PathRefused
        assert got == want, rel
