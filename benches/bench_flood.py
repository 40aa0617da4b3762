"""Scale as an attack, before and after in one run: a flooded queue and a memory of many topic files.

    python benches/bench_flood.py                                  # 100,000 proposals; lint at 2,000 and 8,000 files
    python benches/bench_flood.py --proposals 20000 --files 2000 --before-files 2000
    python benches/bench_flood.py --files 2000,8000,50000 --before-files 2000,8000 --before main

The memories are made fast (benches/flood.py: one real submit, then its queue file's bytes for each proposal;
topic files committed in two versions) and cached in --out by size. Every figure is a fresh process of memtui as
of --before (the package exported from git) and of this tree, one after the other in the same run, on the same
memory; peak RSS is the process's own (benches/run.py's `run`). The app is measured headless (Textual's pilot in
a child process): the time until the review list shows proposals, and the time from `q` pressed a second after
start (while the queue is still being read) until the process has exited.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHES))

import flood  # noqa: E402
import run  # noqa: E402

# The app in a child process: JSON-line events the runner reads (run.Proc). `more` is absent before this change.
APP_PROBE = r"""
import asyncio, json, sys, time
from memtui.tui.app import MemtuiApp

def event(name, **kw):
    print(json.dumps({"event": name, "t": time.monotonic(), **kw}), flush=True)

async def main(root, quit_after):
    started = time.monotonic()
    app = MemtuiApp(root, watch=False, user="bench")
    async with app.run_test(size=(150, 42)) as pilot:
        if quit_after is None:
            while not app.review.proposals:
                await pilot.pause(0.02)
            event("shown", seconds=time.monotonic() - started, listed=len(app.review.proposals),
                  more=getattr(app.review, "more", None))
        else:
            await pilot.pause(quit_after)
        event("q")
        await pilot.press("q")

asyncio.run(main(sys.argv[1], None if sys.argv[2] == "-" else float(sys.argv[2])))
"""


def queue_memory(out: Path, count: int) -> Path:
    """A memory root with `count` pending proposals from four agents (cached by size)."""
    from memtui.core.storage.init import init_root
    from memtui.core.writing.memory import Memory

    root = out / f"queue-{count}" / "memory"
    done = root.parent / "made"
    if done.exists():
        return root
    run.say(f"queuing {count:,} proposals in {root} ...")
    started = time.monotonic()
    init_root(root)
    flood.flood_queue(Memory(root), count)
    done.write_text(f"{time.monotonic() - started:.1f}\n")
    return root


def files_memory(out: Path, count: int) -> Path:
    from memtui.core.storage.init import init_root

    root = out / f"files-{count}" / "memory"
    done = root.parent / "made"
    if done.exists():
        return root
    run.say(f"committing {count:,} topic files (two versions each) in {root} ...")
    init_root(root)
    flood.topic_files(root, count)
    done.write_text("ok\n")
    return root


def measure(cmd: list[str], code: str, timeout: float, ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """(seconds, peak RSS MB); a run killed at `timeout` counts as `timeout` seconds (the row says "> …")."""
    started = time.monotonic()
    try:
        seconds, rss, _ = run.run(cmd, code=code, ok=ok, timeout=timeout)
    except RuntimeError:
        if time.monotonic() - started < timeout:
            raise
        return float("inf"), 0.0
    return seconds, rss


def app_figures(root: Path, code: str, timeout: float) -> dict[str, float]:
    p = run.Proc([run.PY, "-c", APP_PROBE, str(root), "-"], code=code)
    shown = p.wait_event("shown", timeout=timeout)
    q = p.wait_event("q", timeout=timeout)
    p.finish(timeout)
    exited = time.monotonic()
    out = {"first list s": shown["seconds"], "listed": shown["listed"], "rss MB": p.rss_mb or 0.0,
           "exit after q s": exited - q["t"]}
    p = run.Proc([run.PY, "-c", APP_PROBE, str(root), "1.0"], code=code)
    q = p.wait_event("q", timeout=timeout)
    p.finish(timeout)
    out["q while loading s"] = time.monotonic() - q["t"]
    return out


def row(name: str, before: tuple[float, float] | None, after: tuple[float, float]) -> dict[str, object]:
    out: dict[str, object] = {"what": name, "after s": round(after[0], 2), "after MB": round(after[1])}
    if before is not None:
        out.update({"before s": round(before[0], 2), "before MB": round(before[1]),
                    "time ratio": round(before[0] / after[0], 1) if after[0] and before[0] != float("inf") else None,
                    "RSS ratio": round(before[1] / after[1], 1) if after[1] and before[1] else None})
    return out


def table(rows: list[dict[str, object]]) -> str:
    lines = ["| what | before | after | before ÷ after (time, RSS) |", "|---|---|---|---|"]
    for r in rows:
        before = f"{r['before s']} s, {r['before MB']} MB" if "before s" in r else "—"
        if r.get("before s") == float("inf"):
            before, r = "killed after --lint-timeout", {k: v for k, v in r.items() if k != "time ratio"}
        ratio = f"{r['time ratio']}×, {r['RSS ratio']}×" if r.get("time ratio") else "—"
        lines.append(f"| {r['what']} | {before} | {r['after s']} s, {r['after MB']} MB | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--proposals", type=int, default=100_000)
    parser.add_argument("--files", default="2000,8000", help="lint sizes, comma-separated")
    parser.add_argument("--before-files", default="2000", help="the sizes lint is measured at before too")
    parser.add_argument("--before", default="main", help="the git ref measured as before")
    parser.add_argument("--out", type=Path, default=BENCHES / "out" / "flood")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--lint-timeout", type=float, default=600, help="before's lint is killed after this long")
    args = parser.parse_args(argv)
    os.environ.setdefault("MEMTUI_USER", "bench")
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    before = run.export_tree(args.before, args.out / "before-code")
    after = str(run.REPO)
    rows: list[dict[str, object]] = []
    if args.proposals:
        root = queue_memory(args.out, args.proposals)
        n = f"{args.proposals:,} proposals"
        for what, cmd in ((f"`queue list`, {n}", ["queue", "list"]), (f"`today`, {n}", ["today"])):
            b = measure(run.memtui_cmd(*cmd, "--root", str(root)), before, args.timeout)
            a = measure(run.memtui_cmd(*cmd, "--root", str(root)), after, args.timeout)
            rows.append(row(what, b, a))
            run.say(json.dumps(rows[-1]))
        app = {label: app_figures(root, code, args.timeout) for label, code in (("before", before), ("after", after))}
        rows.append(row(f"app: first list shown, {n}", (app["before"]["first list s"], app["before"]["rss MB"]),
                        (app["after"]["first list s"], app["after"]["rss MB"])))
        rows.append(row(f"app: `q` 1 s after start → exited, {n}",
                        (app["before"]["q while loading s"], app["before"]["rss MB"]),
                        (app["after"]["q while loading s"], app["after"]["rss MB"])))
        run.say(json.dumps(app))
    before_sizes = {int(s) for s in args.before_files.split(",") if s}
    for size in (int(s) for s in args.files.split(",") if s):
        root = files_memory(args.out, size)
        cmd = run.memtui_cmd("lint", "--root", str(root))
        b = measure(cmd, before, args.lint_timeout, ok=(0, 1)) if size in before_sizes else None
        a = measure(cmd, after, args.timeout, ok=(0, 1))
        rows.append(row(f"`lint`, {size:,} topic files", b, a))
        run.say(json.dumps(rows[-1]))
    text = (f"`python benches/bench_flood.py` ({' '.join(argv or sys.argv[1:]) or 'defaults'}), "
            f"{(time.monotonic() - started) / 60:.1f} min, before = `{args.before}`:\n\n" + table(rows))
    (args.out / "results.json").write_text(json.dumps(rows, indent=1))
    (args.out / "table.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
