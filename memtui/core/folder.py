"""The folder store: memory files on disk, history in git (gitpython), audit in memory-log.jsonl.

Writes are atomic (temp file in the same folder, fsync, rename) and happen under an `fcntl` lock on
``.memtui/lock`` that every memtui process honours. git is imported only when history is first needed.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from memtui.core import git_hooks
from memtui.core.paths import PathRefused, clean_rel, resolve_inside
from memtui.core.store import Commit, ExternalChange, LockTimeout, NoHistory, Store, StoreError

STATE_DIR = ".memtui"
AUDIT_FILE = "memory-log.jsonl"
# The change being applied right now (see Memory._apply): finished or undone after a crash.
INTENT_FILE = "intent.json"
# Hard links to the files a write replaces, kept until its commit is made (see FolderStore.undo_point).
UNDO_DIR = "undo"
# Paths that are memtui's own bookkeeping, never memory content and never an external change.
PRIVATE = (STATE_DIR + "/", AUDIT_FILE, ".git/")
SKIP_DIRS = {".git", STATE_DIR, "node_modules", "__pycache__"}


class FolderStore(Store):
    index_wait = 5.0  # seconds a commit waits for a person's git to let go of git's index
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().absolute()
        self.location = str(self.root)
        self._repo: Any = None
        self._writer: Any = None
        # git index entries a commit could not set (index.lock held past the wait); the next commit sets them.
        self._index_behind: dict[str, tuple[bytes, int] | None] = {}
        self._local = threading.local()
        self._thread_lock = threading.RLock()

    # paths ------------------------------------------------------------------------------------------------
    @property
    def state(self) -> Path:
        return self.root / STATE_DIR

    def check_path(self, rel: str) -> str:
        norm = clean_rel(rel)
        if norm.startswith(PRIVATE) or norm in (STATE_DIR, ".git", AUDIT_FILE):
            raise PathRefused(f"{rel!r} is memtui's own bookkeeping, not a memory file")
        resolve_inside(self.root, norm)
        return norm

    def _full(self, rel: str) -> Path:
        return resolve_inside(self.root, clean_rel(rel))

    # files ------------------------------------------------------------------------------------------------
    def read(self, rel: str) -> bytes | None:
        path = self._full(rel)
        try:
            return path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def write(self, rel: str, data: bytes) -> None:
        atomic_write(self._full(rel), data)

    def delete(self, rel: str) -> None:
        try:
            self._full(rel).unlink()
        except FileNotFoundError:
            pass

    def list_files(self, pattern: str = "**/*.md") -> list[str]:
        suffix = pattern.rsplit("*", 1)[-1] if "*" in pattern else pattern
        out: list[str] = []
        stack = [""]
        while stack:
            prefix = stack.pop()
            try:
                it = os.scandir(self.root / prefix if prefix else self.root)
            except OSError:
                continue
            with it:
                for d in it:
                    rel = f"{prefix}{d.name}"
                    if d.is_dir(follow_symlinks=False):
                        if d.name not in SKIP_DIRS and not d.name.startswith("."):
                            stack.append(rel + "/")
                    elif d.is_file(follow_symlinks=False) and rel.endswith(suffix):
                        out.append(rel)
        out.sort()
        return out

    # lock -------------------------------------------------------------------------------------------------
    @contextmanager
    def _process_lock(self, timeout: float) -> Iterator[None]:
        """flock on .memtui/lock; the holder's pid is written in it as a hint for `memtui doctor`."""
        self.state.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.state / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                    if time.monotonic() > deadline:
                        raise LockTimeout(
                            f"the memory at {self.root} is locked by another process for over {timeout:.0f}s"
                        ) from None
                    time.sleep(0.005)
            try:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
            except OSError:
                pass  # the pid is only a hint for `memtui doctor`; a full disk must not stop the lock
            try:
                yield
            finally:
                # An empty lock file means "free"; a pid left in it names a holder that died (see doctor).
                os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    # history (git) ----------------------------------------------------------------------------------------
    @property
    def has_git(self) -> bool:
        return (self.root / ".git").exists()

    @property
    def repo(self) -> Any:
        if self._repo is None and self.has_git:
            import git

            try:
                self._repo = git.Repo(self.root)
            except (git.exc.GitError, ValueError) as exc:
                raise StoreError(
                    f"the git repository at {self.root / '.git'} is unreadable ({type(exc).__name__}: {exc}); "
                    "run `memtui doctor` to see what is wrong. Memory files were not changed"
                ) from None
        return self._repo

    def init_git(self, author: str = "memtui") -> str | None:
        import git

        self._repo = git.Repo.init(self.root, initial_branch="main")
        files = [c.path for c in self.external_changes()]
        if (self.state / "config.toml").exists():
            files.append(f"{STATE_DIR}/config.toml")
        return self.commit(files, "memtui: initialise memory root", author, allow_empty=True)

    def commit(
        self, paths: list[str], message: str, author: str, committer: str | None = None, allow_empty: bool = False,
        contents: dict[str, bytes | None] | None = None,
    ) -> str | None:
        """Commit `paths` (with `contents` instead of the disk's bytes where given); git's own lock files left by
        a killed memtui process are cleared first."""
        import git

        if self.repo is None:
            return None
        with self.lock():
            clear_stale_git_locks(self.root / ".git")
            try:
                return self._commit(paths, message, author, committer, allow_empty, contents)
            except (git.exc.GitError, ValueError, OSError) as exc:
                raise StoreError(
                    f"could not commit to git at {self.root} ({type(exc).__name__}: {exc}); "
                    "run `memtui doctor` to see what is wrong"
                ) from None

    def _commit(
        self, paths: list[str], message: str, author: str, committer: str | None = None, allow_empty: bool = False,
        contents: dict[str, bytes | None] | None = None,
    ) -> str | None:
        """Commit by writing only the changed objects: the blobs, the trees along the changed paths and the commit
        (gitpython's object database), then move the branch with a compare-and-swap and set git's index entries
        for `paths` in one `git update-index` call. Git's index is neither read nor rewritten in Python, so a
        commit costs the same on a 10,000-file memory as on a 10-file one. Entries a person staged for other
        paths stay staged and out of memtui's commit."""
        repo = self.repo
        if repo is None:
            return None
        import git

        who = git.Actor(author, f"{_slug(author)}@memtui.local")
        by = git.Actor(committer, f"{_slug(committer)}@memtui.local") if committer else who
        writer = self._object_writer()
        contents = contents or {}
        leaves = {rel: self._given_blob(repo, writer.odb, rel, contents[rel]) if rel in contents
                  else self._blob(repo, writer.odb, rel) for rel in dict.fromkeys(paths)}
        for attempt in range(3):
            head = repo.head
            parent = head.commit if head.is_valid() else None
            old_root = parent.tree.binsha if parent is not None else None
            root = _write_tree(repo.odb, writer.odb, old_root, leaves) or _store(writer.odb, b"tree", b"")
            if parent is not None and root == old_root and not allow_empty:
                self._sync_index(repo, leaves)
                return None
            # The repository's pre-commit and commit-msg hooks run as `git commit` runs them (core/git_hooks.py).
            message = git_hooks.before_commit(repo, self.root, self.config_text(), root.hex(), message,
                                              (who.name, who.email), _pinned_dates().get("author_date"))
            commit = git.Commit.create_from_tree(
                writer, git.Tree(repo, root), message, parent_commits=[parent] if parent is not None else [],
                head=False, author=who, committer=by, **_pinned_dates(),
            )
            subject = message.split("\n", 1)[0]
            reflog = f"commit: {subject}" if parent is not None else f"commit (initial): {subject}"
            if _move_head(repo, commit, parent, reflog, by):
                self._sync_index(repo, leaves)
                return commit.hexsha
        raise StoreError("HEAD kept moving while memtui committed (another git command is committing here)")

    def _object_writer(self) -> Any:
        """The repository as `Commit.create_from_tree` sees it, storing objects through gitdb's loose-object
        database (zlib in process): the default database spawns `git hash-object` for every object stored. Reads
        still go through the repository's `git cat-file`."""
        if self._writer is None:
            from gitdb.db.loose import LooseObjectDB

            self._writer = _Writing(self.repo, LooseObjectDB(os.path.join(self.repo.common_dir, "objects")))
        return self._writer

    def _blob(self, repo: Any, odb: Any, rel: str) -> tuple[bytes, int] | None:
        """The file as a stored blob and its tree mode (as `git add` would record it); None if it is gone."""
        full = self.root / rel
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            return None
        import stat

        if stat.S_ISLNK(st.st_mode):
            return _store(odb, b"blob", os.readlink(full).encode()), 0o120000
        if not stat.S_ISREG(st.st_mode):
            return None
        mode = 0o100755 if st.st_mode & 0o100 else 0o100644
        if not self._filemode(repo):
            # core.fileMode=false: the executable bit on disk means nothing here; git keeps the recorded mode.
            try:
                mode = (repo.head.commit.tree / rel).mode if repo.head.is_valid() else 0o100644
            except KeyError:
                mode = 0o100644
        return _store(odb, b"blob", full.read_bytes()), mode

    def _given_blob(self, repo: Any, odb: Any, rel: str, data: bytes | None) -> tuple[bytes, int] | None:
        """`data` as the blob to commit for `rel` (None: removed), keeping the mode git has recorded for it."""
        if data is None:
            return None
        try:
            mode = (repo.head.commit.tree / rel).mode if repo.head.is_valid() else 0o100644
        except KeyError:
            mode = 0o100644
        return _store(odb, b"blob", data), mode if mode in (0o100644, 0o100755) else 0o100644

    def _filemode(self, repo: Any) -> bool:
        if getattr(self, "_filemode_cached", None) is None:
            self._filemode_cached = bool(repo.config_reader().get_value("core", "filemode", True))
        return self._filemode_cached

    def _sync_index(self, repo: Any, leaves: dict[str, tuple[bytes, int] | None]) -> None:
        """Set git's index entries for the committed paths (so `git status` stays clean), in one plumbing call.

        The commit is already made, so failing now would leave it without its files: a person's git holding
        index.lock is waited for, and past that the entries are set by the next commit instead."""
        import git

        leaves = {**self._index_behind, **leaves}
        records = b"".join(
            (b"0 " + b"0" * 40 if leaf is None else b"%o %s" % (leaf[1], leaf[0].hex().encode()))
            + b"\t" + rel.encode() + b"\0"
            for rel, leaf in leaves.items()
        )
        deadline = time.monotonic() + self.index_wait
        while True:
            with tempfile.TemporaryFile() as feed:
                feed.write(records)
                feed.seek(0)
                try:
                    repo.git.update_index("-z", "--index-info", istream=feed)
                    break
                except git.exc.GitCommandError as exc:
                    if "index.lock" not in str(exc):
                        raise
                    if time.monotonic() > deadline:
                        self._index_behind = leaves
                        return
                    time.sleep(0.02)
        self._index_behind = {}
        if len(leaves) > 100:
            # Entries set from objects carry no stat data: refresh it once here (an adopted folder), rather than
            # have the next `git status` re-read every file.
            repo.git.update_index("-q", "--refresh", with_exceptions=False)

    def _commit_with_index(
        self, paths: list[str], message: str, author: str, committer: str | None = None, allow_empty: bool = False
    ) -> str | None:
        """The former commit through gitpython's IndexFile (reads and rewrites the whole index, writes every tree
        in Python); kept as the reference the fast path is tested against."""
        repo = self.repo
        if repo is None:
            return None
        import git

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
        repo = self.repo
        if repo is None or not repo.head.is_valid():
            return None
        c = repo.head.commit
        return Commit(c.hexsha, c.author.name, float(c.authored_date), c.message, ())

    def review_base(self, rel: str) -> bytes | None:
        repo = self.repo
        if repo is None or not repo.head.is_valid():
            return self.read(rel)
        return self.committed(rel)

    def committed(self, rel: str) -> bytes | None:
        repo = self.repo
        if repo is None or not repo.head.is_valid():
            return None
        try:
            blob = repo.head.commit.tree / rel
        except KeyError:
            return None
        return blob.data_stream.read()

    def external_changes(self) -> list[ExternalChange]:
        repo = self.repo
        if repo is None:
            return []
        import git

        try:
            raw = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
        except git.exc.GitError as exc:
            raise StoreError(f"git cannot read the repository at {self.root} ({str(exc).strip()[-200:]}); "
                             "run `memtui doctor`") from None
        changes = []
        for item in raw.split("\0"):
            if len(item) < 4:
                continue
            rel = item[3:]
            if _ignored_private(rel):
                continue
            before = self.committed(rel)
            try:
                after: bytes | None = (self.root / rel).read_bytes()
            except (FileNotFoundError, IsADirectoryError):
                after = None
            if before != after:
                changes.append(ExternalChange(rel, before, after))
        return changes

    def history(self, rel: str | None = None, since: float | None = None) -> list[Commit]:
        repo = self.repo
        if repo is None or not repo.head.is_valid():
            return []
        kwargs: dict[str, Any] = {}
        if since is not None:
            kwargs["since"] = f"@{int(since)}"
        commits = repo.iter_commits(paths=rel, **kwargs) if rel else repo.iter_commits(**kwargs)
        return [
            Commit(c.hexsha, c.author.name, float(c.authored_date), c.message, tuple(c.stats.files))
            for c in commits
        ]

    # past versions (memtui.core.history): git itself --------------------------------------------------------
    def _history_repo(self) -> Any:
        repo = self.repo
        if repo is None or not repo.head.is_valid():
            raise NoHistory(f"{self.root} has no git history; run `memtui init --git` to start one")
        return repo

    def resolve_change(self, ref: str) -> Commit | None:
        repo = self._history_repo()
        import git

        try:
            c = repo.commit(ref)
        except (git.BadName, ValueError, git.GitCommandError):
            return None
        changed = repo.git.diff_tree("--no-commit-id", "--name-only", "-r", "--no-renames", "-z", c.hexsha)
        return Commit(c.hexsha, c.author.name, float(c.authored_date), c.message,
                      tuple(filter(None, changed.split("\0"))), tuple(p.hexsha for p in c.parents))

    def file_at(self, rel: str, change: str) -> bytes | None:
        try:
            return (self._history_repo().commit(change).tree / rel).data_stream.read()
        except KeyError:
            return None

    def blame_chunks(self, rel: str) -> list[tuple[Commit | None, list[str]]] | None:
        repo = self._history_repo()
        import git

        try:
            chunks = repo.blame(None, rel)
        except git.GitCommandError:
            return None  # never committed: every line is new
        out: list[tuple[Commit | None, list[str]]] = []
        for c, lines in chunks:
            texts = [t.decode("utf-8", errors="replace") if isinstance(t, bytes) else t for t in lines]
            if set(c.hexsha) == {"0"}:
                out.append((None, texts))
            else:
                out.append((Commit(c.hexsha, c.author.name, float(c.authored_date), c.message, ()), texts))
        return out

    def change_patches(self, changes: list[str]) -> dict[str, dict[str, str]]:
        from memtui.core.history import commit_patches

        return commit_patches(self.repo, changes) if self.repo is not None else {}

    def merge3(self, ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
        """`git merge-file`: git's own merge, as `git revert` would do it."""
        repo = self._history_repo()
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

    # audit ------------------------------------------------------------------------------------------------
    def audit_append(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n").encode()
        fd = os.open(self.root / AUDIT_FILE, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            # A writer killed mid-append leaves a line with no newline; start on a fresh line so this record is
            # not glued to the torn one (and lost with it). `memtui doctor --fix` sets the torn bytes aside.
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)

    def audit_records(self) -> Iterator[dict[str, Any]]:
        try:
            f = open(self.root / AUDIT_FILE, encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return
        with f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue  # a torn last line from a crash; `memtui doctor` reports it

    # queue ------------------------------------------------------------------------------------------------
    @property
    def queue_dir(self) -> Path:
        return self.state / "queue"

    def next_proposal_number(self) -> int:
        with self.lock():
            self.queue_dir.mkdir(parents=True, exist_ok=True)
            seq = self.queue_dir / ".seq"
            try:
                n = int(seq.read_text().strip() or 0)
            except (FileNotFoundError, ValueError):
                n = 0
            existing = [int(p.stem[2:]) for p in self.queue_dir.glob("p-*.json") if p.stem[2:].isdigit()]
            n = max([n, *existing]) + 1
            # The folder is synced by queue_save, which follows in this same folder: its fsync makes this rename
            # durable too. A number never saved to a queue file may be handed out again after a crash, harmlessly.
            atomic_write(seq, f"{n}\n".encode(), sync_dir=False)
            return n

    def queue_save(self, pid: str, data: bytes) -> None:
        self.queue_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self.queue_dir / f"{pid}.json", data)

    def queue_load(self, pid: str) -> bytes | None:
        try:
            return (self.queue_dir / f"{clean_rel(pid)}.json").read_bytes()
        except (FileNotFoundError, PathRefused):
            return None

    def queue_ids(self) -> list[str]:
        if not self.queue_dir.exists():
            return []
        return sorted(p.stem for p in self.queue_dir.glob("*.json"))

    def undo_point(self, rels: list[str]) -> dict[str, Any]:
        """Hard-link each file's current inode under .memtui/undo/: undoing is then a rename, which a full disk
        cannot refuse (a copy of the bytes is kept instead where a link cannot be made)."""
        keep: dict[str, Any] = {}
        folder = self.state / UNDO_DIR
        folder.mkdir(parents=True, exist_ok=True)
        for k, rel in enumerate(rels):
            src = self._full(rel)
            if not src.is_file():
                keep[rel] = None
                continue
            dest = folder / f"{os.getpid()}-{threading.get_ident()}-{k}"
            dest.unlink(missing_ok=True)
            try:
                os.link(src, dest)
                keep[rel] = dest
            except OSError:
                keep[rel] = src.read_bytes()
        return keep

    def undo(self, point: dict[str, Any]) -> None:
        for rel, kept in point.items():
            if kept is None:
                self.delete(rel)
            elif isinstance(kept, Path):
                os.replace(kept, self._full(rel))
            else:
                self.write(rel, kept)

    def drop_undo_point(self, point: dict[str, Any]) -> None:
        for kept in point.values():
            if isinstance(kept, Path):
                kept.unlink(missing_ok=True)

    def intent_save(self, data: bytes | None) -> None:
        path = self.state / INTENT_FILE
        if data is None:
            try:
                path.unlink()
            except FileNotFoundError:
                pass
        else:
            atomic_write(path, data)

    def intent_load(self) -> bytes | None:
        try:
            return (self.state / INTENT_FILE).read_bytes()
        except FileNotFoundError:
            return None

    def keep_rejected(self, rel: str, data: bytes, stamp: str) -> str | None:
        dest = self.state / "rejected" / f"{stamp}-{rel.replace('/', '__')}"
        atomic_write(dest, data)
        return str(dest.relative_to(self.root))

    def config_text(self) -> str | None:
        try:
            return (self.state / "config.toml").read_text(encoding="utf-8")
        except FileNotFoundError:
            return None


def atomic_write(path: Path, data: bytes, *, sync_dir: bool = True) -> None:
    """Write via a temp file in the same folder, fsync, rename, fsync the folder: old or new, never torn.

    `sync_dir=False` leaves the folder's fsync to a write that follows in the same folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.chmod(tmp, path.stat().st_mode & 0o777)
        except FileNotFoundError:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if not sync_dir:
        return
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


GIT_LOCKS = ("index.lock", "HEAD.lock", "config.lock", "packed-refs.lock")


def git_lock_files(git_dir: Path) -> list[Path]:
    """git's lock files: the index, HEAD, config, packed refs, any ref under refs/ and any reflog under logs/."""
    found = [git_dir / n for n in GIT_LOCKS if (git_dir / n).exists()]
    for sub in ("refs", "logs"):
        if (git_dir / sub).is_dir():
            found += sorted((git_dir / sub).rglob("*.lock"))
    return found


def clear_stale_git_locks(git_dir: Path, wait: float = 5.0) -> list[Path]:
    """Remove git lock files a killed writer left behind; call only while holding the memtui lock.

    Every memtui git write happens under the memtui lock, so a lock file seen while holding it was left by a
    process that died mid-commit (else every later commit fails with "Lock ... could not be obtained"). A lock
    still open in a live process (a person running git right now) is waited for instead."""
    removed: list[Path] = []
    deadline = time.monotonic() + wait
    for lock in git_lock_files(git_dir):
        while _open_elsewhere(lock) and time.monotonic() < deadline:
            time.sleep(0.02)
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


class _Writing:
    """A repository whose `odb` is another object database; everything else is the repository's own."""

    def __init__(self, repo: Any, odb: Any) -> None:
        self._repo = repo
        self.odb = odb

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repo, name)


def _pinned_dates() -> dict[str, str]:
    """A pinned clock (MEMTUI_NOW) dates the commit too, so git history agrees with the audit log."""
    if not os.environ.get("MEMTUI_NOW"):
        return {}
    from memtui.core import clock

    pinned = clock.now().astimezone()
    stamp = f"{int(pinned.timestamp())} {pinned:%z}"
    return {"author_date": stamp, "commit_date": stamp}


def _store(odb: Any, kind: bytes, data: bytes) -> bytes:
    """Write one object into the repository's object database; its binary sha."""
    from io import BytesIO

    from gitdb.base import IStream

    return odb.store(IStream(kind, len(data), BytesIO(data))).binsha


TREE_MODE = b"40000"  # as git writes a folder's mode in a tree (some old tools wrote "040000")
FOLDER_MODES = (TREE_MODE, b"040000")


def _write_tree(
    reader: Any, writer: Any, binsha: bytes | None, leaves: dict[str, tuple[bytes, int] | None],
) -> bytes | None:
    """The tree `binsha` (None: empty) with `leaves` ('a/b.md' -> (blob sha, mode), or None to remove) applied.

    Only the trees along the changed paths are read and written, as raw entries (a folder of thousands of files
    costs a bytes scan, not an object per entry); a tree left empty is dropped (None), as git has no empty
    folders."""
    entries = _tree_entries(reader.stream(binsha).read()) if binsha is not None else {}
    was = dict(entries)
    below: dict[bytes, dict[str, tuple[bytes, int] | None]] = {}
    for rel, leaf in leaves.items():
        name, sep, rest = rel.partition("/")
        key = name.encode()
        if sep:
            below.setdefault(key, {})[rest] = leaf
        elif leaf is None:
            entries.pop(key, None)
        else:
            entries[key] = (b"%o" % leaf[1], leaf[0])
    for key, inner in below.items():
        old = entries.get(key)
        sub = _write_tree(reader, writer, old[1] if old and old[0] in FOLDER_MODES else None, inner)
        if sub is None:
            entries.pop(key, None)
        else:
            entries[key] = (TREE_MODE, sub)
    if not entries:
        return None
    if entries == was and binsha is not None:
        return binsha
    # git orders a tree's entries by name, a folder's name compared as if it ended in "/".
    names = sorted(entries, key=lambda n: n + b"/" if entries[n][0] in FOLDER_MODES else n)
    data = b"".join(b"%s %s\0%s" % (entries[n][0], n, entries[n][1]) for n in names)
    return _store(writer, b"tree", data)


def _tree_entries(data: bytes) -> dict[bytes, tuple[bytes, bytes]]:
    """A raw tree object's entries: name -> (octal mode as git writes it, binary sha), in the tree's order."""
    out: dict[bytes, tuple[bytes, bytes]] = {}
    find = data.find
    pos, end = 0, len(data)
    while pos < end:
        space = find(b" ", pos)
        nul = find(b"\0", space)
        if space < 0 or nul < 0 or nul + 21 > end:
            raise ValueError("truncated tree object")
        out[data[space + 1:nul]] = (data[pos:space], data[nul + 1:nul + 21])
        pos = nul + 21
    return out


def _move_head(repo: Any, commit: Any, parent: Any, reflog: str, committer: Any) -> bool:
    """Point the current branch (or a detached HEAD) at `commit` if it still points at `parent` (None: unborn).

    A compare-and-swap under git's own lock file (``<ref>.lock``, taken as git takes it), so a `git commit` a
    person runs meanwhile is never overwritten; False when the branch moved. Reflogs are written as git does."""
    from git.refs.log import RefLog
    from git.refs.symbolic import SymbolicReference
    from gitdb.util import LockedFD

    head = repo.head
    ref = head if head.is_detached else head.reference
    lock = LockedFD(ref.abspath)
    os.makedirs(os.path.dirname(ref.abspath), exist_ok=True)
    out = lock.open(write=True, stream=True)
    try:
        try:
            now = SymbolicReference.dereference_recursive(repo, ref.path)
        except ValueError:
            now = None
        if now != (parent.hexsha if parent is not None else None):
            lock.rollback()
            return False
        out.write(commit.hexsha.encode() + b"\n")
        lock.commit()
    except BaseException:
        lock.rollback()
        raise
    old = parent.binsha if parent is not None else b"\0" * 20
    RefLog.append_entry(committer, RefLog.path(ref), old, commit.binsha, reflog)
    if ref is not head:
        RefLog.append_entry(committer, RefLog.path(head), old, commit.binsha, reflog)
    return True


def _ignored_private(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return rel.startswith(PRIVATE) or rel == AUDIT_FILE or (name.startswith(".") and name.endswith(".tmp"))


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name.lower()) or "memtui"
