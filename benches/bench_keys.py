"""Key latency with a big uncommitted file selected in review, alone and under a heavy writer: key → screen change.

    python benches/bench_keys.py                     # tmux and pilot, 20 MB log, with and without a writer
    python benches/bench_keys.py --code /work/main   # another tree of memtui (a before/after comparison)
    python benches/bench_keys.py --only tmux --mb 20 --rounds 10

Each figure is measured the way a person feels it. Under tmux: a key is sent to the installed `memtui` in a pane
and the pane is captured until it shows the key's answer (the help screen open or closed, the next proposal's
detail line); p50 and p95 over the rounds, and the app's peak RSS (VmHWM). Under a Textual pilot (in this
process, so --code does not apply): the time from a key posted to the app's state answering it. The writer is
another process appending a line to a daily log every few milliseconds, as an agent's logging hook does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

LOG = "log/2026-08-21.md"
WRITTEN = "log/2026-08-22.md"  # what the writer appends to
LOG_LINE = "- 14:05 [observed] Deploy step {k} finished; the build log said ok after a retry (2026-08-21, ci)\n"
NOW = "2026-08-20T14:05"


def external_id(rel: str) -> str:
    from memtui.core.writing.proposals import EXTERNAL_PREFIX

    return EXTERNAL_PREFIX + hashlib.sha1(rel.encode()).hexdigest()[:6]


def git_env() -> dict[str, str]:
    env = dict(os.environ)
    for k, v in (("GIT_AUTHOR_NAME", "bench"), ("GIT_AUTHOR_EMAIL", "bench@memtui.local"),
                 ("GIT_COMMITTER_NAME", "bench"), ("GIT_COMMITTER_EMAIL", "bench@memtui.local")):
        env.setdefault(k, v)
    return env


def make_memory(folder: Path, mb: float) -> Path:
    """The demo memory (committed) with a `mb` MB daily log written past memtui, uncommitted."""
    os.environ.update({k: v for k, v in git_env().items() if k.startswith("GIT_")})
    os.environ["MEMTUI_NOW"] = NOW
    from memtui.demo import make_demo

    root = make_demo(folder / "memory")
    lines, total, k = [], 0, 0
    while total < mb * 1_000_000:
        line = LOG_LINE.format(k=k)
        lines.append(line)
        total += len(line)
        k += 1
    (root / LOG).write_text("# 2026-08-21\n\n" + "".join(lines), encoding="utf-8")
    return root


class Writer:
    """Another process appending to a daily log as fast as an agent's logging hook would (one line per `every`)."""

    def __init__(self, root: Path, every: float = 0.005) -> None:
        code = ("import sys, time\n"
                "path, every = sys.argv[1], float(sys.argv[2])\n"
                "k = 0\n"
                "while True:\n"
                "    with open(path, 'a') as f:\n"
                "        f.write(f'- 14:06 [observed] writer line {k} (2026-08-22, hook)\\n')\n"
                "    k += 1\n"
                "    time.sleep(every)\n")
        (root / WRITTEN).parent.mkdir(parents=True, exist_ok=True)
        (root / WRITTEN).write_text("# 2026-08-22\n\n")
        self.proc = subprocess.Popen([sys.executable, "-c", code, str(root / WRITTEN), str(every)])

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def percentiles(waits: list[float]) -> dict[str, float]:
    ordered = sorted(waits)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": statistics.median(ordered), "p95": p95, "max": ordered[-1], "n": len(ordered)}


# tmux -----------------------------------------------------------------------------------------------------------
def _screen(tmux: list[str]) -> str:
    return subprocess.run([*tmux, "capture-pane", "-p", "-t", "app"], capture_output=True, text=True).stdout


def _answered(tmux: list[str], key: str, condition: Callable[[str], bool], timeout: float) -> float:
    started = time.monotonic()
    subprocess.run([*tmux, "send-keys", "-t", "app", key], check=True)
    while True:
        if condition(_screen(tmux)):
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"{key!r} was not answered within {timeout} s:\n{_screen(tmux)}")
        time.sleep(0.002)


def _selected(screen: str) -> str | None:
    """The id in the selected proposal's detail line ("p-0002: revise by …", "x-…: external change …")."""
    m = re.search(r"\b((?:p-\d+|x-[0-9a-f]+)): (?:external|[a-z]+ by)", screen)
    return m[1] if m else None


def _vmhwm(pid: int) -> float:
    """Peak RSS in MB of the app: the pane's process or, when it is a wrapper, its largest child."""
    best = 0.0
    for p in [pid, *_children(pid)]:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    best = max(best, int(line.split()[1]) / 1024)
        except OSError:
            pass
    return best


def _children(pid: int) -> list[int]:
    try:
        kids = [int(k) for k in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    return kids + [g for k in kids for g in _children(k)]


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of the app so far (its own and its threads', from /proc)."""
    total = 0.0
    for p in [pid, *_children(pid)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _app_pid(pid: int) -> int:
    """The Python process under the pane's shell (the one that draws)."""
    for p in [pid, *_children(pid)]:
        try:
            if b"memtui" in Path(f"/proc/{p}/cmdline").read_bytes() and b"python" in Path(
                    f"/proc/{p}/cmdline").read_bytes():
                return p
        except OSError:
            pass
    return pid


def tmux_keys(root: Path, *, code: str | None = None, writer: bool = False, rounds: int = 10,
              size: tuple[int, int] = (120, 42), home: Path | None = None,
              py_spy: Path | None = None) -> dict[str, Any]:
    """The installed app on `root` under tmux, the big log selected in review: seconds from key to screen, and
    the app's CPU seconds per key (what the key cost, whatever else the machine is doing). With `py_spy` a
    flame graph of the app while the keys are sent is written there (py-spy record)."""
    home = home or root.parent
    socket = f"memtui-keys-{os.getpid()}-{time.monotonic_ns()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    env = {"HOME": str(home), "MEMTUI_NOW": NOW, "MEMTUI_USER": "bench", "MEMTUI_CONFIG_DIR": str(home / "config"),
           "TERM": "xterm-256color", "PATH": os.environ["PATH"], "TEXTUAL_ANIMATIONS": "none"}
    pythonpath = code or os.environ.get("PYTHONPATH")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    command = " ".join(f"{k}={v}" for k, v in env.items()) + f" {shutil.which('memtui')} {root}"
    subprocess.run([*tmux, "new-session", "-d", "-s", "app", "-x", str(size[0]), "-y", str(size[1]),
                    f"env -u COLUMNS -u LINES {command}"], check=True)
    big, other = external_id(LOG), external_id("people/alex.md")  # the demo's own external change
    on_big = lambda s: f"{big}: external" in s  # noqa: E731 (the detail line of the selected proposal)
    on_other = lambda s: f"{other}: external" in s  # noqa: E731
    feeding = Writer(root) if writer else None
    spy = None
    try:
        pid = int(subprocess.run([*tmux, "display-message", "-p", "-t", "app", "#{pane_pid}"], check=True,
                                 capture_output=True, text=True).stdout)
        deadline = time.monotonic() + 60
        while big not in _screen(tmux):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the review panel never listed {LOG}:\n{_screen(tmux)}")
            time.sleep(0.1)
        for _ in range(20):  # walk the review list to the big log, one step answered before the next
            shown = _selected(_screen(tmux))
            if shown == big:
                break
            subprocess.run([*tmux, "send-keys", "-t", "app", "]"], check=True)
            step = time.monotonic() + 20
            while _selected(_screen(tmux)) == shown and time.monotonic() < step:
                time.sleep(0.05)
        if not on_big(_screen(tmux)):
            raise RuntimeError(f"the big log was never selected:\n{_screen(tmux)}")
        time.sleep(1)
        keys: dict[str, list[float]] = {"?": [], "? (close)": [], "[": [], "]": []}
        if py_spy is not None:
            fmt = ["-f", "raw"] if py_spy.suffix == ".txt" else []  # collapsed stacks, to add up by function
            spy = subprocess.Popen(["py-spy", "record", *fmt, "-o", str(py_spy), "-p", str(_app_pid(pid)),
                                    "--threads"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
        cpu = _cpu_seconds(pid)
        for _ in range(rounds):
            keys["?"].append(_answered(tmux, "?", lambda s: "memtui keys" in s, 20))
            keys["? (close)"].append(_answered(tmux, "?", lambda s: "memtui keys" not in s and on_big(s), 20))
            keys["["].append(_answered(tmux, "[", on_other, 20))
            keys["]"].append(_answered(tmux, "]", on_big, 20))
        cpu = (_cpu_seconds(pid) - cpu) / (4 * rounds)
        waits = [w for ws in keys.values() for w in ws]
        return {"how": "tmux", "writer": writer, **percentiles(waits), "cpu_per_key": cpu, "rss_mb": _vmhwm(pid),
                "per_key": {k: percentiles(v) for k, v in keys.items()}}
    finally:
        if spy is not None:
            spy.send_signal(2)  # py-spy writes what it recorded on SIGINT
            spy.wait(60)
        if feeding is not None:
            feeding.stop()
        subprocess.run([*tmux, "kill-server"], capture_output=True)


# pilot ----------------------------------------------------------------------------------------------------------
def pilot_keys(root: Path, *, writer: bool = False, rounds: int = 10,
               size: tuple[int, int] = (120, 42)) -> dict[str, Any]:
    """The app in this process under a Textual pilot (its watcher on): seconds from a key to the app's answer."""
    import asyncio

    os.environ["MEMTUI_NOW"] = NOW
    os.environ.setdefault("MEMTUI_CONFIG_DIR", str(root.parent / "config"))
    from memtui.tui.app import MemtuiApp
    from memtui.tui.help import HelpScreen

    big, other = external_id(LOG), external_id("people/alex.md")
    result: dict[str, Any] = {}

    async def run() -> None:
        app = MemtuiApp(root)
        async with app.run_test(size=size) as pilot:
            deadline = time.monotonic() + 60
            while not (app.review.loaded and any(p.id == big for p in app.review.proposals)):
                if time.monotonic() > deadline:
                    raise RuntimeError("the review panel never listed the big log")
                await pilot.pause(0.05)
            app.review.select(big)
            app.review.option_list.focus()
            await pilot.pause(1)
            feeding = Writer(root) if writer else None

            async def answered(key: str, condition: Callable[[], bool]) -> float:
                # Posted as the terminal's key would be, not with pilot.press: that waits for the whole app to be
                # idle, which under a writer measures the writer's events, not the key.
                started = time.perf_counter()
                app.simulate_key(key)
                while not condition():
                    if time.perf_counter() - started > 20:
                        raise RuntimeError(f"{key!r} was not answered in 20 s")
                    await asyncio.sleep(0.001)
                return time.perf_counter() - started

            selected = lambda pid: lambda: app.review.selected is not None and app.review.selected.id == pid  # noqa
            waits: list[float] = []
            try:
                for _ in range(rounds):
                    waits.append(await answered("question_mark", lambda: isinstance(app.screen, HelpScreen)))
                    waits.append(await answered("question_mark", lambda: app.screen is app.base))
                    waits.append(await answered("left_square_bracket", selected(other)))
                    waits.append(await answered("right_square_bracket", selected(big)))
            finally:
                if feeding is not None:
                    feeding.stop()
            result.update(how="pilot", writer=writer, **percentiles(waits))

    asyncio.run(run())
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--code", help="a tree of memtui to measure under tmux (PYTHONPATH for the app)")
    parser.add_argument("--mb", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--only", choices=("tmux", "pilot"))
    parser.add_argument("--no-writer", action="store_true", help="skip the runs under a writer")
    parser.add_argument("--writer-only", action="store_true", help="only the runs under a writer")
    parser.add_argument("--py-spy", type=Path, help="a folder for py-spy's collapsed stacks of the tmux runs")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-keys-") as tmp:
        template = make_memory(Path(tmp) / "template", args.mb)
        for how in ("tmux", "pilot"):
            if args.only and how != args.only:
                continue
            for writer in (False,) if args.no_writer else (True,) if args.writer_only else (False, True):
                folder = Path(tmp) / f"{how}-{writer}"
                root = folder / "memory"
                shutil.copytree(template, root, symlinks=True)
                if how == "tmux":
                    spy = args.py_spy / f"keys-writer-{writer}.txt" if args.py_spy else None
                    row = tmux_keys(root, code=args.code, writer=writer, rounds=args.rounds, py_spy=spy)
                else:
                    row = pilot_keys(root, writer=writer, rounds=args.rounds)
                rows.append(row)
                rss = f", {row['cpu_per_key'] * 1000:.0f} ms CPU a key, peak {row['rss_mb']:.0f} MB" \
                    if "rss_mb" in row else ""
                print(f"{how:5} writer={'yes' if writer else 'no '}: p50 {row['p50'] * 1000:.0f} ms, "
                      f"p95 {row['p95'] * 1000:.0f} ms, max {row['max'] * 1000:.0f} ms{rss}", flush=True)
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
