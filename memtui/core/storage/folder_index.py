"""git's index file as a folder memory's commits read and edit it: the entries a write is checked against, and the
new index a commit puts in place. One job: keep `git status` clean after memtui's commits without running git where
memtui/core/storage/gitindex.py can do what git does (the index bisected while it holds the bytes memtui wrote, edited
in process under git's own `index.lock`), and never take a damaged or a person's index for memtui's. The commit that
uses it is memtui.core.storage.folder_commit's; where the repository is, the store's (memtui.core.storage.places).
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from memtui.core.storage.gitobjects import removed_on_failure
from memtui.core.storage.store import StoreError, StorePart

INDEX_WALK_AT_ONCE = 512 * 1024
_HEADER_SIZE = 12  # of git's index file


# Config names that can change how git writes its index (see GitIndexFile._index_editable).
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


class GitIndexFile(StorePart):
    """git's index of the folder memory `store` (memtui.core.storage.folder.FolderStore, not imported: it imports this,
    through the commit engine), read each time where the store's repository now is."""

    def __init__(self, store: Any) -> None:
        super().__init__(store)
        # git index entries a commit could not set (index.lock held past the wait); the next commit sets them.
        self.behind: dict[str, tuple[bytes, int] | None] = {}
        # The last git index files this store wrote in process (memtui.core.storage.gitindex.Index, newest last): while
        # the file's bytes are one of them, the next commit edits it without walking its entries again.
        self._index_known: list[Any] = []
        self._index_walks = False  # set by the first commit that left a big index to git: later ones walk it
        self._held: Path | None = None  # index.lock while `locked` holds it and it has not become the index
        # (the git index file's stat, its entries found for some paths): see entries
        self._entries_seen: tuple[tuple[int, ...], dict[bytes, Any]] | None = None

    @property
    def index_wait(self) -> float:
        """Seconds a commit waits for a person's git to let go of git's index (the store's, which a test shortens)."""
        return self.store.index_wait

    def entries(self, rels: list[str], sure: bool = False) -> dict[str, Any]:
        """Each of `rels`' entries in git's index (every stage: `gitindex.Found`), without running git: from the
        index this store last wrote when the file still holds its bytes (a bisection), else found in the file's
        bytes (`gitindex.find_entries`); git lists them only where neither can say (index version 4, a split index
        memtui did not write, GIT_INDEX_FILE). Kept while the file's stat is unchanged: a write checks twice.

        `sure`: before a refusal is said, the bytes found in are checked as the commit does (their checksum, the
        shared index a split one names): a damaged index is said as such (StoreError), never taken for a state."""
        from memtui.core.storage import gitindex

        if not rels:
            return {}
        names = {rel: rel.encode("utf-8", "surrogateescape") for rel in rels}
        try:
            fd = os.open(self.path(), os.O_RDONLY | os.O_NONBLOCK)
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
        from memtui.core.storage import gitindex

        try:
            gitindex._checksum_ok(data)  # (index.skipHash's zero trailer: not checked, as git does not)
            link = gitindex.link_of(data) if data.find(b"link", _HEADER_SIZE) >= 0 else None
            if link is None:
                return None
            split = self._read_split(data, mtime, link)
            return False if split is None else split
        except gitindex.Damaged as exc:
            raise StoreError(f"git's index at {self.path()} is damaged ({exc}; `git fsck` says so too); "
                             f"nothing was committed. {REBUILD_INDEX}, then try again") from None

    def remember(self, made_here: bool) -> None:
        """After a commit put its index in place: when memtui made it (`made_here`: the in-process edit, now the
        newest of `_index_known`), its stat is keyed to it, so the next write's check bisects it instead of reading
        the file again (git renames a new index into place: a person's git changes the stat)."""
        self._entries_seen = None
        if made_here and self._index_known:
            try:
                st = os.stat(self.path())
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
        """`entries` as `git ls-files --stage` lists them (an intent-to-add entry shows as a staged empty
        file: refused rather than guessed)."""
        from memtui.core.storage.gitcall import plumbing_env, read_git

        env = {**os.environ, **plumbing_env(self.git_dir, self.root), "GIT_LITERAL_PATHSPECS": "1"}
        done = read_git(["ls-files", "--stage", "-z", "--", *rels], env, cwd=self.root)
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

    def sync(self, leaves: dict[str, tuple[bytes, int] | None]) -> None:
        """Set git's index entries for the committed paths (so `git status` stays clean), in one plumbing call.

        The commit is already made, so failing now would leave it without its files: a person's git holding
        index.lock is waited for, and past that the entries are set by the next commit instead."""
        from memtui.core.storage.gitcall import plumbing_env, run_plumbing

        leaves = {**self.behind, **leaves}
        done_here = self._sync_in_process(leaves)
        if done_here is None:
            self.behind = leaves
            return
        if done_here:
            self.behind = {}
            self.refresh(leaves)
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
                self.behind = leaves
                return
            time.sleep(0.02)
        self.behind = {}
        self.refresh(leaves)

    def _sync_in_process(self, leaves: dict[str, tuple[bytes, int] | None]) -> bool | None:
        """`sync` without a process, as git does it: index.lock taken (a person's git holding it is waited
        for), the new index written into it and renamed over the index. True when done, None when the lock stayed
        held past the wait, False when git must set these entries (see `_index_in_process`)."""
        if "GIT_INDEX_FILE" in os.environ or not self._index_editable():
            return False
        lock = self.path().with_name("index.lock")
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
                os.replace(lock, self.path())
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
        from memtui.core.storage.gitobjects import config_texts

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
        """git's index with `leaves`' entries set, edited in process (memtui/core/storage/gitindex.py) exactly as `git
        update-index -z --index-info` would write it, as the pieces to write in order; None when that module cannot
        say (git must do it)."""
        from memtui.core.storage import gitindex

        try:
            fd = os.open(self.path(), os.O_RDONLY | os.O_NONBLOCK)
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
                raise StoreError(f"git's index at {self.path()} is damaged ({exc}; `git fsck` says so too); "
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
        from memtui.core.storage import gitindex

        return not isinstance(known, gitindex.Split) or (
            known.shared_stat is not None and self._shared_stat(known.base_sha) == known.shared_stat)

    def _read_split(self, data: bytes, mtime: int, link: bytes) -> Any:
        """A split index git (or memtui) wrote, with the shared index it names read and checked: its checksum must
        match its bytes and its name (git dies on either too). A missing or damaged one is refused."""
        from memtui.core.storage import gitindex
        from memtui.core.storage.gitobjects import read_file

        path = self._shared_path(link)
        before = self._shared_stat(link)
        try:
            shared = read_file(path)
        except FileNotFoundError:
            raise StoreError(f"git's index at {self.path()} is split and names a shared index, {path.name}, "
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

        from memtui.core.storage.gitindex import SHARED_EXPIRE

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

    def refresh(self, leaves: dict[str, tuple[bytes, int] | None]) -> None:
        from memtui.core.storage.gitcall import config_env, run_plumbing

        if len(leaves) > 100:
            # Entries set from objects carry no stat data: refresh it once here (an adopted folder), rather than
            # have the next `git status` re-read every file. A refresh may re-read files, so the repository's
            # own filter drivers are switched off for it (config_env).
            refresh = {**os.environ, **config_env(self.git_dir, self.root), "GIT_DIR": str(self.git_dir)}
            run_plumbing(["git", "update-index", "-q", "--refresh"], refresh)

    def path(self) -> Path:
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
    def locked(self) -> Iterator[Path]:
        """git's index lock (`index.lock`, taken as git takes it), held while a commit moves the branch; a person's
        git holding it is waited for (index_wait), then the commit is refused before anything moved."""
        lock = self.path().with_name("index.lock")
        fd = self._take_index_lock(lock)
        if fd is None:
            raise StoreError(f"another git holds git's index at {self.root} ({lock.name}); nothing was committed: "
                             "when that git is done, try again")
        os.close(fd)
        self._held = lock
        try:
            yield lock
        finally:
            if self._held is not None:  # the commit did not happen: the lock is still memtui's, with what it holds
                self._held = None
                try:
                    lock.unlink()
                except FileNotFoundError:
                    pass

    def install(self, lock: Path) -> None:
        """The lock `locked` holds becomes the index. From here the name index.lock is free: a person's git may take
        it the next moment, so `locked` must not unlink that name on its way out (it took their lock away, and
        their `git add` failed with "Unable to write new index file")."""
        os.replace(lock, self.path())
        self._held = None

    def stage(self, leaves: dict[str, tuple[bytes, int] | None], lock: Path) -> bool:
        """Write git's index with the committed paths' entries set into `lock` (the index.lock memtui holds, as git
        writes its new index there), to become the index once the branch moved: edited in process where
        memtui/core/storage/gitindex.py can do it as git does, else by one `git update-index` on a copy put in its
        place. A commit that does not happen unlinks the lock with what it holds (`locked`). True when edited in
        process (the newest of `_index_known` is what the lock holds)."""
        import shutil

        from memtui.core.storage.gitcall import plumbing_env, run_plumbing

        leaves = {**self.behind, **leaves}
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
            if self.path().exists():
                shutil.copyfile(self.path(), staged)
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
