"""Live diff in a real terminal: another process appends to MEMORY.md, and the time until tmux receives the line.

The app runs as the installed `memtui` command in a tmux pane; `pipe-pane` copies every byte the app writes to
the terminal into a file, which this process follows. The latency of one append is from just before the append
(the writer is this process) to the moment the appended line's unique word arrives in that byte stream, i.e.
the diff painted to the terminal. capture-pane confirms at the end that the lines are on screen.

    python benches/bench_live_diff.py                  # 1,000-file generated memory, 30 appends, prints p50/p95
    python benches/bench_live_diff.py --root DIR --appends 30 --gap 0.3 --json

`bench_live_diff_tmux(root, ...)` is the function benches/run.py can call for its table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
MARK = "zqlive"  # the appended entries carry MARK + a number, a word no memory holds


def _tmux(socket: str) -> list[str]:
    return ["tmux", "-L", socket, "-f", "/dev/null"]


def _wait_bytes(path: Path, offset: int, needle: bytes, timeout: float) -> tuple[float | None, int]:
    """(monotonic time `needle` was first seen after `offset` in the growing file, new offset)."""
    deadline = time.monotonic() + timeout
    tail = b""
    with open(path, "rb") as fh:
        fh.seek(offset)
        while True:
            chunk = fh.read()
            if chunk:
                now = time.monotonic()
                tail = (tail + chunk)[-65536:]
                offset += len(chunk)
                if needle in tail:
                    return now, offset
            elif time.monotonic() > deadline:
                return None, offset
            else:
                time.sleep(0.0005)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


def bench_live_diff_tmux(root: Path, *, appends: int = 30, gap: float = 0.3, rel: str = "MEMORY.md",
                         size: tuple[int, int] = (160, 48), env: dict[str, str] | None = None) -> dict[str, object]:
    """Run memtui on `root` in tmux, append `appends` entries to `rel` `gap` seconds apart, and return
    {"p50", "p95", "max", "latencies", "missed"} in seconds (a missed append never reached the screen in 5 s)."""
    exe = shutil.which("memtui")
    if shutil.which("tmux") is None or exe is None:
        raise RuntimeError("needs tmux and the memtui command on PATH")
    socket = f"memtui-live-{os.getpid()}"
    tmux = _tmux(socket)
    work = Path(tempfile.mkdtemp(prefix="memtui-live-"))
    stream = work / "pane.out"
    stream.write_bytes(b"")
    child = {"HOME": str(work), "MEMTUI_USER": "bench", "MEMTUI_CONFIG_DIR": str(work / "config"),
             "TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""),
             "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **(env or {})}
    command = "env -u COLUMNS -u LINES " + " ".join(f"{k}={v!r}" for k, v in child.items()) + f" {exe} {root}"
    subprocess.run([*tmux, "new-session", "-d", "-s", "live", "-x", str(size[0]), "-y", str(size[1]), command],
                   check=True)
    path = Path(root) / rel
    floor_stream = work / "tail.out"
    floor_stream.write_bytes(b"")
    # The same-run baseline: `tail -F` of the same file in a second pane, i.e. a terminal showing the appended line.
    subprocess.run([*tmux, "new-window", "-d", "-t", "live", "-n", "floor", f"tail -n0 -F {path}"], check=True)
    latencies: list[float] = []
    floors: list[float] = []
    missed = 0
    try:
        subprocess.run([*tmux, "pipe-pane", "-t", "live:0", "-o", f"cat >> {stream}"], check=True)
        subprocess.run([*tmux, "pipe-pane", "-t", "live:floor", "-o", f"cat >> {floor_stream}"], check=True)
        # Ready: the review panel's first sync has painted (the header's counts), and the watcher is live.
        deadline = time.monotonic() + 60
        while True:
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "live:0"], capture_output=True,
                                    text=True).stdout
            if "pending" in screen and "files" in screen:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"memtui never showed its first screen:\n{screen}")
            time.sleep(0.1)
        time.sleep(1.5)  # the watcher starts after the first frame, in a thread
        offset = stream.stat().st_size
        floor_offset = floor_stream.stat().st_size
        for k in range(1, appends + 1):
            word = f"{MARK}{k:04d}"
            line = f"- [observed] bench live diff {word} (2026-11-28, bench)\n"
            started = time.monotonic()
            with open(path, "a", encoding="utf-8") as fh:  # another terminal appends one line
                fh.write(line)
            floor, floor_offset = _wait_bytes(floor_stream, floor_offset, word.encode(), 5.0)
            if floor is not None:
                floors.append(floor - started)
            seen, offset = _wait_bytes(stream, offset, word.encode(), 5.0)
            if seen is None:
                missed += 1
            else:
                latencies.append(seen - started)
            time.sleep(gap)
        screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "live:0"], capture_output=True, text=True).stdout
        if latencies and f"{MARK}{appends:04d}" not in screen and missed == 0:
            raise RuntimeError(f"the last append is not on screen:\n{screen}")
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    if not latencies:
        raise RuntimeError("no append reached the screen")
    return {"p50": statistics.median(latencies), "p95": _percentile(latencies, 0.95), "max": max(latencies),
            "latencies": latencies, "missed": missed,
            "floor_p50": statistics.median(floors) if floors else None,
            "floor_p95": _percentile(floors, 0.95) if floors else None}


def run_rows(root: Path, appends: int = 30) -> list[object]:
    """Two rows for benches/run.py's table (p50 and p95 against `tail -F` in the same tmux), from its `Row`."""
    from run import Row

    r = bench_live_diff_tmux(root, appends=appends)
    note = f"{len(r['latencies'])}/{appends} appends shown in tmux" + (f", {r['missed']} missed" if r["missed"] else "")
    return [
        Row("Live diff in tmux: append by another process → line on the terminal, p50", r["p50"], "s",
            "tail -F in tmux, p50", r["floor_p50"], None, None, "", None, note),
        Row("Live diff in tmux, p95", r["p95"], "s", "tail -F in tmux, p95", r["floor_p95"], None, None,
            "< 100 ms", r["p95"] < 0.1),
    ]


def _memory(files: int) -> Path:
    """A generated memory root (cached by benches/run.py's helper), copied fresh: the bench appends to it."""
    sys.path.insert(0, str(BENCHES))
    import run

    out = BENCHES / "out"
    out.mkdir(exist_ok=True)
    cached = out / f"live-{files}"
    run.make_root(cached, files=files, megabytes=files * 0.009, seed=7, big_log_mb=0)
    copy = Path(tempfile.mkdtemp(prefix="memtui-live-root-")) / "memory"
    return run.fresh_copy(cached, copy)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, help="a memory root to append to (default: a generated one, copied)")
    parser.add_argument("--files", type=int, default=1000, help="files in the generated memory (default 1000)")
    parser.add_argument("--appends", type=int, default=30)
    parser.add_argument("--gap", type=float, default=0.3, help="seconds between appends")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    root = args.root or _memory(args.files)
    result = bench_live_diff_tmux(root, appends=args.appends, gap=args.gap)
    if not args.root:
        shutil.rmtree(root.parent, ignore_errors=True)
    if args.json:
        print(json.dumps(result))
    else:
        lat = result["latencies"]
        print(f"live diff in tmux, {len(lat)} appends ({result['missed']} missed): "
              f"p50 {result['p50'] * 1000:.0f} ms, p95 {result['p95'] * 1000:.0f} ms, "
              f"max {result['max'] * 1000:.0f} ms; tail -F in tmux: p50 {result['floor_p50'] * 1000:.0f} ms, "
              f"p95 {result['floor_p95'] * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
