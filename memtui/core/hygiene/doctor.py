"""memtui doctor: find, and with fix=True repair, what a crash, a full disk or a stray editor leaves in a memory root.

Each check reports a `Finding`; repairs never drop bytes: torn audit lines and unreadable queue files are moved
to `.memtui/corrupt/` and `.memtui/queue/corrupt/`, an applied write that lost its commit is committed, and a
memtui commit that lost its audit line gets one (marked ``"recovered": "doctor"``).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memtui.core.basics import clock
from memtui.core.basics.jsontext import loads
from memtui.core.basics.visible import visible
from memtui.core.storage.folder import (
    AUDIT_FILE, STATE_DIR, UNDO_DIR, FolderStore, atomic_write, clear_stale_git_locks, git_lock_files,
)
from memtui.core.storage.gitobjects import GitUnreadable
from memtui.core.storage.store import LockTimeout, StoreError, content_hash
from memtui.core.writing import audit
from memtui.core.writing.memory import Memory
from memtui.core.writing.proposals import APPLIED, PENDING, Proposal, unsealed_reason

_LOOSE_NAME = re.compile(r"[0-9a-f]{38}")  # what git counts in objects/17 (too_many_loose_objects)
TEMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")
TRAILER = re.compile(r"^(Memtui-[A-Za-z-]+):[ \t]*(.*)$", re.M)
# Seconds doctor waits for the memory lock before reporting who holds it.
LOCK_WAIT = 10.0
# A queue file younger than this may be a proposal being saved right now (queue saves take no lock).
QUEUE_GRACE = 10.0


@dataclass
class Finding:
    kind: str
    message: str
    path: str | None = None
    fixable: bool = True
    fixed: bool = False
    advice: bool = False  # a setting the person may make, not a problem: `ok` stays true


@dataclass
class DoctorReport:
    root: str
    findings: list[Finding] = field(default_factory=list)
    where: str = ""  # where history is kept (memtui.core.storage.places), for a folder memory

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if not f.fixed and not f.advice]

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"root": self.root, "ok": self.ok, "findings": [asdict(f) for f in self.findings],
                **({"where": self.where} if self.where else {})}

    def render(self) -> str:
        head = [f"{self.root}: {self.where}"] if self.where else []
        if not self.findings:
            return "\n".join(head + [f"{self.root}: no problems found"])
        lines = head
        for f in self.findings:
            mark = "advice" if f.advice else "fixed" if f.fixed else ("found" if f.fixable else "needs you")
            lines.append(f"{mark:9} {f.kind}: {f.message}")
        left = len(self.problems)
        done = "all repaired" if any(f.fixed for f in self.findings) else "no problems found"
        tail = done if not left else f"{left} problem(s) left" + (
            "; run `memtui doctor --fix` to repair" if any(f.fixable for f in self.problems) else "")
        return "\n".join(lines + [tail])


def diagnose(memory: Memory, *, fix: bool = False, lock_wait: float = LOCK_WAIT) -> DoctorReport:
    """Check a memory root; with `fix`, repair what can be repaired (under the memory lock).

    Never hangs: a memory lock still held after `lock_wait` seconds is reported (with its holder) instead of
    waited for, and every git call is bounded (memtui.core.storage.gitcall)."""
    store = memory.store
    report = DoctorReport(store.location)
    if memory.config.error:
        report.findings.append(Finding("config-invalid", memory.config.error, ".memtui/config.toml", fixable=False))
    if memory.config.pending:
        report.findings.append(Finding("config-uncommitted", memory.config.pending, ".memtui/config.toml",
                                       fixable=False))
    if not isinstance(store, FolderStore):
        _check_legacy_keys(store, report, fix)
        _check_intent(memory, report, fix)
        _check_queue(memory, report, fix, None)
        _check_readable(memory, report)
        _check_secrets(memory, report)
        return report
    report.where = store.where()
    _check_lock_file(store, report, fix)
    try:
        locked = store.lock(timeout=lock_wait)
        locked.__enter__()
    except LockTimeout:
        holder = _lock_holder(store)
        report.findings.append(Finding(
            "lock-stuck", f"the memory lock has been held for over {lock_wait:g}s by {holder}, so doctor checked "
            "nothing that needs it. If that process is stuck, stop it (kill its pid), then run `memtui doctor` "
            "again", f"{STATE_DIR}/lock", fixable=False))
        return report
    try:
        _check_git_locks(store, report, fix)
        # Before any git runs: git reads an index without checking its checksum, and one that refreshes it (`git
        # status`) writes the damage out again under a sound checksum. A damaged index is left as it is for the
        # person, and the checks that run git wait until it is rebuilt.
        index = _git_index(store)
        read = _check_git_index(store, index, report)
        healthy = not _index_damaged(report) and _check_git(store, report, fix)
        if healthy:
            _check_person_git(store, report)
        _check_temp_files(store, report, fix)
        _check_audit(store, report, fix)
        if healthy:
            _check_intent(memory, report, fix)
        records = list(store.audit_records())
        _check_queue(memory, report, fix, records)
        if healthy and store.repo is not None:
            _check_uncommitted(memory, report, fix, records)
            records = list(store.audit_records())
            _check_unaudited_commits(memory, report, fix, records)
    except StoreError as exc:
        kind = "git-stuck" if "did not answer" in str(exc) else "git-error"
        report.findings.append(Finding(kind, str(exc), ".git", fixable=False))
        return report
    finally:
        locked.__exit__(None, None, None)
    _check_index(store, report, fix)
    _check_readable(memory, report)
    if healthy:
        _check_secrets(memory, report)
    _check_watch(report)
    _check_commit_cost(store, report, index, read)
    _check_loose_objects(store, report)
    return report


def _check_person_git(store: FolderStore, report: DoctorReport) -> None:
    """What the person's own git is in the middle of, which memtui's writes wait for: an operation in progress (a
    merge, rebase, cherry-pick, revert, `git am`: memtui writes nothing until it is finished), files unmerged in
    git's index, and versions staged and not committed (memtui refuses to commit over them). Two plumbing gits that
    read only the index; nothing is changed."""
    from memtui.core.storage.folder import in_progress
    from memtui.core.storage.gitcall import plumbing_env, read_git

    doing = in_progress(store.git_dir)
    if doing is not None:
        what, marker, cont, abort = doing
        report.findings.append(Finding(
            "git-in-progress", f"a {what} is in progress here (git's {marker}): memtui writes and commits nothing "
            f"until it is done; finish it (`{cont}`) or abort it (`{abort}`). Pending proposals wait",
            f".git/{marker}", fixable=False))
    env = {**os.environ, **plumbing_env(store.git_dir, store.root)}
    listed = read_git(["ls-files", "--unmerged", "-z"], env, cwd=store.root)
    unmerged = sorted({rec.partition(b"\t")[2].decode("utf-8", "replace") for rec in listed[1].split(b"\0")
                       if rec} if listed is not None and listed[0] == 0 else set())
    if unmerged:
        report.findings.append(Finding(
            "git-unmerged", f"{len(unmerged)} file(s) are unmerged in git's index ({_names(unmerged)}): memtui "
            "writes none of them; resolve each and `git add` it, then finish the merge (or abort it)",
            unmerged[0], fixable=False))
    staged = read_git(["diff-index", "--cached", "--name-only", "-z", "--no-renames", "HEAD", "--"], env,
                      cwd=store.root)
    names = sorted({n.decode("utf-8", "replace") for n in staged[1].split(b"\0") if n} - set(unmerged)
                   if staged is not None and staged[0] == 0 else set())
    if names:
        report.findings.append(Finding(
            "git-staged", f"{len(names)} file(s) hold a version you staged and did not commit ({_names(names)}): "
            "memtui commits none of them until you commit (`git commit`) or unstage it (`git restore --staged "
            "FILE`), so your version is never replaced; other files are written as usual",
            names[0], fixable=False, advice=True))


def _names(rels: list[str], most: int = 5) -> str:
    shown = ", ".join(visible(rel) for rel in rels[:most])
    return shown + (f" and {len(rels) - most} more" if len(rels) > most else "")


def _check_loose_objects(store: FolderStore, report: DoctorReport) -> None:
    """Advice when the loose objects pass git's `gc.auto` (6,700 unless set; 0 turns it off), estimated as git
    estimates it, from the one fan-out folder `objects/17`. git's own `git commit` then runs `git gc --auto`;
    memtui commits in process and starts no maintenance by itself, so its commits leave every object loose: at
    100,000 files each approve leaves ~0.4 MB, most of it the tree of the folder it changed, which a pack keeps as a
    delta of a few bytes."""
    from memtui.core.storage.gitcall import read_git
    from memtui.core.storage.gitobjects import common_dir

    objects = common_dir(store.git_dir) / "objects"
    try:
        sample = sum(1 for e in os.scandir(objects / "17") if _LOOSE_NAME.fullmatch(e.name))
    except OSError:
        return
    # git's config as the person's git reads it (memtui's own git calls set gc.auto=0 above it): reading a value runs
    # no code from the repository
    env = {**os.environ, "GIT_DIR": str(store.git_dir)}
    done = read_git(["config", "--int", "--get", "gc.auto"], env)
    limit = 6700
    if done is not None and done[0] == 0 and done[1].strip().lstrip(b"-").isdigit():
        limit = int(done[1])
    if limit <= 0 or sample <= (limit + 255) // 256:
        return
    report.findings.append(Finding(
        "loose-objects", f"about {sample * 256:,} git objects are loose (git's gc.auto is {limit:,}): memtui's "
        "commits start no `git gc`, which `git commit` would. Run `git gc` here, best while no agent is writing",
        ".git/objects", fixable=False, advice=True))


# Past this many bytes of git index (~40,000 files), doctor suggests the setting that makes a commit cheaper.
BIG_INDEX = 4_000_000


def _git_index(store: FolderStore) -> tuple[int, bytes | None] | None:
    """.git/index's size and bytes (None past 64 MB: not read, and its bytes are no reason to hold that much); None
    when there is no regular file there (a planted link is not followed, a FIFO not waited on)."""
    try:
        fd = os.open(store.git_dir / "index", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        size = st.st_size
        return size, (_read_whole(fd, size) if size <= 64 << 20 else None)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_whole(fd: int, size: int) -> bytes:
    chunks = []
    while size > 0 and (chunk := os.read(fd, size)):
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _check_git_index(store: FolderStore, index: tuple[int, bytes | None] | None,
                     report: DoctorReport) -> tuple[int, bytes, bytes] | None:
    """git's index must be one git can read: its header, a version git writes (2 to 4), bytes that match its
    checksum (index.skipHash's zero trailer is not checked), and entries git can walk (git itself reads it). A power
    cut, a full disk or a tool writing it in place can leave it damaged: git then dies on every command ("index
    file corrupt"), or, where only the checksum is wrong (git checks it in `git fsck` only), reads it and writes the
    damage out again; memtui refuses to commit over it. What git said when it read the index is returned."""
    from memtui.core.storage.folder import REBUILD_INDEX
    from memtui.core.storage.gitindex import Damaged, _checksum_ok

    if index is None:
        return None
    data = index[1]
    why = None
    if data is not None:
        if len(data) < 32 or data[:4] != b"DIRC":
            why = "it is not a git index" if data[:4] != b"DIRC" else "it is cut short"
        elif int.from_bytes(data[4:8], "big") not in (2, 3, 4):
            why = f"its version, {int.from_bytes(data[4:8], 'big')}, is none git writes"
        else:
            try:
                _checksum_ok(data)  # (index.skipHash's zero trailer: not checked)
            except Damaged:
                why = "its bytes do not match its checksum"
    read = _git_reads_index(store) if why is None else None
    said = read[2].decode("utf-8", "replace").strip().splitlines() if read is not None and read[0] != 0 else []
    if any("index" in line for line in said):  # (not a git that fails for another reason: a garbage HEAD, …)
        why = f"git cannot read it ({visible(said[-1][:200])})"
    if why is not None:
        report.findings.append(Finding(
            "git-index-damaged", f"git's index (.git/index) is damaged: {why}. memtui commits nothing over it. "
            f"{REBUILD_INDEX}", ".git/index", fixable=False))
    return read


def _index_damaged(report: DoctorReport) -> bool:
    return any(f.kind == "git-index-damaged" for f in report.findings)


def _check_commit_cost(store: FolderStore, report: DoctorReport, index: tuple[int, bytes | None] | None,
                       read: tuple[int, bytes, bytes] | None) -> None:
    """Advice for a big memory: every commit rewrites git's whole index (9.7 MB at 100,000 files). A split index
    makes a commit write only the entries changed since the shared index. memtui edits a split index in process as
    git does, but does not split one by itself: libgit2, isomorphic-git and GitPython cannot read it. (The trees a
    commit writes cost little since they are compressed in segments, `gitobjects.Deflates`: storing them
    uncompressed, `core.looseCompression 0`, gained ~3% at 100,000 files for ~1.8× the room, and is not advised.)"""
    from memtui.core.storage.gitindex import link_of

    if index is None or _index_damaged(report):
        return
    size, data = index
    # small, or split already (`link_of` reads a version-2 index without extended flags; git says for any other)
    if size < BIG_INDEX or (data and link_of(data) is not None) or (read is not None and read[1].strip()):
        return
    report.findings.append(Finding(
        "commits-slow", f"every commit here rewrites git's {size / 1e6:.1f} MB index. For a memory this big, run "
        "`git update-index --split-index` (each commit then writes the entries changed since, not all): at 100,000 "
        "files propose + approve went from ~29/s to ~63/s here. memtui does not split the index itself: libgit2, "
        "isomorphic-git and GitPython cannot read a split index",
        ".git/index", fixable=False, advice=True))


def _git_reads_index(store: FolderStore) -> tuple[int, bytes, bytes] | None:
    """git reading the index (`git rev-parse --shared-index-path`: its path when the index is split, else nothing),
    as (exit status, out, err); None when git did not answer. memtui's own git settings: no fsmonitor hook runs."""
    from memtui.core.storage.gitcall import plumbing_env, read_git

    env = {**os.environ, **plumbing_env(store.git_dir, store.root)}
    return read_git(["rev-parse", "--shared-index-path"], env, cwd=store.root)


def _check_watch(report: DoctorReport) -> None:
    """On Linux the folder watch is memtui's own (`inotify_watch`: a walk that follows no link), over the
    `inotify_simple` binding; without it watchdog's Observer watches, whose walk an agent's planted link can lead
    astray (a stale index or live diff). Any watchdog of the major version memtui asks for will do: only its public
    API is used. Said here, not at every start."""
    import sys

    from memtui.core.writing.changes import hardened_walk

    if sys.platform.startswith("linux") and not hardened_walk():
        report.findings.append(Finding(
            "watch-unhardened", "the inotify binding memtui's folder watch is built on (inotify_simple) is not "
            "installed: files are watched by watchdog's own walk, which follows a folder an agent swaps for a link. "
            "Install it: pip install 'inotify_simple>=2,<3'", "", fixable=False))


def _check_legacy_keys(store: Any, report: DoctorReport, fix: bool) -> None:
    """A Redis memory with keys left in the layout before the hash tag (``p:…``, written by an older memtui)."""
    legacy = getattr(store, "legacy_keys", None)
    if legacy is None:
        return
    left = legacy()
    if not left:
        return
    f = Finding("legacy-keys", f"{len(left)} key(s) of this memory are in the layout before the hash tag "
                f"({left[0]}…); stop any older memtui writing to it, then `memtui doctor --fix` moves them to "
                f"{store.base}:…", left[0])
    if fix:
        counts = store.migrate_legacy()
        f.fixed = True
        f.message = (f"moved {counts['moved']} key(s) to {store.base}:… ({counts['same']} were already there"
                     + (f"; {counts['kept']} differed and are kept as {store.base}:legacy:… for you to compare)"
                        if counts["kept"] else ")"))
    report.findings.append(f)


def _check_readable(memory: Memory, report: DoctorReport) -> None:
    """Memory files memtui cannot read (not UTF-8, binary, no permission): every reader leaves them out, so the
    person converts them; nothing here rewrites a file whose encoding it would have to guess."""
    from memtui.core.storage.readable import read_problem

    for rel in memory.files():
        problem = read_problem(memory.store, rel)
        if problem:
            report.findings.append(Finding("unreadable-file", problem, rel, fixable=False))


def _check_secrets(memory: Memory, report: DoctorReport) -> None:
    """A credential in a file as last recorded (the commit at HEAD on a folder): it is in history, and in every
    clone and sync of it. memtui does not rewrite history; the finding says how the person does it."""
    from memtui.core.writing import secrets

    try:
        files = memory.files()
        recorded = memory.base_bytes(files) if files else {}
    except (OSError, StoreError, ValueError):
        return  # the other checks say why the memory cannot be read
    folder = isinstance(memory.store, FolderStore) and memory.store.has_git
    for rel, data in sorted(recorded.items()):
        found = secrets.scan(data.decode("utf-8", errors="replace")) if data else []
        if not found:
            continue
        what = "; ".join(f"{s.kind} ({s.masked}) at line {s.line}" for s in found)
        if folder:
            how = (f"Treat the key as leaked: rotate it first. Then remove it from {rel} (`memtui update SECTION "
                   f"remove …` or your editor) and purge it from history, which memtui does not do for you: put "
                   f"the key in a file as `KEY==>REMOVED` and run `git filter-repo --replace-text FILE` (or "
                   f"`git filter-repo --path {rel} --invert-paths` to drop the file's whole history), or with plain "
                   f"git `git filter-branch --tree-filter \"sed -i 's/KEY/REMOVED/g' {rel}\" -- --all`; then "
                   "force-push every remote and have every clone cloned again")
        else:
            how = (f"Treat the key as leaked: rotate it first. Then remove it from {rel} (`memtui update SECTION "
                   "remove …`); the store's recorded history keeps the version holding it until it is deleted there")
        report.findings.append(Finding("secret-in-history", f"{rel} as last recorded holds {what}. {how}", rel,
                                       fixable=False))


def _check_index(store: FolderStore, report: DoctorReport, fix: bool) -> None:
    """The search index (a cache of the files): files it lacks or still lists, or a file that is no database."""
    try:
        from memtui.core.recall.index import INDEX_FILE, Index, IndexUnavailable, walk
    except ImportError:
        return
    if not (store.state / INDEX_FILE).exists():
        return  # built on the first search
    index = Index(store.root)
    try:
        try:
            known = set(index.files())
            problem = None
        except Exception as exc:  # sqlite raises DatabaseError and others for a damaged file
            known, problem = set(), f"unreadable ({type(exc).__name__}: {exc})"
        on_disk = set(walk(store.root))
        if problem is None and known == on_disk:
            if not fix:
                return
            stats = index.refresh()  # catches edits to files it knows (by mtime and size)
            if stats.touched:
                report.findings.append(Finding("index-out-of-date", f"the search index was behind on "
                                               f"{stats.touched} file(s); refreshed", INDEX_FILE, fixed=True))
            return
        f = Finding("index-out-of-date", f"the search index is {problem}" if problem else
                    f"the search index lacks {len(on_disk - known)} file(s) and still lists {len(known - on_disk)} "
                    "gone", f"{STATE_DIR}/{INDEX_FILE}")
        if fix:
            try:
                index.refresh()
                f.fixed = True
            except IndexUnavailable as exc:
                f.message += f"; could not rebuild it: {exc}"
        report.findings.append(f)
    finally:
        index.close()


# locks ----------------------------------------------------------------------------------------------------------
def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_lock_file(store: FolderStore, report: DoctorReport, fix: bool) -> None:
    path = store.state / "lock"
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:  # missing, or a symlink planted there: the next write replaces it, never truncating its target
        return
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        os.close(fd)
        return
    try:
        text = os.pread(fd, 64, 0).decode(errors="replace").strip()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                report.findings.append(Finding(
                    "lock-held", f"the memory lock is held by a live process ({text or 'pid unknown'}); "
                    "doctor waits for it", str(path), fixable=False, fixed=True))
                return
            raise
        try:
            if text and text.isdigit():
                pid = int(text)
                state = "dead" if not _pid_alive(pid) else "alive but no longer holding it"
                f = Finding("stale-lock", f"the lock file names pid {pid}, which is {state}: a writer died "
                            "holding the lock", str(path))
                if fix:
                    os.ftruncate(fd, 0)
                    f.fixed = True
                report.findings.append(f)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _lock_holder(store: FolderStore) -> str:
    try:  # never through a link planted there, nor waiting on a FIFO
        fd = os.open(store.state / "lock", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with open(fd, "rb") as f:
            text = f.read(64).decode(errors="replace").strip() if os.fstat(fd).st_nlink == 1 else ""
    except OSError:
        text = ""
    if text.isdigit():
        return f"pid {text}" + ("" if _pid_alive(int(text)) else " (not running: the lock is held by another "
                                "thread of this process or a process that inherited it)")
    return "another memtui thread or process (pid unknown)"


def _check_git_locks(store: FolderStore, report: DoctorReport, fix: bool) -> None:
    git_dir = store.git_dir
    if not git_dir.is_dir():
        return
    stale = git_lock_files(git_dir)
    if not stale:
        return
    removed = set(clear_stale_git_locks(git_dir)) if fix else set()
    for lock in stale:
        rel = str(lock.relative_to(store.root)) if lock.is_relative_to(store.root) else str(lock)
        report.findings.append(Finding("stale-git-lock", f"{rel} was left by a writer killed mid-commit; every "
                                       "later commit fails until it is removed", rel, fixed=lock in removed))


# git --------------------------------------------------------------------------------------------------------------
def _check_git(store: FolderStore, report: DoctorReport, fix: bool) -> bool:
    git_dir = store.git_dir
    if store.places.beside:
        from memtui.core.storage.places import orphaned

        for state, old in orphaned():
            report.findings.append(Finding(
                "state-left-behind", f"memtui state for {old!r}, a folder no longer there, is kept at {state}; if "
                f"that folder is now {store.root}, run `memtui moved {old} {store.root}` (in quotes if it has "
                "spaces) to keep its history, else remove the state folder", str(state), fixable=False,
                advice=True))
    if store.places.recording():
        report.findings.append(Finding(
            "history-recording", f"{store.root}: history is being recorded (baseline in progress): memtui took note "
            f"of the folder's files when it first opened it and is writing them into its history beside the folder "
            f"({git_dir}); anything changed since that first look comes up for review. Nothing to do: run `memtui "
            "doctor` again in a minute to see it whole", str(git_dir), fixable=False, advice=True))
        return True
    if store.places.own_history and not store.has_git:
        f = Finding("no-history", f"{store.root} has no history yet: memtui keeps it beside the folder "
                    f"({git_dir}) and starts it when the memory is first opened for review or written; `memtui "
                    "doctor --fix` starts it now (nothing is written into the folder)", str(git_dir))
        if fix:
            f.fixed = store.ensure_history() is not None
        report.findings.append(f)
        return True
    if not store.has_git:
        report.findings.append(Finding(
            "no-git", f"{store.root} has no git repository, so writes have no history or undo; run "
            f"`memtui init --git {store.root}` to start one", ".git", fixable=False))
        return True
    try:
        with store.git("checking the repository") as repo:
            if repo.head.is_valid():
                repo.head.commit.tree  # noqa: B018 - reading the tree proves HEAD's objects exist
            elif any((git_dir / "refs" / "heads").glob("*")) or (git_dir / "packed-refs").exists():
                raise ValueError("HEAD names a branch whose commit cannot be read (objects missing?)")
        store.external_changes()
        return True
    except GitUnreadable as exc:  # git's own files as git would read them: the message says what to do
        report.findings.append(Finding("git-unreadable", str(exc), ".git", fixable=False))
        return False
    except (StoreError, ValueError, OSError) as exc:
        problem = str(exc)
    except Exception as exc:  # gitpython raises many unrelated types for a damaged repository
        problem = f"{type(exc).__name__}: {exc}"
    if "did not answer" in problem:
        report.findings.append(Finding("git-stuck", problem, ".git", fixable=False))
        return False
    if "diskspace" in problem.lower() or "no space" in problem.lower():
        report.findings.append(Finding("disk-full", "the disk is full: git cannot write even to read the "
                                       "repository; free some space and run `memtui doctor` again", ".git",
                                       fixable=False))
        return False
    f = Finding("git-corrupt", f"the git repository is damaged ({problem[:300]})", ".git")
    head = git_dir / "HEAD"
    branches = sorted(p.name for p in (git_dir / "refs" / "heads").glob("*") if p.is_file()) \
        if (git_dir / "refs" / "heads").is_dir() else []
    head_text = head.read_text(errors="replace") if head.exists() else ""
    if not head_text.startswith("ref: ") and branches:
        branch = "main" if "main" in branches else branches[0]
        f.message += f"; .git/HEAD is garbage and can point back at refs/heads/{branch}"
        if fix:
            atomic_write(head, f"ref: refs/heads/{branch}\n".encode())
            store.forget_git()
            try:
                with store.git("checking the repository") as repo:
                    repo.head.commit.tree  # noqa: B018
                f.fixed = True
            except Exception as exc:  # still damaged: say so
                f.message += f"; still unreadable after that ({type(exc).__name__})"
    else:
        f.fixable = False
        f.message += "; restore .git from a backup or move it aside and run `memtui init --git`"
    report.findings.append(f)
    return f.fixed


# interrupted writes, temp files ----------------------------------------------------------------------------------
def _check_intent(memory: Memory, report: DoctorReport, fix: bool) -> None:
    if memory.store.intent_load() is None:
        return
    f = Finding("interrupted-write", "a write was interrupted (the writer crashed between writing the file, "
                "committing and auditing)", f"{STATE_DIR}/intent.json")
    if fix:
        done = memory.recover()
        f.message += f": {done}" if done else ""
        f.fixed = True
    report.findings.append(f)


def _check_temp_files(store: FolderStore, report: DoctorReport, fix: bool) -> None:
    now = time.time()
    for dirpath, dirnames, filenames in os.walk(store.root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        in_queue = Path(dirpath) == store.queue_dir
        in_undo = Path(dirpath) == store.state / UNDO_DIR
        for name in filenames:
            if not TEMP_NAME.match(name) and not in_undo:
                continue
            path = Path(dirpath) / name
            try:
                age = now - path.lstat().st_mtime
            except FileNotFoundError:
                continue
            if in_queue and age < QUEUE_GRACE:
                continue  # a proposal being saved right now
            rel = str(path.relative_to(store.root))
            f = Finding("temp-file", f"{rel} is a temp file a killed writer left (the real file is intact)", rel)
            if fix:
                path.unlink(missing_ok=True)
                f.fixed = True
            report.findings.append(f)


# audit log ------------------------------------------------------------------------------------------------------
def _check_audit(store: FolderStore, report: DoctorReport, fix: bool) -> None:
    from memtui.core.storage.folder_state import audit_for_reading

    path = store.audit_path
    fd = audit_for_reading(path)
    if fd is None:
        if os.path.lexists(path):
            # Never read through it (a link to a file outside would be copied into `corrupt/`; a FIFO never answers).
            report.findings.append(Finding("audit-not-a-file", f"{AUDIT_FILE} is not a file of its own (a symlink, a "
                                           "hard link or a FIFO someone put in its place); memtui reads nothing "
                                           "through it and sets it aside at its next write", AUDIT_FILE, False))
        return
    with open(fd, "rb") as f:
        data = f.read()
    good: list[bytes] = []
    bad: list[bytes] = []
    for line in data.splitlines(keepends=True):
        body = line.strip()
        if not body:
            continue
        try:
            if not isinstance(loads(body), dict):
                raise ValueError
            good.append(body + b"\n")
        except ValueError:
            bad.append(line)
    torn_tail = bool(data) and not data.endswith(b"\n")
    if not bad and not torn_tail:
        return
    f = Finding("torn-audit", f"{AUDIT_FILE} has {len(bad)} unreadable line(s)" + (
        " and ends mid-line" if torn_tail else "") + " (a writer killed mid-append or a full disk)", AUDIT_FILE)
    if fix:
        if bad:
            aside = store.kept.own_folder("corrupt") / f"{AUDIT_FILE}.{clock.now():%Y%m%dT%H%M%S}.{os.getpid()}"
            atomic_write(aside, b"".join(bad))
            f.message += f"; set aside in {aside.relative_to(store.root) if store.places.inside else aside}"
        # Refusals append without the lock; rewrite only if nobody appended meanwhile.
        if path.stat().st_size == len(data):
            atomic_write(path, b"".join(good))
            f.fixed = True
    report.findings.append(f)


# queue --------------------------------------------------------------------------------------------------------------
def _check_queue(memory: Memory, report: DoctorReport, fix: bool, records: list[dict[str, Any]] | None) -> None:
    store = memory.store
    decided: dict[str, dict[str, Any]] = {}
    for r in records if records is not None else list(store.audit_records()):
        if r.get("proposal") and r.get("status") in ("applied", "rejected"):
            decided[r["proposal"]] = r
    for pid in store.queue_ids():
        data = store.queue_load(pid)
        try:
            p = Proposal.from_json(data or b"")
        except (ValueError, TypeError):
            f = Finding("corrupt-queue", f"queue file {pid}.json is unreadable (half-written or corrupt)",
                        f"{STATE_DIR}/queue/{pid}.json")
            if isinstance(store, FolderStore):
                src = store.queue_dir / f"{pid}.json"
                if fix:
                    dest = store.kept.own_folder("queue/corrupt") / f"{pid}.json"  # never through a planted link
                    os.replace(src, dest)
                    f.message += f"; moved to {dest.relative_to(store.root)}"
                    f.fixed = True
            else:
                f.fixable = False
            report.findings.append(f)
            continue
        foreign = unsealed_reason(data or b"") if p.open and pid not in decided else None
        if foreign is not None:  # never approvable: the person rejects it (and has it proposed again if wanted)
            report.findings.append(Finding(
                "queue-not-sealed", f"{pid} is open, but {foreign}: it cannot be approved; reject it (`memtui queue "
                f"reject {pid} --reason …`) and have it proposed again if it is wanted", f"{STATE_DIR}/queue/{pid}.json",
                fixable=False))
        r = decided.get(pid)
        if r is not None and p.status == PENDING:
            f = Finding("queue-out-of-date", f"{pid} is pending in the queue but the audit log says "
                        f"{r['status']} (a crash between the two)", f"{STATE_DIR}/queue/{pid}.json")
            if fix:
                p.status, p.decided_by, p.commit = r["status"], r.get("decided_by"), r.get("commit")
                p.decided_at = r.get("ts")
                store.queue_save(pid, p.sealed_json())
                f.fixed = True
            report.findings.append(f)


# git against the audit log ------------------------------------------------------------------------------------------
def _trailers(message: str) -> dict[str, str]:
    return {k: v.strip() for k, v in TRAILER.findall(message)}


def _check_uncommitted(memory: Memory, report: DoctorReport, fix: bool, records: list[dict[str, Any]]) -> None:
    """Files that differ from HEAD although the audit log's last applied write for them produced these bytes."""
    store = memory.store
    assert isinstance(store, FolderStore)
    last: dict[str, dict[str, Any]] = {}
    for r in records:
        if r.get("status") == APPLIED and r.get("file"):
            last[r.get("to") or r["file"]] = r
    for ch in store.external_changes():
        r = last.get(ch.path)
        if r is None or r.get("after_hash") != content_hash(ch.after):
            continue
        if r.get("commit") and store.in_history(str(r["commit"])):
            continue  # that write was committed; the same bytes back on disk now are an external change
        f = Finding("uncommitted-write", f"{ch.path} holds an applied write ({r.get('action')} by "
                    f"{r.get('actor')}) that was never committed", ch.path)
        if fix:
            actor = str(r.get("actor") or "memtui")
            by = str(r.get("decided_by") or actor)
            trailers = [f"Memtui-Actor: {actor}"]
            if r.get("proposal"):
                trailers.append(f"Memtui-Proposal: {r['proposal']}")
            if by != actor:
                trailers.append(f"Memtui-Approved-By: {by}")
            try:
                sha = store.commit([ch.path], f"{r.get('action')} {ch.path} (committed by memtui doctor)\n\n"
                                   + "\n".join(trailers) + "\n", actor, by)
            except StoreError as exc:  # (a merge in progress, a version the person staged: it waits for them)
                f.message += f"; not committed now: {exc}"
                report.findings.append(f)
                continue
            store.audit_append(audit.record(
                APPLIED, actor=actor, action="commit", file=ch.path, commit=sha, proposal=r.get("proposal"),
                decided_by=by, reason="memtui doctor committed an applied write that had no commit",
                after_hash=r.get("after_hash"), recovered="doctor"))
            f.fixed = True
        report.findings.append(f)


def _check_unaudited_commits(memory: Memory, report: DoctorReport, fix: bool, records: list[dict[str, Any]]) -> None:
    store = memory.store
    assert isinstance(store, FolderStore)
    from memtui.core.writing.sync import arrived  # another machine's commits, merged by `memtui sync`: not this one's

    audited = {r.get("commit") for r in records if r.get("commit")} | arrived(memory)
    unaudited = [(c.sha, c.message) for c in store.past.log() if c.sha not in audited]
    for sha, message in unaudited:
        tr = _trailers(message)
        if "Memtui-Actor" not in tr:
            continue  # not a memtui write (the initial commit, or someone's own git commit)
        subject = message.splitlines()[0] if message else ""
        files = sorted(store.commit_files(sha))
        pid = tr.get("Memtui-Proposal")
        f = Finding("unaudited-commit", f"commit {sha[:8]} ({subject[:80]}) has no audit line (a crash "
                    "after the commit)", files[0] if files else None)
        if fix:
            action = subject.split(" ", 1)[0] if subject else "commit"
            actor = tr["Memtui-Actor"]
            p = None
            if pid:
                try:
                    p = Proposal.from_json(store.queue_load(pid) or b"")
                except (ValueError, TypeError):
                    p = None
            record = audit.record(
                APPLIED, actor=p.actor if p else actor, action=p.action if p else action,
                file=p.file if p else (files[0] if files else None), section=p.section if p else None,
                entry=p.entry if p else None, replaces=p.replaces if p else tr.get("Memtui-Replaces"),
                provenance=p.provenance if p else None, source=p.source if p else None, commit=sha, proposal=pid,
                decided_by=tr.get("Memtui-Approved-By", actor), recovered="doctor",
                reason="memtui doctor: audit line rebuilt from the commit")
            store.audit_append(record)
            if p is not None and p.open:
                p.status, p.decided_by, p.commit = APPLIED, record["decided_by"], sha
                store.queue_save(pid, p.sealed_json())
            f.fixed = True
        report.findings.append(f)
