"""Moving a memory between Redis and a folder: export (one git commit per recorded change) and import (git replayed).

Both keep what review depends on: each change's actor, committer, message and time; the audit log and the review
queue (their commit ids translated); files changed outside memtui stay outside changes on the other side.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from memtui.core.basics.jsontext import loads
from memtui.core.grammar.paths import PathRefused, check_rel
from memtui.core.storage.folder import AUDIT_FILE, STATE_DIR, FolderStore, _slug, atomic_write
from memtui.core.storage.redis_store import RedisStore
from memtui.core.storage.store import StoreError

if TYPE_CHECKING:
    from memtui.core.storage.gitcall import ReplayedCommit, TreeChange


@dataclass
class Transfer:
    changes: int
    files: int
    audit: int
    proposals: int
    message: str
    commits: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {"changes": self.changes, "files": self.files, "audit": self.audit, "proposals": self.proposals,
                "message": self.message}


def export_memory(store: RedisStore, dest: str | os.PathLike[str]) -> Transfer:
    """Write the Redis memory out as a new git folder, one commit per recorded change, oldest first."""
    import git

    from memtui.core.grammar.config import CONFIG_TEMPLATE, DEFAULT_MODEL
    from memtui.core.storage.init import GITIGNORE

    root = Path(dest).expanduser().absolute()
    if root.exists() and any(root.iterdir()):
        raise StoreError(f"{root} is not empty; export into a new folder")
    repo = git.Repo.init(root, initial_branch="main")
    atomic_write(root / ".gitignore", GITIGNORE.encode())
    atomic_write(root / STATE_DIR / "config.toml",
                 (store.config_text() or CONFIG_TEMPLATE.format(model=DEFAULT_MODEL)).encode())
    setup = [".gitignore", f"{STATE_DIR}/config.toml"]
    commits: dict[str, str] = {}
    entries = store.changes()
    for sid, fields in entries:
        index = repo.index
        for d in json.loads(fields.get("changes") or "[]"):
            try:
                path = root / check_rel(d["file"])  # no `.git` (any case), `.memtui` or audit-log entry
            except PathRefused as exc:
                raise StoreError(f"change {sid} records a file memtui refuses to write ({exc}); nothing past the "
                                 f"changes before it was exported to {root}") from None
            if d.get("blob"):
                data = store.blob(d["blob"])
                if data is None:
                    raise StoreError(f"change {sid} names content {d['blob']} that the Redis memory no longer has")
                atomic_write(path, data)
                index.add([d["file"]])
            else:
                path.unlink(missing_ok=True)
                if any(e[0] == d["file"] for e in index.entries):
                    index.remove([d["file"]], working_tree=False)
        if setup:
            index.add(setup)
            setup = []
        commits[sid] = _commit(index, fields.get("message", ""), fields.get("actor") or "memtui",
                               fields.get("committer"), int(fields.get("ts") or 0))
    if setup:
        repo.index.add(setup)
        _commit(repo.index, "memtui: export of an empty memory", "memtui", None, 0)
    # Bytes that changed without memtui stay uncommitted, so the folder shows them as external changes too.
    for ch in store.external_changes():
        if ch.after is None:
            (root / ch.path).unlink(missing_ok=True)
        else:
            atomic_write(root / ch.path, ch.after)
    audit = 0
    with open(root / AUDIT_FILE, "w", encoding="utf-8") as out:
        for rec in store.audit_records():
            if rec.get("commit") in commits:
                rec["commit"] = commits[rec["commit"]]
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
            audit += 1
    queue = root / STATE_DIR / "queue"
    ids = store.queue_ids()
    for pid in ids:
        raw = store.queue_load(pid)
        if raw is None:
            continue
        atomic_write(queue / f"{pid}.json", _translate(raw, commits))
    seq = store.client.get(store.k_seq)
    if seq:
        atomic_write(queue / ".seq", seq + b"\n")
    files = len([p for p in FolderStore(root).list_files("**/*") if _memory_path(p)])
    return Transfer(len(entries), files, audit, len(ids),
                    f"exported {len(entries)} change(s) and {files} file(s) from {store.location} to {root}", commits)


# A recorded change is one call to the server, with every file's bytes and its diff in it: a commit bigger than this
# is recorded in parts (Redis refuses a bulk string over 512 MB, and a reply of a 905 MB folder took past the 5 s
# a call may take).
PART_BYTES = 32 * 1024 * 1024
PART_FILES = 2_000


def import_memory(src: str | os.PathLike[str], store: RedisStore, *, history: bool = True,
                  part_bytes: int = PART_BYTES, part_files: int = PART_FILES) -> Transfer:
    """Load a folder into an empty Redis memory: its git history replayed as recorded changes, then its files. A
    commit over `part_bytes` or `part_files` is recorded as several changes, its subject saying "(part k of n)"."""
    root = Path(src).expanduser().absolute()
    if not root.is_dir():
        raise StoreError(f"no folder at {root} to import")
    if not store.is_empty():
        raise StoreError(f"the Redis memory at {store.location} already holds a memory; import into an empty "
                         "prefix (e.g. ?prefix=NEW) instead")
    folder = FolderStore(root)
    commits: dict[str, str] = {}
    parts_of: dict[tuple[str, str], str] = {}  # (commit, file) -> the recorded change (part) that changed the file
    with store.lock():
        if history:
            held: dict[str, int] = {}  # the length of each file's recorded bytes: a change's diff holds them too
            for c, files, renamed in _replayed(folder):
                # What a file brings to its part's call: its new bytes and, in the diff, the bytes it replaces (a
                # deleted file's whole text).
                weights = {rel: len(data or b"") + held.get(rel, 0) for rel, data in files.items()}
                sid = None
                parts = _parts(list(files), weights.__getitem__, c.message, part_bytes, part_files, renamed)
                for part, message in parts:
                    got = store.record({rel: files[rel] for rel in part}, message, c.author, c.committer,
                                       ts_ms=int(c.when) * 1000)
                    if got:
                        sid = got
                        if len(parts) > 1:  # an audit line of this commit names the part that changed its file
                            parts_of.update({(c.sha, rel): got for rel in part})
                for rel, data in files.items():
                    if data is None:
                        held.pop(rel, None)
                    else:
                        held[rel] = len(data)
                if sid:
                    commits[c.sha] = sid
        present = [p for p in folder.list_files("**/*") if _memory_file(store, p)]
        sizes: dict[str, int] = {}
        for rel in present:
            data = folder.read(rel)
            if data is not None:
                store.write(rel, data)
                sizes[rel] = len(data)
        for rel in store.recorded_hashes():
            if rel not in present:
                store.delete(rel)
        if not commits and present:
            whole = f"import {root}\n\nMemtui-Actor: memtui"
            for part, message in _parts(present, lambda rel: sizes.get(rel, 0), whole, part_bytes, part_files):
                sid = store.commit(part, message, "memtui")
                if sid:
                    commits["import"] = sid
        config = folder.config_text()
        if config is not None:
            store.set_config(config)
        audit = 0
        for rec in folder.audit_records():
            if rec.get("commit") in commits:
                sha = rec["commit"]
                rec["commit"] = next((parts_of[(sha, rel)] for rel in (rec.get("to"), rec.get("file"))
                                      if (sha, rel) in parts_of), commits[sha])
            store.audit_append(rec)
            audit += 1
        ids = folder.queue_ids()
        top = 0
        for pid in ids:
            raw = folder.queue_load(pid)
            if raw is not None:
                store.queue_save(pid, _translate(raw, commits))
                if pid[2:].isdigit():
                    top = max(top, int(pid[2:]))
        if top:
            store.client.set(store.k_seq, top)
    n = len([k for k in commits if k != "import"]) or len(commits)
    # The files read and written (one gone between the listing and its read is not in Redis, nor in the folder).
    return Transfer(n, len(sizes), audit, len(ids),
                    f"imported {n} change(s) and {len(sizes)} file(s) from {root} into {store.location}", commits)


def _parts(paths: list[str], size: Callable[[str], int], message: str, most_bytes: int,
           most_files: int, joined: set[str] | frozenset[str] = frozenset()) -> list[tuple[list[str], str]]:
    """`paths` cut in order into parts of at most `most_files` paths and `most_bytes` bytes (a bigger file is a part
    of its own), each with `message`, its subject marked "(part k of n)" when there are several. A path in
    `joined` (a rename's new name) stays in the part of the path before it (its old name)."""
    parts: list[list[str]] = [[]]
    held = 0
    for rel in paths:
        n = size(rel)
        if parts[-1] and rel not in joined and (len(parts[-1]) >= most_files or held + n > most_bytes):
            parts.append([])
            held = 0
        parts[-1].append(rel)
        held += n
    if len(parts) == 1:
        return [(parts[0], message)]
    subject, sep, rest = message.partition("\n")
    return [(part, f"{subject} (part {k} of {len(parts)}){sep}{rest}") for k, part in enumerate(parts, 1)]


def _commit(index: Any, message: str, author: str, committer: str | None, ts_ms: int) -> str:
    import git

    who = git.Actor(author, f"{_slug(author)}@memtui.local")
    by = git.Actor(committer, f"{_slug(committer)}@memtui.local") if committer else who
    dates = {"author_date": f"{ts_ms // 1000} +0000", "commit_date": f"{ts_ms // 1000} +0000"} if ts_ms else {}
    return index.commit(message, author=who, committer=by, **dates).hexsha


def _replayed(folder: FolderStore) -> Iterator[tuple[ReplayedCommit, dict[str, bytes | None], set[str]]]:
    """The folder's first-parent history oldest first, each commit with the memory files it changed (`_commit_files`)
    and the new names of its renames: read through the git owner (one `git log`, one `git diff-tree`, the blobs by
    the store's object reader), GitPython not opened. Nothing without git or before the first commit."""
    if not folder.has_git:
        return
    from memtui.core.storage.gitcall import commit_changes, first_parent_commits, plumbing_env
    from memtui.core.storage.gitobjects import head_born

    env = {**os.environ, **plumbing_env(folder.git_dir, folder.root)}
    with folder._git.serial():
        head = folder._objects()._head()  # "": the branch is not born yet; None: only git can say
        if head == "" or (head is None and not head_born(folder.git_dir, folder.root)):
            return
        try:
            log = first_parent_commits(env, cwd=folder.root)
            changed = commit_changes(env, [(c.sha, c.parents[0] if c.parents else None) for c in log],
                                     cwd=folder.root)
        except StoreError:
            folder._git.vet()  # a config include git waits on: said, with what to do
            raise
    for c in log:
        renamed: set[str] = set()
        yield c, _commit_files(folder, changed.get(c.sha, []), renamed, root=not c.parents), renamed


def _commit_files(folder: FolderStore, changes: list[TreeChange], renamed: set[str] | None = None, *,
                  root: bool = False) -> dict[str, bytes | None]:
    """The memory files one commit changed: path -> bytes after it (None if deleted), a rename's new path right
    after its old one (and added to `renamed`). A root commit's files come breadth first, as GitPython's tree
    walk gave them (the order a big first commit is cut into parts by); a submodule is no file."""
    out: dict[str, bytes | None] = {}
    for ch in changes:
        if ch.status in "DR" or ch.new_mode == GITLINK:
            if ch.old_mode not in (GITLINK, NO_MODE):
                out[ch.path] = None
        if ch.status != "D" and ch.new_mode != GITLINK:
            out[ch.new_path or ch.path] = _blob(folder, ch.new_blob)
            if ch.new_path is not None and renamed is not None and _memory_path(ch.path):
                renamed.add(ch.new_path)
    if root:
        out = {rel: out[rel] for rel in sorted(out, key=lambda rel: rel.count("/"))}
    return {p: b for p, b in out.items() if _memory_path(p)}


GITLINK, NO_MODE = "160000", "000000"


def _blob(folder: FolderStore, sha: str) -> bytes:
    with folder._git.serial():
        got = folder._objects().get(sha)
    if got is None or got.kind != "blob":
        raise StoreError(f"the git history at {folder.root} names content {sha} it does not hold; run "
                         "`memtui doctor` there, then import again")
    return got.data


def _memory_path(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return not name.startswith(".") and not rel.startswith((STATE_DIR + "/", ".git/")) and rel != AUDIT_FILE


def _memory_file(store: RedisStore, rel: str) -> bool:
    try:
        store.check_path(rel)
    except PathRefused:
        return False
    return _memory_path(rel)


def _translate(raw: bytes, commits: dict[str, str]) -> bytes:
    try:
        data = loads(raw)
    except ValueError:
        return raw
    if isinstance(data, dict) and data.get("commit") in commits:
        from memtui.core.writing.proposals import Proposal, unsealed_reason

        if unsealed_reason(raw) is None:  # memtui's own: sealed again once its commit is renamed
            return Proposal.from_json(raw).replace(commit=commits[data["commit"]]).sealed_json()
        data["commit"] = commits[data["commit"]]
        return (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode()
    return raw
