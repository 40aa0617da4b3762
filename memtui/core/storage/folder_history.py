"""A folder memory's history and blame, read from git: the commits that touched a file, a file as it was, who
wrote each line, diffs, past versions and git's own three-way merge. One job: reading history, wherever the
repository is (the folder's own `.git`, or memtui's beside it: memtui.core.storage.places); writing commits is the
store's commit engine (memtui.core.storage.folder_commit). Every call goes through the store's git owner
(memtui.core.storage.gitcall). """

from __future__ import annotations

import os
import tempfile
from typing import Any, Callable, Iterator

from memtui.core.storage.gitcall import (LogCommit, errors, git_timeout, log_commits, plumbing_env, read_git,
                                        timed_out)
from memtui.core.storage.gitobjects import GitUnreadable, head_born
from memtui.core.storage.store import Commit, NoHistory, StoreError

READ_AHEAD_FILES = 256  # files whose older versions `past_versions_many` reads from git together

class FolderHistory:
    """History of the folder memory `store`, through its git owner (replaced when git moves: read each time)."""

    def __init__(self, store: Any) -> None:  # memtui.core.storage.folder.FolderStore (not imported: it imports this)
        self.store = store

    def log(self, rel: str | None = None, since: float | None = None, max_count: int | None = None,
             ) -> list[LogCommit]:
        """The current branch's commits newest first (those that touched `rel`, or since `since`), through the git
        owner's one `git log` (memtui.core.storage.gitcall.log_commits); none before the first commit."""
        if not self.store.has_git:
            return []
        store = self.store
        with store._git.serial():
            head = store._objects()._head()  # "": the branch is not born yet; None: only git can say
            if head == "":
                return []
            env = {**os.environ, **plumbing_env(store.git_dir, store.root)}
            try:
                return log_commits(env, paths=[rel] if rel else None, since=since, max_count=max_count,
                                   cwd=store.root)
            except StoreError:
                store._git.vet()  # a config include git waits on: said, with what to do
                if head is None and not head_born(store.git_dir, store.root):
                    return []
                raise

    def history(self, rel: str | None = None, since: float | None = None) -> list[Commit]:
        commits = self.log(rel, since)
        files = _files_changed(self.store, [c.sha for c in commits])
        return [Commit(c.sha, c.author, c.when, c.message, files.get(c.sha, ())) for c in commits]

    def changes_since(self, since: float, known: set[str]) -> list[Commit]:
        """Listing a commit's files costs git work: only for the commits not in `known` (usually none)."""
        commits = [c for c in self.log(since=since) if c.sha not in known]
        if not commits:
            return []
        files = _files_changed(self.store, [c.sha for c in commits])
        return [Commit(c.sha, c.author, c.when, c.message, files.get(c.sha, ())) for c in commits]

    def commit_files(self, sha: str) -> tuple[str, ...]:
        """The files one commit changed (plumbing: no diff driver or textconv of the repository's runs)."""
        if not self.store.has_git:
            return ()
        return _files_changed(self.store, [sha]).get(sha, ())

    # past versions (memtui.core.timeline.history): git itself --------------------------------------------------------
    def _history_repo(self, repo: Any) -> Any:
        if repo is None or not repo.head.is_valid():
            raise NoHistory(f"{self.store.root} has no git history; run `memtui init --git` to start one")
        return repo

    def resolve_change(self, ref: str) -> Commit | None:
        """The commit `ref` names, or None. A full-length sha is taken on trust by GitPython until its object is
        read, so a sha of no object fails only at `diff-tree`: that is "not found" too, not a crash."""
        with self.store._git.use("reading a commit") as repo:
            repo = self._history_repo(repo)
            try:
                c = repo.commit(ref)
                changed = repo.git.diff_tree("--no-commit-id", "--name-only", "-r", "--no-renames", "-z", c.hexsha)
            except (errors().bad_name, ValueError, errors().command) as exc:
                if timed_out(exc):
                    raise
                return None
            return Commit(c.hexsha, c.author.name, float(c.authored_date), c.message,
                          tuple(filter(None, changed.split("\0"))), tuple(p.hexsha for p in c.parents))

    def _require_history(self) -> None:
        """NoHistory when there is no repository or no commit yet (the object reader's HEAD says, in process)."""
        if not self.store.has_git or self.store._objects()._head() == "":
            self._history_repo(None)

    def file_at(self, rel: str, change: str) -> bytes | None:
        """`rel` as commit `change` holds it (None: not there), read by the owner's object reader
        (memtui.core.storage.gitobjects.Batch: in process, git's `cat-file --batch` for names only git resolves)."""
        with self.store._git.serial():
            self._require_history()
            if not _plain(rel) or "\n" in change or "\r" in change:
                return None  # no object name holds a line break, no committed path a `..`
            try:
                got = self.store._objects().get(f"{change}:{rel}")
            except StoreError:
                self.store._git.vet()
                raise
        return got.data if got is not None and got.kind == "blob" else None

    def blame_chunks(self, rel: str) -> list[tuple[Commit | None, list[str]]] | None:
        with self.store._git.use("git blame") as repo:
            repo = self._history_repo(repo)
            try:
                chunks = repo.blame(None, rel, no_textconv=True)
            except errors().command as exc:
                if timed_out(exc):
                    raise
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
        from memtui.core.basics.patches import commit_patches

        with self.store._git.use("reading diffs") as repo:
            return commit_patches(repo, changes) if repo is not None else {}

    def change_patch(self, change: str, rel: str) -> str:
        """`git show` of one file (plumbing flags: no diff driver, textconv or external diff the repo names). A
        `change` that reads as an option (`--output=FILE` would write FILE into the memory folder) is no commit."""
        with self.store._git.use("reading a diff") as repo:
            if repo is None or change.startswith("-"):
                return ""
            try:
                return repo.git.show("--format=", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv",
                                     change, "--", rel) + "\n"
            except (errors().command, ValueError):
                return ""  # a commit that is gone (another branch checked out) has no diff to show

    def past_versions(self, rel: str, limit: int) -> list[tuple[str, bytes]]:
        """git's own walk of the file's commits (one `git log`), each distinct blob read once by the object reader."""
        out: list[tuple[str, bytes]] = []
        if not _plain(rel):
            return out  # no object name holds a line break, no committed path a `..` (nor does a memory file)
        blobs: set[str] = set()
        commits = self.log(rel, max_count=limit)
        with self.store._git.serial():
            batch = self.store._objects()
            for c in commits:
                blob = batch.get(f"{c.sha}:{rel}")
                if blob is None or blob.kind != "blob" or blob.sha in blobs:
                    continue
                blobs.add(blob.sha)
                out.append((c.sha, blob.data))
        return out

    def past_version_ids_many(self, rels: list[str], limit: int) -> dict[str, list[tuple[str, str]]]:
        """{rel: [(commit, blob id), ...]} of `past_versions_many`, from its one walk of the history and with no blob
        read: what a reader that keeps results by version (lint's cache) tells a file's history by."""
        wanted = set(rels)
        found: dict[str, list[tuple[str, str]]] = {}
        with self.store._git.use("reading past versions") as repo:
            raw = b""
            if repo is not None and repo.head.is_valid():
                raw = repo.git.log("--raw", "--no-renames", "--no-abbrev", "-z", "--format=%x01%H", "--no-color",
                                   "--no-ext-diff", "--no-textconv", "--no-show-signature", "HEAD", "--",
                                   stdout_as_string=False)
        commit, meta = "", None
        for token in raw.split(b"\0"):
            token = token.lstrip(b"\n")
            if token.startswith(b"\x01"):
                commit, meta = token[1:].decode("ascii", "replace").strip(), None
            elif token.startswith(b":"):
                meta = token
            elif meta is not None:
                rel, fields, meta = token.decode("utf-8", "surrogateescape"), meta.split(), None
                if rel in wanted and len(fields) >= 5 and fields[4] != b"D":
                    versions = found.setdefault(rel, [])
                    if len(versions) < limit:
                        versions.append((commit, fields[3].decode("ascii", "replace")))
        return found

    def past_versions_many(self, rels: list[str], limit: int, current: Callable[[str], bytes | None] | None = None,
                           found: dict[str, list[tuple[str, str]]] | None = None,
                           ) -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
        """One walk of the history (`git log --raw`: each commit's changed files with their new blob ids) for every
        file, and each distinct blob read through the repository's one `git cat-file --batch`: `past_versions`
        per file was a `git rev-list` and GitPython's parse of the root tree for each (2,000 files 17.6 s, 8,000
        files 221 s). The commits are the non-merge ones that changed the file, newest first (a merge's own
        resolution is not among them). A version whose blob id is that of `current(rel)` (the bytes the reader
        holds) is those bytes, not read again: lint read each file's last version twice, once from git."""
        if found is None:  # `found`: the walk `past_version_ids_many` made already
            found = self.past_version_ids_many(rels, limit)
        for at in range(0, len(rels), READ_AHEAD_FILES):
            run = rels[at:at + READ_AHEAD_FILES]
            # A run of files' older versions read ahead, together (`Batch.get_many`); each file's newest is left to
            # be read alone, when it is not the bytes the reader holds (it usually is: the file as committed).
            ahead = [blob for rel in run for blob in list(dict.fromkeys(b for _, b in found.get(rel, ())))[1:]]
            got: dict[str, Any] = {}
            if ahead:
                with self.store._git.serial():
                    got = self.store._objects().get_many(ahead)
            for rel in run:
                out: list[tuple[str, bytes]] = []
                seen: set[str] = set()
                held = current(rel) if current is not None and rel in found else None
                held_ids = _blob_ids(held, found[rel][0][1]) if held is not None and found[rel] else ()
                for change, blob in found.get(rel, ()):
                    if blob in seen:
                        continue
                    seen.add(blob)
                    if blob in held_ids:
                        out.append((change, held))  # type: ignore[arg-type]  # held is not None here
                        continue
                    if blob in got:
                        obj = got[blob]
                    else:
                        with self.store._git.serial():
                            try:
                                obj = self.store._objects().get(blob)
                            except GitUnreadable:
                                obj = None
                    if obj is not None and obj.kind == "blob":
                        out.append((change, obj.data))
                yield rel, out

    def merge3(self, ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
        """`git merge-file`: git's own merge, as `git revert` would do it."""
        store = self.store
        with store._git.serial(), tempfile.TemporaryDirectory(prefix="memtui-revert-") as tmp:
            self._require_history()
            paths = []
            for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
                path = os.path.join(tmp, name)
                with open(path, "wb") as f:
                    f.write(data)
                paths.append(path)
            env = {**os.environ, **plumbing_env(store.git_dir, store.root)}
            done = read_git(["merge-file", "-p", "--quiet", *paths], env, cwd=store.root)
        if done is None:
            store._git.vet()
            raise StoreError(f"git merge-file did not answer within {git_timeout():g}s in {store.root}; nothing "
                             "was changed. Check for a stuck git process, then run `memtui doctor`")
        return done[1] if done[0] == 0 else None


def _plain(rel: str) -> bool:
    """A path as a tree holds it: no empty, `.` or `..` part and no line break. git's `cat-file --batch` reads
    `<commit>:../x` against the working folder and ends on a path outside the repository; GitPython's tree walk
    found no such entry. Such a name is "not there", for both."""
    return bool(rel) and "\n" not in rel and "\r" not in rel and all(p not in ("", ".", "..") for p in rel.split("/"))


def _blob_ids(data: bytes, like: str) -> tuple[str]:
    """`data`'s git blob id in the object format of the id `like` (sha1: 40 hex digits, else sha256)."""
    import hashlib

    made = (hashlib.sha1 if len(like) == 40 else hashlib.sha256)(b"blob %d\0" % len(data))
    made.update(data)
    return (made.hexdigest(),)


def _files_changed(store: Any, shas: list[str]) -> dict[str, tuple[str, ...]]:
    """Each commit's changed files, from one `git diff-tree --stdin` run by the git owner (plumbing: runs no diff
    driver, textconv or external diff the repository's config might name; GitPython is not opened for it). Commits
    that changed nothing are absent."""
    if not shas:
        return {}
    env = {**os.environ, **plumbing_env(store.git_dir, store.root)}
    with store._git.serial():
        done = read_git(["diff-tree", "--stdin", "-r", "--name-only", "--no-renames", "--root", "-z"], env,
                        ("\n".join(shas) + "\n").encode(), cwd=store.root)
    if done is None:
        store._git.vet()
        raise StoreError(f"git diff-tree did not answer within {git_timeout():g}s in {store.root}; check for a "
                         "stuck git process, then run `memtui doctor`")
    if done[0] != 0:
        raise StoreError(f"git could not list the files of {len(shas)} commit(s) in {store.root} "
                         f"({done[2].decode('utf-8', 'replace').strip()[:300]}); run `memtui doctor`")
    out: dict[str, list[str]] = {}
    wanted = set(shas)
    current: list[str] | None = None
    for token in done[1].decode("utf-8", "surrogateescape").split("\0"):
        if token in wanted and token not in out:
            current = out[token] = []  # the header of the next commit (one with no changes prints none)
        elif token and current is not None:
            current.append(token)
    return {sha: tuple(files) for sha, files in out.items()}
