"""The folder store: memory files on disk, history in git (gitpython), audit in memory-log.jsonl.

Where memtui's state, the audit log and git live is decided by `memtui.core.storage.places` alone: inside the folder for
a root made by `memtui init` (`.memtui/`, `memory-log.jsonl`, `.git`), beside it for any other folder (nothing of
memtui's is written into a folder it did not make). Writes are atomic (temp file in the same folder, fsync, rename)
and happen under an `fcntl` lock on the state folder's ``lock`` that every memtui process honours. git is imported
only when history is first needed.

The store keeps the files, the paths and where history starts; each other job is a part it composes and delegates
to: memtui's state (memtui.core.storage.folder_state), commits (memtui.core.storage.folder_commit, with git's index in
memtui.core.storage.folder_index), the changes made past memtui (memtui.core.storage.folder_external) and history reads
(memtui.core.storage.folder_history).
"""

from __future__ import annotations

import os
import stat
import threading
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Iterator

from memtui.core.basics.record import Frozen
from memtui.core.grammar.paths import PathRefused, check_rel, clean_rel, plain_name, protected_name, resolve_inside
from memtui.core.storage.folder_commit import (  # noqa: F401 - names other modules import from here
    CommitEngine, _pinned_dates, _slug, clear_stale_git_locks, git_lock_files, in_progress,
)
from memtui.core.storage.folder_external import SKIP_DIRS, ExternalReview, _status_paths
from memtui.core.storage.folder_history import FolderHistory, _files_changed
from memtui.core.storage.folder_index import REBUILD_INDEX  # noqa: F401 - named by memtui doctor
from memtui.core.storage.folder_state import (  # noqa: F401 - names other modules import from here
    INTENT_FILE, QUEUE_ID, UNDO_DIR, FolderState, _put_floor, _queue_bytes, _regular_bytes, _seq_floor, atomic_write,
    served_bytes,
)
from memtui.core.storage.gitcall import GitOwner, errors
from memtui.core.storage.gitobjects import GitUnreadable, config_stamp, refuse_blocking_include
from memtui.core.storage.places import AUDIT_FILE, STATE_DIR, places_for  # noqa: F401 (AUDIT_FILE, imported from here)
from memtui.core.storage.store import (  # noqa: F401 (LockTimeout)
    INIT_SUBJECT, Commit, ExternalChange, LockTimeout, Store, StoreError)


def git_owner(root: Path, git_dir: Path | None) -> GitOwner:
    """The one owner of a folder's git calls: git's folder checked before GitPython opens it, and memtui's filter
    overrides made again whenever git's config or a file it includes changes."""
    return GitOwner(root, git_dir, vet=refuse_blocking_include, stamp=config_stamp)


class FolderStore(Store):
    index_wait = 5.0  # seconds a commit waits for a person's git to let go of git's index
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().absolute()
        self.location = str(self.root)
        # Where the state, audit log and history are (memtui.core.storage.places): decided once, when the store is
        # opened.
        self.places = places_for(self.root)
        self.kept = FolderState(self.places, self.root)  # memtui's state: audit, queue, intents, undo, config, lock
        self._git = git_owner(self.root, self.places.git_dir if self.places.own_history else None)
        self.past = FolderHistory(self)  # history and blame, read through this store's git owner
        self._batch: Any = None  # memtui.core.storage.gitobjects.Batch, started on first use
        self.commits = CommitEngine(self)  # the commit and git index engine, writing to this store's git
        self.outside = ExternalReview(self)  # the changes made past memtui, listed for review
        self._local = threading.local()
        self._thread_lock = threading.RLock()
        # (config text on disk, git index mtime) -> (config in effect, pending edit): see reviewed_config.
        self._reviewed_config: tuple[Any, tuple[str | None, str | None]] | None = None
        self._before: dict[str, dict[str, bool]] = {}  # began → commit → an ancestor of it (see before_memtui)
        self._record: Any = None  # memtui.core.storage.queue_record.QueueRecord, made on first use

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
        if self.places.recording():
            return "history is being recorded (baseline in progress)"
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

    _real_root: str | None = None  # the root's real path, while `pinned_root` holds it

    @contextmanager
    def pinned_root(self) -> Iterator[None]:
        """The root's real path found once for the reads inside; every path under it is still checked, link by
        link, on each read. (Only the person's own root, outside the folder an agent writes, could move meanwhile.)"""
        self._real_root = os.path.realpath(self.root)
        try:
            yield
        finally:
            self._real_root = None

    def keep_unlisted(self, path: Path) -> None:
        self.places.keep_unlisted(path)

    def _full(self, rel: str) -> Path:
        return resolve_inside(self.root, rel, self._real_root)

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

    def read_checked(self, rel: str) -> tuple[str, bytes | None]:
        """`check_path` is `check_rel` and `resolve_inside`, which `read` does itself (one walk of the path)."""
        return check_rel(rel), self.read(rel)

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
    # Every git call goes through `self._git` (memtui.core.storage.gitcall.GitOwner): one thread at a time, bounded in
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

    def forked(self) -> None:  # the parent's `git cat-file`, if running, is dropped: closing it would end it there
        self._batch = None

    def _close_batch(self) -> None:
        if self._batch is not None:
            self._batch.close()
            self._batch = None

    @property
    def git_dir(self) -> Path:
        return self.places.git_dir

    def _objects(self) -> Any:
        """The repository's one `git cat-file --batch` (memtui/core/storage/gitobjects.py); use it under
        `_git.serial()`."""
        if self._batch is None:
            from memtui.core.storage.gitobjects import Batch

            self._batch = Batch(self.git_dir, self.root)
            import weakref

            weakref.finalize(self, self._batch.close)  # its process ends with the store (or at exit)
        return self._batch

    def init_git(self, author: str = "memtui", *, beside: bool = False, look: Any = None) -> str | None:
        """Start history with the folder's files as they are: git in the folder (`memtui init --git`, the person's
        request; a folder kept beside then has the person's repository), or with `beside` memtui's own repository
        in its state folder (`ensure_history`), nothing written into the folder; `look`: only the files still as
        that first look saw them (memtui.core.storage.baseline.Look). Returns the first commit."""
        from memtui.core.storage.gitcall import repo_class

        if not beside and self.places.own_history:
            self.forget_git()
            self.places = self.kept.places = self.places.with_git_in_folder()
            self._git = git_owner(self.root, None)
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
        return self.commit(files, INIT_SUBJECT, author, allow_empty=True)

    def _first_commit_beside(self, files: list[str], author: str, look: Any = None) -> str | None:
        """History beside a folder starts with its files as they are, written by `git fast-import` as one pack
        (git's own `add` writes a loose object per file: 10,000 files took 17 s through the commit path and 8 s
        through `git add`), then the index read from that tree and refreshed from the disk (`read-tree`, `update-index
        --refresh`). memtui's own repository stores every file's bytes exactly (`info/attributes`: no conversion),
        so a reject restores what was on disk. With `look` (a large folder's first look,
        memtui/core/storage/baseline.py), a file made or changed since, by its stat before or after the read, is left
        out: it comes up for review."""
        from memtui.core.storage.gitcall import config_env, read_git, run_plumbing

        stream = _first_commit_stream(self.root, files, author, look)
        env = {**os.environ, **config_env(self.git_dir, self.root), "GIT_DIR": str(self.git_dir),
               "GIT_WORK_TREE": str(self.root)}
        with self.lock(), self._git.serial():
            # Level 1: the pack is written once and read rarely; zlib at its default level took most of the time.
            for args, stdin in ((["git", "-c", "pack.compression=1", "fast-import", "--quiet", "--done"], stream),
                                (["git", "read-tree", "HEAD"], None),
                                (["git", "update-index", "-q", "--refresh"], None),
                                (["rev-parse", "HEAD"], None)):
                step = next(a for a in args[1:] if not a.startswith(("-", "pack."))) if args[0] == "git" else args[0]
                # the last step reads the commit just written, through the owner of git reads
                done = run_plumbing(args, env, stdin, cwd=self.root) if args[0] == "git" else read_git(args, env,
                                                                                                       cwd=self.root)
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
            from memtui.core.storage import baseline

            # A large folder's first look was taken and its baseline deferred (memtui/core/storage/baseline.py): written
            # from that look (here, unless the background process did it first), never from the files as they are.
            look = baseline.load(self.places.state)
            if look is not None and os.path.lexists(self.places.git_dir):
                import shutil

                shutil.rmtree(self.places.git_dir)  # a baseline a crash left half written: no commit came after it
            sha = self.init_git(beside=True, look=look)
            if look is not None:
                baseline.record_gone(self.places, look, self.root)  # before the look goes: no deletion is lost
            baseline.written(self.places)
            self.began(record=True)
            self.start_queue_record()
        return sha

    def began(self, *, record: bool = False) -> str | None:
        """The commit history stood at when memtui first kept this folder (its state beside it): what came before
        is the starting point, there before memtui reviewed anything (memtui/core/timeline/provenance.py). Recorded in
        the state folder when memtui first keeps the folder (`ensure_history`, with `record`); None for a memory memtui
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
            from memtui.core.storage.gitcall import config_env, read_git

            env = {**os.environ, **config_env(self.git_dir, self.root), "GIT_DIR": str(self.git_dir),
                   "GIT_WORK_TREE": str(self.root)}
            done = read_git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], env, None, cwd=self.root)
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

        from memtui.core.storage.gitcall import run_plumbing

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
        self._git = git_owner(self.root, None)
        return str(target)

    # commits (memtui.core.storage.folder_commit): the approved bytes into history, the person's repository kept theirs
    # ------
    def check_change(self, contents: dict[str, bytes | None], record: bool = True) -> None:
        self.commits.check_change(contents, record)

    def commit(
        self, paths: list[str], message: str, author: str, committer: str | None = None, allow_empty: bool = False,
        contents: dict[str, bytes | None] | None = None,
    ) -> str | None:
        return self.commits.commit(paths, message, author, committer, allow_empty, contents)

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
            try:
                return bool(repo.is_ancestor(sha, repo.head.commit.hexsha))
            except (errors().command, errors().bad_name, ValueError):  # an unknown or unreachable sha
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

    # external changes (memtui.core.storage.folder_external): what changed past memtui, for a person's review
    # ------------
    def external_changes(self, paths: Collection[str] | None = None) -> list[ExternalChange]:
        return self.outside.changes(paths)

    def _status_rels(self, spec: tuple[str, ...]) -> list[str] | None:
        """The paths git's status names that could be memory (`_status_paths`), or None when git cannot say."""
        from memtui.core.storage.gitcall import config_env, status_porcelain

        env = {**os.environ, **config_env(self.git_dir, self.root), "GIT_DIR": str(self.git_dir)}
        with self._git.serial():
            done = status_porcelain(env, self.root, spec)
        if done is None or done[0] != 0:
            return None
        return _status_paths(done[1].decode("utf-8", "surrogateescape"))

    # history and blame (memtui.core.storage.folder_history): read from git, as the git owner allows
    # ----------------------
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

    def past_version_ids_many(self, rels: list[str], limit: int) -> dict[str, list[tuple[str, str]]] | None:
        return self.past.past_version_ids_many(rels, limit)

    def past_versions_many(self, rels: list[str], limit: int, current: Callable[[str], bytes | None] | None = None,
                           found: dict[str, list[tuple[str, str]]] | None = None,
                           ) -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
        return self.past.past_versions_many(rels, limit, current, found)

    def merge3(self, ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
        return self.past.merge3(ours, base, theirs)

    # memtui's state (memtui.core.storage.folder_state): the audit log, the queue, intents, rejected bytes, config
    # ------
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
        """memtui.core.storage.queue_record's record of this memory's queue writes, kept beside it; started (trust on
        first use) with the queue files there are when it is first made."""
        from memtui.core.storage.places import memories_home, state_key
        from memtui.core.storage.queue_record import QueueRecord

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
        self.commits._check_branch()
        keep: dict[str, Any] = {}
        folder = self.kept.own_folder(UNDO_DIR)  # never a symlink planted there: files are linked and renamed in it
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


def _served(store: FolderStore, rel: str) -> bytes | None:
    """`read` for what is handed out (`show`, an agent's read, lint, blame): a file with another name is refused,
    as `folder_state.served_bytes` says."""
    return served_bytes(store._full(rel), rel, store.state / UNDO_DIR,
                        lambda: store.committed(rel) if store.has_git else None)


FolderStore.served = _served  # type: ignore[method-assign]  (kept out of the class, which is at its size bound)


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
    from memtui.core.storage.gitcall import repo_class

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


def _first_commit_stream(root: Path, files: list[str], author: str, look: Any = None) -> bytes:
    """The `git fast-import` stream of history's first commit beside a folder: `files` as they are on disk (with
    `look`, only those still as the first look saw them; the rest are named in the message and come up for review)."""
    import time as _time

    email = f"{_slug(author)}@memtui.local"
    dates = _pinned_dates()
    when = dates.get("author_date") or f"{int(_time.time())} +0000"
    message = INIT_SUBJECT.encode() + b"\n\nhistory beside the folder, its files as they were\n"
    name = author.replace("<", "").replace(">", "").replace("\n", " ").encode("utf-8", "replace")
    parts: list[bytes] = []
    entries: list[bytes] = []
    left = 0
    for k, rel in enumerate(files, 1):
        full = os.path.join(root, rel)
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
    return b"".join(parts)
