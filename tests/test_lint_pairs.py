"""Lint within one huge section: the same findings as comparing every pair, at a cost that follows the entries.

The pairwise checks (near duplicates, two current versions of one fact) look only at pairs that share a key
they must share (memtui/core/hygiene/lint.py `_candidates`); here that is checked against every pair on random sections
built to hold both kinds, and the work of a section 4x as big is about 4x (counted, as test_linear_cost does).
"""

from __future__ import annotations

import random

from memtui.core.grammar.dedupe import Words, tokens
from memtui.core.grammar.document import Document
from memtui.core.grammar.layout import Layout
from memtui.core.hygiene.lint import _candidates, _entries, _two_versions_of
from test_linear_cost import LINEAR, steps

WORDS = ("deploy staging postgres billing invoice nightly cache rates table owner payments review morning "
         "lisbon team atlas orion dashboard paused quarter runbook argo jenkins python uv pip lockfile "
         "configuration configurations colour color deployments").split()


def every_pair(words: list[Words], texts: list[frozenset[str]]) -> list[tuple[int, int]]:
    return [(k, m) for k in range(len(words)) for m in range(k + 1, len(words))
            if words[k].near_duplicate(words[m]) or _two_versions_of(texts[k], texts[m])]


def section(rng: random.Random, n: int) -> list[str]:
    lines: list[str] = []
    for _ in range(n):
        if lines and rng.random() < 0.4:
            base = rng.choice(lines).split("] ", 1)[1].rsplit(" (", 1)[0].split()
            edit = rng.randrange(5)
            if edit == 0:  # a word swapped for another: two versions of one fact
                base[rng.randrange(len(base))] = rng.choice(WORDS)
            elif edit == 1:  # a typo in a word: a near duplicate in characters, not in words
                k = rng.randrange(len(base))
                w = base[k]
                base[k] = w[:len(w) // 2] + rng.choice("aeiou") + w[len(w) // 2 + 1:]
            elif edit == 2:  # another number
                base.append(str(rng.randrange(100)))
            elif edit == 3:  # same words, another order
                rng.shuffle(base)
            else:
                base.append(rng.choice(WORDS))
            text = " ".join(base)
        else:
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(2, 12)))
            if rng.random() < 0.3:
                text += f" {rng.randrange(1000)}"
        lines.append(f"- [stated] {text} (2026-01-02, chat)")
    return lines


def test_the_pairs_found_are_every_pair_that_is_a_finding() -> None:
    rng = random.Random(21)
    for _ in range(60):
        lines = section(rng, rng.randrange(2, 60))
        doc = Document("# M\n\n## S\n" + "\n".join(lines) + "\n", "MEMORY.md")
        cur = [e for sec in doc.sections for _, e in sec.current if e.text]
        words = [Words(e.body) for e in cur]
        texts = [frozenset(tokens(e.text)) for e in cur]
        wanted = every_pair(words, texts)
        found = _candidates(words, texts)
        assert set(wanted) <= set(found), f"missed {sorted(set(wanted) - set(found))} in {lines}"


def test_findings_in_one_huge_section_cost_what_its_entries_do() -> None:
    def doc(n: int) -> Document:
        lines = [f"- [observed] Deploy step {k} finished on host {k % 97}; the build log said ok "
                 f"(2026-08-21, ci)" for k in range(n)]
        lines += [f"- [stated] The {w} owner is {v} (2026-01-02, chat)" for w in WORDS for v in ("ana", "wes")]
        return Document("# M\n\n## Log\n" + "\n".join(lines) + "\n", "MEMORY.md")

    small, big = doc(500), doc(2000)
    layout = Layout()
    run = (lambda d: lambda: _entries(d, layout))  # noqa: E731
    found = _entries(big, layout)
    assert any(f.check == "two-versions" for f in found)  # the owners: one word apart
    ratio = steps(run(big)) / steps(run(small))
    assert ratio < LINEAR, f"4x the entries cost {ratio:.1f}x the work in lint's pairwise checks"
