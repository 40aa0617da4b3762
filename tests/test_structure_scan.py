"""The line scan of a memory file's structure agrees with markdown-it wherever it answers, and answers for the usual
memory file (so `memtui context` and most writes never import markdown-it)."""

from __future__ import annotations

import random

import pytest

from memtui.core.grammar.document import _markdown, scan_structure


def markdown_it_structure(text: str) -> tuple[tuple[tuple[int, int, str], ...], frozenset[int]]:
    """Headings and hidden lines straight from markdown-it's tokens: the reference the scan must match."""
    tokens = _markdown().parse(text)
    headings, hidden = [], set()
    for k, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map:
            headings.append((tok.map[0], int(tok.tag[1]), tokens[k + 1].content.strip()))
        elif tok.type in ("fence", "code_block", "html_block") and tok.map:
            hidden.update(range(tok.map[0], tok.map[1]))
    return tuple(headings), frozenset(hidden)


# Lines of memory files and the CommonMark constructs that change what a line is: containers, code, HTML,
# setext underlines, closing #s, odd spaces and line endings.
FRAGMENTS = [
    "", " ", "#", "##", "###", "####### x", "# Title", "## Sec ##", "## a #b", "  # x", "   ## y", "    # code",
    "- [stated] fact (2026-01-01, chat)", "- ~~[observed] old~~ superseded 2026-01-02", "* item", "+ item",
    "1. one", "2) two", "- # h", "- - x", "  - nested", "    - deep", "> quote", "> # q", ">", "> ", ">  two",
    "> > n", ">x", "> - i", "> 1. n", "> ```", "> <b>", "> ===", "> ---", "<!--", "-->",
    "<!-- c -->", "x -->", "<div>", "<br>", " <!--", "```", "```py", "``` a`b", "~~~", "~~~~", "  ```", "    ```",
    "---", "===", "- ---", "***", "text", "[a]: /u", "[a]: /u 'x", "\t# tab", "a\tb", "#\u00a0x", "# x \u00a0#",
    "# é", "\r", "#  ", "## ", "-", "1.", "- ```", "-->x", "<!--->", "# x #  #", "  ", "<?php", "<![CDATA[",
    "<script>", "</div>", "\\# esc", "`code`", "````", "~~~ x", "-- not hr", "= x", "Title", "\u2028", "\x00",
]


def test_the_scan_agrees_with_markdown_it_on_random_texts() -> None:
    rnd = random.Random(19)
    answered = 0
    for _ in range(6000):
        lines = [rnd.choice(FRAGMENTS) for _ in range(rnd.randint(0, 16))]
        sep = rnd.choice(["\n", "\n", "\r\n"])
        text = sep.join(lines) + rnd.choice(["", sep])
        scanned = scan_structure(text)
        if scanned is not None:
            answered += 1
            assert scanned == markdown_it_structure(text), repr(text)
    assert answered > 1000  # the scan is not just refusing everything


@pytest.mark.parametrize("text", [
    "Title\n=====\n## Facts\n", "Sub\n---\n", "> ## quoted\n", "## A\n\n    ## indented code\n",
    "<div>\n## x\n</div>\n",
    "- item\n    ## in a list item\n", "- ## heading in an item\n", "## a\tb\n", "```a`b\n## x\n", " ```\n## x\n```\n",
])
def test_the_scan_leaves_what_it_cannot_place_to_markdown_it(text: str) -> None:
    assert scan_structure(text) is None


@pytest.mark.parametrize("text, expected", [
    ("<!-- memtui:format\ncaps: A=3\n-->\n\n# Memory\n\n## A\n- [stated] x\n",
     (((4, 1, "Memory"), (6, 2, "A")), frozenset({0, 1, 2}))),
    ("## Facts\n```\n## not a section\n- not an entry\n```\n## Next ##\n",
     (((0, 2, "Facts"), (5, 2, "Next")), frozenset({1, 2, 3, 4}))),
    ("# A\n~~~\nunclosed\n", (((0, 1, "A"),), frozenset({1, 2}))),
    ("## ###\n# x #  #\n", (((0, 2, ""), (1, 1, "x #")), frozenset())),
])
def test_the_scan_reads_comments_fences_and_closing_hashes(text: str, expected: object) -> None:
    assert scan_structure(text) == expected == markdown_it_structure(text)


def test_generated_memory_files_need_no_markdown_parser(tmp_path) -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))
    import generate

    generate.generate(tmp_path, files=generate.MIN_FILES, megabytes=0.3, seed=3, big_log_mb=0)
    texts = [p.read_text(encoding="utf-8") for p in tmp_path.rglob("*.md")]
    assert texts
    for text in texts:
        assert scan_structure(text) == markdown_it_structure(text)


def test_memtuis_own_templates_need_no_markdown_parser() -> None:
    from memtui.core.storage.init import memory_template

    for template in ("personal", "project"):
        text = memory_template(template)
        scanned = scan_structure(text)
        assert scanned is not None and scanned == markdown_it_structure(text), template
