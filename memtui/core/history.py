"""A memory file's history and per-line provenance (git log and blame joined with the audit log), and undo.

Undo never rewrites history: `revert` and `restore` make a new commit, written under the store's lock and audited
like any other change. A revert is a three-way merge per file (`git merge-file`), computed in full before anything
is written, so a revert that conflicts with later changes is refused and leaves the tree as it was.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterable

from memtui.core import clock
from memtui.core.proposals import WriteResult
from memtui.core.store import content_hash

if TYPE_CHECKING:
    from memtui.core.memory import Memory

TRAILER = re.compile(r"^(Memtui-[A-Za-z-]+):\s*(.*)$", re.MULTILINE)
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


class NoHistory(LookupError):
    """The memory has no git history to read or to undo with."""


# reading ------------------------------------------------------------------------------------------------------
def trailers(message: str) -> dict[str, str]:
    """The `Memtui-*:` trailers of a commit message, keyed without the prefix, lower case (actor, proposal…)."""
    return {k[len("Memtui-"):].lower(): v.strip() for k, v in TRAILER.findall(message)}


def audit_by_commit(records: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Audit lines that made a commit, by commit id."""
    out: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        sha = rec.get("commit")
        if sha and rec.get("status") == "applied":
            out.setdefault(sha, []).append(rec)
    return out


def _repo(memory: Memory) -> Any:
    repo = getattr(memory.store, "repo", None)
    if repo is None or not repo.head.is_valid():
        raise NoHistory(f"{memory.location} has no git history; run `memtui init --git` to start one")
    return repo


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts).isoformat(timespec="seconds")


@dataclass
class FileCommit:
    """One commit that touched a file, with who asked for it and the audit line behind it."""

    commit: str
    time: str
    author: str
    actor: str
    proposal: str | None
    approved_by: str | None
    subject: str
    action: str | None
    audit: list[dict[str, Any]] = field(default_factory=list)

    @property
    def short(self) -> str:
        return self.commit[:8]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def history(memory: Memory, rel: str) -> list[FileCommit]:
    """Every commit touching `rel`, newest first."""
    rel = memory.store.check_path(rel)
    if getattr(memory.store, "repo", "missing") is None:
        raise NoHistory(f"{memory.location} has no git history; run `memtui init --git` to start one")
    audit = audit_by_commit(memory.store.audit_records())
    out = []
    for c in memory.store.history(rel):
        t = trailers(c.message)
        recs = [r for r in audit.get(c.sha, []) if r.get("file") in (rel, None) or r.get("to") == rel]
        first = recs[0] if recs else {}
        out.append(FileCommit(
            commit=c.sha, time=_iso(c.time), author=c.author, actor=t.get("actor") or first.get("actor") or c.author,
            proposal=t.get("proposal") or first.get("proposal"), approved_by=t.get("approved-by"),
            subject=c.message.split("\n", 1)[0], action=first.get("action"), audit=recs,
        ))
    return out


@dataclass
class BlameLine:
    """Who wrote one line of a file: the commit, its author and time, the actor and the proposal behind it."""

    line: int
    text: str
    commit: str | None
    author: str | None
    time: str | None
    actor: str | None
    proposal: str | None
    approved_by: str | None
    action: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def blame(memory: Memory, rel: str) -> list[BlameLine]:
    """Per line of the file as it is on disk now; lines not yet committed have no commit (actor "uncommitted")."""
    rel = memory.store.check_path(rel)
    repo = _repo(memory)
    data = memory.store.read(rel)
    if data is None:
        raise FileNotFoundError(f"{rel} does not exist")
    import git

    try:
        chunks = repo.blame(None, rel)
    except git.GitCommandError:
        chunks = None  # never committed: every line is new
    text_lines = data.decode("utf-8", errors="replace").splitlines()
    if chunks is None:
        return [BlameLine(i + 1, t, None, None, None, "uncommitted", None, None, None)
                for i, t in enumerate(text_lines)]
    audit = audit_by_commit(memory.store.audit_records())
    cache: dict[str, tuple] = {}
    out: list[BlameLine] = []
    for commit, lines in chunks:
        sha = commit.hexsha
        if sha not in cache:
            if set(sha) == {"0"}:
                cache[sha] = (None, None, None, "uncommitted", None, None, None)
            else:
                t = trailers(commit.message)
                recs = [r for r in audit.get(sha, []) if r.get("file") == rel or r.get("to") == rel]
                first = recs[0] if recs else {}
                cache[sha] = (sha, commit.author.name, _iso(commit.authored_date),
                              t.get("actor") or first.get("actor") or commit.author.name,
                              t.get("proposal") or first.get("proposal"), t.get("approved-by"), first.get("action"))
        for text in lines:
            if isinstance(text, bytes):
                text = text.decode("utf-8", errors="replace")
            out.append(BlameLine(len(out) + 1, text, *cache[sha]))
    return out


def commit_diff(repo: Any, sha: str, rel: str | None = None) -> str:
    """The patch one commit made (to one file, when given)."""
    args = ["--format=", "--no-renames", "--no-color", sha]
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
            text = repo.git.show("--format=%x01%H", "--no-renames", "--no-color", *shas[i:i + chunk])
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


def first_changed_line(diff: str) -> int | None:
    """The line (1-based, in the new file) a diff's first change lands on: where to jump to see it."""
    new = None
    for line in diff.splitlines():
        m = HUNK.match(line)
        if m:
            new = int(m.group(1))
            continue
        if new is None:
            continue
        if line.startswith("+"):
            return new
        if line.startswith("-"):
            return max(new, 1)
        if line.startswith(" "):
            new += 1
    return None


# undo ---------------------------------------------------------------------------------------------------------
def _blob(commit: Any, rel: str) -> bytes | None:
    try:
        return (commit.tree / rel).data_stream.read()
    except KeyError:
        return None


def _merge(repo: Any, ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
    """Three-way merge with `git merge-file`; None when the two sides conflict."""
    with tempfile.TemporaryDirectory(prefix="memtui-revert-") as tmp:
        paths = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            paths.append(path)
        status, out, _ = repo.git.execute(
            ["git", "merge-file", "-p", "--quiet", *paths], with_extended_output=True, with_exceptions=False,
            stdout_as_string=False, strip_newline_in_stdout=False,
        )
    return out if status == 0 else None


def _person_only(memory: Memory, by: str, what: str) -> WriteResult | None:
    if memory.config.policy.is_agent(by):
        return WriteResult("refused", f"{by} is an agent; {what} is a person's decision. Propose the change instead "
                                      "(memory_update), and a person will review it.")
    return None


def _audit(memory: Memory, action: str, rel: str, by: str, status: str, commit: str | None, **extra: Any) -> None:
    record = {"ts": clock.now().isoformat(timespec="seconds"), "actor": by, "action": action, "file": rel,
              "section": None, "entry": None, "replaces": None, "provenance": None, "source": None,
              "commit": commit, "status": status, "proposal": None, "decided_by": by}
    record.update(extra)
    try:
        memory.store.audit_append(record)
    except OSError:
        pass  # as in the write path: an unwritable audit log must not turn an undo into a crash


def _dirty(memory: Memory, paths: Iterable[str]) -> list[str]:
    wanted = set(paths)
    return sorted(ch.path for ch in memory.store.external_changes() if ch.path in wanted)


def _refuse(memory: Memory, action: str, rel: str | None, by: str, message: str, status: str = "refused",
            **extra: Any) -> WriteResult:
    _audit(memory, action, rel or "", by, status, None, reason=message, **extra)
    return WriteResult(status, message, None, rel)


def _write_and_commit(memory: Memory, results: dict[str, bytes | None], message: str, by: str) -> tuple[str, str]:
    """Write every file's new bytes (None deletes it), then one commit; returns (commit, diff)."""
    from memtui.core.update import unified_diff

    store = memory.store
    diff = []
    for rel, data in results.items():
        before = store.read(rel)
        if data is None:
            store.delete(rel)
        else:
            store.write(rel, data)
        diff.append(unified_diff(rel, _text(before), _text(data)))
    sha = store.commit(list(results), message, by)
    return sha or "", "".join(diff)


def _text(b: bytes | None) -> str | None:
    return None if b is None else b.decode("utf-8", errors="replace")


def revert(memory: Memory, commit: str, by: str | None = None) -> WriteResult:
    """A new commit that reverses `commit` for the memory files it touched; refused if later changes conflict."""
    from memtui.core.memory import default_actor

    by = by or default_actor()
    if (refusal := _person_only(memory, by, "undo")) is not None:
        return refusal
    repo = _repo(memory)
    import git

    with memory.store.lock():
        try:
            target = repo.commit(commit)
        except (git.BadName, ValueError, git.GitCommandError):
            return _refuse(memory, "revert", None, by, f"no commit {commit!r}; `memtui history FILE` lists them",
                           reverts=commit)
        sha = target.hexsha
        if len(target.parents) != 1:
            why = "it is the first commit (nothing before it to go back to; use restore)" if not target.parents \
                else "it is a merge commit"
            return _refuse(memory, "revert", None, by, f"cannot revert {sha[:8]}: {why}", reverts=sha)
        parent = target.parents[0]
        changed = repo.git.diff_tree("--no-commit-id", "--name-only", "-r", "--no-renames", "-z", sha).split("\0")
        files = []
        for rel in filter(None, changed):
            try:
                files.append(memory.store.check_path(rel))
            except Exception:
                continue  # memtui's own bookkeeping (.memtui/…) is not memory: undo leaves it alone
        if not files:
            return _refuse(memory, "revert", None, by, f"{sha[:8]} changed no memory files", reverts=sha)
        dirty = _dirty(memory, files)
        if dirty:
            return _refuse(memory, "revert", dirty[0], by,
                           f"{', '.join(dirty)} has uncommitted changes; approve or reject them first "
                           "(`memtui queue list`), then revert", reverts=sha)
        head = repo.head.commit
        results: dict[str, bytes | None] = {}
        conflicts = []
        for rel in files:
            base, theirs, ours = _blob(target, rel), _blob(parent, rel), _blob(head, rel)
            if ours == theirs:
                continue  # already as it was before that change
            if ours == base:
                results[rel] = theirs
            elif ours is None or base is None or theirs is None:
                conflicts.append(rel)
            else:
                merged = _merge(repo, ours, base, theirs)
                if merged is None:
                    conflicts.append(rel)
                else:
                    results[rel] = merged
        subject = target.message.split("\n", 1)[0]
        if conflicts:
            return _refuse(
                memory, "revert", conflicts[0], by,
                f"cannot revert {sha[:8]} ({subject}): {', '.join(conflicts)} changed since in the same lines. "
                "Nothing was written; restore an earlier version (`memtui restore`) or edit by hand.",
                status="conflict", reverts=sha)
        if not results:
            return WriteResult("applied", f"{sha[:8]} is already undone; nothing to change", None, files[0])
        message = (f"revert {sha[:8]}: {subject}"[:200] + f"\n\nMemtui-Actor: {by}\nMemtui-Reverts: {sha}\n")
        new, diff = _write_and_commit(memory, results, message, by)
        for rel, data in results.items():
            _audit(memory, "revert", rel, by, "applied", new, reverts=sha, after_hash=content_hash(data))
    return WriteResult("applied", f"reverted {sha[:8]} ({subject}) as {new[:8]}.", None, next(iter(results)),
                       None, None, new, diff)


def restore(memory: Memory, rel: str, commit: str, by: str | None = None) -> WriteResult:
    """Put one file back to its version at `commit`, as a new commit."""
    from memtui.core.memory import default_actor

    by = by or default_actor()
    if (refusal := _person_only(memory, by, "restoring a file")) is not None:
        return refusal
    rel = memory.store.check_path(rel)
    repo = _repo(memory)
    import git

    with memory.store.lock():
        try:
            target = repo.commit(commit)
        except (git.BadName, ValueError, git.GitCommandError):
            return _refuse(memory, "restore", rel, by, f"no commit {commit!r}; `memtui history {rel}` lists them")
        data = _blob(target, rel)
        if data is None:
            return _refuse(memory, "restore", rel, by,
                           f"{rel} did not exist at {target.hexsha[:8]}; `memtui history {rel}` lists its versions",
                           restored_from=target.hexsha)
        if _dirty(memory, [rel]):
            return _refuse(memory, "restore", rel, by, f"{rel} has uncommitted changes; approve or reject them "
                                                        "first (`memtui queue list`)", restored_from=target.hexsha)
        if memory.store.read(rel) == data:
            return WriteResult("applied", f"{rel} is already as it was at {target.hexsha[:8]}", None, rel)
        message = (f"restore {rel} to {target.hexsha[:8]}\n\nMemtui-Actor: {by}\n"
                   f"Memtui-Restored-From: {target.hexsha}\n")
        new, diff = _write_and_commit(memory, {rel: data}, message, by)
        _audit(memory, "restore", rel, by, "applied", new, restored_from=target.hexsha,
               after_hash=content_hash(data))
    return WriteResult("applied", f"restored {rel} to {target.hexsha[:8]} as {new[:8]}.", None, rel, None, None,
                       new, diff)


def last_change(memory: Memory, actor: str | None = None) -> dict[str, Any] | None:
    """The newest applied change (by `actor`, when given) that is not itself an undo and not undone already."""
    records = list(memory.store.audit_records())
    undone = {r.get("reverts") for r in records if r.get("action") == "revert" and r.get("status") == "applied"}
    for rec in reversed(records):
        if rec.get("status") != "applied" or not rec.get("commit") or rec.get("action") == "revert":
            continue
        if rec["commit"] in undone:
            continue
        if actor is not None and rec.get("actor") != actor:
            continue
        return rec
    return None


def undo_last(memory: Memory, by: str | None = None, actor: str | None = None) -> WriteResult:
    """Revert the last applied change (the last by `actor`, when given). Pressing it again undoes the one before."""
    rec = last_change(memory, actor)
    if rec is None:
        who = f" by {actor}" if actor else ""
        return WriteResult("refused", f"no applied change{who} to undo")
    return revert(memory, rec["commit"], by)
