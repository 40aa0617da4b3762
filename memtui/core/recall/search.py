"""Search: a bounded bundle of evidence lines, each with its path, line, provenance, date, source and freshness.

Literal and case-insensitive by default; a regex only when asked, and then bounded in time. Results come in
*sources* (groups): in MEMORY.md and topic files a source is one fact's lineage, the current entry followed by its
own struck history (the struck entries directly above it in the file, newest first); anywhere else a source is
one line. Ranking: current entries of MEMORY.md (in file order), then current entries of topic files (newest
entry date first), then daily logs (newest day first, latest line first), then everything else (prose lines, struck
history with no current successor, scratch, archive) by path. The bundle keeps at most `limit` sources and counts
the rest.

Literal queries of 3+ characters go through the trigram index (`memtui.core.recall.index`) when it can be opened;
shorter queries, regexes and unindexable roots scan the files. Both paths match lines with the same code, so they agree.
"""

from __future__ import annotations

import fnmatch
import heapq
import os
import re
import time
from contextlib import closing
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from memtui.core.basics import clock
from memtui.core.basics.record import Record as _Value
from memtui.core.grammar.entries import parse_entry
from memtui.core.recall.index import (INDEX_FILE, TOP_TIERS, FolderSource, Index, IndexDamaged, IndexUnavailable,
                                      Record, Source, StoreSource, fold)
from memtui.core.recall.sources import (_DATE_IN_PARENS, MEMORY_FILE, _Lines, _ordinal, file_kind,  # noqa: F401
                                        log_day)

if TYPE_CHECKING:
    from memtui.core.storage.store import Store
    from memtui.core.writing.memory import Memory

DEFAULT_LIMIT = 5
REGEX_TIMEOUT = 1.0
# A warm searcher keeps the index's texts in memory only while they are at most this many bytes; a bigger memory's
# texts are streamed from the index per query, so its resident size follows the bundle, not the folder (a
# 905 MB memory had the app hold ~1 GB after one search; 90 MB, 133 MB, where streaming holds 37 MB). Kept texts
# make a word on most lines about twice as fast to count (74 against 138 ms at 10,000 files).
KEEP_TEXTS_MAX = 32 * 1024 * 1024
FRESH_DAYS = 90
# A word held by at least 1 / DENSE_SHARE of the indexed files is ranked over all of them, not its trigram candidates.
DENSE_SHARE = 4

TIER_MEMORY, TIER_TOPIC, TIER_LOG, TIER_OTHER = 0, 1, 2, 3
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$")


class SearchError(ValueError):
    """A query that cannot run (bad regex, timed out, a line break in a literal)."""


class SearchResult(_Value):
    """One line of evidence. `matched` is False for a current entry shown because its struck history matched.

    A plain value class (`memtui.core.basics.record`), not a dataclass: `memtui search` defines its classes before any
    output, and dataclasses cost its start ~10 ms."""

    path: str
    line: int
    text: str
    provenance: str | None
    date: str | None
    source: str | None
    current: bool
    freshness: str
    age_days: int | None = None
    struck: str | None = None
    struck_date: str | None = None
    time: str | None = None
    section: str | None = None
    kind: str = "topic"
    matched: bool = True
    group: int = 0

    def __init__(self, path: str, line: int, text: str, provenance: str | None, date: str | None,
                 source: str | None, current: bool, freshness: str, age_days: int | None = None,
                 struck: str | None = None, struck_date: str | None = None, time: str | None = None,
                 section: str | None = None, kind: str = "topic", matched: bool = True, group: int = 0) -> None:
        self.path, self.line, self.text, self.provenance, self.date = path, line, text, provenance, date
        self.source, self.current, self.freshness, self.age_days = source, current, freshness, age_days
        self.struck, self.struck_date, self.time, self.section = struck, struck_date, time, section
        self.kind, self.matched, self.group = kind, matched, group

    def to_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self._fields}


class SearchBundle(_Value):
    query: str
    regex: bool
    limit: int
    results: list[SearchResult]
    left_out: int
    sources: int
    matched_lines: int
    path_glob: str | None
    method: str
    searched_files: int
    skipped: dict[str, int]
    error: str | None

    def __init__(self, query: str, regex: bool, limit: int, results: list[SearchResult] | None = None,
                 left_out: int = 0, sources: int = 0, matched_lines: int = 0, path_glob: str | None = None,
                 method: str = "scan", searched_files: int = 0, skipped: dict[str, int] | None = None,
                 error: str | None = None) -> None:
        self.query, self.regex, self.limit = query, regex, limit
        self.results = [] if results is None else results
        self.left_out, self.sources, self.matched_lines = left_out, sources, matched_lines
        self.path_glob, self.method, self.searched_files = path_glob, method, searched_files
        self.skipped = {} if skipped is None else skipped
        self.error = error

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "regex": self.regex,
            "limit": self.limit,
            "path_glob": self.path_glob,
            "results": [r.to_dict() for r in self.results],
            "sources": self.sources,
            "shown_sources": min(self.sources, self.limit),
            "left_out": self.left_out,
            "matched_lines": self.matched_lines,
            "method": self.method,
            "searched_files": self.searched_files,
            "skipped": self.skipped,
            "error": self.error,
        }

    def render(self) -> str:
        """Plain text for an agent or a person: each line with where it is, whether it is current, and its source."""
        if self.error:
            return f"search failed: {self.error}"
        what = f"regex /{self.query}/" if self.regex else f'"{self.query}"'
        where = f" in {self.path_glob}" if self.path_glob else ""
        if not self.results:
            return f"no matches for {what}{where} ({self.searched_files} files searched)"
        shown = min(self.sources, self.limit)
        out = [f"{self.matched_lines} matching line(s) for {what}{where}; showing {shown} of {self.sources} source(s)"]
        group = None
        for r in self.results:
            if r.group != group:
                group = r.group
                out.append("")
                out.append(f"[{r.group}] {r.path}" + (f" § {r.section}" if r.section else ""))
            status = "current" if r.current else f"{r.struck or 'struck'}" + (f" {r.struck_date}" if r.struck_date else "")
            if not r.matched:
                status += ", shown for its history"
            facts = [status, r.provenance or "untagged", f"{r.date or 'no date'} ({r.freshness})"]
            if r.source:
                facts.append(f"source: {r.source}")
            out.append(f"  {r.path}:{r.line}  " + " · ".join(facts))
            out.append(f"    {r.text.strip()}")
        if self.left_out:
            out.append("")
            out.append(f"{self.left_out} more source(s) left out: narrow the query, add --path GLOB, or raise --limit.")
        if self.skipped:
            skipped = ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()))
            out.append(f"(files not searched: {skipped})")
        return "\n".join(out)


# classification ---------------------------------------------------------------------------------------------------
def freshness(day: str | None, today: date | None = None) -> tuple[str, int | None]:
    """("today" | "fresh" | "stale" | "unknown", age in days). Stale is older than FRESH_DAYS; no date is unknown."""
    n = _ordinal(day)
    if n is None:
        return "unknown", None
    age = (today or clock.now().date()).toordinal() - n
    if age <= 0:
        return "today", age
    return ("fresh" if age <= FRESH_DAYS else "stale"), age


class _Group(_Value):
    __slots__ = ("key", "path", "kind", "head", "lineage", "matched")
    key: tuple
    path: str
    kind: str
    head: int  # the line shown first (0-based): the current entry of a lineage, or the matched line itself
    lineage: bool
    matched: set[int]

    def __init__(self, key: tuple, path: str, kind: str, head: int, lineage: bool, matched: set[int]) -> None:
        self.key, self.path, self.kind, self.head, self.lineage, self.matched = key, path, kind, head, lineage, matched


def _groups_in_file(rel: str, kind: str, text: str, hits: list[int]) -> list[_Group]:
    """Fold the matched lines (0-based) of MEMORY.md or a topic file into sources, with their ranking keys."""
    lines = _Lines(text)
    groups: dict[int, _Group] = {}
    out: list[_Group] = []
    for i in hits:
        e = lines.entry(i)
        if e is None or (e.struck and e.struck_kind == "removed"):
            out.append(_Group((TIER_OTHER, 0, rel, i), rel, kind, i, False, {i}))
            continue
        head = i
        if e.struck:
            head = -1
            j = i + 1
            while True:
                nxt = lines.entry(j)
                if nxt is None or (nxt.struck and nxt.struck_kind == "removed"):
                    break
                if nxt.current:
                    head, e = j, nxt
                    break
                j += 1
            if head < 0:
                out.append(_Group((TIER_OTHER, 0, rel, i), rel, kind, i, False, {i}))
                continue
        g = groups.get(head)
        if g is None:
            if kind == "memory":
                key = (TIER_MEMORY, 0, rel, head)
            else:
                n = _ordinal(e.date)
                key = (TIER_TOPIC, -n if n is not None else 1, rel, head)
            g = groups[head] = _Group(key, rel, kind, head, True, set())
            out.append(g)
        g.matched.add(i)
    return out


def _top_sources(hits: list[tuple[str, str, list[int], str | None]], k: int) -> tuple[list[_Group], int]:
    """The k best-ranked sources and how many sources there are in all.

    Every matched line of a daily log or of a file that is not markdown is a source of its own, ranked by its
    file and line alone, so those are counted without building a group per line; only the best k of them can
    make the bundle."""
    ranked: list[_Group] = []
    logs: list[tuple[tuple[int, str], list[int]]] = []
    others: list[tuple[str, str, list[int]]] = []
    total = 0
    for rel, folded, lines, _ in hits:
        kind = file_kind(rel)
        if kind == "log":
            day = _ordinal(log_day(rel))
            logs.append(((-day if day is not None else 1, rel), lines))
            total += len(lines)
        elif kind in ("memory", "topic"):
            groups = _groups_in_file(rel, kind, folded, lines)
            ranked.extend(groups)
            total += len(groups)
        else:
            others.append((rel, kind, lines))
            total += len(lines)
    candidates = heapq.nsmallest(k, ranked, key=lambda g: g.key)
    taken = 0
    for (a, rel), lines in sorted(logs):
        for i in reversed(lines[-(k - taken):]):
            candidates.append(_Group((TIER_LOG, a, rel, -i), rel, "log", i, False, {i}))
        taken = min(k, taken + len(lines))
        if taken >= k:
            break
    taken = 0
    for rel, kind, lines in others:  # hits come sorted by path
        for i in lines[: k - taken]:
            candidates.append(_Group((TIER_OTHER, 0, rel, i), rel, kind, i, False, {i}))
        taken = min(k, taken + len(lines))
        if taken >= k:
            break
    return heapq.nsmallest(k, candidates, key=lambda g: g.key), total


class _Worst:
    """A ranking key in a max-heap (heapq's heaps are min-heaps): the top is the worst of the best k."""

    __slots__ = ("key",)

    def __init__(self, key: tuple) -> None:
        self.key = key

    def __lt__(self, other: "_Worst") -> bool:
        return self.key > other.key


class Tiers(_Value):
    """Files as `rank_records` takes them up, by tier, with the heaps of topic files (by rank bound) and of daily
    logs (newest first) already made: for a word in most files, made once per state of the index and shared by
    every such query."""

    __slots__ = ("memory", "topics", "logs", "hit", "topic_order", "log_order")

    def __init__(self, metas: Iterable[Any]) -> None:
        self.memory: list[tuple[int, str, str, int]] = []
        self.topics: list[tuple[int, str, str, int]] = []
        self.logs: list[tuple[int, str, str, int]] = []
        self.hit: list[tuple[int, str, str, int]] = []
        for rec in metas:
            meta = (rec[0], rec[1], rec[2], rec[3])
            self.hit.append(meta)
            kind = rec[2]
            if kind == "topic":
                self.topics.append(meta)
            elif kind == "log":
                self.logs.append(meta)
            elif kind == "memory":
                self.memory.append(meta)
        self.topic_order = [(meta[3], meta[1], n, False) for n, meta in enumerate(self.topics)]
        heapq.heapify(self.topic_order)
        self.log_order = [(meta[3], meta[1], n) for n, meta in enumerate(self.logs)]
        heapq.heapify(self.log_order)


class Listed(_Value):
    """A word's best-ranked files as the index lists them (`Index.tops`): MEMORY.md, topic files with their bound
    for the word, daily logs with their day; and per tier whether files were left off (then the bound on them)."""

    __slots__ = ("memory", "topics", "logs", "topic_rest", "log_rest")

    def __init__(self, rows: Iterable[tuple[int, int, int, str, str, int]], rests: dict[int, int]) -> None:
        self.memory: list[tuple[int, str, str, int]] = []
        self.topics: list[tuple[int, tuple[int, str, str, int]]] = []
        self.logs: list[tuple[int, tuple[int, str, str, int]]] = []
        for tier, key, fid, rel, kind, rank in rows:
            meta = (fid, rel, kind, rank)
            if tier != TOP_TIERS.get(kind):
                raise IndexDamaged("the search index lists a file under the wrong tier")
            if tier == 0:
                self.memory.append(meta)
            else:
                (self.topics if tier == 1 else self.logs).append((key, meta))
        self.topic_rest = rests.get(1)
        self.log_rest = rests.get(2)


def rank_records(recs: Iterable[Record], needle: str, k: int, wanted: Callable[[str], bool] | None = None,
                 text_of: Callable[[int], bytes] | None = None,
                 counts: tuple[int, int] | None = None, tiers: Tiers | None = None,
                 listed: Listed | None = None) -> tuple[list[_Group], int, int] | None:
    """The k best-ranked sources among indexed files, how many sources there are, and how many lines matched:
    the answer `_top_sources` gives from every matched line, reached with far less work.

    Counting needs no parsing: a file's matched lines are counted with one regex pass over its folded UTF-8 text,
    and its lineage blocks (precomputed by the index) say how many of those lines share a source. Only files
    whose sources can still reach the top k are parsed, tier by tier: MEMORY.md; then topic files in order of
    their rank bound (no source of a file ranks above it), stopping once k sources rank above the next file's
    bound; then daily logs newest first, stopping at k lines; and only when those tiers hold fewer than k
    sources, the rest by path.

    `recs` is read once, as a stream: with `text_of` (a file id -> its folded UTF-8 text, read again for the few
    files that can reach the bundle) no text is kept past its count, so memory follows the bundle, not the
    matches; without it the texts of matching files are kept.

    With `listed` (and `counts`), the one word holding the needle has its best files listed by the index: topic
    files come in order of their bound for it, so none is read for its bound, and only the files that reach the
    bundle are read at all. None when the lists cannot settle it (a file left off a list may rank higher, or the
    first three tiers hold fewer than k sources): then rank without them."""
    nb = needle.encode("utf-8")
    esc = re.escape(nb)
    # One match per matching line. The empty group makes each match's value b"" (one shared object), so counting
    # a word on most lines copies none of them out of the text (a third of the count's time at 10,000 files).
    line_hits = re.compile(esc + rb"[^\n]*()").findall
    block_line_hits = re.compile(esc + rb"[^\n\0]*()").findall  # lines of a block are NUL-joined
    matched = sources = 0
    Meta = tuple[int, str, str, int]  # id, path, kind, rank
    memory: list[Meta] = []
    topics: list[Meta] = []
    logs: list[Meta] = []
    hit: list[Meta] = []
    kept: dict[int, bytes] = {}
    if counts is not None:
        # (lines, sources) from the index's vocabulary (`Index.needle_counts`): no counting pass; `recs` are the
        # candidates' (id, path, kind, rank), some of which may not hold the needle (they add no source).
        assert wanted is None and text_of is not None
        matched, sources = counts
        if tiers is None and listed is None:
            tiers = Tiers(recs if matched else ())
        recs = ()
    if tiers is not None:
        assert counts is not None
        memory, topics, logs, hit = tiers.memory, tiers.topics, tiers.logs, tiers.hit
    elif listed is not None:
        assert counts is not None
        memory = listed.memory
        topics = [meta for _, meta in listed.topics]
        logs = [meta for _, meta in listed.logs]
    for rec in recs:
        if wanted is not None and not wanted(rec[1]):
            continue
        n = len(line_hits(rec[4]))
        if not n:
            continue
        matched += n
        if n > 1 and rec[5]:
            # All matching lines of one lineage block are one source: per block, count one.
            in_blocks = len(block_line_hits(rec[5]))
            if in_blocks > 1:
                n -= in_blocks - len(line_hits(rec[5]))
        sources += n
        meta = (rec[0], rec[1], rec[2], rec[3])
        if text_of is None:
            kept[rec[0]] = rec[4]
        hit.append(meta)
        kind = rec[2]
        if kind == "topic":
            topics.append(meta)
        elif kind == "log":
            logs.append(meta)
        elif kind == "memory":
            memory.append(meta)
    fetch = text_of if text_of is not None else kept.__getitem__

    cands: list[_Group] = []
    best: list[_Worst] = []
    parsed: dict[int, list[_Group]] = {}

    def add(group: _Group) -> None:
        cands.append(group)
        if len(best) < k:
            heapq.heappush(best, _Worst(group.key))
        elif group.key < best[0].key:
            heapq.heapreplace(best, _Worst(group.key))

    def lines_of(meta: Meta) -> tuple[str, list[int]]:
        text = fetch(meta[0]).decode("utf-8")
        return text, literal_lines(text, needle)

    def groups_of(meta: Meta) -> list[_Group]:
        groups = parsed.get(meta[0])
        if groups is None:
            text, lines = lines_of(meta)
            groups = parsed[meta[0]] = _groups_in_file(meta[1], meta[2], text, lines)
            for g in groups:
                add(g)
        return groups

    def bound_of(meta: Meta) -> int | None:
        """A bound on the sources this query finds in a topic file, at least as tight as its rank bound (the
        newest date anywhere in it): the newest date on its matching lines and, below a matching line that may be
        struck ("~~"), on the lines that may be its lineage's head (every one down to the first without "~~").
        Far cheaper than parsing the file: most files a common word is on rank below the bundle by their own
        matching lines' dates."""
        text = fetch(meta[0])
        find = text.find
        newest = None
        pos = find(nb)
        if pos < 0:
            return None  # no source here at all (a trigram candidate without the needle)
        while pos >= 0:
            start = text.rfind(b"\n", 0, pos) + 1
            while True:
                end = find(b"\n", start)
                line = text[start:] if end < 0 else text[start:end]
                for day in _DATE_IN_PARENS.findall(line.decode("utf-8")):
                    n = _ordinal(day)
                    if n is not None and (newest is None or n > newest):
                        newest = n
                if end < 0 or b"~~" not in line:
                    break
                start = end + 1  # it may be struck: its lineage's head may be any line down to one without "~~"
            if end < 0:
                break
            pos = find(nb, end)
        return max(meta[3], -newest if newest is not None else 1)

    for meta in memory:
        groups_of(meta)
    # Topic files by their rank bound; a file's own bound for this query is worked out when it comes up, and the
    # file put back in its place by it, parsed only when it comes up again before k better sources are found.
    if tiers is not None:
        order = list(tiers.topic_order)  # a heap still: popped here, not there
    elif listed is not None:
        # Each file's bound for the word is known: taken up in that order, none read for it. A file left off the
        # list ranks no higher than the rest bound, with any path (""): reached, the lists cannot settle it.
        order = [(key, meta[1], n, True) for n, (key, meta) in enumerate(listed.topics)]
        if listed.topic_rest is not None:
            order.append((listed.topic_rest, "", -1, True))
        heapq.heapify(order)
    else:
        order = [(meta[3], meta[1], n, False) for n, meta in enumerate(topics)]
        heapq.heapify(order)
    while order:
        bound, rel, n, tight = order[0]
        if len(best) >= k and best[0].key < (TIER_TOPIC, bound, rel, -1):
            break
        if not tight:
            better = bound_of(topics[n])
            if better is None:
                heapq.heappop(order)
                continue
            if better > bound:
                heapq.heapreplace(order, (better, rel, n, True))
                continue
        heapq.heappop(order)
        if n < 0:
            return None
        groups_of(topics[n])
    if tiers is not None:
        order = list(tiers.log_order)
    elif listed is not None:
        order = [(key, meta[1], n) for n, (key, meta) in enumerate(listed.logs)]
        if listed.log_rest is not None:
            order.append((listed.log_rest, "", -1))
        heapq.heapify(order)
    else:
        order = [(meta[3], meta[1], n) for n, meta in enumerate(logs)]
        heapq.heapify(order)
    taken = 0
    while order and taken < k:
        day, rel, n = heapq.heappop(order)
        if n < 0:
            if len(best) >= k and best[0].key < (TIER_LOG, day, ""):
                break  # no log left off the list ranks into the bundle
            return None
        lines = lines_of(logs[n])[1]
        for i in reversed(lines[-(k - taken):]):
            add(_Group((TIER_LOG, day, rel, -i), rel, "log", i, False, {i}))
        taken = min(k, taken + len(lines))
    if sum(1 for g in cands if g.key[0] < TIER_OTHER) < k:
        if listed is not None:
            return None  # the other files holding the word are not listed
        # Every source of the first three tiers is in: the rest (TIER_OTHER) rank by path, then line.
        taken = 0
        for meta in sorted(hit, key=lambda r: r[1]):
            if taken >= k:
                break
            kind = meta[2]
            if kind == "log":
                continue
            if kind in ("memory", "topic"):
                taken += sum(1 for g in groups_of(meta) if g.key[0] == TIER_OTHER)
                continue
            lines = lines_of(meta)[1]
            for i in lines[: k - taken]:
                add(_Group((TIER_OTHER, 0, meta[1], i), meta[1], kind, i, False, {i}))
            taken = min(k, taken + len(lines))
    return heapq.nsmallest(k, cands, key=lambda g: g.key), sources, matched


def _journal_gap(old: str, new: str) -> int:
    """Bytes of journal between two tokens of the same journal (the whole thing, as far as it matters, else)."""
    (a, _, x), (b, _, y) = old.rpartition(":"), new.rpartition(":")
    return int(y) - int(x) if a == b and x.isdigit() and y.isdigit() else 1 << 30


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# matching ---------------------------------------------------------------------------------------------------------
def literal_lines(text: str, needle: str) -> list[int]:
    """0-based indexes of the lines of `text` containing `needle` (both already folded), each once."""
    out: list[int] = []
    find, count = text.find, text.count
    pos = find(needle)
    line, cursor = 0, 0
    while pos >= 0:
        line += count("\n", cursor, pos)
        out.append(line)
        end = find("\n", pos)
        if end < 0:
            break
        cursor = end
        pos = find(needle, end + 1)
    return out


def _line_numbers(text: str, starts: Iterable[int]) -> list[int]:
    out: list[int] = []
    line, cursor = 0, 0
    for pos in starts:
        if pos < cursor:
            continue
        line += text.count("\n", cursor, pos)
        if not out or out[-1] != line:
            out.append(line)
        cursor = pos
    return out


def compile_regex(pattern: str) -> Any:
    """Compile a case-insensitive, multi-line pattern with the `regex` package (which supports timeouts)."""
    import regex

    try:
        return regex.compile(pattern, regex.IGNORECASE | regex.MULTILINE)
    except regex.error as exc:
        raise SearchError(f"bad regex {pattern!r}: {exc}; fix it, or search without --regex for the literal text")
    except (OverflowError, RecursionError, ValueError) as exc:
        raise SearchError(f"bad regex {pattern!r}: {exc}") from None


def glob_filter(path_glob: str | None) -> Callable[[str], bool]:
    """`--path GLOB`: fnmatch on the relative path ('*' crosses '/'); a plain folder name matches what is under it."""
    if not path_glob:
        return lambda rel: True
    pat = path_glob.strip().lstrip("./") if path_glob.strip().startswith("./") else path_glob.strip()
    if not any(c in pat for c in "*?["):
        prefix = pat.rstrip("/") + "/"
        return lambda rel: rel == pat or rel.startswith(prefix)
    if pat.endswith("/"):
        pat += "*"
    # fnmatch.fnmatchcase would keep every distinct glob compiled (an lru_cache of 32,768): a warm searcher asked
    # for distinct long globs grew by ~250 KB each. `re` keeps at most a few hundred.
    match = re.compile(fnmatch.translate(pat)).match
    return lambda rel: match(rel) is not None


# the searcher -----------------------------------------------------------------------------------------------------
class Searcher:
    """Searches one memory root. Keep one around for warm searches (the app does): the index stays open.

    `use_index=False` always scans the files (the reference the index is tested against). `watch=True` subscribes
    to the memory's change event (the location's one watcher, shared with the app) so a warm search refreshes only
    the files reported changed instead of re-checking every file.
    `keep_texts=True` (the default) holds the index's folded texts in memory after the first indexed query (about
    the size of the memory's text), catching up by the index's generation, while the memory's text is at most
    `KEEP_TEXTS_MAX` bytes; otherwise, and with `search()`, they are read from the index per query.
    `fast_ranking=False` classifies every matching line to rank and count (the reference the tiered ranking is
    tested against); the default parses only files whose sources can still reach the bundle."""

    def __init__(self, memory: Memory | str | os.PathLike[str], *, use_index: bool = True, watch: bool = False,
                 regex_timeout: float = REGEX_TIMEOUT, keep_texts: bool = True, fast_ranking: bool = True) -> None:
        # A root path is read as a folder without opening a Memory (`memtui search` starts faster without it).
        store: Store | None = None
        if isinstance(memory, (str, os.PathLike)):
            folder: Path | None = Path(memory).expanduser().absolute()
        else:
            store = memory.store
            folder = store.local_root
        # Every file is read through one source: the folder's, or the store's for a memory with no folder here.
        self._source: Source
        self._folder = folder
        self.index_problem: str | None = None
        if folder is not None:
            self._source, self.root = FolderSource(folder), folder
        else:
            assert store is not None
            self._source = StoreSource(store)
            # The same search over its files, with the index in a local cache of its own.
            try:
                self.root = store_cache_dir(store)
            except OSError as exc:
                self.root = Path(os.devnull)
                self.index_problem = f"no local cache for the search index ({exc}): scanning the store"
                use_index = False
        self.regex_timeout = regex_timeout
        self.index: Index | None = None
        if use_index:
            self.index = Index(self.root, self.root / INDEX_FILE if folder is None else None, source=self._source)
        self.keep_texts = keep_texts
        self.fast_ranking = fast_ranking
        self._corpus: dict[int, Record] | None = None
        self._corpus_state: tuple[str, int] | None = None
        self._tiers: tuple[tuple[str, int], Tiers] | None = None
        self._watcher: Any = None
        if watch and self.index is not None:
            from memtui.core.recall.index_watch import IndexWatcher, StoreWatcher

            self._watcher = (StoreWatcher(store) if folder is None
                             else IndexWatcher(self.root, publish=True))

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        if self.index is not None:
            self.index.close()
        self._corpus = self._tiers = None

    def __enter__(self) -> "Searcher":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def note_changed(self, paths: Iterable[str]) -> None:
        """Files someone else saw change (the app's watcher): re-checked before the next query."""
        if self._watcher is not None:
            self._watcher.add(paths)

    def watcher_vouches(self) -> bool:
        """Can this searcher's watcher name what changed (else each refresh re-checks every file)?"""
        return self._watcher is not None and self._watcher.vouches()

    def refresh(self, full: bool = False) -> None:
        """Bring the index up to date: the watcher's changed paths when it is trusted, else every file."""
        if self.index is None:
            return
        try:
            if self._watcher is not None and not full:
                dirty = self._watcher.take()
                if dirty is None:
                    self.index.refresh()
                else:
                    self.index.refresh(dirty)  # none named: files with other names are still compared
            elif self._folder is None:
                self.index.refresh()  # no one listening to the store: its files' hashes say what changed
            else:
                self._refresh_from_journal()
        except IndexUnavailable as exc:
            self.index_problem = str(exc)
            self.index = None

    def _refresh_from_journal(self) -> None:
        """Without a watcher of its own: re-check only what a live watcher journaled since the index's token, or
        every file when none vouches (`memtui.core.storage.fsmonitor`)."""
        from memtui.core.storage.fsmonitor import changes_since

        assert self.index is not None
        old = self.index.journal_token()
        token, changed = changes_since(self.root, old)
        if token is None:
            self.index.refresh()
            if old is not None:
                self.index.set_journal_token(None)
            return
        if changed is None:
            self.index.refresh()
        else:
            self.index.refresh(changed)  # none named: files with other names are still compared
            if not changed and old is not None and _journal_gap(old, token) < 65536:
                return  # only cookies since: keep the token and spare a write (the next reader skips a few lines)
        self.index.set_journal_token(token)

    def search(self, query: str, *, regex: bool = False, limit: int = DEFAULT_LIMIT,
               path_glob: str | None = None) -> SearchBundle:
        limit = max(1, int(limit))
        bundle = SearchBundle(query, regex, limit, path_glob=path_glob)
        try:
            if not query or ("\n" in query or "\r" in query):
                raise SearchError("give a query of one line, e.g. memtui search \"public api\"")
            if "\x00" in query:
                # sqlite's FTS reads a NUL as the end of the query string ("unterminated string").
                raise SearchError("the query contains a NUL character; send plain text")
            if regex:
                hits = self._regex_hits(query, path_glob, bundle)
            elif self.fast_ranking and self._ranked_from_index(query, path_glob, bundle):
                return bundle
            else:
                hits = self._literal_hits(query, path_glob, bundle)
        except SearchError as exc:
            bundle.error = str(exc)
            return bundle
        self._bundle(bundle, hits)
        return bundle

    # the indexed path: count cheaply, parse only what can reach the bundle ----------------------------------------
    def _ranked_from_index(self, query: str, path_glob: str | None, bundle: SearchBundle) -> bool:
        """Fill the bundle from the index; False when the index cannot answer (then the caller scans)."""
        needle = fold(query)
        if self.index is None or len(needle) < 3:
            return False
        self.refresh()
        if self.index is None:
            return False
        wanted = glob_filter(path_glob) if path_glob else None
        try:
            if not _encodable(needle):
                # A lone surrogate: indexed text is valid UTF-8, so nothing holds it.
                top, bundle.sources, bundle.matched_lines = [], 0, 0
            elif wanted is None and self._from_vocabulary(needle, bundle):
                top = self._top
            elif self.keep_texts and self._texts_fit():
                recs = self._records(needle)
                corpus = self._corpus
                assert corpus is not None
                top, bundle.sources, bundle.matched_lines = rank_records(
                    recs, needle, bundle.limit, wanted, lambda i: corpus[i][4])
            else:
                # One read transaction: the texts read again for the bundle are the ones counted. The stream is
                # closed whatever happens (it holds the index's lock while it is open).
                with self.index.reading(), closing(self.index.stream(needle)) as recs:
                    top, bundle.sources, bundle.matched_lines = rank_records(
                        recs, needle, bundle.limit, wanted, self.index.folded)
            bundle.searched_files, bundle.skipped = self.index.summary()
        except IndexDamaged as exc:
            # Only a cache: thrown away now, built again from the files by the next query; this one scans.
            self.index_problem = str(exc)
            self.index.reset()
            self._corpus = self._corpus_state = None
            return False
        except IndexUnavailable as exc:
            self.index_problem = str(exc)
            self.index = None
            return False
        bundle.method = "index"
        bundle.left_out = bundle.sources - len(top)
        self._fill(bundle, top, {})
        return True

    def _from_vocabulary(self, needle: str, bundle: SearchBundle) -> bool:
        """The bundle's counts from the index's word counts when one word alone holds the needle (no counting
        pass over the candidates' texts); the top sources then read only the files that can reach the bundle."""
        assert self.index is not None
        with self.index.reading():
            counts = self.index.needle_counts(needle)
            if counts is None:
                return False
            lines, sources, files, word = counts
            text_of: Callable[[int], bytes]
            kept = self.keep_texts and self._texts_fit()
            if kept:
                corpus = self._caught_up()
                text_of = lambda i: corpus[i][4]  # noqa: E731
            else:
                text_of = self.index.folded
            if lines:
                # The word's best files, listed by the index: most queries read only the files of the bundle.
                ranked = rank_records((), needle, bundle.limit, None, text_of, (lines, sources),
                                      listed=Listed(*self.index.tops(word)))
                if ranked is not None:
                    self._top, bundle.sources, bundle.matched_lines = ranked
                    return True
            # A word in many files: every indexed file is a candidate (ranking skips those without it, and reads
            # only the best ranked), which spares the trigram query that would list nearly all of them.
            dense = files * DENSE_SHARE >= self.index.summary()[0]
            tiers = None
            if kept:
                if lines and dense:
                    tiers = self._all_tiers(corpus.values)
                metas: Iterable[Any] = (() if not lines or dense
                                        else [corpus[i] for i in self.index.candidate_ids(needle)])
            else:
                if lines and dense:
                    tiers = self._all_tiers(self.index.all_metas)
                metas = () if not lines or dense else self.index.metas(needle)
            ranked = rank_records(metas, needle, bundle.limit, None, text_of, (lines, sources), tiers)
            assert ranked is not None
            self._top, bundle.sources, bundle.matched_lines = ranked
        return True

    def _all_tiers(self, metas: Callable[[], Iterable[Any]]) -> Tiers:
        """Every indexed file by tier (`Tiers`), made again only when the index's (epoch, generation) moved."""
        assert self.index is not None
        state = self.index.state()
        if self._tiers is None or self._tiers[0] != state:
            self._tiers = (state, Tiers(metas()))
        return self._tiers[1]

    def _texts_fit(self) -> bool:
        """May this searcher keep the index's records in memory (their texts, lineage blocks and own cost are at most
        KEEP_TEXTS_MAX bytes, `Index.text_bytes`)? When they no longer fit, the ones kept are let go."""
        assert self.index is not None
        fits = self.index.text_bytes() <= KEEP_TEXTS_MAX
        if not fits:
            self._corpus = self._corpus_state = None
        return fits

    def _records(self, needle: str) -> list[Record]:
        """The index's records of the files holding every trigram of `needle`: from memory when kept, kept in step
        with the index by its (epoch, generation), all read in one SQLite read transaction."""
        assert self.index is not None
        if not self.keep_texts:
            return self.index.records(needle)
        with self.index.reading():
            corpus = self._caught_up()
            ids = self.index.candidate_ids(needle)
        return [corpus[i] for i in ids]

    def _caught_up(self) -> dict[int, Record]:
        """The kept records, brought in step with the index by its (epoch, generation). Inside `reading()`."""
        assert self.index is not None
        state = self.index.state()
        corpus = self._corpus
        if corpus is None or self._corpus_state is None or state[0] != self._corpus_state[0]:
            corpus = {r[0]: r for r in self.index.records()}
        elif state[1] != self._corpus_state[1]:
            for r in self.index.records(since=self._corpus_state[1]):
                corpus[r[0]] = r
            alive = self.index.doc_ids()
            for gone in [i for i in corpus if i not in alive]:
                del corpus[gone]
        self._corpus, self._corpus_state = corpus, state
        return corpus

    # matching paths ---------------------------------------------------------------------------------------------
    def _literal_hits(self, query: str, path_glob: str | None, bundle: SearchBundle) -> list[tuple[str, str, list[int], str | None]]:
        needle = fold(query)
        wanted = glob_filter(path_glob)
        if self.index is not None and len(needle) >= 3:
            self.refresh()
        if self.index is not None and len(needle) >= 3:
            try:
                out = []
                for rel, folded in self.index.candidates(needle):
                    if wanted(rel):
                        lines = literal_lines(folded, needle)
                        if lines:
                            out.append((rel, folded, lines, None))
                bundle.method = "index"
                bundle.searched_files, bundle.skipped = self.index.summary()
                return out
            except IndexUnavailable as exc:
                self.index_problem = str(exc)
                self.index = None
        out = []
        for rel, text in self._scan(wanted, bundle):
            folded = fold(text)
            lines = literal_lines(folded, needle)
            if lines:
                out.append((rel, folded, lines, text))
        return out

    def _regex_hits(self, pattern: str, path_glob: str | None, bundle: SearchBundle) -> list[tuple[str, str, list[int], str | None]]:
        rx = compile_regex(pattern)
        budget = self.regex_timeout
        out = []
        for rel, text in self._scan(glob_filter(path_glob), bundle):
            started = time.perf_counter()
            try:
                starts = [m.start() for m in rx.finditer(text, timeout=max(budget, 0.001))]
            except TimeoutError:
                raise SearchError(
                    f"the regex {pattern!r} ran for over {self.regex_timeout:g} s (it may backtrack without end, as "
                    "nested repeats like (a+)+ do); simplify it, or search without --regex for literal text"
                ) from None
            budget -= time.perf_counter() - started
            if budget <= 0:
                raise SearchError(
                    f"the regex {pattern!r} took over {self.regex_timeout:g} s in total; make it more specific or "
                    "narrow the search with --path"
                )
            if starts:
                out.append((rel, fold(text), _line_numbers(text, starts), text))
        return out

    def _scan(self, wanted: Callable[[str], bool], bundle: SearchBundle) -> Iterable[tuple[str, str]]:
        bundle.method = "scan"
        skipped: dict[str, int] = {}
        searched = 0
        for rel, text, why in self._all_texts():
            if why:
                skipped[why] = skipped.get(why, 0) + 1
                continue
            searched += 1
            if wanted(rel):
                yield rel, text
        bundle.skipped = skipped
        bundle.searched_files = searched

    def _all_texts(self) -> Iterable[tuple[str, str | None, str | None]]:
        """(path, text, why it is skipped) of every searchable file, by path."""
        items = [(rel, size) for rel, (_, size) in sorted(self._source.states().items())]
        for (rel, _), (text, why) in zip(items, self._source.texts(items)):
            yield rel, text, why

    def _original(self, rel: str) -> str | None:
        return next(iter(self._source.texts([(rel, None)])))[0]

    # ranking and the bundle -------------------------------------------------------------------------------------
    def _bundle(self, bundle: SearchBundle, hits: list[tuple[str, str, list[int], str | None]]) -> None:
        originals: dict[str, str | None] = {}
        for rel, _, lines, original in hits:
            bundle.matched_lines += len(lines)
            originals[rel] = original
        top, bundle.sources = _top_sources(hits, bundle.limit)
        bundle.left_out = bundle.sources - len(top)
        self._fill(bundle, top, originals)

    def _fill(self, bundle: SearchBundle, top: list[_Group], originals: dict[str, str | None]) -> None:
        """The bundle's result lines for the top sources, from the files as written (not folded)."""
        today = clock.now().date()
        cache: dict[str, list[str]] = {}
        for n, g in enumerate(top, 1):
            lines = cache.get(g.path)
            if lines is None:
                text = originals.get(g.path)
                if text is None:
                    text = self._original(g.path)
                lines = cache[g.path] = (text or "").split("\n")
            order = [g.head] + sorted((i for i in g.matched if i != g.head), reverse=True) if g.lineage else [g.head]
            for i in order:
                bundle.results.append(_result(g, i, lines, today, n))


def _result(g: _Group, i: int, lines: list[str], today: date, group: int) -> SearchResult:
    raw = lines[i].rstrip("\r") if i < len(lines) else ""
    e = parse_entry(raw)
    day = e.date if e and e.date else None
    if day is None and g.kind == "log":
        day = log_day(g.path)
    label, age = freshness(day, today)
    return SearchResult(
        path=g.path, line=i + 1, text=raw, provenance=e.tag if e else None, date=day,
        source=e.source if e else None, current=not (e and e.struck), freshness=label, age_days=age,
        struck=(e.struck_kind or "struck") if e and e.struck else None, struck_date=e.struck_date if e else None,
        time=e.time if e else None, section=_section_of(lines, i), kind=g.kind, matched=i in g.matched,
        group=group,
    )


def _section_of(lines: list[str], i: int) -> str | None:
    for k in range(min(i, len(lines) - 1), -1, -1):
        m = _HEADING.match(lines[k])
        if m and k != i:
            return m.group(1).strip() or None
    return None


def store_cache_dir(store: Store) -> Path:
    """Where the search index of a memory kept in a store lives: a private folder of the local cache, one per
    store location (`memtui.core.storage.store_urls.cache_dir`). It is only a cache of the store."""
    from memtui.core.storage.store_urls import cache_dir

    return cache_dir(store.cache_name)


def search(memory: Any, query: str, *, regex: bool = False, limit: int = DEFAULT_LIMIT,
           path_glob: str | None = None, use_index: bool = True) -> SearchBundle:
    """Search a memory (a `Memory` or a root path) once: refresh the index, query it, close it."""
    with Searcher(memory, use_index=use_index, keep_texts=False) as s:
        return s.search(query, regex=regex, limit=limit, path_glob=path_glob)


__all__ = ["SearchBundle", "SearchError", "SearchResult", "Searcher", "search", "freshness", "file_kind"]
