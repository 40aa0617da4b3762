"""A Redis memory's history, replayed from its `changes` stream: the recorded changes (newest first), one change and
its patch, a file as a change left it, its past versions and who wrote each line. One job: reading history; recording
it is the store's (memtui.core.storage.redis_store), whose connection every read goes through.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memtui.core.grammar.paths import clean_rel
from memtui.core.storage.store import Commit, NoHistory

STREAM_ID = re.compile(r"^\d+(?:-\d+)?$")


class RedisHistory:
    """History of the Redis memory `store` (memtui.core.storage.redis_store.RedisStore, not imported: it imports
    this)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def history(self, rel: str | None = None, since: float | None = None) -> list[Commit]:
        out = []
        for sid, f in reversed(self.store.changes()):
            files = tuple(json.loads(f.get("files") or "[]"))
            if since is not None and int(f.get("ts", "0")) < since * 1000:
                continue
            if rel is not None and clean_rel(rel) not in files:
                continue
            out.append(Commit(sid, f.get("actor", ""), int(f.get("ts", "0")) / 1000, f.get("message", ""), files))
        return out

    def head(self) -> Commit | None:
        with self.store._calls():
            last = self.store.client.xrevrange(self.store.k_changes, count=1)
        if not last:
            return None
        sid, f = last[0]
        f = {k.decode(): v.decode("utf-8", "replace") for k, v in f.items()}
        return Commit(sid.decode(), f.get("actor", ""), int(f.get("ts", "0")) / 1000, f.get("message", ""), ())

    def change(self, sid: str) -> dict[str, str] | None:
        entries = self.store.changes(sid, count=1)
        return entries[0][1] if entries and entries[0][0] == sid else None

    def resolve_change(self, ref: str) -> Commit | None:
        """A stream id (`1755676800000-0`, or its millisecond part when only one change has it)."""
        if self.head() is None:
            raise NoHistory(f"the Redis memory at {self.store.location} has no recorded changes yet")
        ref = ref.strip()
        if not STREAM_ID.match(ref):
            return None
        with self.store._calls():
            found = self.store.client.xrange(self.store.k_changes, min=ref, max=ref, count=2)
            if len(found) != 1:
                return None
            sid = found[0][0].decode()
            before = self.store.client.xrevrange(self.store.k_changes, max="(" + sid, count=1)
        f = {k.decode(): v.decode("utf-8", "replace") for k, v in found[0][1].items()}
        return _as_commit(sid, f, (before[0][0].decode(),) if before else ())

    def _versions(self, rel: str, until: str = "+") -> list[tuple[Commit, str]]:
        """Each recorded change to `rel` up to `until`, oldest first, with the sha1 of the bytes it left ('' gone)."""
        rel = clean_rel(rel)
        out = []
        for sid, f in self.store.changes(until=until):
            if rel not in json.loads(f.get("files") or "[]"):
                continue
            blob = next((d.get("blob", "") for d in json.loads(f.get("changes") or "[]") if d.get("file") == rel), "")
            out.append((_as_commit(sid, f), blob))
        return out

    def file_at(self, rel: str, change: str) -> bytes | None:
        versions = self._versions(rel, until=change)
        if not versions or not versions[-1][1]:
            return None
        return self.store._blobs([versions[-1][1]])[versions[-1][1]]

    def past_versions(self, rel: str, limit: int) -> list[tuple[str, bytes]]:
        """One walk of the stream and one MGET of the blobs."""
        versions = [(c.sha, b) for c, b in reversed(self._versions(rel))][:limit]
        versions = [(sha, b) for sha, b in versions if b]  # '' : the change deleted the file
        blobs = self.store._blobs([b for _, b in versions])
        out, seen = [], set()
        for sha, b in versions:
            if b not in seen:
                seen.add(b)
                out.append((sha, blobs[b]))
        return out

    def blame_chunks(self, rel: str) -> list[tuple[Commit | None, list[str]]] | None:
        """Replays the file's recorded versions: a line keeps the change that first wrote it until one replaces it."""
        from difflib import SequenceMatcher

        versions = self._versions(rel)
        if not versions:
            return None
        blobs = self.store._blobs([b for _, b in versions])
        steps: list[tuple[Commit | None, bytes | None]] = [(c, blobs[b] if b else None) for c, b in versions]
        steps.append((None, self.store.read(rel)))  # lines not recorded yet (a raw SET) have no change
        lines: list[str] = []
        origins: list[Commit | None] = []
        for commit, data in steps:
            new = (data or b"").decode("utf-8", errors="replace").splitlines()
            kept: list[Commit | None] = []
            for tag, i1, i2, j1, j2 in SequenceMatcher(None, lines, new, autojunk=False).get_opcodes():
                kept += origins[i1:i2] if tag == "equal" else [commit] * (j2 - j1)
            lines, origins = new, kept
        chunks: list[tuple[Commit | None, list[str]]] = []
        for line, origin in zip(lines, origins):
            if chunks and chunks[-1][0] is origin:
                chunks[-1][1].append(line)
            else:
                chunks.append((origin, [line]))
        return chunks

    def change_patches(self, changes: list[str]) -> dict[str, dict[str, str]]:
        from memtui.core.basics.patches import split_patch

        out = {}
        for sid in changes:
            entry = self.change(sid) if STREAM_ID.match(sid) else None
            if entry is not None:
                out[sid] = split_patch(entry.get("diff", ""))
        return out


def _as_commit(sid: str, f: dict[str, str], parents: tuple[str, ...] = ()) -> Commit:
    return Commit(sid, f.get("actor", ""), int(f.get("ts", "0")) / 1000, f.get("message", ""),
                  tuple(json.loads(f.get("files") or "[]")), parents)
