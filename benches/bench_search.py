"""Search benchmark: memtui's index against ripgrep on a generated memory, same folder, same run.

For each literal query it times, interleaved so machine noise hits every contender alike:
  rg        `rg -n -F -i QUERY ROOT` in a fresh process (what an agent with a shell would run);
  cold CLI  `memtui search QUERY --json --root ROOT` in a fresh process, once the index exists;
  warm      `Searcher.search` in this process, as the app's search tab holds it (file watcher on);
  warm-walk the same, but re-checking every file's (mtime, size) before the query (no watcher).
It reports medians, the ratios rg / warm and cold / rg, checks that the set of (path, line) memtui matches equals
ripgrep's, and measures the index build time and the index size against the text it indexes.

    python benches/bench_search.py                 # 10,000 files, 90 MB (generated once under /tmp)
    python benches/bench_search.py --smoke         # a small memory and few runs, for CI
    python benches/bench_search.py --root DIR      # an existing memory folder
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memtui.core.recall.index import Index, walk  # noqa: E402
from memtui.core.recall.search import Searcher  # noqa: E402

# Common words and phrases of the generated memories, from thousands of matching lines down to a few.
COMMON = ["rollback", "postgres", "failover", "public api"]


def memtui_command() -> list[str]:
    """The installed console script next to this interpreter (not a version-manager shim, which adds ~70 ms)."""
    script = Path(sys.executable).parent / "memtui"
    return [str(script)] if script.exists() else [sys.executable, "-m", "memtui"]


def timed(argv: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr[:500]}")
    return elapsed, done.stdout


def rg_lines(out: str, root: Path) -> set[tuple[str, int]]:
    found = set()
    prefix = str(root) + os.sep
    for line in out.splitlines():
        path, lineno, _ = line.split(":", 2)
        found.add((path.removeprefix(prefix), int(lineno)))
    return found


def memtui_lines(searcher: Searcher, query: str) -> set[tuple[str, int]]:
    """Every (path, line) memtui matches: a bundle as large as the number of matched lines."""
    everything = searcher.search(query, limit=10**9)
    return {(r.path, r.line) for r in everything.results if r.matched}


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def run(root: Path, queries: list[str], runs: int) -> dict:
    rg = shutil.which("rg")
    if rg is None:
        raise SystemExit("ripgrep (rg) is not installed: it is the baseline")
    files = walk(root)
    index = Index(root)
    index.reset()
    started = time.perf_counter()
    stats = index.refresh()
    build = time.perf_counter() - started
    indexed_files, skipped = index.summary()
    index.close()
    text_bytes = sum(size for rel, (_, size) in files.items())
    index_bytes = index.size_bytes()

    searcher = Searcher(root, watch=True)
    walker = Searcher(root)
    searcher.search("warm up the index connection")
    walker.search("warm up the index connection")
    cli = memtui_command()
    report: dict = {
        "root": str(root), "files": len(files), "text_mb": round(text_bytes / 1e6, 2),
        "index_mb": round(index_bytes / 1e6, 2), "index_to_text": round(index_bytes / text_bytes, 3),
        "index_build_s": round(build, 2), "indexed_files": indexed_files, "skipped": skipped,
        "runs": runs, "queries": [],
    }
    assert stats.added == len(files)
    for query in queries:
        times: dict[str, list[float]] = {"rg": [], "cold": [], "warm": [], "warm_walk": []}
        rg_out = cli_out = ""
        for _ in range(runs):
            t, rg_out = timed([rg, "-n", "-F", "-i", "--no-heading", "--", query, str(root)])
            times["rg"].append(t)
            t, cli_out = timed(cli + ["search", "--json", "--root", str(root), "--", query])
            times["cold"].append(t)
            t0 = time.perf_counter()
            searcher.search(query)
            times["warm"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            walker.search(query)
            times["warm_walk"].append(time.perf_counter() - t0)
        expected = rg_lines(rg_out, root)
        got = memtui_lines(searcher, query)
        bundle = json.loads(cli_out)
        top = {(r["path"], r["line"]) for r in bundle["results"] if r["matched"]}
        med = {k: statistics.median(v) for k, v in times.items()}
        report["queries"].append({
            "query": query, "matched_lines": len(expected),
            "same_results": got == expected and top <= expected and bundle["matched_lines"] == len(expected),
            "only_rg": len(expected - got), "only_memtui": len(got - expected),
            "median_ms": {k: ms(v) for k, v in med.items()},
            "warm_speedup_vs_rg": round(med["rg"] / med["warm"], 1),
            "warm_walk_speedup_vs_rg": round(med["rg"] / med["warm_walk"], 2),
            "cold_vs_rg": round(med["cold"] / med["rg"], 2),
        })
    searcher.close()
    walker.close()
    return report


def print_report(r: dict) -> None:
    print(f"memory: {r['files']} files, {r['text_mb']} MB of text at {r['root']}")
    print(f"index: built in {r['index_build_s']} s; {r['index_mb']} MB = {r['index_to_text']}x the text"
          f" (skipped: {r['skipped'] or 'none'}); medians of {r['runs']} runs")
    print(f"{'query':<22}{'lines':>7}{'rg ms':>9}{'cold ms':>9}{'warm ms':>9}{'walk ms':>9}"
          f"{'rg/warm':>9}{'cold/rg':>9}  same")
    for q in r["queries"]:
        m = q["median_ms"]
        print(f"{q['query'][:21]:<22}{q['matched_lines']:>7}{m['rg']:>9}{m['cold']:>9}{m['warm']:>9}"
              f"{m['warm_walk']:>9}{q['warm_speedup_vs_rg']:>9}{q['cold_vs_rg']:>9}  {q['same_results']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, help="an existing memory folder (default: generate one)")
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--mb", type=float, default=90)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--smoke", action="store_true", help="a 300-file, 3 MB memory and 2 runs (for CI)")
    ap.add_argument("--json", type=Path, help="also write the report here")
    args = ap.parse_args(argv)
    if args.smoke:
        args.files, args.mb, args.runs = 300, 3, 2
    markers: list[str] = []
    cleanup = None
    root = args.root
    if root is None:
        from generate import MEMORY_MARKER, LAST_TOPIC_MARKER, MIDDLE_TOPIC_MARKER, OLDEST_LOG_MARKER, generate

        cache = Path(tempfile.gettempdir()) / f"memtui-bench-{args.files}-{args.mb:g}-{args.seed}"
        if not (cache / "MEMORY.md").exists():
            shutil.rmtree(cache, ignore_errors=True)
            stats = generate(cache, files=args.files, megabytes=args.mb, seed=args.seed)
            markers = list(stats.markers)
        else:
            markers = [MEMORY_MARKER, OLDEST_LOG_MARKER, MIDDLE_TOPIC_MARKER, LAST_TOPIC_MARKER]
        root = cache
        if args.smoke:
            cleanup = cache
    queries = markers + COMMON
    try:
        report = run(root, queries, args.runs)
    finally:
        if cleanup is not None:
            shutil.rmtree(cleanup, ignore_errors=True)
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0 if all(q["same_results"] for q in report["queries"]) else 1


if __name__ == "__main__":
    sys.exit(main())
