"""The benchmark runner: every memtui figure next to a baseline measured in the same run, with peak RSS.

    python benches/run.py                 # full run (10,000 files / 90 MB, medians of 5), rewrites docs/benchmarks.md
    python benches/run.py --quick         # fewer repetitions, same memory (about half the time)
    python benches/run.py --smoke         # tiny memory, one run each, no docs rewrite (what CI runs)
    python benches/run.py --out DIR --no-readme --runs N --seed S

The generated memories are cached in --out (default benches/out/) by seed and size, each made a real memory root
(config, .gitignore, everything committed with git). Mutating benchmarks (writes, live diffs) run on a fresh copy.
Every measured program is a fresh process (benches/probes.py, the memtui CLI, rg, git, a bare Textual app); its
peak RSS comes from `os.wait4`, i.e. the kernel's ru_maxrss for that process alone.
Results go to OUT/results.json and OUT/table.md, and between `<!-- bench:table -->` and `<!-- /bench:table -->` in
docs/benchmarks.md (only that block is rewritten; the growth table likewise between `<!-- bench:growth -->` markers).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

BENCHES = Path(__file__).resolve().parent
REPO = BENCHES.parent
PROBES = BENCHES / "probes.py"
README = REPO / "docs" / "benchmarks.md"  # the page whose tables a run rewrites (named README before the docs split)
# What a command that builds a memory's search index from nothing may take: a 100,000-file index took over 120 s
# (the default) on a slow machine, and a run of 40 minutes ended there, twice.
INDEX_BUILD_TIMEOUT = 1800
TABLE_START, TABLE_END = "<!-- bench:table -->", "<!-- /bench:table -->"
GROWTH_START, GROWTH_END = "<!-- bench:growth -->", "<!-- /bench:growth -->"
PY = sys.executable
FRAME_BUDGET = 1 / 60
GNU_TIME = next((p for p in ("/usr/bin/time",) if os.access(p, os.X_OK)), None)

sys.path.insert(0, str(BENCHES))
import generate  # noqa: E402


@dataclass(frozen=True)
class Plan:
    """How big and how often: the full run, --quick and --smoke differ only here."""

    name: str
    files: int
    megabytes: float
    big_log_mb: float
    runs: int
    pages: int
    live_writes: int
    updates: int
    search_runs: int
    queries: tuple[str, ...]
    sections: tuple[int, ...] = (1_000, 4_000, 10_000)  # MEMORY.md sizes for `context`'s scaling rows


FULL = Plan("full", 10_000, 90, 50, 5, 40, 40, 100, 20,
            (generate.LAST_TOPIC_MARKER, "pgbouncer", "postgres"))
QUICK = Plan("quick", 10_000, 90, 50, 3, 20, 20, 50, 10, (generate.LAST_TOPIC_MARKER, "postgres"))
SMOKE = Plan("smoke", 60, 0.3, 1, 1, 3, 2, 3, 1, (generate.LAST_TOPIC_MARKER,), (100, 400))


# results -----------------------------------------------------------------------------------------------------------
@dataclass
class Row:
    """One line of the table: a memtui figure, its same-run baseline, the ratio and the target."""

    name: str
    value: float
    unit: str  # "s" (shown in ms), "/s" or "MB"
    baseline: str = ""
    base: float | None = None
    rss: float | None = None  # MB, peak of the memtui process
    base_rss: float | None = None
    target: str = ""
    met: bool | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.base is None or self.base <= 0 or not self.value:
            return None
        return self.value / self.base


@dataclass
class Results:
    plan: str
    machine: dict[str, str]
    memory: dict[str, Any]
    rows: list[Row] = field(default_factory=list)
    seconds: float = 0.0
    growth: dict[str, Any] = field(default_factory=dict)


# processes ---------------------------------------------------------------------------------------------------------
def child_env(code: str | None = None, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a measured process; `code` puts another tree of memtui first (a --before run)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTUI_", "PYTEST", "TEXTUAL"))}
    # Measured programs keep their bytecode caches, as an installed memtui (or Textual, or Python) does: without
    # them every start compiles every module it imports.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if code:
        env["PYTHONPATH"] = code
    env.update(extra or {})
    env["MEMTUI_USER"] = "bench"
    # Content is painted in the first frame after it arrives; a tab underline still sliding must not count as
    # latency (call_after_refresh waits for a screen with nothing left to animate). Same for every app measured.
    env["TEXTUAL_ANIMATIONS"] = "none"
    env.setdefault("GIT_AUTHOR_NAME", "bench")
    env.setdefault("GIT_AUTHOR_EMAIL", "bench@memtui.local")
    env.setdefault("GIT_COMMITTER_NAME", "bench")
    env.setdefault("GIT_COMMITTER_EMAIL", "bench@memtui.local")
    return env


class Proc:
    """A child process whose JSON-line events are read as they come and whose peak RSS is taken at exit."""

    def __init__(self, cmd: list[str], *, cwd: Path | None = None, code: str | None = None,
                 extra_env: dict[str, str] | None = None) -> None:
        self.cmd = cmd
        self._rss_file: Path | None = None
        if GNU_TIME:
            # A forked child starts with its parent's peak RSS as its own (the kernel copies the high-water
            # mark), so ru_maxrss from here would never read below this runner's size. GNU time is a 2 MB
            # parent: what it reports is the command's own peak.
            fd, name = tempfile.mkstemp(prefix="bench-rss-")
            os.close(fd)
            self._rss_file = Path(name)
            cmd = [GNU_TIME, "-q", "-f", "%M", "-o", name, *cmd]
        self.started = time.monotonic()
        if code and cwd is None:
            cwd = Path(code)  # `python -m` puts the working folder first on sys.path, ahead of PYTHONPATH
        self.popen = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                                      env=child_env(code, extra_env))
        self.events: list[dict[str, Any]] = []
        self._stderr: list[bytes] = []
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        threading.Thread(target=lambda: self._stderr.append(self.popen.stderr.read()), daemon=True).start()
        self.rss_mb: float | None = None
        self.status: int | None = None

    def _read(self) -> None:
        # Read in big chunks and parse only lines that can be events: a baseline such as rg prints tens of
        # thousands of lines, and a reader that took them one by one (a json.loads each, holding the GIL) was a
        # slow pipe that held rg back, measuring this reader rather than rg (290 ms where rg | cat took 100).
        fd = self.popen.stdout.fileno()
        tail = b""
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            lines = (tail + chunk).split(b"\n")
            tail = lines.pop()
            self._events([line for line in lines if line[:1] == b"{"])
        self._events([tail] if tail[:1] == b"{" else [])
        with self._cond:
            self._cond.notify_all()

    def _events(self, lines: list[bytes]) -> None:
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self._cond:
                self.events.append(event)
                self._cond.notify_all()

    def wait_event(self, name: str, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for e in self.events:
                    if e["event"] == name:
                        return e
                left = deadline - time.monotonic()
                # No poll(): it would reap the child, and wait4 in finish() must be the one that does.
                if left <= 0 or not self._reader.is_alive():
                    break
                self._cond.wait(min(left, 0.5))
        self.finish(timeout=0)  # never leave a hung probe running behind a failed measurement
        raise RuntimeError(f"{' '.join(self.cmd)}: no {name!r} event"
                           f"{' within %gs' % timeout if left <= 0 else ''}; stderr:\n{self.stderr()}")

    def of(self, name: str) -> list[dict[str, Any]]:
        with self._cond:
            return [e for e in self.events if e["event"] == name]

    def finish(self, timeout: float = 120) -> Proc:
        if self.status is None:
            # A blocking wait4 returns the moment the child ends (polling every few ms rounded each time up by
            # as much); a timer kills a child that outlives `timeout`.
            killer = threading.Timer(max(timeout, 0), self._kill)
            killer.start()
            try:
                _, status, usage = os.wait4(self.popen.pid, 0)
            finally:
                killer.cancel()
            self._reaped(status, usage)
        self._reader.join(5)
        return self

    def _kill(self) -> None:
        try:
            os.kill(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _reaped(self, status: int, usage: Any) -> None:
        self.status = os.waitstatus_to_exitcode(status)
        self.popen.returncode = self.status
        self.rss_mb = usage.ru_maxrss / 1024  # Linux reports KiB
        if self._rss_file is not None:
            try:
                self.rss_mb = int(self._rss_file.read_text().split()[-1]) / 1024
            except (OSError, ValueError, IndexError):
                pass
            self._rss_file.unlink(missing_ok=True)

    def stderr(self) -> str:
        time.sleep(0.05)
        return b"".join(self._stderr).decode(errors="replace")[-3000:]

    def check(self) -> Proc:
        if self.status not in (0, None):
            raise RuntimeError(f"{' '.join(self.cmd)} exited {self.status}:\n{self.stderr()}")
        return self


def run(cmd: list[str], *, cwd: Path | None = None, ok: tuple[int, ...] = (0,), code: str | None = None,
        extra_env: dict[str, str] | None = None, timeout: float = 120) -> tuple[float, float, Proc]:
    """Run a command to its end (killed after `timeout` seconds): (wall seconds, peak RSS MB, the process)."""
    p = Proc(cmd, cwd=cwd, code=code, extra_env=extra_env)
    p.finish(timeout)
    seconds = time.monotonic() - p.started
    if p.status not in ok:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.status}:\n{p.stderr()}")
    return seconds, p.rss_mb or 0.0, p


def probe(*args: str, code: str | None = None) -> Proc:
    return Proc([PY, str(PROBES), *args], code=code)


def memtui_cmd(*args: str) -> list[str]:
    return [PY, "-m", "memtui", *args]


def med(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def p95(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered) + 0.5) - 1))]


def say(text: str) -> None:
    print(text, flush=True)


# the machine and the memories --------------------------------------------------------------------------------------
def version_of(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip().splitlines()
        return out[0] if out else "?"
    except (OSError, subprocess.SubprocessError):
        return "not installed"


def machine() -> dict[str, str]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        ram_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal"))
        ram = f"{ram_kb / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        ram = "?"
    return {
        "cpu": cpu, "cores": str(os.cpu_count()), "ram": ram, "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(), "textual": metadata.version("textual"),
        "git": version_of(["git", "--version"]).removeprefix("git version "),
        "ripgrep": version_of(["rg", "--version"]).removeprefix("ripgrep "),
        "redis": version_of(["redis-server", "--version"]).split(" sha=")[0].removeprefix("Redis server "),
    }


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, env=child_env(), stdout=subprocess.DEVNULL)


def make_root(root: Path, *, files: int, megabytes: float, seed: int, big_log_mb: float) -> dict[str, Any]:
    """A generated memory made a memory root as `memtui init` would leave it, every file committed; cached."""
    from memtui.core.grammar.config import CONFIG_TEMPLATE, DEFAULT_MODEL
    from memtui.core.storage.init import GITIGNORE

    stamp = root.with_name(root.name + ".json")
    params = {"files": files, "megabytes": megabytes, "seed": seed, "big_log_mb": big_log_mb,
              "generator": os.stat(generate.__file__).st_size}
    if stamp.exists() and root.is_dir():
        cached = json.loads(stamp.read_text())
        if cached.get("params") == params:
            return cached
    shutil.rmtree(root, ignore_errors=True)
    say(f"generating {files} files / {megabytes} MB (+{big_log_mb} MB log) in {root} ...")
    started = time.monotonic()
    stats = generate.generate(root, files=files, megabytes=megabytes, seed=seed, big_log_mb=big_log_mb)
    (root / ".gitignore").write_text(GITIGNORE)
    (root / ".memtui").mkdir(exist_ok=True)
    (root / ".memtui" / "config.toml").write_text(CONFIG_TEMPLATE.format(model=DEFAULT_MODEL))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "memtui: initialise memory root (benchmark memory)")
    info = {"params": params, "files": stats.files, "bytes": stats.bytes, "markers": stats.markers,
            "big_log": stats.big_log, "seconds": round(time.monotonic() - started, 1)}
    stamp.write_text(json.dumps(info, indent=1))
    return info


def fresh_copy(src: Path, dest: Path) -> Path:
    """A copy of `src` at `dest`, written back to disk before it is measured, so that what is measured next does
    not pay for the copy's writeback (a memory in use was not copied a moment ago)."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest, symlinks=True)
    os.sync()
    return dest


# the measurements --------------------------------------------------------------------------------------------------
def bench_startup(root: Path, plan: Plan) -> list[Row]:
    """Launch to first painted frame, memtui vs a bare Textual app; launches interleaved, one warm-up each."""
    memtui_ff, memtui_content, bare_ff, rss, bare_rss = [], [], [], [], []
    for i in range(plan.runs + 1):
        b = probe("bare")
        first = b.wait_event("first_frame")["t"] - b.started
        b.finish().check()
        m = probe("app", str(root))
        ff = m.wait_event("first_frame")["t"] - m.started
        content = m.wait_event("content")["t"] - m.started
        m.finish().check()
        if i == 0 and plan.runs > 1:
            continue  # the warm-up: page cache and .pyc files
        bare_ff.append(first)
        bare_rss.append(b.rss_mb)
        memtui_ff.append(ff)
        memtui_content.append(content)
        rss.append(m.rss_mb)
    ratio = med(memtui_ff) / med(bare_ff)
    return [
        Row("Start-up to first frame (headless)", med(memtui_ff), "s", "bare Textual app, one label", med(bare_ff),
            max(rss), max(bare_rss), "≤ 1.5× bare", ratio <= 1.5),
        Row("Start-up to MEMORY.md, tree and queue shown", med(memtui_content), "s", "bare Textual app, one label",
            med(bare_ff), max(rss), max(bare_rss)),
    ]


def bench_viewer(root: Path, rel: str, plan: Plan) -> list[Row]:
    opened, pages, ends, reads, rss = [], [], [], [], []
    for _ in range(plan.runs):
        p = probe("viewer", str(root), rel, str(plan.pages))
        o = p.wait_event("opened", 120)
        s = p.wait_event("scrolled", 120)
        r = p.wait_event("read_bytes", 120)
        p.finish().check()
        opened.append(o["seconds"])
        pages.extend(s["page_seconds"])
        ends.append(s["end_seconds"])
        reads.append(r["seconds"])
        rss.append(p.rss_mb)
    size = (root / rel).stat().st_size / 1e6
    return [
        Row(f"Open a {size:.0f} MB daily log in the viewer", med(opened), "s", "read the file's bytes", med(reads),
            max(rss), None, "< 0.5 s", med(opened) < 0.5, f"{o['lines']:,} lines, to the first painted frame"),
        Row("Scroll it: page down to the page painted", med(pages), "s", "one 60 Hz frame", FRAME_BUDGET,
            max(rss), None, "", None, f"p95 {p95(pages) * 1000:.0f} ms; to the end {med(ends) * 1000:.0f} ms"),
    ]


def bench_live_diff(root: Path, plan: Plan) -> list[Row]:
    """Another process appends to MEMORY.md; the app (headless, watching) renders the diff. Baseline: a bare
    watchdog observer in a third process, i.e. the floor of being told about the write at all."""
    rel = "MEMORY.md"
    gap = "0.3"
    app = probe("watch", str(root), rel, str(plan.live_writes))
    app.wait_event("ready", 120)
    note = probe("notify", str(root), rel, str(plan.live_writes))
    note.wait_event("ready", 30)
    writer = probe("writer", str(root), rel, str(plan.live_writes), gap)
    writer.finish(60 + plan.live_writes).check()
    app.finish(30 + plan.live_writes).check()
    note.finish(10).check()
    written = {e["write"]: e["t"] for e in writer.of("written")}
    lat = [e["t"] - written[e["write"]] for e in app.of("rendered") if e["write"] in written]
    floor = [e["at"] - written[e["write"]] for e in note.of("notified") if e["write"] in written]
    missing = len(written) - len(lat)
    extra = f"{len(lat)}/{len(written)} writes rendered" + (f" ({missing} coalesced)" if missing else "")
    return [
        Row("Live diff: write by another process → diff painted, p50", med(lat), "s", "watchdog notified, p50",
            med(floor), app.rss_mb, note.rss_mb, "", None, extra),
        Row("Live diff, p95", p95(lat), "s", "watchdog notified, p95", p95(floor), app.rss_mb, note.rss_mb,
            "< 100 ms", p95(lat) < 0.1),
    ]


def drop_index(root: Path) -> None:
    """Delete the search index of `root` (its SQLite files), so the next search builds it; a watcher's cookie
    folder beside it (`index.sqlite-cookies/`, from `memtui index --watch`) is not the index and stays."""
    for stale in (root / ".memtui").glob("index.sqlite*"):
        if not stale.is_dir():
            stale.unlink()


def bench_search(root: Path, plan: Plan) -> list[Row]:
    rows = []
    drop_index(root)
    query = plan.queries[0]
    built, build_rss, _ = run(memtui_cmd("search", query, "--root", str(root)))
    rg_first, rg_rss, _ = run(["rg", "-n", "-F", "-i", query, str(root)], ok=(0, 1))
    index_mb = sum(f.stat().st_size for f in (root / ".memtui").glob("index.sqlite*") if f.is_file()) / 1e6
    rows.append(Row("First search ever (builds the index)", built, "s", "rg -n -F -i, first", rg_first, build_rss,
                    rg_rss, "", None, f"index {index_mb:.0f} MB, a cache in .memtui/"))
    warm = probe("search", str(root), str(plan.search_runs), *plan.queries)
    warm.finish(300).check()
    warm_by_query = {e["query"]: e for e in warm.of("searched")}
    for query in plan.queries:
        cold, cold_rss, rg, rg_rss = [], [], [], []
        for i in range(plan.runs + 1):
            s, r, _ = run(memtui_cmd("search", query, "--root", str(root)))
            g, gr, _ = run(["rg", "-n", "-F", "-i", query, str(root)], ok=(0, 1))
            if i == 0 and plan.runs > 1:
                continue
            cold.append(s)
            cold_rss.append(r)
            rg.append(g)
            rg_rss.append(gr)
        hits = warm_by_query[query]
        label = "rare" if query == plan.queries[0] else f"{hits['sources']} sources"
        rows.append(Row(f"Search, cold CLI: “{query}” ({label})", med(cold), "s", "rg -n -F -i", med(rg),
                        max(cold_rss), max(rg_rss), "≤ rg", med(cold) <= med(rg)))
        rows.append(Row(f"Search, warm in-app: “{query}”", hits["seconds"], "s", "rg -n -F -i", med(rg),
                        warm.rss_mb, max(rg_rss), "≥ 5× faster than rg", med(rg) / max(hits["seconds"], 1e-9) >= 5))
    return rows


def git_commit_baseline(root: Path, count: int) -> tuple[float, float]:
    """The least a committed memory write can cost: append a line, `git add`, `git commit`, with the git CLI."""
    rel = "notes/bench-baseline.md"
    path = root / rel
    started = time.monotonic()
    rss = 0.0
    for k in range(count):
        with path.open("a", encoding="utf-8") as f:
            f.write(f"- [observed] Baseline write {k} (2026-11-28, bench)\n")
        for cmd in (["git", "-C", str(root), "add", rel],
                    ["git", "-C", str(root), "commit", "-q", "-m", f"baseline write {k}"]):
            _, r, _ = run(cmd)
            rss = max(rss, r)
    return count / (time.monotonic() - started), rss


def bench_updates(root: Path, plan: Plan, redis_url: str | None) -> list[Row]:
    p = probe("update", str(root), str(plan.updates))
    done = p.wait_event("updated", 600)
    p.finish().check()
    rate = done["count"] / done["seconds"]
    base_rate, base_rss = git_commit_baseline(root, plan.updates)
    applied = done["statuses"].get("applied", 0)
    rows = [Row("memory_update, agent proposes + person approves, committed: folder", rate, "/s",
                "append + git add + git commit (git CLI)", base_rate, p.rss_mb, base_rss, "≥ 50/s", rate >= 50,
                f"{applied}/{done['count']} applied")]
    if redis_url:
        p = probe("update", str(root), str(plan.updates), redis_url)
        done = p.wait_event("updated", 600)
        p.finish().check()
        redis_rate = done["count"] / done["seconds"]
        raw_rate = redis_round_trip_baseline(redis_url, plan.updates)
        rows.append(Row("memory_update, proposes + approves, recorded: Redis store", redis_rate, "/s",
                        "raw SET + XADD (redis-py)", raw_rate, p.rss_mb, None, "", None,
                        f"{done['statuses'].get('applied', 0)}/{done['count']} applied"))
    return rows


def redis_round_trip_baseline(url: str, count: int) -> float:
    """A write and its history record with nothing around them: the floor of any Redis-backed memory write."""
    import redis

    from memtui.core.storage.redis_store import parse_store_url

    redis_url, prefix, _ = parse_store_url(url)
    client = redis.Redis.from_url(redis_url)
    started = time.monotonic()
    for k in range(count):
        client.set(f"bench-baseline:{prefix}:file", f"line {k}\n" * 20)
        client.xadd(f"bench-baseline:{prefix}:history", {"file": "x", "n": k})
    rate = count / (time.monotonic() - started)
    client.delete(f"bench-baseline:{prefix}:file", f"bench-baseline:{prefix}:history")
    return rate


def cold_context(root: Path, plan: Plan) -> tuple[list[float], list[float], list[float], list[float]]:
    """`memtui context` as a fresh process against Python reading MEMORY.md, interleaved (the first pair a warm-up
    when there are several runs): (times, peak RSS, baseline times, baseline peak RSS)."""
    cold: list[float] = []
    cold_rss: list[float] = []
    base: list[float] = []
    base_rss: list[float] = []
    read = f"open({str(root / 'MEMORY.md')!r}, encoding='utf-8').read()"
    for i in range(plan.runs + 1):
        s, r, _ = run(memtui_cmd("context", "--root", str(root)))
        b, br, _ = run([PY, "-c", read])
        if i == 0 and plan.runs > 1:
            continue
        cold.append(s)
        cold_rss.append(r)
        base.append(b)
        base_rss.append(br)
    return cold, cold_rss, base, base_rss


def bench_context(root: Path, plan: Plan) -> list[Row]:
    cold, cold_rss, base, base_rss = cold_context(root, plan)
    p = probe("context", str(root), str(max(5, plan.runs * 4)))
    warm = p.wait_event("context")
    p.finish().check()
    return [
        Row("memtui context, cold CLI", med(cold), "s", "python -c: read MEMORY.md", med(base), max(cold_rss),
            max(base_rss)),
        Row("memtui context, in process", warm["seconds"], "s", "read MEMORY.md", warm["read_seconds"], p.rss_mb,
            None, "", None, f"{warm['tokens']} tokens"),
    ]


def sections_memory(root: Path, sections: int) -> Path:
    """A memory whose MEMORY.md has `sections` sections of three current entries and one struck each."""
    root.mkdir(parents=True, exist_ok=True)
    parts = ["# MEMORY.md\n"]
    for k in range(sections):
        parts.append(f"\n## Section {k}\n\n")
        parts += [f"- [stated] Fact {j} about topic {k} is value{k * 7 + j} (2026-01-02, chat)\n" for j in range(3)]
        parts.append(f"- ~~[observed] Old fact about {k}~~ superseded 2026-01-03\n")
    (root / "MEMORY.md").write_text("".join(parts), encoding="utf-8")
    return root


def bench_context_scale(out: Path, plan: Plan) -> list[Row]:
    """`memtui context` on MEMORY.md files of growing section counts: the cost should grow linearly (it grew
    with the square: 0.8 s, 11 s and 79 s at 1,000, 4,000 and 10,000 sections)."""
    rows: list[Row] = []
    first: float | None = None
    for n in plan.sections:
        root = sections_memory(out / f"sections-{n}", n)
        cold, cold_rss, base, base_rss = cold_context(root, plan)
        first = first or med(cold)
        grew = med(cold) / first
        scale = n / plan.sections[0]
        note = f"{(root / 'MEMORY.md').stat().st_size / 1e6:.1f} MB" + (
            f"; {grew:.1f}× the {plan.sections[0]:,}-section run for {scale:g}× the sections" if n != plan.sections[0]
            else "")
        rows.append(Row(f"memtui context at {n:,} sections, cold CLI", med(cold), "s", "python -c: read MEMORY.md",
                        med(base), max(cold_rss), max(base_rss), "linear" if n != plan.sections[0] else "",
                        grew <= 1.25 * scale if n != plan.sections[0] else None, note))
    return rows


# how cost grows: the table ---------------------------------------------------------------------------------
# One row per figure, one column per memory size; each ratio is to a baseline measured in the same run, at that size.
GROWTH = (
    ("served_rare", "cold `memtui search`, `memtui index --watch` answering: rare term ÷ `rg -n -F -i`",
     "≤ 1.0× at 10k and 100k"),
    ("served_common", "… word in ~80% of files ÷ rg", "≤ 1.0× at 10k and 100k"),
    ("search_rare", "cold `memtui search`, nothing watching (a `stat` per file): rare term ÷ rg", "reported"),
    ("search_common", "… word in ~80% of files ÷ rg", "reported"),
    ("search_rss", "peak RSS of that search (rg's in brackets)", "≤ 80 MB at 10k, ≤ 150 MB at 100k"),
    ("context", "`memtui context` ÷ `python -c pass`", "≤ 2×"),
    ("update", "a person's `memtui update` ÷ (`python -c pass` + `git add` + `git commit`)", "≤ 2×"),
    ("approve_rate", "folder propose + approve, in process", "≥ 50/s"),
    ("approve_tuned", "… with the split index `memtui doctor` advises past a 4 MB git index", "reported"),
    ("fsyncs", "fsyncs per propose + approve", "reported"),
    ("startup", "first full screen ÷ a bare Textual app", "≤ 1.5× at 10k"),
    ("startup_folder", "… then the whole folder shown (external changes, file count) ÷ the bare app", "reported"),
    ("startup_rss", "RSS at the first full screen (the bare app's in brackets)", "≤ 60 MB at 10k"),
    ("live_diff", "live diff, p95 (external append → diff painted)", "< 100 ms"),
)


@dataclass
class Cell:
    """One figure of the growth table: `value` against `base` (same run, same size), and whether it met its
    target (None when the row has none)."""

    text: str
    value: float | None = None
    base: float | None = None
    met: bool | None = None


def _ratio_cell(value: float, base: float, limit: float | None) -> Cell:
    ratio = value / base if base > 0 else float("inf")
    return Cell(f"{ratio:.2f}× ({value * 1000:.0f} / {base * 1000:.0f} ms)", value, base,
                None if limit is None else ratio <= limit)


def interleaved(commands: dict[str, list[str]], runs: int, ok: tuple[int, ...] = (0, 1),
                code: str | None = None) -> dict[str, Any]:
    """Median seconds and peak RSS of each command, the commands run in turn `runs` times after one warm-up
    round, so each one's baseline shares its noise."""
    times: dict[str, list[float]] = {k: [] for k in commands}
    rss: dict[str, float] = {k: 0.0 for k in commands}
    for i in range(runs + 1):
        for name, cmd in commands.items():
            s, r, _ = run(cmd, ok=ok, code=code)
            if i or runs == 0:
                times[name].append(s)
                rss[name] = max(rss[name], r)
    return {k: (med(v), rss[k]) for k, v in times.items()}


def _served_search(root: Path, query: str, runs: int, code: str | None) -> tuple[Any, Any] | None:
    """((median s, peak RSS) of a cold `memtui search` with `memtui index --watch` running on `root`, (the same of
    rg)), interleaved; None for code that cannot watch here."""
    run(memtui_cmd("index", "--root", str(root)), code=code, timeout=INDEX_BUILD_TIMEOUT)
    (root / ".memtui" / "index.sqlite-changes").unlink(missing_ok=True)
    # The watcher runs bare (not under GNU time, whose terminate would orphan it).
    watcher = subprocess.Popen(memtui_cmd("index", "--watch", "--root", str(root)), env=child_env(code),
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        if "watching" not in watcher.stdout.readline().decode("utf-8", "replace"):
            return None
        got = interleaved({"search": memtui_cmd("search", query, "--root", str(root)),
                           "rg": ["rg", "-n", "-F", "-i", query, str(root)]}, runs, code=code)
        return got["search"], got["rg"]
    finally:
        watcher.terminate()
        watcher.wait(30)
        watcher.stdout.close()


def live_diff_cells(root: Path, plan: Plan, code: str | None = None) -> Cell | None:
    """The live-diff figure for the growth table at one size, measured in a real terminal: memtui in tmux on a
    fresh copy of `root`, another process appending entries, p95 from the append to the line on the terminal,
    against `tail -F` in the same tmux (benches/bench_live_diff.py); `code` is another tree of memtui to run (a
    --before run). None where tmux is missing."""
    import shutil as _shutil

    if _shutil.which("tmux") is None or _shutil.which("memtui") is None:
        return None
    from bench_live_diff import bench_live_diff_tmux

    copy = fresh_copy(root, Path(tempfile.mkdtemp(prefix="memtui-growth-live-")) / "memory")
    try:
        r = bench_live_diff_tmux(copy, appends=max(10, min(30, plan.live_writes)),
                                 env={"PYTHONPATH": code} if code else None)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        return Cell(f"not measured ({exc})")
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)
    if r.get("p95") is None:
        return Cell(f"no append reached the screen ({r.get('missed')} missed)", None, None, False)
    p95, floor = float(r["p95"]), r.get("floor_p95")
    base = f" (tail -F {float(floor) * 1000:.0f} ms)" if floor is not None else ""
    return Cell(f"{p95 * 1000:.0f} ms{base}", p95, None if floor is None else float(floor), p95 < 0.1)


def bench_growth(out: Path, plan: Plan, sizes: tuple[tuple[int, float], ...],
                 codes: tuple[tuple[str, str | None], ...] = (("", None),)) -> tuple[list[Row], dict[str, Any]]:
    """The issue's table: at each size, cold search and context against rg and `python -c pass`, a person's
    update against Python plus git's own commit, propose + approve per second with the fsyncs each pays, and the
    first screen against a bare Textual app, all on a memory generated at that size (seed 7). `codes` are the
    versions of memtui to measure ("" and None: this one; a label and a tree for `--before REF`), each a column
    per size, all in this one run."""
    runs = max(1, plan.runs)
    rows: list[Row] = []
    columns: dict[str, dict[str, Cell]] = {}
    queries = (generate.LAST_TOPIC_MARKER, COMMON_WORD)
    for (files, mb), (label, code) in ((s, c) for s in sizes for c in codes):
        root = out / f"scale-{files}f"
        info = make_root(root, files=files, megabytes=mb, seed=7, big_log_mb=0)
        size = f"{files:,} files / {info['bytes'] / 1e6:.0f} MB" + (f", {label}" if label else "")
        say(f"  {size} ...")
        cells: dict[str, Cell] = {}
        drop_index(root)  # each version builds (and reads) its own schema
        # The index, built once (an older memtui takes minutes at 100,000 files).
        run(memtui_cmd("search", queries[0], "--root", str(root)), code=code, timeout=INDEX_BUILD_TIMEOUT)
        cmds = {"pass": [PY, "-c", "pass"], "context": memtui_cmd("context", "--root", str(root))}
        for k, q in enumerate(queries):
            cmds[f"search{k}"] = memtui_cmd("search", q, "--root", str(root))
            cmds[f"rg{k}"] = ["rg", "-n", "-F", "-i", q, str(root)]
        got = interleaved(cmds, runs, code=code)
        # The target is for 10,000 files and up: below, starting Python alone takes longer than rg's search.
        target = files >= 10_000
        for k, key in enumerate(("search_rare", "search_common")):
            (s, r), (g, gr) = got[f"search{k}"], got[f"rg{k}"]
            cells[key] = _ratio_cell(s, g, None)
            rows.append(Row(f"{size}: cold CLI search “{queries[k]}” ({'rare' if k == 0 else 'in ~80% of files'}), "
                            "nothing watching", s, "s", "rg -n -F -i", g, r, gr, "reported", None))
        for k, key in enumerate(("served_rare", "served_common")):
            served = _served_search(root, queries[k], runs, code)
            if served is None:
                cells[key] = Cell("—")
                continue
            (s, r), (g, gr) = served
            cells[key] = _ratio_cell(s, g, 1.0 if target else None)
            rows.append(Row(f"{size}: cold CLI search “{queries[k]}” ({'rare' if k == 0 else 'in ~80% of files'}), "
                            "memtui index --watch answering", s, "s", "rg -n -F -i", g, r, gr,
                            "≤ 1.0× rg" if target else "reported", s <= g if target else None))
        (s, r), (g, gr) = got["search1"], got["rg1"]
        limit = 80 if files <= 10_000 else 150
        cells["search_rss"] = Cell(f"{r:.0f} MB ({gr:.0f} MB)", r, gr, r <= limit)
        (c, cr), (b, br) = got["context"], got["pass"]
        cells["context"] = _ratio_cell(c, b, 2.0)
        rows.append(Row(f"{size}: memtui context, cold CLI", c, "s", "python -c pass", b, cr, br, "≤ 2×",
                        c <= 2 * b))
        cells.update(_growth_writes(out, root, size, plan, b, rows, code))
        cells.update(_growth_startup(root, size, files == 10_000, plan, rows, code))
        live = live_diff_cells(root, plan, code)
        cells["live_diff"] = live if live is not None else Cell("—")
        columns[size] = cells
    return rows, {"sizes": list(columns), "cells": {size: {k: asdict(v) for k, v in cells.items()}
                                                    for size, cells in columns.items()}}


def _approve_rate(copy: Path, plan: Plan, code: str | None) -> tuple[float, dict[str, Any], float | None]:
    """Agent proposals approved in process on `copy`, per second, the probe's report and its peak RSS. Every one
    must have been applied: a write refused, or found already there, would be a faster and wrong figure."""
    count = max(plan.updates // 2, 3)
    p = probe("update", str(copy), str(count), code=code)
    done = p.wait_event("updated", 600)
    p.finish().check()
    if done["statuses"] != {"applied": count}:
        raise SystemExit(f"propose + approve on {copy}: {done['statuses']}, not {count} applied")
    return done["count"] / done["seconds"], done, p.rss_mb


def _growth_writes(out: Path, root: Path, size: str, plan: Plan, python: float, rows: list[Row],
                   code: str | None) -> dict[str, Cell]:
    """A person's `memtui update` (a fresh process, applied and committed) against Python's start plus the git
    CLI committing one appended line; then agent proposals approved in process, with their fsyncs."""
    copy = fresh_copy(root, out / f"growth-work-{root.name}")
    try:
        count = max(1, plan.runs)
        ours, base, rss, git_rss = [], [], 0.0, 0.0
        for k in range(count + 1):
            s, r, _ = run(memtui_cmd("update", "User", "add", f"[stated] Growth bench fact number {k}",
                                     "--root", str(copy)), code=code)
            rel = copy / "notes" / "growth-baseline.md"
            started = time.monotonic()
            with rel.open("a", encoding="utf-8") as f:
                f.write(f"- [observed] Baseline write {k} (2026-11-28, bench)\n")
            run(["git", "-C", str(copy), "add", "notes/growth-baseline.md"])
            _, gr, _ = run(["git", "-C", str(copy), "commit", "-q", "-m", f"baseline write {k}"])
            if k:
                ours.append(s)
                base.append(time.monotonic() - started)
                rss, git_rss = max(rss, r), max(git_rss, gr)
        git_commit = med(base)
        cells = {"update": _ratio_cell(med(ours), python + git_commit, 2.0)}
        rows.append(Row(f"{size}: a person's memtui update (applied, committed), cold CLI", med(ours), "s",
                        "python -c pass + git add + git commit", python + git_commit, rss, git_rss, "≤ 2×",
                        med(ours) <= 2 * (python + git_commit)))
        rate, done, rss_mb = _approve_rate(copy, plan, code)
        per = done["fsyncs"] / done["count"]
        cells["approve_rate"] = Cell(f"{rate:.0f}/s", rate, None, rate >= 50)
        cells["fsyncs"] = Cell(f"{per:.0f}", per)
        rows.append(Row(f"{size}: propose + approve, folder, in process", rate, "/s",
                        "append + git add + git commit (git CLI)", 1 / git_commit, rss_mb, None, "≥ 50/s",
                        rate >= 50, f"{per:.0f} fsyncs per propose + approve"))
        from memtui.core.hygiene.doctor import BIG_INDEX

        if (copy / ".git" / "index").stat().st_size >= BIG_INDEX:
            # What the person who takes doctor's advice gets, on the same copy.
            run(["git", "-C", str(copy), "update-index", "--split-index"])
            tuned, _, rss_mb = _approve_rate(copy, plan, code)
            cells["approve_tuned"] = Cell(f"{tuned:.0f}/s", tuned)
            rows.append(Row(f"{size}: propose + approve, split index", tuned, "/s", "the same, not split", rate,
                            rss_mb, None, "reported", None))
        return cells
    finally:
        shutil.rmtree(copy, ignore_errors=True)


TMUX = shutil.which("tmux")


def in_terminal(args: list[str], event: str, code: str | None = None, timeout: float = 120,
                seen: dict[str, float] | None = None) -> tuple[float, float]:
    """A probe launched in a real terminal (a tmux session of its own, 120×40, on its own server): seconds from
    the launch to `event`, and the probe's peak RSS (MB); `seen` gets the seconds to each event it told."""
    folder = Path(tempfile.mkdtemp(prefix="bench-term-"))
    events, rss = folder / "events", folder / "rss"
    cmd = [*([GNU_TIME, "-q", "-f", "%M", "-o", str(rss)] if GNU_TIME else []), PY, str(PROBES), *args]
    env = child_env(code, {"BENCH_EVENTS": str(events), "BENCH_TERMINAL": "1"})
    server = f"bench-{os.getpid()}-{folder.name}"
    import shlex

    started = time.monotonic()
    try:
        subprocess.run([TMUX, "-L", server, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "40",
                        "-c", code or str(REPO), shlex.join(cmd)], env=env, check=True)
        deadline = started + timeout
        while time.monotonic() < deadline:
            for line in events.read_text().splitlines() if events.exists() else []:
                found = json.loads(line)
                if found["event"] == event:
                    at = found["t"]
                    while not (rss.exists() and rss.read_text().strip()) and time.monotonic() < deadline:
                        time.sleep(0.01)  # the probe exits after its event; GNU time writes its peak then
                    peak = int(rss.read_text().split()[-1]) / 1024 if rss.exists() and rss.read_text().strip() \
                        else 0.0
                    if seen is not None:
                        told = map(json.loads, events.read_text().splitlines())
                        seen.update((e["event"], e["t"] - started) for e in told)
                    return at - started, peak
            time.sleep(0.005)
        raise RuntimeError(f"{' '.join(args)} in tmux: no {event!r} within {timeout:g}s")
    finally:
        subprocess.run([TMUX, "-L", server, "kill-server"], env=env, capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def _growth_startup(root: Path, size: str, target: bool, plan: Plan, rows: list[Row],
                    code: str | None) -> dict[str, Cell]:
    """Launch to MEMORY.md, the tree and the queue shown against a bare Textual app's first frame: in tmux (a real
    terminal) where tmux is installed, else headless. `target`: the issue's targets (1.5×, 60 MB) are for the
    10,000-file memory; at the other sizes the figures are reported."""
    first, folder, bare, rss, bare_rss = [], [], [], 0.0, 0.0
    where = "in tmux" if TMUX else "headless"
    for i in range(max(1, plan.runs) + 1):
        seen: dict[str, float] = {}
        if TMUX:
            t, br = in_terminal(["bare"], "first_frame")
            ff, mr = in_terminal(["app", str(root)], "content", code, seen=seen)
        else:
            b = probe("bare")
            t = b.wait_event("first_frame")["t"] - b.started
            br = b.finish().check().rss_mb or 0.0
            m = probe("app", str(root), code=code)
            ff = m.wait_event("content", 120)["t"] - m.started
            seen["folder"] = m.wait_event("folder", 120)["t"] - m.started
            mr = m.finish().check().rss_mb or 0.0
        if i:
            bare.append(t)
            first.append(ff)
            folder.append(seen.get("folder", ff))  # a probe without the event: the folder came with the screen
            rss, bare_rss = max(rss, mr), max(bare_rss, br)
    cell = _ratio_cell(med(first), med(bare), 1.5 if target else None)
    rows.append(Row(f"{size}: first full screen (MEMORY.md, tree, queue shown), {where}", med(first), "s",
                    "bare Textual app, one label", med(bare), rss, bare_rss, "≤ 1.5× bare" if target else "reported",
                    cell.met))
    # Reported, not a target: when the whole-folder sync (external changes, the header's file count) is shown too.
    rows.append(Row(f"{size}: the whole folder shown too (external changes, file count), {where}", med(folder), "s",
                    "bare Textual app, one label", med(bare), rss, bare_rss, "reported", None))
    return {"startup": cell, "startup_folder": _ratio_cell(med(folder), med(bare), None),
            "startup_rss": Cell(f"{rss:.0f} MB ({bare_rss:.0f} MB)", rss, bare_rss, rss <= 60 if target else None)}


def growth_table(growth: dict[str, Any], seconds: float) -> str:
    """The issue's table in markdown: a row per figure, a column per size, "(no)" where a target is missed."""
    sizes = growth["sizes"]
    lines = [f"`{' '.join(['python', 'benches/run.py', *sys.argv[1:]])}`, {seconds / 60:.1f} min; each ratio's "
             "baseline ran in the same run at the same size (medians; peak RSS is the process's own).", "",
             "| | " + " | ".join(sizes) + " | target |", "|---|" + "---|" * len(sizes) + "---|"]
    for key, label, target in GROWTH:
        cells = []
        for size in sizes:
            cell = growth["cells"][size].get(key) or {"text": "—", "met": None}
            cells.append(cell["text"] + (" **(no)**" if cell["met"] is False else ""))
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {target} |")
    return "\n".join(lines) + "\n"


# Redis -------------------------------------------------------------------------------------------------------------
SCALE_SIZES = ((1_000, 9.0), (10_000, 90.0))
SCALE_100K = (100_000, 905.0)
COMMON_WORD = "postgres"  # in about 80% of a generated memory's files


def export_tree(ref: str, dest: Path) -> str:
    """The memtui package as of git `ref`, unpacked under `dest`: what a --before run imports."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "memtui"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return str(dest)


def bench_search_scale(out: Path, plan: Plan, sizes: tuple[tuple[int, float], ...], before: str | None,
                       before_ref: str, redis: "Redis | None") -> list[Row]:
    """Cold CLI search (no watcher, and with `memtui index --watch` running) and warm search against rg, at each
    size, with peak RSS; with --before, the same cold and warm runs of an older memtui in the same run."""
    rows: list[Row] = []
    runs = max(1, plan.runs)
    queries = (generate.LAST_TOPIC_MARKER, COMMON_WORD)
    codes = [("after", None)] + ([(f"before ({before_ref})", before)] if before else [])
    for files, mb in sizes:
        root = out / f"scale-{files}f"
        info = make_root(root, files=files, megabytes=mb, seed=7, big_log_mb=0)
        size = f"{files:,} files / {info['bytes'] / 1e6:.0f} MB"
        say(f"  {size}: building the indexes ...")
        drop_index(root)
        cold = {(name, q): [] for name, _ in codes for q in queries}
        rss = {(name, q): 0.0 for name, _ in codes for q in queries}
        rg = {q: [] for q in queries}
        rg_rss = {q: 0.0 for q in queries}

        def rg_once(q: str) -> None:
            g, gr, _ = run(["rg", "-n", "-F", "-i", q, str(root)], ok=(0, 1))
            rg[q].append(g)
            rg_rss[q] = max(rg_rss[q], gr)

        for name, code in codes:
            drop_index(root)  # each version builds (and reads) its own schema
            run(memtui_cmd("search", queries[0], "--root", str(root)), code=code, timeout=INDEX_BUILD_TIMEOUT)
            for q in queries:
                for i in range(runs + 1):
                    s, r, _ = run(memtui_cmd("search", q, "--root", str(root)), code=code)
                    rg_once(q)
                    if i:
                        cold[(name, q)].append(s)
                        rss[(name, q)] = max(rss[(name, q)], r)
            warm = probe("search", str(root), str(plan.search_runs), *queries, code=code)
            warm.finish(600).check()
            for e in warm.of("searched"):
                base = med(rg[e["query"]])
                rows.append(Row(f"{size}: warm search “{e['query']}”, {name}", e["seconds"], "s", "rg -n -F -i",
                                base, warm.rss_mb, rg_rss[e["query"]], "≥ 10× faster than rg",
                                base / max(e["seconds"], 1e-9) >= 10))
        for name, _ in codes:
            for q in queries:
                label = "rare" if q == queries[0] else "in ~80% of files"
                rows.append(Row(f"{size}: cold CLI search “{q}” ({label}), no watcher, {name}", med(cold[(name, q)]),
                                "s", "rg -n -F -i", med(rg[q]), rss[(name, q)], rg_rss[q], "≤ 1.0× rg",
                                med(cold[(name, q)]) <= med(rg[q])))
        # With a live watcher (`memtui index --watch`) the cold search asks its warm searcher (or, where it cannot,
        # re-checks only what its journal names). The index is this code's again first (a --before run left its own schema), and the watcher runs bare
        # (not under GNU time, whose terminate would orphan it).
        run(memtui_cmd("index", "--root", str(root)), timeout=INDEX_BUILD_TIMEOUT)
        journal = root / ".memtui" / "index.sqlite-changes"
        journal.unlink(missing_ok=True)
        watcher = subprocess.Popen(memtui_cmd("index", "--watch", "--root", str(root)), env=child_env(),
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            watcher.stdout.readline()  # "watching …": the journal is open
            watched = {q: [] for q in queries}
            watched_rss = {q: 0.0 for q in queries}
            rg = {q: [] for q in queries}
            for q in queries:
                for i in range(runs + 1):
                    s, r, _ = run(memtui_cmd("search", q, "--root", str(root)))
                    rg_once(q)
                    if i:
                        watched[q].append(s)
                        watched_rss[q] = max(watched_rss[q], r)
                label = "rare" if q == queries[0] else "in ~80% of files"
                rows.append(Row(f"{size}: cold CLI search “{q}” ({label}), watcher running (it answers), after",
                                med(watched[q]), "s", "rg -n -F -i", med(rg[q]), watched_rss[q], rg_rss[q],
                                "≤ 1.0× rg", med(watched[q]) <= med(rg[q])))
        finally:
            watcher.terminate()
            watcher.wait(30)
            watcher.stdout.close()
        url = redis.url(f"scale-{files}-{int(time.time())}") if redis is not None else None
        if url:
            rows.extend(bench_redis_search(root, url, size, queries, plan))
    return rows


def bench_redis_search(root: Path, url: str, size: str, queries: tuple[str, ...], plan: Plan) -> list[Row]:
    """Search of the same files in a Redis memory (warm, as the app keeps it, and a cold CLI process) against
    scanning the same keys."""
    import tempfile as _tempfile

    from memtui.core.recall.index import fold
    from memtui.core.recall.search import Searcher, literal_lines
    from memtui.core.storage.redis_store import RedisStore
    from memtui.core.writing.memory import Memory

    import_to_redis(root, url)
    store = RedisStore(url)
    rows = []
    with _tempfile.TemporaryDirectory() as cache:
        old = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = cache
        try:
            # As the app keeps it: listening to the store's events (keyspace events on, so raw SETs are heard).
            store.client.config_set("notify-keyspace-events", "KA")
            scanned: dict[str, float] = {}
            with Searcher(Memory(store), watch=True) as searcher:
                searcher.search(queries[0])
                for q in queries:
                    times, scans = [], []
                    for _ in range(max(1, plan.runs)):
                        t = time.monotonic()
                        bundle = searcher.search(q)
                        times.append(time.monotonic() - t)
                        t = time.monotonic()
                        rels = store.list_files("*")
                        found = 0
                        for k in range(0, len(rels), 256):
                            for data in store.read_many(rels[k : k + 256]):
                                found += len(literal_lines(fold((data or b"").decode("utf-8", "replace")), fold(q)))
                        scans.append(time.monotonic() - t)
                    assert found == bundle.matched_lines, (q, found, bundle.matched_lines)
                    rows.append(Row(f"{size}: Redis memory, warm search “{q}”", med(times), "s",
                                    "SCAN + MGET + match, same keys", med(scans), None, None, "faster than the scan",
                                    med(times) < med(scans)))
                    colds, cold_rss = [], 0.0
                    env_cache = {"XDG_CACHE_HOME": cache}
                    for _ in range(max(1, plan.runs)):
                        s, r, _ = run(memtui_cmd("search", q, "--store", store.url, "--root", str(root)),
                                      extra_env=env_cache)
                        colds.append(s)
                        cold_rss = max(cold_rss, r)
                    rows.append(Row(f"{size}: Redis memory, cold CLI search “{q}”", med(colds), "s",
                                    "SCAN + MGET + match, same keys", med(scans), cold_rss, None,
                                    "faster than the scan", med(colds) < med(scans)))
                    scanned[q] = med(scans)
            # With `memtui index --watch --store URL` running, a cold search asks its warm searcher.
            watcher = subprocess.Popen(memtui_cmd("index", "--watch", "--store", store.url),
                                       env={**child_env(), "XDG_CACHE_HOME": cache}, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL)
            try:
                watcher.stdout.readline()  # "watching …": its socket is listening
                for q in queries:
                    colds, cold_rss = [], 0.0
                    for i in range(max(1, plan.runs) + 1):  # the first one is not counted
                        s, r, _ = run(memtui_cmd("search", q, "--store", store.url),
                                      extra_env={"XDG_CACHE_HOME": cache})
                        if i:
                            colds.append(s)
                            cold_rss = max(cold_rss, r)
                    rows.append(Row(f"{size}: Redis memory, cold CLI search “{q}”, watcher running (it answers)",
                                    med(colds), "s", "SCAN + MGET + match, same keys", scanned[q], cold_rss, None,
                                    "faster than the scan", med(colds) < scanned[q]))
            finally:
                watcher.terminate()
                watcher.wait(30)
                watcher.stdout.close()
        finally:
            if old is None:
                os.environ.pop("XDG_CACHE_HOME", None)
            else:
                os.environ["XDG_CACHE_HOME"] = old
    return rows


class Redis:
    """A throwaway redis-server on a free loopback port (persistence off), or None where it is not installed."""

    def __init__(self, folder: Path) -> None:
        sys.path.insert(0, str(REPO / "tests"))
        from support.redis_server import REDIS_SERVER, RedisServer

        self.server = RedisServer(folder).start() if REDIS_SERVER else None

    def url(self, prefix: str) -> str | None:
        return self.server.url(prefix) if self.server else None

    def stop(self) -> None:
        if self.server:
            self.server.stop()


def import_to_redis(root: Path, url: str) -> float:
    from memtui.core.access.redis_transfer import import_memory
    from memtui.core.storage.redis_store import RedisStore

    started = time.monotonic()
    import_memory(root, RedisStore(url), history=False)
    return time.monotonic() - started


# the table ---------------------------------------------------------------------------------------------------------
def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "s":
        if value < 0.00005:
            return "≈ 0 ms"  # a watchdog event can arrive before the writer's own clock read after its rename
        ms = value * 1000
        return f"{ms:.0f} ms" if ms >= 100 else f"{ms:.1f} ms" if ms >= 1 else f"{ms:.2f} ms"
    if unit == "/s":
        return f"{value:.0f}/s" if value >= 10 else f"{value:.1f}/s"
    return f"{value:.0f} {unit}"


def ratio_text(row: Row) -> str:
    r = row.ratio
    if r is None:
        return "—"
    if row.unit == "/s":
        return f"{r:.2f}× the rate" if r >= 0.01 else f"1/{1 / r:.0f} of the rate"
    return f"{r:.2f}×" if r >= 0.995 else f"{r:.2f}× ({1 / r:.1f}× faster)"


def table(results: Results) -> str:
    m = results.machine
    mem = results.memory
    lines = [
        f"Measured by `python benches/run.py{'' if results.plan == 'full' else ' --' + results.plan}` "
        f"in {results.seconds / 60:.1f} min on {m['cpu']}, {m['cores']} cores, {m['ram']} RAM, {m['os']}; "
        f"Python {m['python']}, Textual {m['textual']}, git {m['git']}, ripgrep {m['ripgrep']}, "
        f"Redis {m['redis']}. Memory: {mem['files']:,} files, {mem['bytes'] / 1e6:.0f} MB, seed {mem['seed']} "
        f"(the viewer: its own root with one {mem['big_log_mb']:g} MB daily log). Times are medians; each row's "
        "baseline ran in the same run; peak RSS is the measured process's own (ru_maxrss).",
        "",
        "| Measurement | memtui | Baseline (same run) | Ratio | Target | Met | Peak RSS memtui / baseline |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in results.rows:
        base = f"{fmt(row.base, row.unit)} {row.baseline}".strip() if row.baseline else "—"
        met = "—" if row.met is None else "yes" if row.met else "**no**"
        rss = f"{fmt(row.rss, 'MB')} / {fmt(row.base_rss, 'MB')}"
        value = fmt(row.value, row.unit) + (f" ({row.note})" if row.note else "")
        lines.append(f"| {row.name} | {value} | {base} | {ratio_text(row)} | {row.target or '—'} | {met} | {rss} |")
    return "\n".join(lines) + "\n"


def write_readme(readme: Path, block: str, markers: tuple[str, str] = (TABLE_START, TABLE_END)) -> None:
    first, last = markers
    text = readme.read_text(encoding="utf-8")
    start, end = text.find(first), text.find(last)
    if start < 0 or end < start:
        raise SystemExit(f"{readme} has no {first} … {last} block to rewrite")
    text = text[: start + len(first)] + "\n" + block + text[end:]
    readme.write_text(text, encoding="utf-8")


# the run -----------------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="fewer repetitions on the same 10,000-file memory")
    mode.add_argument("--smoke", action="store_true", help="tiny memory, one run each, no docs rewrite (CI)")
    parser.add_argument("--out", type=Path, default=BENCHES / "out", help="cache and results (default benches/out)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--runs", type=int, default=None, help="repetitions for medians (default 5, quick 3)")
    parser.add_argument("--no-readme", action="store_true", help="don't rewrite docs/benchmarks.md's tables")
    parser.add_argument("--only", default="", help="comma-separated: growth,startup,viewer,live,search,update,"
                        "context,context-scale,scale")
    parser.add_argument("--big", "--scale-100k", dest="big", action="store_true", help="also measure at 100,000 "
                        "files / 905 MB (the growth table and the search scale step; generating it takes a minute "
                        "or two and ~2 GB of disk)")
    parser.add_argument("--sizes", default="", metavar="N,N",
                        help="the memory sizes in files of the growth table and the search scale step "
                        "(default 1000,10000, and 100000 with --big)")
    parser.add_argument("--before", metavar="REF", default=None,
                        help="also measure the growth table and the search scale step with memtui as of git REF "
                        "(e.g. main), in the same run")
    args = parser.parse_args(argv)
    plan = SMOKE if args.smoke else QUICK if args.quick else FULL
    if args.runs:
        plan = Plan(**{**asdict(plan), "runs": args.runs})
    only = set(filter(None, args.only.split(",")))
    wanted: Callable[[str], bool] = lambda name: not only or name in only  # noqa: E731
    out = args.out.absolute()
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    tag = f"s{args.seed}-{plan.files}f-{plan.megabytes:g}mb"
    main_root = out / f"memory-{tag}"
    info = make_root(main_root, files=plan.files, megabytes=plan.megabytes, seed=args.seed, big_log_mb=0)
    big_root = out / f"biglog-s{args.seed}-{plan.big_log_mb:g}mb"
    big = make_root(big_root, files=generate.MIN_FILES, megabytes=0.2, seed=args.seed, big_log_mb=plan.big_log_mb)
    results = Results(plan.name, machine(), {"files": info["files"], "bytes": info["bytes"], "seed": args.seed,
                                             "big_log_mb": plan.big_log_mb})
    steps: list[tuple[str, Callable[[], list[Row]]]] = []
    work = out / f"work-{tag}"
    redis: Redis | None = None
    try:
        def chosen_sizes() -> tuple[tuple[int, float], ...]:
            known = {files: mb for files, mb in (*SCALE_SIZES, SCALE_100K)}
            return tuple((int(n), known.get(int(n), int(n) * 0.009)) for n in args.sizes.split(","))

        def bench_growth_step() -> list[Row]:
            sizes = ((300, 1.0),) if args.smoke else SCALE_SIZES + ((SCALE_100K,) if args.big else ())
            if args.sizes:
                sizes = chosen_sizes()
            codes: tuple[tuple[str, str | None], ...] = (("", None),)
            if args.before:
                codes = (("after", None), (f"before ({args.before})",
                                           export_tree(args.before, out / "before-growth-tree")))
            rows, results.growth = bench_growth(out, plan, sizes, codes)
            return rows

        steps = [
            ("growth", bench_growth_step),
            ("startup", lambda: bench_startup(main_root, plan)),
            ("viewer", lambda: bench_viewer(big_root, big["big_log"], plan)),
            ("search", lambda: bench_search(main_root, plan)),
            ("context", lambda: bench_context(main_root, plan)),
            ("context-scale", lambda: bench_context_scale(out, plan)),
            ("live", lambda: bench_live_diff(fresh_copy(main_root, work), plan)),
            ("update", lambda: bench_updates_with_redis()),
            ("scale", lambda: bench_scale_with_redis()),
        ]

        def bench_scale_with_redis() -> list[Row]:
            nonlocal redis
            if redis is None:
                redis = Redis(out / "redis")
            before = export_tree(args.before, out / "before-tree") if args.before else None
            sizes = SCALE_SIZES[:1] if args.smoke else SCALE_SIZES + ((SCALE_100K,) if args.big else ())
            if args.smoke:
                sizes = ((300, 1.0),)
            elif args.sizes:
                sizes = chosen_sizes()
            return bench_search_scale(out, plan, sizes, before, args.before or "", redis)

        def bench_updates_with_redis() -> list[Row]:
            nonlocal redis
            root = fresh_copy(main_root, work)
            redis = Redis(out / "redis")
            url = redis.url(f"bench-{int(time.time())}")
            if url:
                say(f"  importing the memory into Redis: {import_to_redis(root, url):.1f} s")
            return bench_updates(root, plan, url)

        for name, step in steps:
            if not wanted(name):
                continue
            say(f"{name} ...")
            t = time.monotonic()
            rows = step()
            results.rows.extend(rows)
            for row in rows:
                say(f"  {row.name}: {fmt(row.value, row.unit)} vs {fmt(row.base, row.unit)} {row.baseline} "
                    f"(RSS {fmt(row.rss, 'MB')}) {row.note}")
            say(f"  ({time.monotonic() - t:.0f} s)")
    finally:
        if redis is not None:
            redis.stop()
        shutil.rmtree(work, ignore_errors=True)
    rss = [r.rss for r in results.rows if r.rss is not None]
    if rss:
        worst = max(results.rows, key=lambda r: r.rss or 0)
        results.rows.append(Row("Peak RSS, largest of the above", max(rss), "MB", "", None, None, None, "< 300 MB",
                                max(rss) < 300, worst.name.split(",")[0].split(":")[0]))
    results.seconds = time.monotonic() - started
    block = table(results)
    (out / "table.md").write_text(block, encoding="utf-8")
    (out / "results.json").write_text(json.dumps(asdict(results), indent=1, default=str), encoding="utf-8")
    say("\n" + block)
    grown = growth_table(results.growth, results.seconds) if results.growth else ""
    if grown:
        (out / "growth.md").write_text(grown, encoding="utf-8")
        say("\n" + grown)
    # Each block is rewritten by the run that measured it: the growth table by any run with the growth step, the
    # main table by a full run only.
    if not args.smoke and not args.no_readme:
        if not only:
            write_readme(README, block)
            say(f"wrote the table into {README}")
        if grown:
            write_readme(README, grown, (GROWTH_START, GROWTH_END))
            say(f"wrote the growth table into {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
