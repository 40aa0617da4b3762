"""Per-line provenance of a 2,000-line file with 500 commits: the cost of the first read and of a cached one.

An OpenClaw workspace kept in git: MEMORY.md of 2,000 plain bullets, then 500 changes by a mix of writers, each
through memtui's one write path (a person's own edit, an agent's edit approved by the person, an outside edit on
disk approved, a commit made outside memtui). Prints the figures; `python benches/bench_provenance.py [DIR]`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LINES, CHANGES = 2_000, 500


def build(root: Path) -> None:
    from memtui.core.writing.memory import Memory

    (root / "memory").mkdir(parents=True)
    body = "".join(f"- fact number {i} about the project\n" for i in range(LINES))
    (root / "MEMORY.md").write_text("# Long-term memory\n\n" + body)
    git = ["git", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "-c", "user.name=Wes", "-c", "user.email=wes@example.com", "commit", "-qm", "memory"],
                   check=True)
    mem = Memory(root)
    path = root / "MEMORY.md"
    for n in range(CHANGES):
        i = (n * 37) % LINES
        old = f"- fact number {i} about the project"
        new = f"- fact number {i} about the project, revised {n}"
        text = path.read_text()
        if old + "\n" not in text:
            continue
        kind = n % 4
        if kind == 0:
            res = mem.edit("MEMORY.md", old, new, actor="wes")
        elif kind == 1:
            res = mem.edit("MEMORY.md", old, new, actor="mcp:claude")
            res = mem.approve(res.id or "", by="wes")
        elif kind == 2:
            path.write_text(text.replace(old + "\n", new + "\n", 1))
            res = mem.approve(mem.external_proposals()[0].id, by="wes")
        else:
            path.write_text(text.replace(old + "\n", new + "\n", 1))
            subprocess.run([*git, "-c", "user.name=Wes", "-c", "user.email=wes@example.com", "commit", "-qam",
                            f"hand edit {n}"], check=True)
            continue
        assert res.status == "applied", res


def measure(root: Path) -> dict[str, float]:
    from memtui.core.timeline import provenance
    from memtui.core.writing.memory import Memory

    mem = Memory(root)
    t = time.perf_counter()
    lines = provenance.of_file(mem, "MEMORY.md")
    cold = time.perf_counter() - t
    t = time.perf_counter()
    again = provenance.of_file(Memory(root), "MEMORY.md")
    warm = time.perf_counter() - t
    assert again is lines and len(lines) == LINES + 2
    commits = int(subprocess.run(["git", "-C", str(root), "rev-list", "--count", "HEAD"], capture_output=True,
                                 text=True, check=True).stdout)
    return {"lines": len(lines), "commits": commits, "first_ms": cold * 1000, "cached_ms": warm * 1000,
            "writers": len({p.writer for p in lines})}


if __name__ == "__main__":
    os.environ.setdefault("MEMTUI_USER", "wes")
    top = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    root = top / "workspace"
    if not root.exists():
        t = time.perf_counter()
        build(root)
        print(f"built in {time.perf_counter() - t:.1f} s")
    print(measure(root))
