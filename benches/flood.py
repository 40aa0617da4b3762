"""A flood, made fast: thousands of queued proposals and thousands of committed topic files, as memtui leaves them.

Queuing 100,000 proposals through memtui's write path (or MCP) takes minutes; what the readers under test see is
only the queue files. So one proposal is queued for real (`Memory.update` by an agent) and the rest are written
as that one's bytes, sealed (`Proposal.sealed_json`) with their own id, actor and entry: the files memtui would have written,
without an fsync each. On Redis the same bytes go into the queue hash. Used by benches/bench_flood.py and
tests/security/test_gate_flood.py.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Sequence

ACTORS = ("agent-claude", "agent-cursor", "agent-ci", "mcp-scraper")


def flood_queue(mem: Any, count: int, actors: Sequence[str] = ACTORS) -> list[str]:
    """Queue `count` pending proposals in `mem` (a `Memory`, folder or Redis), oldest first; their ids."""
    from memtui.core.writing.proposals import Proposal

    first = mem.update("Projects", "add", "[observed] Flood fact 0", actor=actors[0])
    if first.status != "queued":
        raise RuntimeError(f"the template proposal was not queued: {first.status}: {first.message}")
    template = Proposal.from_json(mem.store.queue_load(first.id))
    number = int(first.id[2:])
    ids = [first.id]
    batch: dict[str, bytes] = {}
    folder = getattr(mem.store, "queue_dir", None)
    for k in range(1, count):
        pid = f"p-{number + k:04d}"
        data = template.replace(id=pid, actor=actors[k % len(actors)], entry=f"[observed] Flood fact {k}").sealed_json()
        ids.append(pid)
        if folder is not None:
            (folder / f"{pid}.json").write_bytes(data)
        else:
            batch[pid] = data
            if len(batch) >= 1000:
                _redis_put(mem.store, batch)
                batch = {}
    if batch:
        _redis_put(mem.store, batch)
    if folder is not None:
        (folder / ".seq").write_text(str(number + count - 1))
    else:
        mem.store.client.set(mem.store.k_seq, number + count - 1)
    return ids


def _redis_put(store: Any, batch: dict[str, bytes]) -> None:
    store.client.hset(store.k_queue, mapping=batch)


def topic_files(root: Path, count: int, *, entries: int = 3) -> list[str]:
    """`count` small topic files under notes/, committed in two commits (the second revises each, so every file
    has a history of two versions); their paths."""
    notes = root / "notes"
    notes.mkdir(exist_ok=True)
    rels = []
    for version in (1, 2):
        for k in range(count):
            lines = [f"# Note {k}", "", "## Facts", ""]
            lines += [f"- [observed] Service {k} fact {j} holds in version {version} (2026-08-0{j % 9 + 1})"
                      for j in range(entries)]
            rel = f"notes/note-{k:05d}.md"
            (root / rel).write_text("\n".join(lines) + "\n")
            if version == 1:
                rels.append(rel)
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"notes, version {version}")
    return rels


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
