"""Patches as text: the bounded unified diff of a file's text, and a change's patch split per file.

Below the stores and the write path alike: a store records and reads patches with these, the planner shows them
for review, and none of them knows a store, a proposal or a memory.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from memtui.core.basics.visible import visible

# A diff is for reading (the review panel, `queue show`, a tool result): past these it stops, and its last line
# says how many lines it left out. 20 MB of uncommitted log made one 259,000-line diff per queue listing.
DIFF_MAX_LINES = 2_000
DIFF_MAX_CHARS = 512_000
# Above this many lines (both sides together) the common head and tail are set aside before difflib matches;
# above MATCH_LIMIT lines left on a side, no matching is tried and one hunk replaces them.
TRIM_OVER = 2_000
MATCH_LIMIT = 20_000
_LEFT_OUT = re.compile(r"^\\ (\d+) more lines? of this diff left out", re.M)
_NO_NEWLINE = "\\ No newline at end of file\n"
HUNK_COUNTS = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def unified_diff(rel: str, before: str | None, after: str | None, max_lines: int | None = DIFF_MAX_LINES,
                 max_chars: int | None = DIFF_MAX_CHARS, *, context: int = 2) -> str:
    """The unified diff (`context` lines of context) of a file's text, at most `max_lines` lines and about `max_chars`
    characters (None: all of it); a bounded diff ends in ``\\ N more lines of this diff left out``."""
    a_text, b_text = before or "", after or ""
    # A name is one header line: a newline in a name memtui refuses (a file dropped in the folder) must not forge a
    # line of the diff.
    name = visible(rel, newlines=False)
    head = [f"--- {'a/' + name if before is not None else '/dev/null'}\n",
            f"+++ {'b/' + name if after is not None else '/dev/null'}\n"]
    if a_text == b_text:
        return ""
    if not a_text or not b_text:
        # A new or emptied file: its lines, as many as are shown, without splitting the rest of a 20 MB text.
        return _one_sided(head, "-" if a_text else "+", a_text or b_text, bool(a_text), max_lines, max_chars)
    a = a_text.splitlines(keepends=True)
    b = b_text.splitlines(keepends=True)
    out, size, shown = list(head), sum(map(len, head)), len(head)
    groups = _grouped(a, b, context)
    for g, group in enumerate(groups):
        first, last = group[0], group[-1]
        hunk = [f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"]
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                hunk += [" " + ln for ln in a[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                hunk += ["-" + ln for ln in a[i1:i2]]
            if tag in ("replace", "insert"):
                hunk += ["+" + ln for ln in b[j1:j2]]
        for k, line in enumerate(hunk):
            line = line if line.endswith("\n") else line + "\n" + _NO_NEWLINE
            if _full(shown, size, line, max_lines, max_chars):
                rest = len(hunk) - k + _count_hunks(groups[g + 1:]) + _no_newlines(hunk[k:], groups[g + 1:], a, b)
                return "".join(out) + _cut(line, size, shown <= 3, max_chars) + _more(rest)
            out.append(line)
            size += len(line)
            shown += line.count("\n")
    return "".join(out) if groups else ""


def diff_left_out(diff: str) -> int:
    """How many lines a bounded diff says it left out (0 for a whole one)."""
    m = _LEFT_OUT.search(diff, max(0, len(diff) - 200))
    return int(m[1]) if m else 0


def _full(shown: int, size: int, line: str, max_lines: int | None, max_chars: int | None) -> bool:
    return (max_lines is not None and shown + line.count("\n") > max_lines) or \
        (max_chars is not None and size + len(line) > max_chars)


def _cut(line: str, size: int, nothing_yet: bool, max_chars: int | None) -> str:
    """Nothing of the diff's body shown yet (one line longer than the whole bound): its start, marked cut."""
    if not nothing_yet or max_chars is None:
        return ""
    return line[: max(80, max_chars - size)].rstrip("\n") + " …\n"


def _more(n: int) -> str:
    return f"\\ {n} more line{'' if n == 1 else 's'} of this diff left out\n"


def _one_sided(head: list[str], sign: str, text: str, removed: bool, max_lines: int | None,
               max_chars: int | None) -> str:
    total = text.count("\n") + (0 if text.endswith("\n") else 1)
    rng = f"-{_range(0, total)} +{_range(0, 0)}" if removed else f"-{_range(0, 0)} +{_range(0, total)}"
    out = [*head, f"@@ {rng} @@\n"]
    size, shown, at = sum(map(len, out)), 0, 0
    while at < len(text):
        end = text.find("\n", at)
        end = len(text) if end < 0 else end + 1
        line = sign + text[at:end]
        line = line if line.endswith("\n") else line + "\n" + _NO_NEWLINE
        if _full(shown + 3, size, line, max_lines, max_chars):
            rest = total - shown + (0 if text.endswith("\n") else 1)
            return "".join(out) + _cut(line, size, shown == 0, max_chars) + _more(rest)
        out.append(line)
        size += len(line)
        shown += 1
        at = end
    return "".join(out)


def _range(start: int, stop: int) -> str:
    """difflib's unified range: `start,length` (1-based), `start` alone for one line."""
    length = stop - start
    begin = start + 1
    if length == 1:
        return f"{begin}"
    if not length:
        begin -= 1
    return f"{begin},{length}"


def common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines `a` and `b` share at their start, and then (not overlapping those) at their end."""
    lo = 0
    while lo < len(a) and lo < len(b) and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < len(a) - lo and hi < len(b) - lo and a[-1 - hi] == b[-1 - hi]:
        hi += 1
    return lo, hi


def _grouped(a: list[str], b: list[str], n: int) -> list[list[tuple[str, int, int, int, int]]]:
    """difflib's grouped opcodes; for big texts the common head and tail are set aside first (an append to a big
    log is matched in one pass, not by difflib over 200,000 lines), and a huge middle is one replace."""
    if len(a) + len(b) <= TRIM_OVER:
        return list(difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(n))
    lo, hi = common_ends(a, b)
    am, bm = a[lo:len(a) - hi], b[lo:len(b) - hi]
    if len(am) > MATCH_LIMIT or len(bm) > MATCH_LIMIT or not am or not bm:
        tag = "replace" if am and bm else "delete" if am else "insert"
        middle = [(tag, 0, len(am), 0, len(bm))]
    else:
        middle = difflib.SequenceMatcher(None, am, bm).get_opcodes()
    codes = [("equal", 0, lo, 0, lo)] if lo else []
    codes += [(t, i1 + lo, i2 + lo, j1 + lo, j2 + lo) for t, i1, i2, j1, j2 in middle]
    if hi:
        codes.append(("equal", len(a) - hi, len(a), len(b) - hi, len(b)))
    return list(_Given(codes).get_grouped_opcodes(n))


class _Given(difflib.SequenceMatcher):
    """difflib's grouping over opcodes worked out elsewhere."""

    def __init__(self, codes: list[tuple[str, int, int, int, int]]) -> None:
        super().__init__(None, [], [])
        self.opcodes = codes

    def get_opcodes(self) -> list[tuple[str, int, int, int, int]]:
        return self.opcodes


def _count_hunks(groups: list[list[tuple[str, int, int, int, int]]]) -> int:
    n = 0
    for group in groups:
        n += 1
        for tag, i1, i2, j1, j2 in group:
            n += (i2 - i1 if tag != "insert" else 0) + (j2 - j1 if tag in ("replace", "insert") else 0)
    return n


def _no_newlines(rest: list[str], groups: list[list[tuple[str, int, int, int, int]]], a: list[str],
                 b: list[str]) -> int:
    """The `\\ No newline` lines among what was left out (only a file's last line can lack its newline)."""
    n = sum(not ln.endswith("\n") for ln in rest)
    for group in groups:
        for tag, i1, i2, j1, j2 in group:
            if tag != "insert" and i2 == len(a) and i2 > i1 and not a[-1].endswith("\n"):
                n += 1
            if tag in ("replace", "insert") and j2 == len(b) and j2 > j1 and not b[-1].endswith("\n"):
                n += 1
    return n


def commit_diff(repo: Any, sha: str, rel: str | None = None) -> str:
    """The patch one commit made (to one file, when given)."""
    args = ["--format=", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", sha]
    if rel:
        args += ["--", rel]
    try:
        return repo.git.show(*args) + "\n"
    except Exception:  # a commit that is gone (e.g. another branch was checked out) has no diff to show
        return ""


def commit_patches(repo: Any, shas: list[str], chunk: int = 200) -> dict[str, dict[str, str]]:
    """Each commit's patch split per file, read with one `git show` per `chunk` commits (not one per change)."""
    out: dict[str, dict[str, str]] = {}
    for i in range(0, len(shas), chunk):
        try:
            text = repo.git.show("--format=%x01%H", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv",
                                *shas[i:i + chunk])
        except Exception:  # a commit that is gone: fall back to one at a time, skipping the missing
            text = "".join("\x01" + sha + "\n" + commit_diff(repo, sha) for sha in shas[i:i + chunk])
        for block in text.split("\x01")[1:]:
            sha, _, patch = block.partition("\n")
            files: dict[str, str] = {}
            for part in re.split(r"^(?=diff --git )", patch, flags=re.MULTILINE):
                if not part.startswith("diff --git "):
                    continue
                m = re.search(r"^\+\+\+ b/(.+)$", part, re.MULTILINE) or re.search(r"^--- a/(.+)$", part, re.MULTILINE)
                if m:
                    files[m.group(1).rstrip("\t")] = part if part.endswith("\n") else part + "\n"
            out[sha.strip()] = files
    return out


def split_patch(diff: str) -> dict[str, str]:
    """A unified diff of several files (as the Redis store records a change) split per file, by the hunk counts:
    a removed line that reads `-- x` looks like a file header and must not start a new file."""
    lines = diff.splitlines(keepends=True)
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        if not (lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")):
            i += 1
            continue
        old, new = lines[i][4:].rstrip("\n").split("\t")[0], lines[i + 1][4:].rstrip("\n").split("\t")[0]
        path = new[2:] if new != "/dev/null" else old[2:]
        start = i
        i += 2
        while i < len(lines) and (m := HUNK_COUNTS.match(lines[i])):
            old_n = 1 if m.group(1) is None else int(m.group(1))
            new_n = 1 if m.group(2) is None else int(m.group(2))
            i += 1
            while i < len(lines) and (old_n > 0 or new_n > 0 or lines[i].startswith("\\")):
                kind = lines[i][:1]
                old_n -= kind in (" ", "-")
                new_n -= kind in (" ", "+")
                i += 1
        out[path] = "".join(lines[start:i])
    return out
