"""A folder memory's history and blame, read from git: the commits that touched a file, a file as it was, who
wrote each line, diffs, past versions and git's own three-way merge. One job: reading history, wherever the
repository is (the folder's own `.git`, or memtui's beside it: memtui.core.storage.places); writing commits is the
store's commit engine (memtui.core.storage.folder_commit). Every call goes through the store's git owner
(memtui.core.storage.gitcall). """

from __future__ import annotations

import os
import tempfile
from typing import Any, Callable, Iterator

from memtui.core.storage.gitcall import errors, timed_out
from memtui.core.storage.gitobjects import GitUnreadable
from memtui.core.storage.store import Commit, NoHistory


class FolderHistory:
    """History of the folder memory `store`, through its git owner (replaced when git moves: read each time)."""

    def __init__(self, store: Any) -> None:  # memtui.core.storage.folder.FolderStore (not imported: it imports this)
        self.store = store

    def history(self, rel: str | None = None, since: float | None = None) -> list[Commit]:
        with self.store._git.use("reading history") as repo:
            if repo is None or not repo.head.is_valid():
                return []
            kwargs: dict[str, Any] = {}
            if since is not None:
                kwargs["since"] = f"@{int(since)}"
            commits = list(repo.iter_commits(paths=rel, **kwargs) if rel else repo.iter_commits(**kwargs))
            files = _files_changed(repo, [c.hexsha for c in commits])
            return [Commit(c.hexsha, c.author.name, float(c.authored_date), c.message, files.get(c.hexsha, ()))
                    for c in commits]

    def changes_since(self, since: float, known: set[str]) -> list[Commit]:
        """Listing a commit's files costs git work: only for the commits not in `known` (usually none)."""
        with self.store._git.use("reading recent commits") as repo:
            if repo is None or not repo.head.is_valid():
                return []
            commits = [c for c in repo.iter_commits(since=f"@{int(since)}") if c.hexsha not in known]
            files = _files_changed(repo, [c.hexsha for c in commits])
            return [Commit(c.hexsha, c.author.name, float(c.authored_date), c.message, files.get(c.hexsha, ()))
                    for c in commits]

    def commit_files(self, sha: str) -> tuple[str, ...]:
        """The files one commit changed (plumbing: no diff driver or textconv of the repository's runs)."""
        with self.store._git.use("reading a commit") as repo:
            return _files_changed(repo, [sha]).get(sha, ())

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

    def file_at(self, rel: str, change: str) -> bytes | None:
        with self.store._git.use("reading a past version") as repo:
            try:
                return (self._history_repo(repo).commit(change).tree / rel).data_stream.read()
            except KeyError:
                return None

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
        """git's own walk of the file's commits, each distinct blob read once."""
        out: list[tuple[str, bytes]] = []
        with self.store._git.use("reading past versions") as repo:
            if repo is None or not repo.head.is_valid():
                return []
            blobs: set[str] = set()
            for c in repo.iter_commits(paths=rel, max_count=limit):
                try:
                    blob = c.tree / rel
                except KeyError:
                    continue
                if blob.hexsha not in blobs:
                    blobs.add(blob.hexsha)
                    out.append((c.hexsha, blob.data_stream.read()))
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
        for rel in rels:
            out: list[tuple[str, bytes]] = []
            seen: set[str] = set()
            held = current(rel) if current is not None and rel in found else None
            held_ids = _blob_ids(held) if held is not None else ()
            with self.store._git.serial():
                batch = self.store._objects()
                for change, blob in found.get(rel, ()):
                    if blob in seen:
                        continue
                    seen.add(blob)
                    if blob in held_ids:
                        out.append((change, held))  # type: ignore[arg-type]  # held is not None here
                        continue
                    try:
                        got = batch.get(blob)
                    except GitUnreadable:
                        got = None
                    if got is not None and got.kind == "blob":
                        out.append((change, got.data))
            yield rel, out

    def merge3(self, ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
        """`git merge-file`: git's own merge, as `git revert` would do it."""
        with self.store._git.use("git merge-file") as repo, \
                tempfile.TemporaryDirectory(prefix="memtui-revert-") as tmp:
            repo = self._history_repo(repo)
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


def _blob_ids(data: bytes) -> tuple[str, str]:
    """`data`'s git blob id in both object formats (sha1, sha256): which one a repository uses shows in its ids."""
    import hashlib

    header = b"blob %d\0" % len(data)
    return hashlib.sha1(header + data).hexdigest(), hashlib.sha256(header + data).hexdigest()


def _files_changed(repo: Any, shas: list[str]) -> dict[str, tuple[str, ...]]:
    """Each commit's changed files, from one `git diff-tree --stdin` (plumbing: runs no diff driver, textconv or
    external diff the repository's config might name). Commits that changed nothing are absent."""
    if not shas:
        return {}
    with tempfile.TemporaryFile() as feed:
        feed.write(("\n".join(shas) + "\n").encode())
        feed.seek(0)
        raw = repo.git.diff_tree("--stdin", "-r", "--name-only", "--no-renames", "--root", "-z", istream=feed)
    out: dict[str, list[str]] = {}
    wanted = set(shas)
    current: list[str] | None = None
    for token in raw.split("\0"):
        if token in wanted and token not in out:
            current = out[token] = []  # the header of the next commit (one with no changes prints none)
        elif token and current is not None:
            current.append(token)
    return {sha: tuple(files) for sha, files in out.items()}
