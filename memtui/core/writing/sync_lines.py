"""Who wrote each line of an incoming change: the remote's commit author, the approval it carries, the entry's tag.

An incoming change (memtui.core.writing.sync) is one proposal per file, its actor the author of the last commit
that touched the file; a file several people changed on the remote needs more than that name to review line by line.
`line_origins` blames the fetched commit the proposal was built from (its source, `<remote> <sha>`) and gives, for
each line the proposal adds, the commit that last wrote it there, its author, the person a `Memtui-Approved-By`
trailer names (an approval made on the other machine), and the entry's provenance tag where the layout has one.
Every name is the remote's word and hostile: `describe` draws it on one line with hidden characters named
(memtui.core.basics.visible.reveal), never as markup. git is read through the store's one owner (gitcall).
"""

from __future__ import annotations

import re
from typing import Any

from memtui.core.basics.record import Record

_SHA = re.compile(r"[0-9a-f]{40}")
_SHORT = re.compile(r"[0-9a-f]{7,40}")
MAX_LINES = 2000  # added lines one proposal attributes: a larger change shows the first ones and says so


class LineOrigin(Record):
    """One added line of an incoming change and who wrote it on the remote (`commit` None: not found in the fetched
    commit's blame, e.g. a merged line the grammar rewrote); `approved_by`: the approval trailer's person, if any."""

    line: str
    commit: str | None
    author: str | None
    approved_by: str | None
    tag: str | None

    def __init__(self, line: str, commit: str | None, author: str | None, approved_by: str | None,
                 tag: str | None) -> None:
        self.line, self.commit, self.author, self.approved_by, self.tag = line, commit, author, approved_by, tag


def added_lines(proposal: Any) -> list[str]:
    """The lines the proposal's diff adds (without the `+`; blank ones left out: nobody's words); its content's
    lines when it has no diff."""
    diff = proposal.diff or ""
    if diff:
        lines = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    else:
        lines = (proposal.content or proposal.entry or "").splitlines()
    return [line for line in lines if line.strip()]


def line_origins(memory: Any, proposal: Any) -> list[LineOrigin]:
    """Who wrote each line `proposal` adds, as the fetched commit's `git blame` says; [] for a proposal that did
    not come in by sync (memtui's flag decides, not the actor it claims) or whose commit is no longer here."""
    from memtui.core.writing.sync import came_in

    if came_in(proposal) is None or not proposal.file or not memory.store.has_git:
        return []
    tip = (proposal.source or "").rpartition(" ")[2]
    if not _SHORT.fullmatch(tip):
        return []
    lines = added_lines(proposal)[:MAX_LINES]
    if not lines:
        return []
    from memtui.core.storage import gitcall
    from memtui.core.storage.store import StoreError

    try:
        with memory.store.git("blame of an incoming change") as repo:
            full = repo.git.rev_parse("--verify", "-q", f"{tip}^{{commit}}")
            blamed = repo.git.blame("--line-porcelain", full, "--", proposal.file, stdout_as_string=False)
            by_line = _parse_blame(blamed)
            approvals = _approvals(repo, sorted({sha for found in by_line.values() for sha, _ in found}))
    except (StoreError, gitcall.errors().any):
        # A pruned commit, a file gone at the tip (a delete), git stopped for time: no attribution; the proposal
        # itself still shows, with the commits memtui's flag lists.
        return []
    from memtui.core.grammar.entries import parse_entry

    taken: dict[str, int] = {}
    out = []
    for line in lines:
        found = by_line.get(line) or []
        i = taken.get(line, 0)
        sha, author = found[min(i, len(found) - 1)] if found else (None, None)
        taken[line] = i + 1
        entry = parse_entry(line)
        out.append(LineOrigin(line, sha, author, approvals.get(sha) if sha else None, entry.tag if entry else None))
    return out


def _parse_blame(raw: bytes) -> dict[str, list[tuple[str, str]]]:
    """`git blame --line-porcelain` → {line text: [(commit, author), …] in file order}."""
    out: dict[str, list[tuple[str, str]]] = {}
    sha = author = ""
    for row in raw.decode("utf-8", errors="replace").split("\n"):
        head = row.split(" ", 1)[0]
        if _SHA.fullmatch(head):
            sha, author = head, ""
        elif row.startswith("author "):
            author = row[len("author "):]
        elif row.startswith("\t"):
            out.setdefault(row[1:], []).append((sha, author))
    return out


def _approvals(repo: Any, shas: list[str]) -> dict[str, str]:
    """{commit: the person its `Memtui-Approved-By` trailer names (several joined by ", ")} for those that carry one."""
    if not shas:
        return {}
    fmt = "%H%x01%(trailers:key=Memtui-Approved-By,valueonly,separator=%x02)%x03"
    text = repo.git.log("--no-walk=unsorted", f"--format={fmt}", *shas, stdout_as_string=False).decode(
        "utf-8", errors="replace")
    out = {}
    for record in text.split("\x03"):
        sha, _, names = record.strip().partition("\x01")
        people = [n.strip() for n in names.split("\x02") if n.strip()]
        if sha and people:
            out[sha] = ", ".join(people)
    return out


def describe(origin: LineOrigin) -> str:
    """One line a person reads: `+ LINE  ← AUTHOR in SHA, approved there by NAME, [tag]`, every remote-given string
    with control and invisible characters named, so a name cannot move the cursor, hide text or pose as another."""
    from memtui.core.basics.visible import reveal

    if origin.commit is None:
        who = "not in the fetched commit's lines (merged here)"
    else:
        who = f"{reveal(origin.author or 'unknown', newlines=False)} in {origin.commit[:12]}"
        if origin.approved_by:
            who += f", approved there by {reveal(origin.approved_by, newlines=False)}"
    if origin.tag:
        who += f", [{origin.tag}]"
    return f"+ {reveal(origin.line, newlines=False)}  \u2190 {who}"
