"""The documentation as a newcomer meets it: a README that fits a few screens, every `memtui …` line in README.md and
docs/ a command memtui has (run by tests/test_recipes.py, or at least accepted by memtui's own parser), and every
relative link leading to a file and heading that exist."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from memtui.cli import COMMANDS, build_parser

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^(```+)[^\n]*\n(.*?)^\1[ \t]*$", re.S | re.M)
# A word of the shell that ends one command and may start the next (`for d in …; do memtui init "$d"; done`).
SEPARATORS = {";", "&&", "||", "|", "&", "do", "then", "else", "(", ")", "$("}


def fenced(text: str) -> list[str]:
    """The bodies of the fenced blocks of one page, in order."""
    return [m.group(2) for m in FENCE.finditer(text)]


def memtui_commands(block: str) -> list[list[str]]:
    """Each `memtui …` command a shell would run from the block's lines, as its argument list (comments dropped)."""
    commands = []
    for line in block.splitlines():
        if "memtui" not in line:
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:  # not a shell line (an output, a JSON string): nothing a shell would run
            continue
        current: list[str] = []
        for word in [*words, ";"]:
            if word in SEPARATORS:
                if current and current[0] == "memtui":
                    commands.append(current[1:])
                current = []
            elif current or not re.fullmatch(r"[A-Z_]+=\S*", word):  # `MEMTUI_NOW=… memtui today`: the env goes
                current.append(word)
    return commands


OPTIONAL = re.compile(r"\[((?:-|[A-Z]|[^\[\]]*\|)[^\[\]]*)\]")  # `[--actor wes]`, `[ENTRY]`, `[a|b]`; not `[stated]`


def synopsis(argv: list[str]) -> list[str]:
    """A usage line's own argument list: an optional `[--actor wes]` is checked as given, a placeholder `[ENTRY]`
    left out, and of choices `add|revise` the first is taken; an entry's `[stated]` tag is no such thing."""
    text = "\x00".join(argv)
    while m := OPTIONAL.search(text):
        inner = m.group(1).split("|")[0]
        text = text[:m.start()] + (inner if inner.startswith("-") else "") + text[m.end():]
    return [word.split("|")[0] if re.fullmatch(r"[\w-]+(\|[\w-]+)+", word) else word
            for word in text.split("\x00") if word]


def shown_commands() -> list[tuple[str, list[str]]]:
    return [(page.relative_to(REPO).as_posix(), argv)
            for page in PAGES for block in fenced(page.read_text(encoding="utf-8")) for argv in memtui_commands(block)]


def parse_error(argv: list[str]) -> str | None:
    """memtui's own parser on a command line, as `memtui.cli.main` hands it over; its complaint, or None."""
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("open", "-h", "--help", "--version")):
        argv = ["open", *argv]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args(argv)
    except SystemExit as exc:
        return None if exc.code == 0 else err.getvalue().strip().splitlines()[-1]
    return None


def test_the_docs_show_commands_at_all() -> None:
    # The checks below would pass on pages with no fenced blocks; these are what they must find.
    shown = shown_commands()
    assert len({page for page, _ in shown}) >= 6, shown
    assert ["queue", "approve", "p-0001"] in [argv for _, argv in shown]
    assert ["hook", "install", "--claude-code"] in [argv for _, argv in shown]


def test_every_memtui_command_in_the_docs_is_one_memtui_has() -> None:
    wrong = []
    for page, argv in shown_commands():
        complaint = parse_error(synopsis(argv))
        if complaint:
            wrong.append(f"{page}: memtui {shlex.join(argv)}\n    {complaint}")
    assert not wrong, "commands the docs show that memtui refuses:\n" + "\n".join(wrong)


@pytest.mark.parametrize("argv", [["staus"], ["queue", "aprove", "p-0001"], ["today", "--sinse", "7d"],
                                  ["update", "Decisions", "append", "x"]])
def test_a_command_memtui_does_not_have_is_caught(argv: list[str]) -> None:
    # The check above is only worth its pass if it fails on a command that does not exist.
    assert parse_error(argv) or argv == ["staus"]  # a bare word opens a folder of that name: the app refuses it later
    assert memtui_commands("memtui " + shlex.join(argv) + "   # a comment")[0] == argv


def test_a_usage_line_is_read_as_the_command_it_describes() -> None:
    assert synopsis(["undo", "[--actor", "wes]"]) == ["undo", "--actor", "wes"]
    assert parse_error(synopsis(["undo", "[--actr", "wes]"]))
    assert synopsis(["queue", "[list|show", "ID]"]) == ["queue"]
    assert synopsis(["update", "S", "add|revise", "[stated] x y", "[--as", "TAG]"]) == ["update", "S", "add",
                                                                                      "[stated] x y", "--as", "TAG"]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped but `-` and `_`, spaces to `-`."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text))


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(page: Path) -> list[str]:
    """The link targets of a page's markdown, outside code: fenced blocks and `inline code` show syntax, not links."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"!?\[[^\]\n]*\]\(([^)\s]+)\)", text)


def test_every_relative_link_in_the_docs_leads_somewhere() -> None:
    broken, checked = [], 0
    for page in PAGES:
        for target in links(page):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:: not this repository's to keep
            checked += 1
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists() or REPO not in dest.parents:
                broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{page.relative_to(REPO)}: {target} (no heading #{anchor} in {dest.name})")
    assert not broken, "\n".join(broken)
    assert checked >= 20


def test_the_link_check_catches_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("# A `memtui` page\n\n[x](missing.md) `[not](a-link.md)` ![s](p.md#a-memtui-page)\n")
    assert links(page) == ["missing.md", "p.md#a-memtui-page"]
    assert anchors(page) == {"a-memtui-page"}


def test_the_readme_is_a_front_page() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert text.count("\n") < 300
    # `.ci/run` and a newcomer's first five minutes depend on these two lines, exactly.
    assert "```sh\npython3 -m pip install . && memtui --demo\n```" in text
    assert "```sh\npython3 -m pip install -e '.[test]' && python3 -m pytest -q\n```" in text
    assert "python3 -m pip install -q -e '.[test]' && python3 -m pytest -q" in (REPO / ".ci" / "run").read_text()
    # The workflow most newcomers come for is a heading of its own, near the top.
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert any("agent you already run" in h for h in headings[:4]), headings
    for agent in ("--claude-code", "--hermes", "--openclaw", "memory-bank"):
        assert agent in text
    # Every page of docs/ is linked from the README's table.
    for page in PAGES[1:]:
        assert f"(docs/{page.name})" in text, page.name
