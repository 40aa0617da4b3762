"""The folder store: memory files on disk, history in git (gitpython), audit in memory-log.jsonl.

Where memtui's state, the audit log and git live is decided by `memtui.core.places` alone: inside the folder for a
root made by `memtui init` (`.memtui/`, `memory-log.jsonl`, `.git`), beside it for any other folder (nothing of
memtui's is written into a folder it did not make). Writes are atomic (temp file in the same folder, fsync, rename)
and happen under an `fcntl` lock on the state folder's ``lock`` that every memtui process honours. git is imported
only when history is first needed.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import threading
import time
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Collection, Iterable, Iterator

from memtui.core.gitcall import GitOwner, timed_out
from memtui.core.gitobjects import GitUnreadable, removed_on_failure
from memtui.core.gitobjects import read_file as _read_plain
from memtui.core.gitobjects import tree_entries as _tree_entries
from memtui.core.paths import PathRefused, check_rel, clean_rel, plain_name, protected_name, resolve_inside
from memtui.core.folder_state import (  # noqa: F401 - names other modules import from here
    INTENT_FILE, QUEUE_ID, UNDO_DIR, FolderState, _put_floor, _queue_bytes, _regular_bytes, _seq_floor, atomic_write,
)
from memtui.core.folder_history import FolderHistory, _files_changed
from memtui.core.places import AUDIT_FILE, STATE_DIR, places_for
from memtui.core.record import Frozen
from memtui.core.store import Commit, ExternalChange, LockTimeout, Store, StoreError  # noqa: F401 (LockTimeout)

# Paths that are memtui's own bookkeeping, never memory content and never an external change.
PRIVATE = (STATE_DIR + "/", AUDIT_FILE, ".git/")
SKIP_DIRS = {".git", STATE_DIR, "node_modules", "__pycache__"}
# A file changed past memtui from this size up keeps its hash while its bytes stand (FolderStore._bytes_now).
SEEN_MIN_BYTES = 1 << 20
# What an attributes file must name for `git add` to store other bytes than a file's own (`FolderStore._converts`):
# text, eol, crlf (line endings), ident, working-tree-encoding, filter. Names only: a false match sends the blob
# through git, which is exact, only slower.
_CONVERTING = (b"text", b"eol", b"crlf", b"ident", b"encoding", b"filter")
ATTRIBUTES_READ_MAX = 1 << 20
# An `ident` keyword as git add stores it collapsed ("$Id: <anything but $ and newline>$" → "$Id$").
_IDENT = re.compile(rb"\$Id:[^$\n]*\$")


STORED_MAX = 1 << 20  # bytes of an external change shown as git would store it (a bigger one: as on disk)


def _git_form(sha: str, data: bytes) -> bytes | None:
    """The bytes blob `sha` holds, when it is `data` as `git add` may store it: the same, or with CRLF stored as LF
    (text, eol, crlf, core.autocrlf) and an ident keyword collapsed; None for anything else (a working-tree-encoding
    that re-encodes the text, a blob of other bytes: those are not what the person approved, or saw)."""
    from memtui.core.gitobjects import _names

    if not sha:
        return None
    lf = data.replace(b"\r\n", b"\n")
    # `ident` collapses "$Id: …$" to "$Id$" as git add does (git's own form of the keyword, not text).
    for form in dict.fromkeys((data, lf, _IDENT.sub(b"$Id$", data), _IDENT.sub(b"$Id$", lf))):
        if _names(sha, "blob", form):
            return form
    return None


class FolderStore(Store):
    index_wait = 5.0  # seconds a commit waits for a person's git to let go of git's index
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().absolute()
        self.location = str(self.root)
        # Where the state, audit log and history are (memtui.core.places): decided once, when the store is opened.
        self.places = places_for(self.root)
        self.kept = FolderState(self.places, self.root)  # memtui's state: audit, queue, intents, undo, config, lock
        self._git = GitOwner(self.root, self.places.git_dir if self.places.own_history else None)
        self.past = FolderHistory(self)  # history and blame, read through this store's git owner
        self._batch: Any = None  # memtui.core.gitobjects.Batch, started on first use
        self._settings: tuple[Any, dict[str, str]] | None = None
        # git index entries a commit could not set (index.lock held past the wait); the next commit sets them.
        self._index_behind: dict[str, tuple[bytes, int] | None] = {}
        # The last git index files this store wrote in process (memtui.core.gitindex.Index, newest last): while
        # the file's bytes are one of them, the next commit edits it without walking its entries again.
        self._index_known: list[Any] = []
        self._deflates: Any = None  # memtui.core.gitobjects.Deflates: the biggest trees' compressed segments
        self._index_walks = False  # set by the first commit that left a big index to git: later ones walk it
        # (the git index file's stat, its entries found for some paths): see _index_entries
        self._entries_seen: tuple[tuple[int, ...], dict[bytes, Any]] | None = None
        self._local = threading.local()
        self._thread_lock = threading.RLock()
        # (config text on disk, git index mtime) -> (config in effect, pending edit): see reviewed_config.
        self._reviewed_config: tuple[Any, tuple[str | None, str | None]] | None = None
        # Big files changed past memtui, as last listed for review: path -> (bytes, hash). See _bytes_now.
        self._seen: dict[str, tuple[bytes, str]] = {}
        self._before: dict[str, dict[str, bool]] = {}  # began → commit → an ancestor of it (see before_memtui)
        self._record: Any = None  # memtui.core.queue_record.QueueRecord, made on first use

    # capabilities (see Store) -----------------------------------------------------------------------------
    @property
    def local_root(self) -> Path:
        return self.root

    @property
    def keeps_history(self) -> bool:
        return self.has_git

    # paths ------------------------------------------------------------------------------------------------
    @property
    def state(self) -> Path:
        return self.places.state

    @property
    def state_folder(self) -> Path:
        return self.places.state

    @property
    def history_kept(self) -> str | None:
        if self.places.inside:
            return None
        return "history beside the folder" if self.places.own_history else "history in your git"

    @property
    def audit_path(self) -> Path:
        return self.places.audit

    def state_ready(self) -> Path:
        """The state folder, made if missing (see `FolderState.ready`)."""
        return self.kept.ready()

    def where(self) -> str:
        """One line for a person: where this memory's history is kept."""
        return self.places.describe()

    def check_path(self, rel: str) -> str:
        """The cleaned path, if it names an ordinary memory file inside the root (see `paths.resolve_inside`)."""
        norm = check_rel(rel)
        resolve_inside(self.root, norm)
        return norm

    def _full(self, rel: str) -> Path:
        return resolve_inside(self.root, rel)

    def real_path(self, rel: str) -> str:
        """The file `rel` really names, relative to the root: what a write through a symlink changes and commits
        (the path itself when no symlink is on the way)."""
        real = self._full(rel)
        return real.relative_to(os.path.realpath(self.root)).as_posix()

    def _name_path(self, rel: str) -> Path:
        """`rel`'s last name in its real folder: the symlink itself where `rel` ends in one."""
        norm = check_rel(rel)
        parent, _, name = norm.rpartition("/")
        folder = resolve_inside(self.root, parent) if parent else Path(os.path.realpath(self.root))
        return folder / name

    # files ------------------------------------------------------------------------------------------------
    def read(self, rel: str) -> bytes | None:
        path = self._full(rel)
        try:
            return _regular_bytes(path)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def write(self, rel: str, data: bytes) -> None:
        atomic_write(self._full(rel), data)

    def delete(self, rel: str) -> None:
        """Remove the name `rel`: a symlink is removed itself, never the file it points at."""
        full = self._full(rel)
        name = self._name_path(rel)
        try:
            (name if name.is_symlink() else full).unlink()
        except FileNotFoundError:
            pass

    def list_files(self, pattern: str = "**/*.md") -> list[str]:
        suffix = pattern.rsplit("*", 1)[-1] if "*" in pattern else pattern
        lead = pattern.split("*", 1)[0] if "*" in pattern else ""
        out: list[str] = []
        # A pattern under a folder ("scratch/**/*.md") is walked from that folder, not the whole memory.
        start = self._walk_start(lead.rpartition("/")[0])
        stack = [] if start is None else [start]
        while stack:
            prefix = stack.pop()
            try:
                it = os.scandir(self.root / prefix if prefix else self.root)
            except OSError:
                continue
            with it:
                entries = list(it)
            if prefix and any(d.name == ".git" for d in entries):
                continue  # a nested repository (or a gitlink file): not this memory's files
            for d in entries:
                rel = f"{prefix}{d.name}"
                if protected_name(d.name) or not plain_name(d.name):
                    continue
                if d.is_dir(follow_symlinks=False):
                    if d.name not in SKIP_DIRS and not d.name.startswith("."):
                        stack.append(rel + "/")
                elif d.is_file(follow_symlinks=False) and rel.endswith(suffix) and rel.startswith(lead):
                    out.append(rel)
        out.sort()
        return out

    def list_dir(self, rel: str = "") -> list[tuple[str, bool]]:
        """One scandir of the folder (a folder memory shows its empty folders too), hidden names left out. A
        folder outside the root (`..`, a symlink that leads out) is refused as a read would be: nothing listed."""
        out = []
        try:
            folder = resolve_inside(self.root, rel) if rel else self.root
        except PathRefused:
            return []
        try:
            with os.scandir(folder) as it:
                for item in it:
                    if item.name.startswith(".") or item.name in SKIP_DIRS:
                        continue
                    try:
                        is_dir = item.is_dir()
                    except OSError:
                        continue
                    if is_dir or item.name.endswith(".md"):
                        out.append((item.name, is_dir))
        except OSError:
            return []
        return out

    def _walk_start(self, folder: str) -> str | None:
        """Where a walk of `folder` (a path under the root, "" for the root) starts: "folder/", or None when the
        whole walk would never enter it (a link, a skipped, hidden or unlisted name, a nested repository)."""
        if not folder:
            return ""
        path = self.root
        for name in folder.split("/"):
            if protected_name(name) or not plain_name(name) or name in SKIP_DIRS or name.startswith("."):
                return None
            path = path / name
            try:
                if not stat.S_ISDIR(os.lstat(path).st_mode) or os.path.lexists(path / ".git"):
                    return None
            except OSError:
                return None
        return folder + "/"

    # lock -------------------------------------------------------------------------------------------------
    def _process_lock(self, timeout: float) -> AbstractContextManager[None]:
        return self.kept.process_lock(timeout)

    # history (git) ----------------------------------------------------------------------------------------
    # Every git call goes through `self._git` (memtui.core.gitcall.GitOwner): one thread at a time, bounded in
    # time, with repository config that could run programs overridden.
    @property
    def has_git(self) -> bool:
        return self.places.has_git()

    @property
    def repo(self) -> Any:
        """The Repo (None without git). Use it only inside `with store.git() as repo:`."""
        return self._git.repo

    def git(self, what: str = "git") -> Any:
        """`with store.git() as repo:` — the repository for this thread alone, bounded in time (see GitOwner)."""
        return self._git.use(what)

    def forget_git(self) -> None:
        """Reopen the repository on next use (after repairing `.git` by hand)."""
        self._git.forget()
        self._close_batch()

    def _close_batch(self) -> None:
        if self._batch is not None:
            self._batch.close()
            self._batch = None

    @property
    def git_dir(self) -> Path:
        return self.places.git_dir

    def _objects(self) -> Any:
        """The repository's one `git cat-file --batch` (memtui/core/gitobjects.py); use it under `_git.serial()`."""
        if self._batch is None:
            from memtui.core.gitobjects import Batch

            self._batch = Batch(self.git_dir, self.root)
            import weakref

            weakref.finalize(self, self._batch.close)  # its process ends with the store (or at exit)
        return self._batch

    def _core_settings(self) -> dict[str, str]:
        """core.hooksPath and core.fileMode, read again only when a config file git reads has changed."""
        from memtui.core.gitobjects import core_settings, settings_stamp

        stamp = settings_stamp(self.git_dir)
        if self._settings is None or self._settings[0] != stamp:
            self._settings = (stamp, core_settings(self.git_dir, self.root))
        return self._settings[1]

    def init_git(self, author: str = "memtui", *, beside: bool = False, look: Any = None) -> str | None:
        """Start history with the folder's files as they are: git in the folder (`memtui init --git`, the person's
        request; a folder kept beside then has the person's repository), or with `beside` memtui's own repository
        in its state folder (`ensure_history`), nothing written into the folder; `look`: only the files still as
        that first look saw them (memtui.core.baseline.Look). Returns the first commit."""
        from memtui.core.gitcall import repo_class

        if not beside and self.places.own_history:
            self.forget_git()
            self.places = self.kept.places = self.places.with_git_in_folder()
            self._git = GitOwner(self.root, None)
        with self._git.use("git init"):
            if beside and self.places.own_history:
                self.state_ready()
                self._git.adopt(_init_beside(self.places.git_dir, self.root))
            else:
                self._git.adopt(repo_class().init(self.root, initial_branch="main"))
            self._close_batch()
        if beside and self.places.own_history:
            # The paths git's status names (every one untracked), without the stored form and diff of each that
            # an external change carries: a third of a 10,000-file first open.
            rels = self._status_rels(())
            if rels is not None:
                return self._first_commit_beside([r for r in rels if self._committable(r)], author, look)
        files = [c.path for c in self.external_changes() if self._committable(c.path)]
        if beside and self.places.own_history:
            return self._first_commit_beside(files, author, look)
        if self.places.inside and (self.state / "config.toml").exists():
            files.append(f"{STATE_DIR}/config.toml")
        return self.commit(files, "memtui: initialise memory root", author, allow_empty=True)

    def _first_commit_beside(self, files: list[str], author: str, look: Any = None) -> str | None:
        """History beside a folder starts with its files as they are, written by `git fast-import` as one pack
        (git's own `add` writes a loose object per file: 10,000 files took 17 s through the commit path and 8 s
        through `git add`), then the index read from that tree and refreshed from the disk (`read-tree`, `update-index
        --refresh`). memtui's own repository stores every file's bytes exactly (`info/attributes`: no conversion),
        so a reject restores what was on disk. With `look` (a large folder's first look, memtui/core/baseline.py), a
        file made or changed since, by its stat before or after the read, is left out: it comes up for review."""
        import time as _time

        from memtui.core.gitcall import config_env, run_plumbing

        email = f"{_slug(author)}@memtui.local"
        dates = _pinned_dates()
        when = dates.get("author_date") or f"{int(_time.time())} +0000"
        message = b"memtui: initialise memory root\n\nhistory beside the folder, its files as they were\n"
        name = author.replace("<", "").replace(">", "").replace("\n", " ").encode("utf-8", "replace")
        parts: list[bytes] = []
        entries: list[bytes] = []
        left = 0
        for k, rel in enumerate(files, 1):
            full = os.path.join(self.root, rel)
            if look is not None and rel not in look.files:
                left += 1
                continue
            try:
                st = os.lstat(full)
                if stat.S_ISLNK(st.st_mode):
                    data, mode = os.fsencode(os.readlink(full)), b"120000"
                elif stat.S_ISREG(st.st_mode):
                    data = _regular_bytes(Path(full)) or b""
                    mode = b"100755" if st.st_mode & 0o111 else b"100644"
                else:
                    continue
                if look is not None and not look.unchanged(rel, st, data, os.lstat(full)):
                    left += 1
                    continue
            except OSError:
                continue  # gone or unreadable since the listing: it shows as an external change
            parts += [b"blob\nmark :%d\ndata %d\n" % (k, len(data)), data, b"\n"]
            entries.append(b"M %s :%d %s\n" % (mode, k, _fast_import_path(rel)))
        if left:
            message += b"(%d made or changed since memtui's first look are left out: they come up for review)\n" % left
        head = b"commit refs/heads/main\nauthor %s <%s> %s\ncommitter %s <%s> %s\ndata %d\n" % (
            name, email.encode(), when.encode(), name, email.encode(), when.encode(), len(message))
        parts += [head, message, *entries, b"\ndone\n"]
        env = {**os.environ, **config_env(self.git_dir, self.root), "GIT_DIR": str(self.git_dir),
               "GIT_WORK_TREE": str(self.root)}
        with self.lock(), self._git.serial():
            # Level 1: the pack is written once and read rarely; zlib at its default level took most of the time.
            for args, stdin in ((["git", "-c", "pack.compression=1", "fast-import", "--quiet", "--done"],
                                 b"".join(parts)),
                                (["git", "read-tree", "HEAD"], None),
                                (["git", "update-index", "-q", "--refresh"], None),
                                (["git", "rev-parse", "HEAD"], None)):
                done = run_plumbing(args, env, stdin, cwd=self.root)
                step = next(a for a in args[1:] if not a.startswith(("-", "pack.")))
                if done is None or (done[0] != 0 and step != "update-index"):  # refresh: 1 when a file changed
                    said = (done[2] if done else b"no answer").decode(errors="replace")[:300]
                    raise StoreError(f"could not start history beside {self.root} ({step}: {said}); nothing "
                                     "was written into the folder. Run `memtui doctor`")
        self.forget_git()
        return done[1].strip().decode()

    def ensure_history(self) -> str | None:
        """Start memtui's own history beside a folder that has none (`places`: no `.git` of the person's, state kept
        beside): the folder's files committed as they are, in the state folder. The first commit, or None when
        there is history already, the folder keeps its state inside (`memtui init --git` starts git there), or is
        not a folder. Where memtui first keeps a folder, the commit history stands at is recorded (`began`)."""
        if not self.places.own_history or self.has_git or not self.root.is_dir():
            self.began(record=True)
            return None
        with self.lock():  # one start, though the app's threads and a hook's process look at once
            if self.has_git:
                return None
            from memtui.core import baseline

            # A large folder's first look was taken and its baseline deferred (memtui/core/baseline.py): written
            # from that look (here, unless the background process did it first), never from the files as they are.
            look = baseline.load(self.places.state)
            if look is not None and os.path.lexists(self.places.git_dir):
                import shutil

                shutil.rmtree(self.places.git_dir)  # a baseline a crash left half written: no commit came after it
            sha = self.init_git(beside=True, look=look)
            baseline.written(self.places)
            self.began(record=True)
            self.start_queue_record()
        return sha

    def began(self, *, record: bool = False) -> str | None:
        """The commit history stood at when memtui first kept this folder (its state beside it): what came before
        is the starting point, there before memtui reviewed anything (memtui/core/provenance.py). Recorded in the
        state folder when memtui first keeps the folder (`ensure_history`, with `record`); None for a memory memtui
        made, with no history, or before that."""
        if self.places.inside:
            return None
        path = self.places.state / "began"
        try:
            text = path.read_text(encoding="ascii").strip()
            return text if len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text) else None
        except FileNotFoundError:
            pass
        except (OSError, UnicodeDecodeError):
            return None
        sha = self._head_sha() if record and self.has_git else None
        if not sha:
            return None
        try:
            self.places.ready()
            atomic_write(path, (sha + "\n").encode())
        except OSError:
            pass  # not recorded: asked again next time
        return sha

    def _head_sha(self) -> str | None:
        """HEAD's commit read as git stores it, without opening GitPython (which would turn every later status into
        GitPython's, the slow path); git's own `rev-parse` where only git can say (packed refs, reftable)."""
        try:
            with self._git.serial():
                sha = self._objects()._head()
        except Exception:  # noqa: BLE001 - unreadable: git says, below
            sha = None
        if sha is None:
            from memtui.core.gitcall import config_env, run_plumbing

            env = {**os.environ, **config_env(self.git_dir, self.root), "GIT_DIR": str(self.git_dir),
                   "GIT_WORK_TREE": str(self.root)}
            done = run_plumbing(["git", "rev-parse", "-q", "--verify", "HEAD^{commit}"], env, None, cwd=self.root)
            sha = done[1].strip().decode("ascii", "replace") if done and done[0] == 0 else None
        return sha or None

    def before_memtui(self, sha: str) -> bool:
        began = self.began()
        if began is None:
            return False
        if sha == began:
            return True
        known = self._before.get(began)
        if known is None:
            known = self._before[began] = {}
        if sha not in known:
            with self._git.use("reading history") as repo:
                try:
                    known[sha] = bool(repo is not None and repo.is_ancestor(sha, began))
                except Exception:  # noqa: BLE001 - an unknown or unreadable commit: not the starting point
                    known[sha] = False
        return known[sha]

    def move_history_in(self) -> str:
        """`memtui init --git` on a folder whose history is memtui's, beside it: the repository becomes the
        folder's own `.git` (every commit kept), so the person's git sees it. Returns where it went."""
        import shutil

        from memtui.core.gitcall import run_plumbing

        if not self.places.own_history or not self.has_git:
            raise StoreError(f"{self.root} has no history of memtui's beside it to move")
        target = self.root / ".git"
        if os.path.lexists(target):
            raise StoreError(f"{target} exists already; move it aside first. Nothing was moved")
        with self.lock():
            self.forget_git()
            shutil.move(str(self.places.git_dir), str(target))
            ours = target / "info" / "attributes"  # the exact-bytes rule of memtui's own repository: the
            if ours.is_file() and ours.read_text(errors="replace") == BESIDE_ATTRIBUTES:  # person's git is theirs
                ours.unlink()
            done = run_plumbing(["git", "config", "--unset", "core.worktree"], {**os.environ, "GIT_DIR": str(target)})
            if done is None or done[0] not in (0, 5):
                raise StoreError(f"git could not drop core.worktree in {target}; run `git --git-dir {target} "
                                 "config --unset core.worktree`")
        self.places = places_for(self.root)
        self.kept = FolderState(self.places, self.root)  # memtui's state: audit, queue, intents, undo, config, lock
        self._git = GitOwner(self.root, None)
        return str(target)

    def _check_branch(self) -> None:
        """Refuse to write where a commit could not land on a branch: a detached HEAD would leave the commit on no
        branch (lost to the person at the next checkout)."""
        if not self.has_git:
            return
        # HEAD read as git reads it, without opening GitPython: "ref: <branch>", else the detached commit's sha.
        try:
            fd = os.open(self.git_dir / "HEAD", os.O_RDONLY | os.O_NONBLOCK)  # a FIFO planted as HEAD: no hang
            try:
                head = os.read(fd, 1024).strip()
            finally:
                os.close(fd)
        except OSError as exc:
            raise StoreError(f"git's HEAD at {self.git_dir} cannot be read ({exc.strerror or exc}); run `memtui "
                             "doctor` to see what is wrong. Memory files were not changed") from None
        if not head.startswith(b"ref:"):
            hexsha = head.decode("ascii", "replace")
            sha = hexsha[:8] if len(hexsha) in (40, 64) and all(c in "0123456789abcdef" for c in hexsha) \
                else "an unreadable commit"
            raise StoreError(f"HEAD is detached at {sha}; check out a branch (git switch main) and try again")

    # the person's repository is theirs: a merge in progress and a staged version are never replaced ---------------
    def check_change(self, contents: dict[str, bytes | None], record: bool = True) -> None:
        """Refuse, before anything is written, a write to a file that is unmerged in git's index, any write while
        a merge, rebase, cherry-pick, revert or `git am` is in progress, and (for a change that is committed) one
        whose commit would replace a version of a file the person staged. Reads git's index without running git
        (`_index_entries`)."""
        if not self.has_git:
            return
        rels = [rel for p in contents for rel in self._commit_rels(p)]
        self._check_repository(rels)
        if not record:
            return
        from memtui.core.digests import new as digest

        def blob_id(data: bytes) -> bytes:
            # (of the bytes as they are: a blob git would store converted differs, and is refused, never lost)
            h = digest("sha1", len(data))
            h.update(b"blob %d\0" % len(data))
            h.update(data)
            return h.digest()

        new = {self._real_or_named(rel): None if data is None else blob_id(data) for rel, data in contents.items()}
        self._check_staged({rel: new.get(rel, _UNKNOWN) for rel in rels}, self._head_entries(rels))

    def _check_repository(self, rels: list[str]) -> None:
        """A file unmerged in git's index is never written, and nothing is committed while an operation that
        commits for the person (a merge, rebase, cherry-pick, revert, `git am`) is in progress: a memtui commit then
        would be a one-parent commit the operation knows nothing of (a rebase on a detached HEAD would drop it; a
        merge would be concluded over it; its staged results would be replaced)."""
        if not self.has_git:
            return
        doing = in_progress(self.git_dir)
        why = _unmerged_refusal(rels, self._index_entries(rels), doing)
        if why is not None:  # said only of an index known sound (a damaged one is said as such)
            why = _unmerged_refusal(rels, self._index_entries(rels, sure=True), doing)
        if why is not None:
            raise StoreError(why)
        if doing is not None:
            what, marker, cont, abort = doing
            raise StoreError(
                f"a {what} is in progress in {self.root} (git's {marker}): memtui writes and commits nothing until "
                f"it is done, so its commit does not land inside the {what}. Nothing was written; finish or abort "
                f"the {what} first (`{cont}` or `{abort}`), then try again")

    def _check_staged(self, new: dict[str, Any], head: dict[str, tuple[int, bytes] | None]) -> None:
        """A commit of `new` ({path: the object memtui commits, None to remove it, `_UNKNOWN`}) must not replace a
        version the person staged: an index entry that differs from HEAD's (`head`: path -> (mode, object id)) and
        from what memtui commits. An intent-to-add entry (`git add -N`) holds nothing; an entry memtui itself left
        behind (`_index_behind`) is its own."""
        rels = [rel for rel in new if rel not in self._index_behind]
        why = _staged_refusal(new, head, self._index_entries(rels))
        if why is not None:
            entries = self._index_entries(rels, sure=True)
            why = _staged_refusal(new, head, {rel: found for rel, found in entries.items()
                                              if not self._committed_before(rel, found)})
        if why is not None:
            raise StoreError(why)

    def _committed_before(self, rel: str, found: list[Any]) -> bool:
        """Is the version of `rel` in git's index one this history committed before (HEAD's parent or earlier)? A
        memtui writer killed between its commit and its index update leaves that, not a person's `git add`: a staged
        version nobody committed is the person's (asked only where a staged version seems to be in the way)."""
        import hashlib

        staged = next((e for e in found if e[0] == 0), None)
        if staged is None or staged[3]:
            return False
        try:
            past = self.past_versions(rel, 8)
        except Exception:  # noqa: BLE001 - no history to tell by: the person's, as before
            return False
        return any(hashlib.sha1(b"blob %d\0" % len(data) + data).digest() == staged[1] for _, data in past)

    def _head_entries(self, rels: list[str]) -> dict[str, tuple[int, bytes] | None]:
        """(mode, object id) HEAD's tree records for each of `rels`, None where it has none (or no commit yet), read
        through the repository's one `git cat-file --batch`."""
        with self._git.serial():
            batch = self._objects()
            head = batch.get("HEAD")
            if head is None or head.kind != "commit":
                return dict.fromkeys(rels)  # (a HEAD git cannot read: the commit says so)
            root = bytes.fromhex(head.data[5:head.data.index(b"\n")].decode())

            def read_tree(binsha: bytes) -> bytes:
                got = batch.get(binsha.hex())
                if got is None or got.kind != "tree":
                    raise StoreError(f"git's tree {binsha.hex()[:8]} is missing; run `memtui doctor` (git fsck)")
                return got.data

            return {rel: _recorded_entry(read_tree, batch.trees, root, rel) for rel in rels}

    def _index_entries(self, rels: list[str], sure: bool = False) -> dict[str, Any]:
        """Each of `rels`' entries in git's index (every stage: `gitindex.Found`), without running git: from the
        index this store last wrote when the file still holds its bytes (a bisection), else found in the file's
        bytes (`gitindex.find_entries`); git lists them only where neither can say (index version 4, a split index
        memtui did not write, GIT_INDEX_FILE). Kept while the file's stat is unchanged: a write checks twice.

        `sure`: before a refusal is said, the bytes found in are checked as the commit does (their checksum, the
        shared index a split one names): a damaged index is said as such (StoreError), never taken for a state."""
        from memtui.core import gitindex

        if not rels:
            return {}
        names = {rel: rel.encode("utf-8", "surrogateescape") for rel in rels}
        try:
            fd = os.open(self._index_file(), os.O_RDONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            return {rel: [] for rel in rels}  # no index yet: nothing staged
        except OSError:
            return self._index_entries_by_git(rels)
        try:
            st = os.fstat(fd)
            key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            seen = self._entries_seen
            if seen is not None and seen[0] == key and "GIT_INDEX_FILE" not in os.environ:
                if not isinstance(seen[1], dict):  # the index this store wrote, unchanged since: bisected
                    return {rel: gitindex.named_entries(seen[1], names[rel]) for rel in rels}
                if not sure and all(name in seen[1] for name in names.values()):
                    return {rel: seen[1][names[rel]] for rel in rels}
            data = _read_all(fd, st.st_size) if stat.S_ISREG(st.st_mode) else None
        finally:
            os.close(fd)
        if data is None or "GIT_INDEX_FILE" in os.environ:
            return self._index_entries_by_git(rels)
        known = next((k for k in reversed(self._index_known) if k.same_bytes(data) and self._shared_same(k)), None)
        if known is not None:
            self._entries_seen = (key, known)
            return {rel: gitindex.named_entries(known, names[rel]) for rel in rels}
        found = None if sure else gitindex.find_entries(data, list(names.values()), self._shared_index_exists())
        if found is None:
            split = self._sound_index(data, st.st_mtime_ns // 1_000_000_000)
            if split is not None:
                return self._index_entries_by_git(rels) if split is False else {
                    rel: gitindex.named_entries(split, names[rel]) for rel in rels}
            # (read: not split) Before a refusal, every entry is walked: a name inside another's bytes that reads as
            # an entry (`find_entries`) never refuses a write.
            found = gitindex.walk_entries(data, list(names.values())) if sure else \
                gitindex.find_entries(data, list(names.values()), False)
            if found is None:
                return self._index_entries_by_git(rels)
        self._entries_seen = (key, found)
        return {rel: found[names[rel]] for rel in rels}

    def _sound_index(self, data: bytes, mtime: int) -> Any:
        """Check index bytes as a commit would before editing them: StoreError when damaged (its checksum, a split
        index's shared index missing or damaged); the Split when it is a split index read here, False for one not
        read here, None when the index is not split."""
        from memtui.core import gitindex

        try:
            gitindex._checksum_ok(data)  # (index.skipHash's zero trailer: not checked, as git does not)
            link = gitindex.link_of(data) if data.find(b"link", _HEADER_SIZE) >= 0 else None
            if link is None:
                return None
            split = self._read_split(data, mtime, link)
            return False if split is None else split
        except gitindex.Damaged as exc:
            raise StoreError(f"git's index at {self._index_file()} is damaged ({exc}; `git fsck` says so too); "
                             f"nothing was committed. {REBUILD_INDEX}, then try again") from None

    def _remember_index(self, made_here: bool) -> None:
        """After a commit put its index in place: when memtui made it (`made_here`: the in-process edit, now the
        newest of `_index_known`), its stat is keyed to it, so the next write's check bisects it instead of reading
        the file again (git renames a new index into place: a person's git changes the stat)."""
        self._entries_seen = None
        if made_here and self._index_known:
            try:
                st = os.stat(self._index_file())
            except OSError:
                return
            self._entries_seen = ((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns), self._index_known[-1])

    def _shared_index_exists(self) -> bool:
        """Is there a shared index file (`sharedindex.<sha>`) in git's folder? Without one the index cannot be
        split (git could not read it), and its bytes need no search for a link extension."""
        try:
            with os.scandir(self.git_dir) as it:
                return any(d.name.startswith("sharedindex.") for d in it)
        except OSError:
            return True

    def _index_entries_by_git(self, rels: list[str]) -> dict[str, Any]:
        """`_index_entries` as `git ls-files --stage` lists them (an intent-to-add entry shows as a staged empty
        file: refused rather than guessed)."""
        from memtui.core.gitcall import plumbing_env, run_plumbing

        env = {**os.environ, **plumbing_env(self.git_dir, self.root), "GIT_LITERAL_PATHSPECS": "1"}
        done = run_plumbing(["git", "ls-files", "--stage", "-z", "--", *rels], env, cwd=self.root)
        if done is None or done[0] != 0:
            said = "it did not answer in time" if done is None else done[2].decode("utf-8", "replace").strip()[:300]
            raise StoreError(f"git could not list its index entries in {self.root} ({said}); nothing was written. "
                             "Run `memtui doctor` to see what is wrong")
        out: dict[str, Any] = {rel: [] for rel in rels}
        for record in done[1].split(b"\0"):
            meta, _, name = record.partition(b"\t")
            rel = name.decode("utf-8", "surrogateescape")
            if rel in out:
                mode, sha, stage = meta.split(b" ")
                out[rel].append((int(stage), bytes.fromhex(sha.decode()), int(mode, 8), False))
        return out

    def commit(
        self, paths: list[str], message: str, author: str, committer: str | None = None, allow_empty: bool = False,
        contents: dict[str, bytes | None] | None = None,
    ) -> str | None:
        """Commit `paths` (a path through a symlink commits the file it names), with `contents` instead of the
        disk's bytes where given; git's own lock files left by a killed memtui process are cleared first."""
        if not self.has_git:
            return None
        paths = [rel for p in paths for rel in self._commit_rels(p)]
        # Given contents belong to the file a path really names (a write through a link changes its target).
        contents = {self._real_or_named(rel): data for rel, data in (contents or {}).items()}
        for rel in paths:
            self._check_committable(rel)
        with self.lock():
            self._check_repository(paths)  # a merge, rebase or cherry-pick the person is in: before HEAD's check
            self._check_branch()
            clear_stale_git_locks(self.git_dir)
            try:
                return self._commit(paths, message, author, committer, allow_empty, contents)
            except (ValueError, OSError) as exc:
                raise StoreError(
                    f"could not commit to git at {self.root} ({type(exc).__name__}: {exc}); "
                    "run `memtui doctor` to see what is wrong"
                ) from None

    def _real_or_named(self, rel: str) -> str:
        try:
            return self.real_path(rel)
        except PathRefused:
            return clean_rel(rel)

    def _commit_rels(self, rel: str) -> list[str]:
        """The paths a commit records for `rel`: the real file where `rel` goes through a symlink, and the link
        itself where `rel` ends in one in a real folder (an untracked link is added; a tracked one is unchanged).
        memtui's own files (`.memtui/config.toml`) and links that lead nowhere allowed are recorded as named."""
        try:
            real = self.real_path(rel)
            name = self._name_path(rel).relative_to(os.path.realpath(self.root)).as_posix()
        except PathRefused:
            return [clean_rel(rel)]
        return [real] if name == real or name != clean_rel(rel) else [name, real]

    def _committable(self, rel: str) -> bool:
        try:
            self._check_committable(rel)
        except StoreError:
            return False  # left out of the first commit; it shows as an external change with its reason
        return True

    def _check_committable(self, rel: str) -> None:
        """No tree entry named `.git` (any case: the repository would no longer clone, or clone into a trap), and
        no symlink into git's or memtui's own files (every clone would ship the trap)."""
        bad = next((part for part in rel.split("/") if protected_name(part)
                    and part.casefold().split(":", 1)[0].rstrip(". ") in (".git", "git~1")), None)
        if bad is not None:
            raise StoreError(f"refused to commit {rel!r}: git keeps no entry named {bad!r} in a tree (the "
                             "repository would no longer clone); nothing was committed")
        full = self.root / rel
        if os.path.islink(full) and rel.rsplit("/", 1)[-1].casefold().rstrip(". ") in (".gitmodules", "gitmod~1"):
            # git's own index refuses it too: `git fsck` errs on it (gitmodulesSymlink), so no server takes a push.
            raise StoreError(f"refused to commit {rel!r}: git keeps no symlink named .gitmodules (git fsck rejects "
                             "it); replace the link with a plain file. Nothing was committed")
        if os.path.islink(full) and not rel.startswith(STATE_DIR + "/"):
            target = Path(os.path.realpath(full))
            real_root = Path(os.path.realpath(self.root))
            if real_root in target.parents:
                try:
                    check_rel(target.relative_to(real_root).as_posix())
                except PathRefused:
                    raise StoreError(f"refused to commit {rel!r}: it is a symlink to "
                                     f"{target.relative_to(real_root).as_posix()!r}, git's or memtui's own files; "
                                     "remove the link. Nothing was committed") from None

    def _commit(
        self, paths: list[str], message: str, author: str, committer: str | None = None, allow_empty: bool = False,
        contents: dict[str, bytes | None] | None = None,
    ) -> str | None:
        """Commit by writing only the changed objects: the blobs, the trees along the changed paths and the commit
        (loose objects written in process, memtui/core/gitobjects.py), then move the branch with a compare-and-swap
        (`git update-ref`) and set git's index entries for `paths`: in process (memtui/core/gitindex.py: the index
        walked once, then edited from that walk while it is the file memtui wrote), else in one `git update-index`
        call. No whole tree is read in Python, and no folder is walked. Entries a person staged for other paths stay staged and out of
        memtui's commit."""
        if not self.has_git:
            return None
        with self._git.serial():
            return self._commit_in(paths, message, author, committer, allow_empty, contents or {})

    def _commit_in(
        self, paths: list[str], message: str, author: str, committer: str | None, allow_empty: bool,
        contents: dict[str, bytes | None],
    ) -> str | None:
        from memtui.core import git_hooks, gitobjects

        who = (author, f"{_slug(author)}@memtui.local")
        by = (committer, f"{_slug(committer)}@memtui.local") if committer else who
        dates = _pinned_dates()
        git_dir = self.git_dir
        if gitobjects.object_format(git_dir, self.root) != "sha1":
            # Objects here are named by SHA-1: written into a sha256 repository they would break its branch.
            raise StoreError(f"the git repository at {self.root} uses sha256 object names, which memtui cannot "
                             "commit to yet; use a sha1 repository (git init --object-format=sha1). Nothing was "
                             "committed")
        objects = gitobjects.common_dir(git_dir) / "objects"
        batch = self._objects()
        perm = self._shared_perm()
        level = self._loose_level()
        if self._deflates is None:
            self._deflates = gitobjects.Deflates()

        def store(kind: bytes, data: bytes) -> bytes:
            return gitobjects.write_object(objects, kind, data, perm, level, self._deflates)

        def read_tree(binsha: bytes) -> bytes:
            got = batch.get(binsha.hex())
            if got is None or got.kind != "tree":
                raise StoreError(f"git's tree {binsha.hex()[:8]} is missing; run `memtui doctor` (git fsck)")
            return got.data

        blobs = {rel: self._given_blob(store, rel, contents[rel]) if rel in contents else self._blob(store, rel)
                 for rel in dict.fromkeys(paths)}
        for attempt in range(10):  # a person's git committing in a loop moves the branch between our steps
            if attempt:
                time.sleep(0.005 * attempt)
            head = batch.get("HEAD")
            if head is None and gitobjects.head_born(git_dir, self.root):
                raise StoreError(f"HEAD at {self.root} names a commit git cannot read; run `memtui doctor` "
                                 "(git fsck). Nothing was committed")
            if head is not None and head.kind != "commit":
                raise StoreError(f"HEAD at {self.root} names a {head.kind}, not a commit; nothing was committed")
            parent = head.sha if head is not None else None
            old_root = bytes.fromhex(head.data[5:head.data.index(b"\n")].decode()) if head is not None else None
            trees = batch.trees  # parsed trees, shared with reads: a tree is the same for as long as its sha
            leaves = {rel: self._leaf(rel, blob, rel in contents, _recorded_mode(read_tree, trees, old_root, rel))
                      for rel, blob in blobs.items()}
            committed = {rel: None if leaf is None else leaf[0] for rel, leaf in leaves.items()}
            recorded = {rel: _recorded_entry(read_tree, trees, old_root, rel) for rel in leaves}
            self._check_staged(committed, recorded)
            root = _write_tree(read_tree, store, old_root, leaves, trees) or store(b"tree", b"")
            if parent is not None and root == old_root and not allow_empty:
                self._sync_index(leaves)
                return None
            # The repository's pre-commit and commit-msg hooks run as `git commit` runs them (core/git_hooks.py).
            message = git_hooks.before_commit(git_dir, self.root, self.reviewed_config()[0], root.hex(), message,
                                              who, dates.get("author_date"),
                                              self._hooks_path)
            sha = store(b"commit", gitobjects.commit_object(
                root, parent, gitobjects.ident(*who, gitobjects.git_date(dates.get("author_date"))),
                gitobjects.ident(*by, gitobjects.git_date(dates.get("commit_date"))), message)).hex()
            subject = message.split("\n", 1)[0]
            reflog = f"commit: {subject}" if parent is not None else f"commit (initial): {subject}"
            # As git commits: git's index is locked and its new entries made first, the branch moved next, the
            # index put in place last. Moving the branch first let a person's `git commit` between the two read
            # the old entries and commit the old file back (a revert of the approved write in history).
            with self._index_locked() as lock:
                # Checked again under git's index lock, which a person's `git add` or `git merge` must take too: the
                # index edited next is the one checked (cached while its stat holds, so this costs a stat).
                self._check_repository(list(leaves))
                self._check_staged(committed, recorded)
                made_here = self._stage_index(leaves, lock)  # the lock now holds the new index; it becomes the index
                if gitobjects.move_head(git_dir, self.root, sha, parent, reflog, by, dates.get("commit_date"),
                                        new_logs=self._new_reflogs, perm=perm):
                    os.replace(lock, self._index_file())
                    self._remember_index(made_here)
                    self._index_behind = {}
                    self._refresh_index(leaves)
                    return sha
        raise StoreError("HEAD kept moving while memtui committed (another git command is committing here)")

    def _new_reflogs(self) -> bool:
        """May a commit start a reflog that does not exist? Not with core.logAllRefUpdates=false (git's default in
        a repository with a work tree is to start them); no process when no config file could set it."""
        from memtui.core.gitobjects import may_be_set

        if not may_be_set(self.git_dir, b"logallrefupdates"):
            return True
        value = self._core_settings().get("core.logallrefupdates", "true").strip().lower()
        return value not in ("false", "no", "off", "0")

    def _loose_level(self) -> int:
        """zlib's level for the loose objects a commit writes (core.looseCompression, else core.compression, else 1,
        as git's), with no process when no config file could set either."""
        from memtui.core.gitobjects import loose_level, may_be_set

        if not may_be_set(self.git_dir, b"compression"):  # b"loosecompression" holds it too
            return 1
        return loose_level(self._core_settings())

    def _shared_perm(self) -> int:
        """core.sharedRepository as git reads it (`gitobjects.shared_perm`), with no process when no config file
        could set it: the objects, refs and reflogs a commit makes then get the permissions git would give them."""
        from memtui.core.gitobjects import may_be_set, shared_perm

        if not may_be_set(self.git_dir, b"sharedrepository"):
            return 0
        return shared_perm(self._core_settings().get("core.sharedrepository"))

    def _hooks_path(self) -> str:
        """core.hooksPath ("" when unset), with no process when no config file could set it."""
        from memtui.core.gitobjects import may_be_set

        if not may_be_set(self.git_dir, b"hookspath"):
            return ""
        return self._core_settings().get("core.hookspath", "")

    def _blob(self, store: Any, rel: str) -> tuple[bytes, int] | None:
        """The file as a stored blob and its mode on disk (as `git add` would see it); None if it is gone."""
        full = self.root / rel
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(st.st_mode):
            return store(b"blob", os.readlink(full).encode()), 0o120000
        if not stat.S_ISREG(st.st_mode):
            return None
        return self._file_blob(store, rel, full.read_bytes()), 0o100755 if st.st_mode & 0o100 else 0o100644

    def _given_blob(self, store: Any, rel: str, data: bytes | None) -> tuple[bytes, int] | None:
        """`data` as the blob to commit (None: removed); its mode is the one git has recorded (see `_leaf`)."""
        if data is None:
            return None
        return self._file_blob(store, rel, data), 0o100644

    def _file_blob(self, store: Any, rel: str, data: bytes) -> bytes:
        """The blob `git add` stores for a file `rel` holding `data`: its bytes as they are, written in process,
        unless an attribute or setting may make git convert them (line endings, `ident`, a working-tree
        encoding: `converts`); then git itself stores them (`git hash-object --path`, with memtui's overrides:
        no filter driver runs, as none does in any git memtui starts)."""
        if not self._converts(rel):
            return store(b"blob", data)
        from memtui.core.gitcall import run_plumbing

        # Every filter driver is switched off, whatever config defines it (the person's global config too: an
        # attributes file in the work tree is anyone's to write, and a driver it names, git-lfs's or any other,
        # would run and store other bytes than the person approved). Unlisted: git is not asked.
        env = self._hashing_env()
        if env is None:
            return store(b"blob", data)
        done = run_plumbing(["git", "hash-object", "-w", "--stdin", f"--path={rel}"], env, data, cwd=self.root)
        if done is None:
            raise StoreError(f"git hash-object did not answer in time for {rel} in {self.root}; nothing was committed")
        sha = done[1].decode("ascii", "replace").strip() if done[0] == 0 else ""
        return bytes.fromhex(sha) if _git_form(sha, data) is not None else store(b"blob", data)

    def _hashing_env(self) -> dict[str, str] | None:
        """The environment of a `git hash-object` that stores a file as `git add` would: memtui's overrides, and
        every filter driver switched off whatever config defines it (the person's global config too: an
        attributes file in the work tree is anyone's to write, and a driver it names, git-lfs's or any other,
        would run and store other bytes than the person approved). None when the drivers cannot be listed: then
        git is not asked."""
        from memtui.core.gitcall import config_env, drivers_off

        drivers = self._filter_drivers()
        if drivers is None:
            return None
        return {**os.environ, **config_env(self.git_dir, self.root, extra=drivers_off(drivers)),
                "GIT_DIR": str(self.git_dir)}

    def _stored_all(self, found: list[tuple[str, bytes | None]]) -> dict[str, bytes]:
        """For files changed outside memtui, as (path, bytes on disk): the bytes git would store for each where
        that is other bytes (see `_converts`), to show in its review diff. One `git hash-object --stdin-paths`
        for all of them (an agent can change thousands of files between two syncs), none when no file converts;
        a file over `STORED_MAX`, a link, or one git read otherwise than memtui (it changed meanwhile) shows its
        bytes on disk."""
        converts_in: dict[str, bool] = {}  # by folder: what `_converts` says depends only on the folders
        wanted: list[tuple[str, bytes]] = []
        for rel, data in found:
            if data is None or len(data) > STORED_MAX or "\n" in rel or "\r" in rel:
                continue
            folder = rel.rpartition("/")[0]
            if folder not in converts_in:
                converts_in[folder] = self._converts(rel)
            if converts_in[folder] and not os.path.islink(self.root / rel):
                wanted.append((rel, data))
        if not wanted:
            return {}
        from memtui.core.gitcall import run_plumbing

        env = self._hashing_env()
        if env is None:
            return {}
        done = run_plumbing(["git", "hash-object", "-w", "--stdin-paths"], env,
                            "".join(rel + "\n" for rel, _ in wanted).encode("utf-8", "surrogateescape"),
                            cwd=self.root)
        shas = done[1].decode("ascii", "replace").split() if done is not None and done[0] == 0 else []
        if len(shas) != len(wanted):
            return {}
        out = {}
        for (rel, data), sha in zip(wanted, shas):
            form = _git_form(sha, data)
            if form is not None and form != data:
                out[rel] = form
        return out

    def _filter_drivers(self) -> list[str] | None:
        """The filter drivers of every config git reads here (`gitcall.all_drivers`), listed again only when a
        config file git reads has changed."""
        from memtui.core.gitcall import all_drivers
        from memtui.core.gitobjects import settings_stamp

        stamp = settings_stamp(self.git_dir)
        cached = self.__dict__.get("_drivers")
        if cached is None or cached[0] != stamp:
            cached = self.__dict__["_drivers"] = (stamp, all_drivers(self.git_dir))
        return cached[1]

    def _converts(self, rel: str) -> bool:
        """May `git add` store other bytes than a file's own for `rel`? Yes when core.autocrlf is set (true or
        input: CRLF is stored as LF), or an attributes file git reads for `rel` (the system's, the person's:
        core.attributesFile or git's default, .git/info/attributes, and .gitattributes in the
        root and in each folder down to `rel`'s) names text, eol, crlf, ident, an encoding or a filter. A symlink or
        a file over 1 MB counts as converting (git then decides); a FIFO or a device anywhere among them is not
        read and makes it No (git would block on it: the bytes are stored as they are, without asking git)."""
        from memtui.core.gitobjects import common_dir, may_be_set

        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        personal = Path(xdg, "git", "attributes")
        if may_be_set(self.git_dir, b"autocrlf", b"attributesfile"):
            settings = self._core_settings()
            if settings.get("core.autocrlf", "false").strip().lower() not in ("false", "no", "off", "0", ""):
                return True  # true or input: CRLF stored as LF
            if settings.get("core.attributesfile"):
                personal = Path(os.path.expanduser(settings["core.attributesfile"]))
        files = [Path("/etc/gitattributes"), personal, common_dir(self.git_dir) / "info" / "attributes"]
        folder = self.root
        files.append(folder / ".gitattributes")
        for part in rel.split("/")[:-1]:
            folder = folder / part
            files.append(folder / ".gitattributes")
        converts = False
        for f in files:
            try:
                st = os.lstat(f)
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError:
                converts = True
                continue
            if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) \
                    or stat.S_ISSOCK(st.st_mode):
                # git opens every attributes file down to `rel` and would block on a FIFO until memtui's time
                # limit, each commit (a planted one refused every write under its folder): git is not asked.
                return False
            if converts:
                continue  # decided; the rest are only looked at for a FIFO
            if stat.S_ISLNK(st.st_mode) or (stat.S_ISREG(st.st_mode) and st.st_size > ATTRIBUTES_READ_MAX):
                converts = True  # git decides (it does not follow a link to an attributes file in the work tree)
                continue
            if not stat.S_ISREG(st.st_mode):
                continue  # a folder: git reads nothing from it
            try:
                text = _read_plain(f).lower()
            except OSError:
                converts = True
                continue
            if any(word in text for word in _CONVERTING):
                converts = True
        return converts

    def _leaf(self, rel: str, blob: tuple[bytes, int] | None, given: bool,
              recorded: int | None) -> tuple[bytes, int] | None:
        """The tree entry to commit for `rel`: given bytes keep the mode git recorded (a plain file's); a file from
        disk has its disk mode, except that with core.fileMode=false the executable bit on disk means nothing
        and git keeps the recorded mode."""
        if blob is None:
            return None
        if given:
            return blob[0], recorded if recorded in (0o100644, 0o100755) else 0o100644
        if blob[1] == 0o120000 or blob[1] == recorded or (recorded is None and blob[1] == 0o100644):
            return blob  # the same whatever core.fileMode says: no need to ask git
        if not self._filemode():
            return blob[0], recorded if recorded is not None else 0o100644
        return blob

    def _filemode(self) -> bool:
        if getattr(self, "_filemode_cached", None) is None:
            value = self._core_settings().get("core.filemode", "true").strip().lower()
            self._filemode_cached = value not in ("false", "no", "off", "0")
        return self._filemode_cached

    def _sync_index(self, leaves: dict[str, tuple[bytes, int] | None]) -> None:
        """Set git's index entries for the committed paths (so `git status` stays clean), in one plumbing call.

        The commit is already made, so failing now would leave it without its files: a person's git holding
        index.lock is waited for, and past that the entries are set by the next commit instead."""
        from memtui.core.gitcall import plumbing_env, run_plumbing

        leaves = {**self._index_behind, **leaves}
        done_here = self._sync_in_process(leaves)
        if done_here is None:
            self._index_behind = leaves
            return
        if done_here:
            self._index_behind = {}
            self._refresh_index(leaves)
            return
        records = b"".join(
            (b"0 " + b"0" * 40 if leaf is None else b"%o %s" % (leaf[1], leaf[0].hex().encode()))
            + b"\t" + rel.encode() + b"\0"
            for rel, leaf in leaves.items()
        )
        # --index-info reads no file of the work tree: no filter, hook or monitor runs, so plain plumbing overrides.
        env = {**os.environ, **plumbing_env(self.git_dir, self.root)}
        deadline = time.monotonic() + self.index_wait
        while True:
            done = run_plumbing(["git", "update-index", "-z", "--index-info"], env, records)
            if done is None:
                raise StoreError(f"git update-index did not answer within the time limit in {self.root}")
            if done[0] == 0:
                break
            if b"index.lock" not in done[2]:
                raise StoreError(f"git update-index failed: {done[2].decode('utf-8', 'replace').strip()[:400]}")
            if time.monotonic() > deadline:
                self._index_behind = leaves
                return
            time.sleep(0.02)
        self._index_behind = {}
        self._refresh_index(leaves)

    def _sync_in_process(self, leaves: dict[str, tuple[bytes, int] | None]) -> bool | None:
        """`_sync_index` without a process, as git does it: index.lock taken (a person's git holding it is waited
        for), the new index written into it and renamed over the index. True when done, None when the lock stayed
        held past the wait, False when git must set these entries (see `_index_in_process`)."""
        if "GIT_INDEX_FILE" in os.environ or not self._index_editable():
            return False
        lock = self._index_file().with_name("index.lock")
        fd = self._take_index_lock(lock)
        if fd is None:
            return None
        done = False
        try:
            pieces = self._index_in_process(leaves)
            if pieces is not None:
                _write_pieces(fd, pieces)
                os.close(fd)
                fd = -1
                os.replace(lock, self._index_file())
                done = True
        finally:
            if fd >= 0:
                os.close(fd)
            if not done:
                lock.unlink()
        return done

    def _index_editable(self) -> bool:
        """May the index be edited in process? Not when a setting could make git write it otherwise: an index
        version, skipHash or extension tables (index.*, feature.manyFiles), the untracked cache, a split index, a
        shared repository's permissions, fsync of the index, a sparse checkout (git then clears skip-worktree
        bits of files present as it reads the index); nor under git's test switches."""
        from memtui.core.gitobjects import config_texts

        keys = (*_INDEX_SETTINGS, b"include")
        extra = []
        for name, value in os.environ.items():
            if name.startswith("GIT_TEST_"):
                return False
            if name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
                extra.append(Path(value))
            elif name.startswith(("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_KEY_")):
                if any(key in value.lower().encode() for key in keys):
                    return False
        texts = config_texts(self.git_dir, extra)
        return texts is not None and not any(key in text for text in texts for key in keys)

    def _index_in_process(self, leaves: dict[str, tuple[bytes, int] | None]) -> list[bytes | memoryview] | None:
        """git's index with `leaves`' entries set, edited in process (memtui/core/gitindex.py) exactly as `git
        update-index -z --index-info` would write it, as the pieces to write in order; None when that module cannot
        say (git must do it)."""
        from memtui.core import gitindex

        try:
            fd = os.open(self._index_file(), os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return None  # no index yet (git makes one), or one git cannot read either
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            data = _read_all(fd, st.st_size)
        finally:
            os.close(fd)
        mtime = st.st_mtime_ns // 1_000_000_000
        index = next((k for k in reversed(self._index_known) if k.same_bytes(data) and self._shared_same(k)), None)
        if index is None:
            # (a split index names its shared one in a "link" extension: bytes only a split index, or an entry's
            # name, can hold; only then are the entries walked to see which)
            link = gitindex.link_of(data) if data.find(b"link", _HEADER_SIZE) >= 0 else None
            size = len(data)
            if link is not None:
                try:
                    size += os.stat(self._shared_path(link)).st_size
                except OSError:
                    pass  # said below, as the split index is read
            if size > INDEX_WALK_AT_ONCE and not self._index_walks:
                # A big index walked in Python costs more than git's own edit of it (100,000 entries: ~90 ms
                # against ~70): a one-shot command leaves it to git; a store that commits again walks it then.
                self._index_walks = True
                return None
            try:
                index = gitindex.Index.parse(data, mtime) if link is None else self._read_split(data, mtime, link)
            except gitindex.Damaged as exc:
                raise StoreError(f"git's index at {self._index_file()} is damaged ({exc}; `git fsck` says so too); "
                                 f"nothing was committed. {REBUILD_INDEX}, then try again") from None
        if index is None:
            return None
        if isinstance(index, gitindex.Split):
            new = gitindex.set_split_entries(index, leaves, mtime)
        else:
            new = gitindex.set_entries(index, leaves, mtime)
            if new is not None and gitindex.SPLIT_AT is not None and new.size > gitindex.SPLIT_AT:
                # A big index written split from here on (git reads it, and keeps it split): a commit then rewrites
                # a few kilobytes instead of every entry. Off unless asked (`gitindex.SPLIT_AT`).
                new = gitindex.split_from(new, mtime) or new
        if new is None:
            return None
        if isinstance(new, gitindex.Split):
            if new.shared is not None:
                self._write_shared(new)
            elif new is not index:
                new.shared_stat = self._freshen_shared(new.base_sha, index.shared_stat)  # type: ignore[union-attr]
        self._index_known = [index, new]
        return new.pieces() if isinstance(new, gitindex.Index) else [new.data]

    def _shared_path(self, sha: bytes) -> Path:
        return self.git_dir / f"sharedindex.{sha.hex()}"

    def _shared_stat(self, sha: bytes) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self._shared_path(sha))
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _shared_same(self, known: Any) -> bool:
        """For a split index kept in memory: is its shared index file still the one read or written (a file
        changed past git, even by a touch, is read and checked again)?"""
        from memtui.core import gitindex

        return not isinstance(known, gitindex.Split) or (
            known.shared_stat is not None and self._shared_stat(known.base_sha) == known.shared_stat)

    def _read_split(self, data: bytes, mtime: int, link: bytes) -> Any:
        """A split index git (or memtui) wrote, with the shared index it names read and checked: its checksum must
        match its bytes and its name (git dies on either too). A missing or damaged one is refused."""
        from memtui.core import gitindex
        from memtui.core.gitobjects import read_file

        path = self._shared_path(link)
        before = self._shared_stat(link)
        try:
            shared = read_file(path)
        except FileNotFoundError:
            raise StoreError(f"git's index at {self._index_file()} is split and names a shared index, {path.name}, "
                             f"that is missing (git cannot read the index either); nothing was committed. "
                             f"{REBUILD_INDEX}, then try again") from None
        except OSError:
            return None
        if len(shared) < 32 or shared[-20:] != link:
            raise gitindex.Damaged(f"its shared index {path.name} does not hold what its name says")
        try:
            base = gitindex.Index.parse(shared, mtime)
        except gitindex.Damaged:
            raise gitindex.Damaged(f"its shared index {path.name} does not match its checksum") from None
        if base is None:
            return None
        split = gitindex.Split.parse(data, mtime, base)
        if split is not None:
            split.shared_stat = before if self._shared_stat(link) == before else None
        return split

    def _write_shared(self, split: Any) -> None:
        """Write a new shared index as git does (`sharedindex_XXXXXX`, renamed to `sharedindex.<sha>`) before the
        split index naming it is put in place; shared indexes past git's expiry (2 weeks) that the new index does
        not name are removed, as git removes them."""
        import secrets

        from memtui.core.gitindex import SHARED_EXPIRE

        path = self._shared_path(split.base_sha)
        while True:
            tmp = self.git_dir / f"sharedindex_{secrets.token_hex(3)}"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                break
            except FileExistsError:
                continue
        with removed_on_failure(tmp):
            try:
                _write_all(fd, split.shared)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        split.shared = None
        split.shared_stat = self._shared_stat(split.base_sha)
        now = time.time()
        for old in self.git_dir.glob("sharedindex.*"):
            if old.name != path.name:
                try:
                    if now - old.stat().st_mtime > SHARED_EXPIRE:
                        old.unlink()
                except OSError:
                    pass

    def _freshen_shared(self, sha: bytes, known: Any) -> Any:
        """git touches the shared index each time it writes a split index naming it (so no git's clean-up takes
        it for an old one); done here once an hour. The file's stat as it now is."""
        if known is not None and time.time() - known[2] / 1e9 < 3600:
            return known
        try:
            os.utime(self._shared_path(sha))
        except OSError:
            return None
        return self._shared_stat(sha)

    def _refresh_index(self, leaves: dict[str, tuple[bytes, int] | None]) -> None:
        from memtui.core.gitcall import config_env, run_plumbing

        if len(leaves) > 100:
            # Entries set from objects carry no stat data: refresh it once here (an adopted folder), rather than
            # have the next `git status` re-read every file. A refresh may re-read files, so the repository's
            # own filter drivers are switched off for it (config_env).
            refresh = {**os.environ, **config_env(self.git_dir, self.root), "GIT_DIR": str(self.git_dir)}
            run_plumbing(["git", "update-index", "-q", "--refresh"], refresh)

    def _index_file(self) -> Path:
        return self.git_dir / "index"

    def _take_index_lock(self, lock: Path) -> int | None:
        """`lock` (git's index.lock) created as git creates it, open for writing; a person's git holding it is
        waited for (index_wait): None when it is still held then."""
        deadline = time.monotonic() + self.index_wait
        while True:
            try:
                return os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                if time.monotonic() > deadline:
                    return None
                time.sleep(0.02)

    @contextmanager
    def _index_locked(self) -> Iterator[Path]:
        """git's index lock (`index.lock`, taken as git takes it), held while a commit moves the branch; a person's
        git holding it is waited for (index_wait), then the commit is refused before anything moved."""
        lock = self._index_file().with_name("index.lock")
        fd = self._take_index_lock(lock)
        if fd is None:
            raise StoreError(f"another git holds git's index at {self.root} ({lock.name}); nothing was committed: "
                             "when that git is done, try again")
        os.close(fd)
        try:
            yield lock
        finally:
            try:
                lock.unlink()  # still there: the commit did not happen (else the lock became the index)
            except FileNotFoundError:
                pass

    def _stage_index(self, leaves: dict[str, tuple[bytes, int] | None], lock: Path) -> bool:
        """Write git's index with the committed paths' entries set into `lock` (the index.lock memtui holds, as git
        writes its new index there), to become the index once the branch moved: edited in process where
        memtui/core/gitindex.py can do it as git does, else by one `git update-index` on a copy put in its place. A
        commit that does not happen unlinks the lock with what it holds (`_index_locked`). True when edited in
        process (the newest of `_index_known` is what the lock holds)."""
        import shutil

        from memtui.core.gitcall import plumbing_env, run_plumbing

        leaves = {**self._index_behind, **leaves}
        pieces = self._index_in_process(leaves) if self._index_editable() else None
        if pieces is not None:
            # The lock was made O_EXCL with 0666 less the umask, as git makes its index files.
            fd = os.open(lock, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
            try:
                _write_pieces(fd, pieces)
            finally:
                os.close(fd)
            return True
        records = b"".join(
            (b"0 " + b"0" * 40 if leaf is None else b"%o %s" % (leaf[1], leaf[0].hex().encode()))
            + b"\t" + rel.encode() + b"\0"
            for rel, leaf in leaves.items()
        )
        fd, name = tempfile.mkstemp(prefix="memtui-index-", dir=lock.parent)
        os.close(fd)
        staged = Path(name)
        try:
            if self._index_file().exists():
                shutil.copyfile(self._index_file(), staged)
            else:
                staged.unlink()  # git makes a new index
            env = {**os.environ, **plumbing_env(self.git_dir, self.root), "GIT_INDEX_FILE": str(staged)}
            done = run_plumbing(["git", "update-index", "-z", "--index-info"], env, records)
            if done is None:
                raise StoreError(f"git update-index did not answer within the time limit in {self.root}")
            if done[0] != 0:
                raise StoreError(f"git update-index failed: {done[2].decode('utf-8', 'replace').strip()[:400]}")
            os.replace(staged, lock)
        except BaseException:
            if staged.exists():
                staged.unlink()
            raise
        return False

    def _commit_with_index(
        self, paths: list[str], message: str, author: str, committer: str | None = None, allow_empty: bool = False
    ) -> str | None:
        """The former commit through gitpython's IndexFile (reads and rewrites the whole index, writes every tree
        in Python); kept as the reference the fast path is tested against."""
        import git

        with self._git.use("committing") as repo:
            if repo is None:
                return None
            present = [p for p in paths if (self.root / p).exists()]
            gone = [p for p in paths if not (self.root / p).exists()]
            index = repo.index
            if present:
                index.add(present)
            if gone:
                tracked = {e[0] for e in index.entries}
                gone = [p for p in gone if p in tracked]
                if gone:
                    index.remove(gone, working_tree=False)
            if not allow_empty and repo.head.is_valid() and not index.diff("HEAD"):
                return None
            who = git.Actor(author, f"{_slug(author)}@memtui.local")
            by = git.Actor(committer, f"{_slug(committer)}@memtui.local") if committer else who
            c = index.commit(message, author=who, committer=by, **_pinned_dates())
            return c.hexsha

    def head(self) -> Commit | None:
        with self._git.use("reading HEAD") as repo:
            if repo is None or not repo.head.is_valid():
                return None
            c = repo.head.commit
            return Commit(c.hexsha, c.author.name, float(c.authored_date), c.message, ())

    def in_history(self, sha: str) -> bool:
        """Is commit `sha` on the current branch (HEAD or an ancestor of it)?"""
        with self._git.use("reading history") as repo:
            if repo is None or not repo.head.is_valid():
                return False
            import git

            try:
                return bool(repo.is_ancestor(sha, repo.head.commit.hexsha))
            except (git.GitCommandError, git.BadName, ValueError):  # an unknown or unreachable sha
                return False

    def _plumbing_committed(self, rel: str) -> tuple[bool, bytes | None] | None:
        """(has a commit, `rel` as committed or None) through the repository's `git cat-file --batch`, with
        memtui's overrides; None when git cannot say (no commit yet, git not run, a damaged repository). For
        readers that would otherwise import GitPython for one file (`memtui context`, the app's config, a write's
        base)."""
        found = self._plumbing_batch([rel])
        return None if found is None else (True, found[rel])

    def review_base(self, rel: str) -> bytes | None:
        if self.has_git:
            found = self._plumbing_committed(self._real_or_named(rel))
            if found is not None:
                history, data = found
                return data if history else self.read(rel)
        with self._git.use("reading a committed file") as repo:
            history = repo is not None and repo.head.is_valid()
        return self.committed(self._real_or_named(rel)) if history else self.read(rel)

    def review_bases(self, rels: list[str]) -> dict[str, bytes | None]:
        """`review_base` of every file in `rels` through the one `git cat-file --batch`, so a one-shot reader such
        as `memtui context` starts one git for all the files it loads (and for its config)."""
        if not self.has_git or not rels:
            return super().review_bases(rels)
        named = {rel: self._real_or_named(rel) for rel in rels}
        blobs = self._plumbing_batch(list(named.values()))
        if blobs is None:
            return super().review_bases(rels)  # no commit yet, git unusable or damaged: GitPython tells them apart
        return {rel: blobs[named[rel]] for rel in rels}

    def _plumbing_batch(self, rels: list[str]) -> dict[str, bytes | None] | None:
        """Each of `rels` as committed (None where the last commit has no such file), or None when git cannot say:
        not run, no commit yet, a damaged repository, or a path a batch request cannot carry."""
        if any("\n" in rel or "\r" in rel for rel in rels):
            return None
        with self._git.serial():
            batch = self._objects()
            try:
                # The tree first, by its sha: "missing" for it means no commit (or no usable one), not a file the
                # commit lacks; and every file is read from that one tree, even if HEAD moves meanwhile.
                tree = batch.get("HEAD^{tree}")
                if tree is None:
                    return None
                found: dict[str, bytes | None] = {}
                for rel in rels:
                    got = batch.get(f"{tree.sha}:{rel}")
                    found[rel] = got.data if got is not None and got.kind == "blob" else None
            except GitUnreadable:
                raise  # git (and GitPython) would hang on it: said at once
            except StoreError:
                return None
        return found

    def committed(self, rel: str) -> bytes | None:
        found = self._plumbing_batch([rel]) if self.has_git else None
        if found is not None:
            return found[rel]
        with self._git.use("reading a committed file") as repo:
            if repo is None or not repo.head.is_valid():
                return None
            try:
                blob = repo.head.commit.tree / rel
            except KeyError:
                return None
            return blob.data_stream.read()

    def external_changes(self, paths: Collection[str] | None = None) -> list[ExternalChange]:
        # With `paths`, git's status is asked of those paths only (literal pathspecs): at 100,000 files a whole
        # status is a quarter of a second of lstat, for the one file an append changed.
        spec = () if paths is None else ("--", *(":(literal)" + p for p in sorted(paths)))
        if paths is not None and not spec[1:]:
            return []
        from memtui.core import baseline

        look = baseline.begin(self)  # a large folder's first look: its baseline written in the background
        if look is not None:  # nothing differs from a look just taken
            return [] if look == "taken" else baseline.changes_since_look(self, paths)
        self.ensure_history()
        if self.has_git and not self._git.opened:
            found = self._plumbing_external_changes(spec)
            if found is not None:
                return found
        import git

        with self._git.use("git status") as repo:
            if repo is None:
                return []
            try:
                # Ignored files too: a .gitignore (even one that ignores itself) must not hide from review a
                # file that memtui reads as memory.
                raw = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
                                      "--ignore-submodules=all", "--ignored=traditional", *spec)
            except git.exc.GitError as exc:
                if timed_out(exc):
                    raise
                raise StoreError(f"git cannot read the repository at {self.root} ({str(exc).strip()[-200:]}); "
                                 "run `memtui doctor`") from None
            found = []
            for rel in _status_paths(raw):
                before = self.committed(rel)
                after = _as_git_sees(self.root / rel)
                if before != after:
                    found.append((rel, before, after, None))
            return self._with_stored(found)

    def _status_rels(self, spec: tuple[str, ...]) -> list[str] | None:
        """The paths git's status names that could be memory (`_status_paths`), or None when git cannot say."""
        from memtui.core.gitcall import config_env, run_plumbing

        env = {**os.environ, **config_env(self.git_dir, self.root), "GIT_DIR": str(self.git_dir)}
        with self._git.serial():
            done = run_plumbing(["git", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
                                 "--ignore-submodules=all", "--ignored=traditional", *spec], env, cwd=self.root)
        if done is None or done[0] != 0:
            return None
        return _status_paths(done[1].decode("utf-8", "surrogateescape"))

    def _plumbing_external_changes(self, spec: tuple[str, ...] = ()) -> list[ExternalChange] | None:
        """`external_changes` through the git CLI (the same status, memtui's overrides and the repository's filter
        drivers switched off) and one `cat-file --batch` for the committed versions, before GitPython is opened:
        the app's first sync then imports no git library. None when git cannot say (GitPython then tells)."""
        from memtui.core.gitcall import config_env, run_plumbing

        git_dir = self.git_dir
        env = {**os.environ, **config_env(git_dir, self.root), "GIT_DIR": str(git_dir)}
        with self._git.serial():
            done = run_plumbing(["git", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
                                 "--ignore-submodules=all", "--ignored=traditional", *spec], env, cwd=self.root)
        if done is None or done[0] != 0:
            return None
        rels = _status_paths(done[1].decode("utf-8", "surrogateescape"))
        if not rels:
            return []
        committed = self._plumbing_batch(rels)
        if committed is None:
            return None
        found = []
        seen: dict[str, tuple[bytes, str]] = {}
        for rel in rels:
            after, known = self._bytes_now(rel, seen)
            if committed[rel] != after:
                found.append((rel, committed[rel], after, known))
        changes = self._with_stored(found)
        # Only the files listed now stay kept (of those asked about, with paths: the others' stay as they were).
        asked = {p.removeprefix(":(literal)") for p in spec[1:]}
        self._seen = seen if not spec else {**{k: v for k, v in self._seen.items() if k not in asked}, **seen}
        return changes

    def _with_stored(self, found: list[tuple[str, bytes | None, bytes | None, str | None]]) -> list[ExternalChange]:
        """The external changes (path, committed bytes, bytes now, their hash), each with what git would store."""
        stored = self._stored_all([(rel, after) for rel, _, after, _ in found])
        return [ExternalChange(rel, before, after, known, stored.get(rel)) for rel, before, after, known in found]

    def _bytes_now(self, rel: str, seen: dict[str, tuple[bytes, str]]) -> tuple[bytes | None, str | None]:
        """A changed file's bytes as git sees them, and their content_hash when known: a big file whose bytes are
        those of the last listing is not hashed again (an agent's 20 MB log was hashed at every sync). The bytes
        are read and compared every time; no stat stands in for them (a write through a shared mmap can change a
        file and none of its times)."""
        data = _as_git_sees(self.root / rel)
        if data is None or len(data) < SEEN_MIN_BYTES:
            return data, None
        hit = self._seen.get(rel)
        if hit is None or hit[0] != data:
            from memtui.core.store import content_hash

            hit = (data, content_hash(data))
        seen[rel] = hit
        return data, hit[1]

    # history and blame (memtui.core.folder_history): read from git, as the git owner allows ----------------------
    def history(self, rel: str | None = None, since: float | None = None) -> list[Commit]:
        return self.past.history(rel, since)

    def changes_since(self, since: float, known: set[str]) -> list[Commit]:
        return self.past.changes_since(since, known)

    def commit_files(self, sha: str) -> tuple[str, ...]:
        return self.past.commit_files(sha)

    def resolve_change(self, ref: str) -> Commit | None:
        return self.past.resolve_change(ref)

    def file_at(self, rel: str, change: str) -> bytes | None:
        return self.past.file_at(rel, change)

    def blame_chunks(self, rel: str) -> list[tuple[Commit | None, list[str]]] | None:
        return self.past.blame_chunks(rel)

    def change_patches(self, changes: list[str]) -> dict[str, dict[str, str]]:
        return self.past.change_patches(changes)

    def change_patch(self, change: str, rel: str) -> str:
        return self.past.change_patch(change, rel)

    def past_versions(self, rel: str, limit: int) -> list[tuple[str, bytes]]:
        return self.past.past_versions(rel, limit)

    def past_versions_many(self, rels: list[str], limit: int) -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
        return self.past.past_versions_many(rels, limit)

    def merge3(self, ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
        return self.past.merge3(ours, base, theirs)

    # memtui's state (memtui.core.folder_state): the audit log, the queue, intents, rejected bytes, config ------
    def audit_append(self, record: dict[str, Any]) -> None:
        self.kept.audit_append(record)

    def audit_records(self) -> Iterator[dict[str, Any]]:
        return self.kept.audit_records()

    def audit_since(self, cursor: Any, backlog: int | None = None) -> tuple[list[dict[str, Any]], Any]:
        return self.kept.audit_since(cursor, backlog)

    @property
    def queue_dir(self) -> Path:
        return self.kept.queue_dir

    def _queue_folder(self) -> Path:
        return self.kept.queue_folder()

    def numbering(self) -> AbstractContextManager[None]:
        return self.lock()

    def next_proposal_number(self) -> int:
        with self.lock():
            self._queue_folder()
            seq = self.queue_dir / ".seq"
            n = _seq_floor(seq) + 1
            # lexists: a name taken by anything (a dangling link, a folder) is never saved over.
            while os.path.lexists(self.queue_dir / f"p-{n:04d}.json"):
                n += 1
            # Not synced at all (a write's fsyncs are its cost): the number is only a floor. Queue files are never
            # removed, and the next number is one no queue file has, found by looking up the numbers above the
            # floor one by one (not by listing a queue folder that grows with every proposal ever made). So a crash
            # that loses this file's rename or its bytes (an old, empty or torn number reads as a lower floor) can
            # only hand out again a number no queue file was saved with, harmlessly. The queue file that follows
            # is synced with its folder. Written in place (a rename over it cost ~0.3 ms: the filesystem flushes a
            # replaced file's new bytes), unless it is no plain file of its own (`_put_floor`). Where it cannot be
            # put at all (an agent planted a folder there), the probe alone keeps numbers apart: a proposal is
            # numbered and saved under one hold of this lock (`Memory.submit`).
            try:
                _put_floor(seq, n)
            except OSError:
                pass
            return n

    def queue_save(self, pid: str, data: bytes) -> None:
        record = self._queue_record()
        self.kept.queue_save(pid, data)
        record.wrote([(pid, data)])

    def _queue_record(self) -> Any:
        """memtui.core.queue_record's record of this memory's queue writes, kept beside it; started (trust on first
        use) with the queue files there are when it is first made."""
        from memtui.core.places import memories_home, state_key
        from memtui.core.queue_record import QueueRecord

        if self._record is None:
            self._record = QueueRecord(memories_home() / state_key(self.places.real))
        if not self._record.exists():
            held = [(pid, data) for pid, data in self.kept.queue_read(self.kept.queue_ids()) if data is not None]
            self._record.wrote(held)
        return self._record

    def start_queue_record(self) -> None:
        """Start the record of queue writes now (a new memory: empty), not at first use, which trusts what is there."""
        try:
            self._queue_record()
        except OSError:
            pass  # started at first use instead

    def queue_vouched(self, pid: str, data: bytes) -> str | None:
        try:
            return self._queue_record().vouches(pid, data)
        except OSError as exc:
            return f"memtui's record of its queue writes cannot be read ({exc.strerror or exc})"

    def queue_load(self, pid: str) -> bytes | None:
        return self.kept.queue_load(pid)

    def queue_read(self, pids: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        return self.kept.queue_read(pids)

    def queue_ids(self) -> list[str]:
        return self.kept.queue_ids()

    def queue_stamps(self) -> dict[str, tuple[int, ...]]:
        return self.kept.queue_stamps()

    def undo_point(self, rels: list[str]) -> dict[str, Any]:
        """Hard-link each file's current inode under .memtui/undo/: undoing is then a rename, which a full disk
        cannot refuse (a copy of the bytes is kept instead where a link cannot be made). A symlink's target is
        kept as well as the link, so undoing a write through it or a delete of it puts both back.

        Called before anything is written, so a HEAD that cannot take a commit refuses the write here."""
        self.ensure_history()
        self._check_branch()
        keep: dict[str, Any] = {}
        folder = self.state_ready() / UNDO_DIR
        folder.mkdir(parents=True, exist_ok=True)
        for k, rel in enumerate(rels):
            src = self._full(rel)
            name = self._name_path(rel)
            link = os.readlink(name) if name.is_symlink() else None
            if not src.is_file():
                keep[rel] = _Kept(src, None, link, name)
                continue
            dest = folder / f"{os.getpid()}-{threading.get_ident()}-{k}"
            dest.unlink(missing_ok=True)
            try:
                os.link(src, dest)
                keep[rel] = _Kept(src, dest, link, name)
            except OSError:
                keep[rel] = _Kept(src, src.read_bytes(), link, name)
        return keep

    def undo(self, point: dict[str, Any]) -> None:
        for rel, kept in point.items():
            if kept.data is None:
                if kept.link is None:
                    self.delete(rel)
            elif isinstance(kept.data, Path):
                os.replace(kept.data, kept.real)
            else:
                atomic_write(kept.real, kept.data)
            if kept.link is not None and not os.path.lexists(kept.name):
                os.symlink(kept.link, kept.name)

    def drop_undo_point(self, point: dict[str, Any]) -> None:
        for kept in point.values():
            if isinstance(kept.data, Path):
                kept.data.unlink(missing_ok=True)

    def intent_save(self, data: bytes | None) -> None:
        self.kept.intent_save(data)

    def intent_load(self) -> bytes | None:
        return self.kept.intent_load()

    def keep_rejected(self, rel: str, data: bytes, stamp: str) -> str | None:
        return self.kept.keep_rejected(rel, data, stamp)

    def config_text(self) -> str | None:
        return self.kept.config_text()

    def reviewed_config(self) -> tuple[str | None, str | None]:
        disk = self.config_text()
        if not self.has_git or not self.places.inside:  # beside: the person's own state folder, not the memory's
            return disk, None
        stamp = self._head_stamp()
        cached = self._reviewed_config
        if cached is not None and cached[0] == (disk, stamp):
            return cached[1]
        # Plumbing git, not GitPython: the app reads its config before its first frame, and importing git there
        # costs start-up time (tests/test_app.py checks the start path imports neither git nor the SDK).
        found = self._plumbing_committed(f"{STATE_DIR}/config.toml")
        if found is None:
            return disk, None  # no usable git: every write is refused anyway, and `memtui doctor` says why
        history, data = found
        committed = data.decode("utf-8", "replace") if data is not None else None
        result: tuple[str | None, str | None] = (disk, None) if not history or committed == disk else (committed, disk)
        self._reviewed_config = ((disk, stamp), result)
        return result

    def _head_stamp(self) -> tuple[Any, ...]:
        """Cheap signs that the commit HEAD names may have moved, so what is committed may differ: git rewrites
        the index on a commit, and HEAD, its branch's ref or packed-refs whenever HEAD moves (`git reset --soft`
        leaves the index alone). A file is rewritten by renaming a new one over it, so its inode changes too."""
        git_dir = str(self.git_dir)
        try:  # non-blocking: a FIFO planted as HEAD must not hang every read of the config
            fd = os.open(os.path.join(git_dir, "HEAD"), os.O_RDONLY | os.O_NONBLOCK)
            try:
                head = os.read(fd, 1024)
            finally:
                os.close(fd)
        except OSError:
            head = b""
        names = ["index", "packed-refs"]
        if head.startswith(b"ref: "):
            names.append(head[5:].strip().decode("utf-8", "replace"))
        stamp: list[Any] = [head]
        for name in names:
            try:
                st = os.stat(os.path.join(git_dir, name))
            except OSError:
                stamp.append(None)
            else:
                stamp.append((st.st_mtime_ns, st.st_size, st.st_ino))
        return tuple(stamp)

    def set_config(self, text: str) -> None:
        self.kept.set_config(text)


def _fast_import_path(rel: str) -> bytes:
    """A path as `git fast-import` reads it: C-quoted (quotes, backslashes and control characters escaped), so a
    name with a line break or a quote cannot end the command early."""
    raw = rel.encode("utf-8", "surrogateescape")
    out = bytearray(b'"')
    for b in raw:
        if b in (0x22, 0x5C):
            out += b"\\" + bytes([b])
        elif b < 0x20 or b == 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    return bytes(out + b'"')


BESIDE_ATTRIBUTES = "* -text -ident -filter -working-tree-encoding\n"


def _init_beside(git_dir: Path, work_tree: Path) -> Any:
    """memtui's own repository for a folder it keeps beside: a git dir in the state folder whose work tree is the
    folder (`core.bare = false`, `core.worktree`), made without a `.git` or anything else in the folder (`git init
    --separate-git-dir` would leave a gitlink file there). Its calls get `GIT_DIR` and `GIT_WORK_TREE` from the git
    owner, so git never looks for a repository above the folder."""
    from memtui.core.gitcall import repo_class

    repo = repo_class().init(git_dir, bare=True, initial_branch="main")
    # Every file's bytes stored exactly, whatever the folder's `.gitattributes` or the person's global config ask
    # (`$GIT_DIR/info/attributes` comes before both): history beside is a record of what was on disk.
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "attributes").write_text(BESIDE_ATTRIBUTES)
    real = os.path.realpath(work_tree)
    with repo.config_writer() as config:
        config.set_value("core", "bare", False)
        # For a person's `git --git-dir …` (memtui names the work tree on every call): a path holding a line break
        # cannot be a config value, and is left out.
        if not any(c in real for c in "\r\n\0"):
            config.set_value("core", "worktree", real)
        config.set_value("core", "logAllRefUpdates", True)
    return repo_class()(git_dir)


INDEX_WALK_AT_ONCE = 512 * 1024
_HEADER_SIZE = 12  # of git's index file

# Config names that can change how git writes its index (see FolderStore._index_editable).
_INDEX_SETTINGS = (b"index", b"feature", b"untrackedcache", b"splitindex", b"sharedrepository", b"fsync",
                   b"sparse")


def _read_all(fd: int, size: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, max(size, 1 << 16))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _write_pieces(fd: int, pieces: list[bytes | memoryview]) -> None:
    """Write `pieces` in order into the empty file `fd` (git's new index, renamed over the old one next).

    Its blocks are not allocated ahead (posix_fallocate), though on ext4 that made the rename over a 9.7 MB index
    ~1 ms instead of ~7: ext4 writes a file out before a rename over an existing one commits only while its blocks
    are still to be allocated (auto_da_alloc), and git does not fsync its index. Allocated ahead, a power cut after
    the commit left `.git/index` as zeros, neither the old index nor the new (tests/test_attack_commit_path.py)."""
    for piece in pieces:
        _write_all(fd, piece)


# How a person rebuilds a git index that git cannot read (`git reset` alone reads the old one first, and dies on it).
REBUILD_INDEX = ("Move it aside and rebuild it from the last commit: `mv .git/index .git/index.damaged && git reset` "
                 "(the files in the folder are not touched; what was staged must be added again)")


GIT_LOCKS = ("index.lock", "HEAD.lock", "config.lock", "packed-refs.lock")


def git_lock_files(git_dir: Path) -> list[Path]:
    """git's lock files: the index, HEAD, config, packed refs, any ref under refs/ and any reflog under logs/."""
    found = [git_dir / n for n in GIT_LOCKS if os.path.lexists(git_dir / n)]  # a planted dangling link too
    for sub in ("refs", "logs"):
        # os.walk, not Path.rglob: the same names (links to folders not followed) at a seventh of the cost, paid
        # before every commit
        locks = [os.path.join(folder, name) for folder, _, names in os.walk(os.path.join(git_dir, sub))
                 for name in names if name.endswith(".lock")]
        found += sorted(map(Path, locks))
    return found


def clear_stale_git_locks(git_dir: Path, wait: float = 5.0) -> list[Path]:
    """Remove git lock files a killed writer left behind; call only while holding the memtui lock.

    Every memtui git write happens under the memtui lock, so a lock file seen while holding it was left by a
    process that died mid-commit (else every later commit fails with "Lock ... could not be obtained") — or is a
    person's git at work: git keeps its locks closed while it waits (`git commit -a` in its editor, a hook), so a
    lock is stale only when no process has it open and no git works in this repository. One that is not stale is
    waited for, then left alone: the commit that needs it says what git said."""
    removed: list[Path] = []
    try:
        listed = os.listdir(git_dir)
    except OSError:
        listed = []
    # a killed commit's new index, made under the memtui lock too
    for staged in (git_dir / name for name in listed if name.startswith("memtui-index-")):
        try:
            staged.unlink()
            removed.append(staged)
        except OSError:
            pass
    deadline = time.monotonic() + wait
    for lock in git_lock_files(git_dir):
        while (live := _open_elsewhere(lock) or _git_at_work(git_dir)) and time.monotonic() < deadline:
            time.sleep(0.02)
        if live:
            continue
        try:
            lock.unlink()
            removed.append(lock)
        except FileNotFoundError:
            pass
    return removed


def _open_elsewhere(path: Path) -> bool:
    """Is `path` open in some live process? (Linux /proc; elsewhere, judged by age.)"""
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        try:
            return time.time() - path.stat().st_mtime < 2.0
        except FileNotFoundError:
            return False
    target = str(path)
    for fd_dir in proc.glob("[0-9]*/fd"):
        try:
            for fd in os.scandir(fd_dir):
                try:
                    if os.readlink(fd.path) == target:
                        return True
                except OSError:
                    continue
        except OSError:
            continue
    return False


def _git_at_work(git_dir: Path) -> bool:
    """Is a git process (other than a reader memtui keeps, `git cat-file --batch`) running in this repository:
    its working folder inside the work tree or the git folder? (Linux /proc; elsewhere, no.)"""
    proc = Path("/proc")
    if not (proc / "self" / "cwd").exists():
        return False
    places = {str(git_dir.resolve()), str(git_dir.resolve().parent)}
    for pid_dir in proc.glob("[0-9]*"):
        try:
            argv = (pid_dir / "cmdline").read_bytes().split(b"\0")
            if not argv or not os.path.basename(argv[0].decode("utf-8", "replace")).startswith("git"):
                continue
            if argv[1:2] == [b"cat-file"]:
                continue  # memtui's own persistent reader (any process's): it takes no lock
            cwd = os.readlink(pid_dir / "cwd")
        except OSError:
            continue
        if any(cwd == place or cwd.startswith(place + os.sep) for place in places):
            return True
    return False


class _Kept(Frozen):
    """What `undo_point` kept of one path: its real file, that file's bytes (a hard link, or a copy; None: it did
    not exist), and the symlink the path ends in (its target text, and where it lives), if any."""

    real: Path
    data: Path | bytes | None
    link: str | None
    name: Path

    def __init__(self, real: Path, data: Path | bytes | None, link: str | None, name: Path) -> None:
        put = object.__setattr__
        put(self, "real", real)
        put(self, "data", data)
        put(self, "link", link)
        put(self, "name", name)


def _pinned_dates() -> dict[str, str]:
    """A pinned clock (MEMTUI_NOW) dates the commit too, so git history agrees with the audit log."""
    if not os.environ.get("MEMTUI_NOW"):
        return {}
    from memtui.core import clock

    pinned = clock.now().astimezone()
    stamp = f"{int(pinned.timestamp())} {pinned:%z}"
    return {"author_date": stamp, "commit_date": stamp}


TREE_MODE = b"40000"  # as git writes a folder's mode in a tree (some old tools wrote "040000")
FOLDER_MODES = (TREE_MODE, b"040000")


GITLINK_MODE = b"160000"  # a submodule's entry in a tree


def _write_tree(
    read: Any, store: Any, binsha: bytes | None, leaves: dict[str, tuple[bytes, int] | None],
    trees: dict[bytes, dict[bytes, tuple[bytes, bytes]]] | None = None,
) -> bytes | None:
    """The tree `binsha` (None: empty) with `leaves` ('a/b.md' -> (blob sha, mode), or None to remove) applied;
    `read(binsha)` gives a tree object's bytes, `store(kind, data)` stores an object, `trees` caches parsed trees.

    Only the trees along the changed paths are read and written, as raw entries (a folder of thousands of files
    costs a bytes scan, not an object per entry); a tree left empty is dropped (None), as git has no empty
    folders."""
    trees = {} if trees is None else trees
    base = _parsed_tree(read, trees, binsha) if binsha is not None else {}
    entries = dict(base)
    # A tree this function wrote is in git's order; changing entries in place (or removing some) keeps that order,
    # so only a new name, or a name turning from file to folder or back, needs the entries sorted again.
    resort = not isinstance(base, _GitOrdered)
    # Entries whose object alone changed (same name, same mode): a big tree this module wrote has them replaced
    # in its bytes, 20 bytes each, instead of every entry formatted again (16,000 files in a folder: ~6 ms).
    resha: list[bytes] | None = [] if not resort and getattr(base, "raw", None) is not None else None
    below: dict[bytes, dict[str, tuple[bytes, int] | None]] = {}
    for rel, leaf in leaves.items():
        name, sep, rest = rel.partition("/")
        key = name.encode()
        if sep:
            below.setdefault(key, {})[rest] = leaf
        elif leaf is None:
            entries.pop(key, None)
            resha = None
        else:
            mode = b"%o" % leaf[1]
            old = entries.get(key)
            if old is None or (old[0] in FOLDER_MODES) != (mode in FOLDER_MODES):
                resort = True
            if resha is not None:
                if old is None or old[0] != mode:
                    resha = None
                else:
                    resha.append(key)
            entries[key] = (mode, leaf[0])
    for key, inner in below.items():
        old = entries.get(key)
        if old is not None and old[0] == GITLINK_MODE:
            # A submodule: git refuses a path inside one, and writing a folder here would drop it from the commit.
            raise StoreError(f"{key.decode('utf-8', 'replace')} is a git submodule; memtui does not commit files "
                             "inside it. Nothing was committed")
        sub = _write_tree(read, store, old[1] if old and old[0] in FOLDER_MODES else None, inner, trees)
        if sub is None:
            entries.pop(key, None)
            resha = None
        else:
            if old is None or old[0] not in FOLDER_MODES:
                resort = True
            if resha is not None:
                if old is None or old[0] != TREE_MODE:
                    resha = None
                else:
                    resha.append(key)
            entries[key] = (TREE_MODE, sub)
    if not entries:
        return None
    data = None
    if resha is not None and not resort and binsha is not None:
        if all(entries[k] == base[k] for k in resha):
            return binsha
        data = _resha(base.raw, entries, resha)  # type: ignore[attr-defined]
    elif entries == base and binsha is not None:
        return binsha
    if resort:
        # git orders a tree's entries by name, a folder's name compared as if it ended in "/".
        entries = {n: entries[n] for n in sorted(entries, key=lambda n: n + b"/" if entries[n][0] in FOLDER_MODES
                                                  else n)}
    if data is None:
        data = b"".join([b"%s %s\0%s" % (mode, n, sha) for n, (mode, sha) in entries.items()])
    sha = store(b"tree", data)
    if len(trees) < 256:
        kept = trees[sha] = _GitOrdered(entries)  # the next commit starts from this tree: not parsed again
        if len(data) > RAW_TREE_AT:
            kept.raw = data
            if isinstance(base, _GitOrdered):
                base.raw = None  # one big tree's bytes kept per folder: the newest, which the next commit edits
    return sha


RAW_TREE_AT = 16 * 1024  # bytes of a tree from which the tree's bytes are kept with its entries (see _resha)


def _resha(raw: bytes, entries: dict[bytes, tuple[bytes, bytes]], keys: list[bytes]) -> bytes | None:
    """`raw` (a tree's bytes, in git's order) with the objects of `keys` replaced by those in `entries`, their
    names and modes the same; None when an entry cannot be told apart for sure (its bytes " <name>\0" found twice:
    once in the entry itself, once inside an object id or across entries), and the tree is then written whole."""
    out = bytearray(raw)
    for key in keys:
        mode, sha = entries[key]
        needle = b" " + key + b"\0"
        at = raw.find(needle)
        if at < 0 or raw.find(needle, at + 1) >= 0 or raw[at - len(mode):at] != mode:
            return None
        at += len(needle)
        out[at:at + 20] = sha
    return bytes(out)


class _GitOrdered(dict):
    """A tree's entries, by name, known to be in git's order (this module wrote the tree); a big one keeps the
    tree's bytes too (`raw`), while it is the newest tree of its folder."""

    raw: bytes | None = None


def _parsed_tree(read: Any, trees: dict[bytes, dict[bytes, tuple[bytes, bytes]]],
                 binsha: bytes) -> dict[bytes, tuple[bytes, bytes]]:
    if binsha not in trees:
        if len(trees) >= 256:
            trees.clear()
        trees[binsha] = _tree_entries(read(binsha))
    return trees[binsha]


def _recorded_mode(read: Any, trees: dict[bytes, dict[bytes, tuple[bytes, bytes]]], root: bytes | None,
                   rel: str) -> int | None:
    """The mode tree `root` records for `rel` (a folder's too), None where it has no such entry."""
    binsha, mode = root, None
    for part in rel.split("/"):
        if binsha is None:
            return None
        entry = _parsed_tree(read, trees, binsha).get(part.encode())
        if entry is None:
            return None
        mode = int(entry[0], 8)
        binsha = entry[1] if entry[0] in FOLDER_MODES else None
    return mode


def _recorded_entry(read: Any, trees: dict[bytes, dict[bytes, tuple[bytes, bytes]]], root: bytes | None,
                    rel: str) -> tuple[int, bytes] | None:
    """(mode, object id) tree `root` records for the file `rel`, None where it has no such file."""
    binsha: bytes | None = root
    entry = None
    for part in rel.split("/"):
        if binsha is None:
            return None
        entry = _parsed_tree(read, trees, binsha).get(part.encode("utf-8", "surrogateescape"))
        if entry is None:
            return None
        binsha = entry[1] if entry[0] in FOLDER_MODES else None
    return None if entry is None or entry[0] in FOLDER_MODES else (int(entry[0], 8), entry[1])


# What a person's git is in the middle of: (the file or folder in git's directory that says so, what it is, how to
# finish it, how to abort it); the first found names it (`rebase-apply/applying` is `git am`'s, checked before a
# rebase's `rebase-apply`; `sequencer` stays between the picks of a multi-commit cherry-pick or revert).
IN_PROGRESS = (
    ("MERGE_HEAD", "merge", "git merge --continue", "git merge --abort"),
    ("rebase-merge", "rebase", "git rebase --continue", "git rebase --abort"),
    ("rebase-apply/applying", "git am", "git am --continue", "git am --abort"),
    ("rebase-apply", "rebase", "git rebase --continue", "git rebase --abort"),
    ("CHERRY_PICK_HEAD", "cherry-pick", "git cherry-pick --continue", "git cherry-pick --abort"),
    ("REVERT_HEAD", "revert", "git revert --continue", "git revert --abort"),
    ("sequencer", "cherry-pick or revert", "git cherry-pick --continue", "git cherry-pick --abort"),
)
_UNKNOWN = object()  # (_check_staged) what memtui commits for a path is not known: only HEAD's version is kept


def _unmerged_refusal(rels: list[str], entries: dict[str, Any], doing: tuple[str, str, str, str] | None) -> str | None:
    """Why a write to one of `rels` is refused: it has entries of stages 1-3 in git's index (`entries`); None if
    none has. `doing` is the operation in progress (`in_progress`), None for a conflict no operation names (`git
    stash pop`, `git checkout -m`)."""
    for rel in rels:
        if any(stage for stage, *_ in entries.get(rel, ())):
            what, cont, abort = (doing[0], doing[2], doing[3]) if doing else ("merge", "", "")
            then = f"`{cont}`; or `{abort}`" if doing else "commit"
            return (f"{rel} is unmerged in git's index (a {what} stopped on a conflict in it): memtui would replace "
                    f"every version git keeps of it, and git would take the conflict as resolved. Nothing was written; "
                    f"finish or abort the {what} first (resolve {rel}, `git add {rel}`, then {then}), then try again")
    return None


def _staged_refusal(new: dict[str, Any], head: dict[str, tuple[int, bytes] | None],
                    entries: dict[str, Any]) -> str | None:
    """Why committing `new` would replace a version the person staged (see `FolderStore._check_staged`); None when
    it would not. Only the paths in `entries` are looked at."""
    for rel, found in entries.items():
        obj = new[rel]
        staged = next((e for e in found if e[0] == 0), None)
        recorded = head.get(rel)
        if staged is None:
            if recorded is None or obj is None:
                continue
            return (f"you staged the removal of {rel} (git rm --cached), which is not committed, and memtui's commit "
                    f"would undo it in git's index. Nothing was written; commit it (`git commit`) or unstage it "
                    f"(`git restore --staged {rel}`), then try again")
        if staged[3] or (recorded is not None and (staged[2], staged[1]) == recorded) or staged[1] == obj:
            continue
        return (f"you staged a version of {rel} (git add) that is not committed, and memtui's commit would replace "
                f"it in git's index. Nothing was written; commit it (`git commit`) or unstage it (`git restore "
                f"--staged {rel}`), then try again")
    return None


def in_progress(git_dir: Path) -> tuple[str, str, str, str] | None:
    """(what, git's marker for it, the command that finishes it, the one that aborts it) of the operation in
    progress in the repository at `git_dir`, None when there is none: a few stats, no git."""
    for marker, what, cont, abort in IN_PROGRESS:
        if os.path.lexists(git_dir / marker):
            return what, marker, cont, abort
    return None


def _as_git_sees(path: Path) -> bytes | None:
    """A file's bytes as git would record them: a symlink is its target's name, never what it points at (a link to
    `.git/config` must not put the config on the reviewer's screen)."""
    try:
        if os.path.islink(path):
            return os.readlink(path).encode("utf-8", errors="surrogateescape")
        return _regular_bytes(path)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


# A queue file's name as listed in its folder (no separator, no dot-name): read by name in the open folder.
def _status_paths(raw: str) -> list[str]:
    """The paths `git status --porcelain=v1 -z` names that could be memory: memtui's own files and ignored folders
    memtui does not read either (list_files skips them) left out."""
    out = []
    for item in raw.split("\0"):
        if len(item) < 4:
            continue
        rel = item[3:]
        if _ignored_private(rel):
            continue
        if item.startswith("!!") and (rel.endswith("/") or any(
                part in SKIP_DIRS or part.startswith(".") for part in rel.split("/")[:-1])):
            continue
        out.append(rel)
    return out


def _ignored_private(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return rel.startswith(PRIVATE) or rel == AUDIT_FILE or (name.startswith(".") and name.endswith(".tmp"))


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name.lower()) or "memtui"
