"""A writer process for crash runs: writes to one memory in a loop until it is killed (SIGKILL).

Usage: stress_worker.py ROOT LOG TAG SEED. Every result it is told goes to LOG.TAG as one JSON line, so the
harness knows which writes a killed writer saw applied.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memtui.core.writing.memory import Memory  # noqa: E402
from support.stress import SECTIONS, Outcome, _target  # noqa: E402


def main() -> None:
    root, log, tag, seed = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    rng = random.Random(seed)
    if root.startswith(("redis://", "rediss://", "unix://")):
        from memtui.core.access.stores import open_memory

        mem = open_memory(url=root)
    else:
        mem = Memory(root)
    out = open(f"{log}.{tag}", "a", buffering=1)
    mine: list[tuple[str, str, str]] = []
    n = 0
    while True:
        n += 1
        r = rng.random()
        actor = f"wes-{tag}"
        if r < 0.35:
            rel, section = _target(rng)
            text = f"[stated] crash {tag} n{n} token{rng.randrange(10**9)}"
            res = mem.update(section, "add", text, file=rel, actor=actor)
            o = Outcome("inproc", actor, "add", rel, text, res.status, res.id, res.commit, res.entry, res.message)
            if res.status == "applied" and res.entry:
                mine.append((rel, section, res.entry))
        elif r < 0.5 and mine:
            rel, section, old = mine.pop(rng.randrange(len(mine)))
            text = f"[stated] crash {tag} revised n{n} token{rng.randrange(10**9)}"
            res = mem.update(section, "revise", text, old, file=rel, actor=actor)
            o = Outcome("inproc", actor, "revise", rel, text, res.status, res.id, res.commit, res.entry, res.message)
            if res.status == "applied" and res.entry:
                mine.append((rel, section, res.entry))
        elif r < 0.65:
            text = f"crash log {tag} n{n}"
            res = mem.log(text, actor=f"agent-{tag}")
            o = Outcome("inproc-log", f"agent-{tag}", "append", res.file or "", text, res.status, res.id,
                        res.commit, None, res.message)
        elif r < 0.8:
            rel, section = _target(rng)
            text = f"[inferred] crash {tag} agent n{n} token{rng.randrange(10**9)}"
            res = mem.update(section, "add", text, file=rel, actor=f"agent-{tag}")
            o = Outcome("inproc-agent", f"agent-{tag}", "add", rel, text, res.status, res.id, res.commit, res.entry,
                        res.message)
        else:
            pending = [p for p in mem.proposals(external=False) if p.status == "pending"]
            if not pending:
                continue
            p = rng.choice(pending)
            if rng.random() < 0.2:
                res = mem.reject(p.id, reason="crash run: not wanted", by=actor)
            else:
                res = mem.approve(p.id, by=actor)
            o = Outcome("approver", actor, "decide", res.file or "", p.id, res.status, p.id, res.commit, res.entry,
                        res.message)
        out.write(json.dumps(asdict(o)) + "\n")


if __name__ == "__main__":
    assert SECTIONS
    main()
