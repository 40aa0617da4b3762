"""The commit engine of a folder memory: a commit written in process (blobs, the trees along the changed paths and the
commit, memtui/core/storage/gitobjects.py; the branch moved by compare-and-swap; git's index set by
memtui.core.storage.folder_index), with the checks that keep the person's repository theirs (a merge in progress, a
version they staged, a detached HEAD) and the bytes as `git add` would store them. Where the person's git signs
its commits (`commit.gpgSign`), git makes the commit object, signed (`signing_wanted`). One job: putting approved
bytes into history; reading history is memtui.core.storage.folder_history's, and where the repository is,
memtui.core.storage.places'. """

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path
from typing import Any

from memtui.core.storage.folder_index import GitIndexFile
from memtui.core.storage.gitobjects import read_file as _read_plain
from memtui.core.storage.gittree import _recorded_entry, _recorded_mode, _write_tree
from memtui.core.storage.store import StoreError, StorePart

# What an attributes file must name for `git add` to store other bytes than a file's own (`CommitEngine._converts`):
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
    from memtui.core.storage.gitobjects import _names

    if not sha:
        return None
    lf = data.replace(b"\r\n", b"\n")
    # `ident` collapses "$Id: …$" to "$Id$" as git add does (git's own form of the keyword, not text).
    for form in dict.fromkeys((data, lf, _IDENT.sub(b"$Id$", data), _IDENT.sub(b"$Id$", lf))):
        if _names(sha, "blob", form):
            return form
    return None


class CommitEngine(StorePart):
    """Commits of the folder memory `store` (memtui.core.storage.folder.FolderStore, not imported: it imports this), to
    the repository the store has now (its git owner, places and git folder are read each time: `memtui init --git`
    moves them)."""

    def __init__(self, store: Any) -> None:
        super().__init__(store)
        self.index = GitIndexFile(store)  # git's index, checked before and set by each commit
        self._settings: tuple[Any, dict[str, str]] | None = None
        self._signing: tuple[Any, bool] | None = None  # (config files' stamp, commit.gpgSign)
        self._deflates: Any = None  # memtui.core.storage.gitobjects.Deflates: the biggest trees' compressed segments

    def _core_settings(self) -> dict[str, str]:
        """core.hooksPath and core.fileMode, read again only when a config file git reads has changed."""
        from memtui.core.storage.gitobjects import core_settings, settings_stamp

        stamp = settings_stamp(self.git_dir)
        if self._settings is None or self._settings[0] != stamp:
            self._settings = (stamp, core_settings(self.git_dir, self.root))
        return self._settings[1]

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
        (`GitIndexFile.entries`)."""
        if not self.has_git:
            return
        rels = [rel for p in contents for rel in self.store._commit_rels(p)]
        self._check_repository(rels)
        if not record:
            return
        from memtui.core.basics.digests import new as digest

        def blob_id(data: bytes) -> bytes:
            # (of the bytes as they are: a blob git would store converted differs, and is refused, never lost)
            h = digest("sha1", len(data))
            h.update(b"blob %d\0" % len(data))
            h.update(data)
            return h.digest()

        named = self.store._real_or_named
        new = {named(rel): None if data is None else blob_id(data) for rel, data in contents.items()}
        self._check_staged({rel: new.get(rel, _UNKNOWN) for rel in rels}, self._head_entries(rels))

    def _check_repository(self, rels: list[str]) -> None:
        """A file unmerged in git's index is never written, and nothing is committed while an operation that
        commits for the person (a merge, rebase, cherry-pick, revert, `git am`) is in progress: a memtui commit then
        would be a one-parent commit the operation knows nothing of (a rebase on a detached HEAD would drop it; a
        merge would be concluded over it; its staged results would be replaced)."""
        if not self.has_git:
            return
        doing = in_progress(self.git_dir)
        why = _unmerged_refusal(rels, self.index.entries(rels), doing)
        if why is not None:  # said only of an index known sound (a damaged one is said as such)
            why = _unmerged_refusal(rels, self.index.entries(rels, sure=True), doing)
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
        behind (`index.behind`) is its own."""
        rels = [rel for rel in new if rel not in self.index.behind]
        why = _staged_refusal(new, head, self.index.entries(rels))
        if why is not None:
            entries = self.index.entries(rels, sure=True)
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
        if not self._index_older_than_head():
            # Written since the branch last moved: by the person's git (`git restore --staged --source=HEAD~1`
            # stages a past version on purpose), not left by a writer killed after moving the branch.
            return False
        try:
            past = self.store.past_versions(rel, 8)
        except Exception:  # noqa: BLE001 - no history to tell by: the person's, as before
            return False
        return any(hashlib.sha1(b"blob %d\0" % len(data) + data).digest() == staged[1] for _, data in past)

    def _index_older_than_head(self) -> bool:
        """Was git's index last written no later than the branch last moved (its ref or HEAD's reflog)? A writer
        killed between moving the branch and putting the index in place leaves it so; a person who staged anything
        since wrote the index after. Unknown (no ref file to tell by): False, the version is the person's."""
        try:
            index = os.stat(self.index.path()).st_mtime_ns
        except OSError:
            return False
        moved = []
        try:
            head = (self.git_dir / "HEAD").read_bytes().decode("utf-8", "replace").strip()
        except OSError:
            head = ""
        names = [self.git_dir / "logs" / "HEAD"]
        if head.startswith("ref: refs/"):
            names += [self.git_dir / head[5:], self.git_dir / "logs" / head[5:]]
        for name in names:
            try:
                moved.append(os.lstat(name).st_mtime_ns)
            except OSError:
                continue
        return bool(moved) and index <= max(moved)

    def _head_entries(self, rels: list[str]) -> dict[str, tuple[int, bytes] | None]:
        """(mode, object id) HEAD's tree records for each of `rels`, None where it has none (or no commit yet), read
        through the repository's one `git cat-file --batch`."""
        with self.store._git.serial():
            batch = self.store._objects()
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

    def commit(
        self, paths: list[str], message: str, author: str, committer: str | None = None, allow_empty: bool = False,
        contents: dict[str, bytes | None] | None = None,
    ) -> str | None:
        """Commit `paths` (a path through a symlink commits the file it names), with `contents` instead of the
        disk's bytes where given; git's own lock files left by a killed memtui process are cleared first."""
        if not self.has_git:
            return None
        paths = [rel for p in paths for rel in self.store._commit_rels(p)]
        # Given contents belong to the file a path really names (a write through a link changes its target).
        contents = {self.store._real_or_named(rel): data for rel, data in (contents or {}).items()}
        for rel in paths:
            self.store._check_committable(rel)
        with self.store.lock():
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

    def _commit(
        self, paths: list[str], message: str, author: str, committer: str | None = None, allow_empty: bool = False,
        contents: dict[str, bytes | None] | None = None,
    ) -> str | None:
        """Commit by writing only the changed objects: the blobs, the trees along the changed paths and the commit
        (loose objects written in process, memtui/core/storage/gitobjects.py), then move the branch with a
        compare-and-swap (gitobjects.move_head, under git's own lock file) and set git's index entries for `paths`:
        in process (memtui/core/storage/gitindex.py: the index walked once, then edited from that walk while it is
        the file memtui wrote), else in one `git update-index` call (memtui.core.storage.folder_index). No whole
        tree is read in Python, and no folder is walked. Entries a person staged for other paths stay staged and out
        of memtui's commit."""
        if not self.has_git:
            return None
        with self.store._git.serial():
            return self._commit_in(paths, message, author, committer, allow_empty, contents or {})

    def _commit_in(
        self, paths: list[str], message: str, author: str, committer: str | None, allow_empty: bool,
        contents: dict[str, bytes | None],
    ) -> str | None:
        from memtui.core.storage import git_hooks, gitobjects

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
        batch = self.store._objects()
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
                self.index.sync(leaves)
                return None
            # The repository's pre-commit and commit-msg hooks run as `git commit` runs them
            # (core/storage/git_hooks.py).
            message = git_hooks.before_commit(git_dir, self.root, self.store.reviewed_config()[0], root.hex(), message,
                                              who, dates.get("author_date"),
                                              self._hooks_path)
            authored, committed_at = (gitobjects.git_date(dates.get(k)) for k in ("author_date", "commit_date"))
            # Built either way: it also refuses a message no commit may hold (a NUL), signed or not.
            commit = gitobjects.commit_object(root, parent, gitobjects.ident(*who, authored),
                                              gitobjects.ident(*by, committed_at), message)
            if self._signs():  # the person's git signs its commits: git makes this one, signed (`signing_wanted`)
                sha = signed_commit(git_dir, root.hex(), [parent] if parent else [], (*who, authored),
                                    (*by, committed_at), message)
            else:
                sha = store(b"commit", commit).hex()
            subject = message.split("\n", 1)[0]
            reflog = f"commit: {subject}" if parent is not None else f"commit (initial): {subject}"
            # As git commits: git's index is locked and its new entries made first, the branch moved next, the
            # index put in place last. Moving the branch first let a person's `git commit` between the two read
            # the old entries and commit the old file back (a revert of the approved write in history).
            with self.index.locked() as lock:
                # Checked again under git's index lock, which a person's `git add` or `git merge` must take too: the
                # index edited next is the one checked (cached while its stat holds, so this costs a stat).
                self._check_repository(list(leaves))
                self._check_staged(committed, recorded)
                made_here = self.index.stage(leaves, lock)  # the lock now holds the new index; it becomes the index
                if gitobjects.move_head(git_dir, self.root, sha, parent, reflog, by, dates.get("commit_date"),
                                        new_logs=self._new_reflogs, perm=perm):
                    self.index.install(lock)
                    self.index.remember(made_here)
                    self.index.behind = {}
                    self.index.refresh(leaves)
                    return sha
        raise StoreError("HEAD kept moving while memtui committed (another git command is committing here)")

    def _signs(self) -> bool:
        """Does the person's git config ask for signed commits (`commit.gpgSign`)? Read again only when a config file
        git reads has changed, as `_core_settings`."""
        from memtui.core.storage.gitobjects import settings_stamp

        stamp = settings_stamp(self.git_dir)
        if self._signing is None or self._signing[0] != stamp:
            self._signing = (stamp, signing_wanted(self.git_dir))
        return self._signing[1]

    def _new_reflogs(self) -> bool:
        """May a commit start a reflog that does not exist? Not with core.logAllRefUpdates=false (git's default in
        a repository with a work tree is to start them); no process when no config file could set it."""
        from memtui.core.storage.gitobjects import may_be_set

        if not may_be_set(self.git_dir, b"logallrefupdates"):
            return True
        value = self._core_settings().get("core.logallrefupdates", "true").strip().lower()
        return value not in ("false", "no", "off", "0")

    def _loose_level(self) -> int:
        """zlib's level for the loose objects a commit writes (core.looseCompression, else core.compression, else 1,
        as git's), with no process when no config file could set either."""
        from memtui.core.storage.gitobjects import loose_level, may_be_set

        if not may_be_set(self.git_dir, b"compression"):  # b"loosecompression" holds it too
            return 1
        return loose_level(self._core_settings())

    def _shared_perm(self) -> int:
        """core.sharedRepository as git reads it (`gitobjects.shared_perm`), with no process when no config file
        could set it: the objects, refs and reflogs a commit makes then get the permissions git would give them."""
        from memtui.core.storage.gitobjects import may_be_set, shared_perm

        if not may_be_set(self.git_dir, b"sharedrepository"):
            return 0
        return shared_perm(self._core_settings().get("core.sharedrepository"))

    def _hooks_path(self) -> str:
        """core.hooksPath ("" when unset), with no process when no config file could set it."""
        from memtui.core.storage.gitobjects import may_be_set

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
        from memtui.core.storage.gitcall import run_plumbing

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
        from memtui.core.storage.gitcall import config_env, drivers_off

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
        from memtui.core.storage.gitcall import run_plumbing

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
        from memtui.core.storage.gitcall import all_drivers
        from memtui.core.storage.gitobjects import settings_stamp

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
        from memtui.core.storage.gitobjects import common_dir, may_be_set

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

    def _commit_with_index(
        self, paths: list[str], message: str, author: str, committer: str | None = None, allow_empty: bool = False
    ) -> str | None:
        """The former commit through gitpython's IndexFile (reads and rewrites the whole index, writes every tree
        in Python); kept as the reference the fast path is tested against."""
        import git

        with self.store._git.use("committing") as repo:
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


GIT_LOCKS = ("index.lock", "HEAD.lock", "config.lock", "packed-refs.lock")


def signing_wanted(git_dir: Path) -> bool:
    """Does git's config (any scope, includes too) ask for signed commits? No process when no config file git
    reads could say so (`gitobjects.may_be_set`): the usual memory that does not sign pays a few stats.

    When it does, memtui's commit object is made by `git commit-tree -S` (`signed_commit`) instead of in process:
    git already knows every way a person keeps a key (a key file, ssh-agent, a `key::` literal,
    `gpg.ssh.defaultKeyCommand`, openpgp, x509), and a signature made other than as git makes it is one nobody can
    check. The programs git runs for it are those the person's git config names, as for their own `git commit -S`,
    at the same trust as the repository's hooks, which memtui's commits run too (core/storage/git_hooks.py). A team
    that trusts its remote's signed approvals (`[sync] trust`, memtui/core/writing/sync.py) so gets commits that
    `git verify-commit` accepts on every clone without signing by hand."""
    from memtui.core.storage.gitcall import SAFE_CONFIG, _config_env, read_git
    from memtui.core.storage.gitobjects import may_be_set

    if not may_be_set(git_dir, b"gpgsign"):
        return False
    env = {**_config_env(list(SAFE_CONFIG)), "GIT_DIR": str(git_dir)}
    done = read_git(["config", "--type=bool", "--get", "commit.gpgsign"], env)
    return done is not None and done[0] == 0 and done[1].strip() == b"true"


def sign_args() -> list[str]:
    """What `git commit-tree` needs to sign as `git commit` would: `-S` (the key `user.signingkey` names, else the
    committer's identity, as git picks it) and the message kept in UTF-8, the bytes memtui wrote, whatever
    `i18n.commitEncoding` says (an `encoding` header would name another)."""
    return ["-c", "i18n.commitEncoding=UTF-8", "commit-tree", "-S"]


def signed_commit(git_dir: Path, tree: str, parents: list[str], author: tuple[str, str, str],
                  committer: tuple[str, str, str], message: str) -> str:
    """The sha of a signed commit of `tree` on `parents` by `author` and `committer` ((name, email, `<unix time>
    <+hhmm>`), the same fields memtui writes in process), made by git. StoreError, with git's words and what to do,
    when git cannot sign (no key, an agent that holds none, a program that failed): nothing is committed."""
    from memtui.core.storage.gitcall import NO_HOOKS, SAFE_CONFIG, _config_env, run_plumbing

    def clean(text: str, drop: str) -> str:  # as `gitobjects.ident` writes an identity in process
        return "".join(c for c in text if c not in drop).strip()

    env = {**_config_env([*SAFE_CONFIG, NO_HOOKS]), "GIT_DIR": str(git_dir)}
    for role, (name, email, when) in (("AUTHOR", author), ("COMMITTER", committer)):
        env.update({f"GIT_{role}_NAME": clean(name, "<>\n\r\0") or "memtui",
                    f"GIT_{role}_EMAIL": clean(email, "<>\n\r\0 "), f"GIT_{role}_DATE": f"@{when}"})
    args = ["git", *sign_args(), tree]
    for parent in parents:
        args += ["-p", parent]
    done = run_plumbing(args, env, stdin=message.encode("utf-8", "surrogateescape"), detached=True)
    sha = done[1].decode(errors="replace").strip() if done is not None and done[0] == 0 else ""
    if len(sha) != 40:
        # ssh-keygen's prompt, written to stderr with no terminal to ask on: no question was put to anyone.
        words = re.sub(r"Enter passphrase[^:\n]{0,300}: ?", "", done[2].decode(errors="replace")) if done else ""
        said = "it did not answer in time" if done is None else \
            " ".join(words.split())[-400:] or f"exit status {done[0]}"
        raise StoreError(f"git is set to sign commits (commit.gpgsign), but could not sign memtui's commit: {said}. "
                         "Nothing was committed. memtui never asks for a passphrase: put the key in ssh-agent "
                         "(`ssh-add KEY`) or point user.signingkey at a key git can use, or turn signing off for this "
                         "repository (git config commit.gpgsign false)")
    return sha


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


def _pinned_dates() -> dict[str, str]:
    """A pinned clock (MEMTUI_NOW) dates the commit too, so git history agrees with the audit log."""
    if not os.environ.get("MEMTUI_NOW"):
        return {}
    from memtui.core.basics import clock

    pinned = clock.now().astimezone()
    stamp = f"{int(pinned.timestamp())} {pinned:%z}"
    return {"author_date": stamp, "commit_date": stamp}


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
    """Why committing `new` would replace a version the person staged (see `CommitEngine._check_staged`); None when
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


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name.lower()) or "memtui"
