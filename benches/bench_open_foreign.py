"""Opening a folder memtui did not make, against opening a memtui memory of the same size, in the same run.

Both are the same generated memory (10,000 files by default): one made a memtui memory as `memtui init` leaves it
(`.memtui/` inside, every file committed in its own `.git`), the other a plain folder of the same files (no
`.memtui`, no git: a Claude Code, Hermes or OpenClaw memory), whose state and history memtui keeps beside it. To
open is what the review does on opening: `memtui queue list` in a fresh process (the memory opened, the queue read,
git's status for changes made past memtui). The foreign folder's first open starts memtui's history beside it: a
stat look at its files at once, then their baseline committed by a background process into a repository in the
state folder (timed to its end as "baseline", from the first open's return); its second open, once that is written,
is what every later open costs. Each
contender is timed `--runs` times on a fresh copy for the first open and on the same copy for the later ones,
interleaved; the report gives medians and the ratios foreign / memtui.

    python benches/bench_open_foreign.py                    # 10,000 files, 20 MB
    python benches/bench_open_foreign.py --files 2000 --megabytes 4 --runs 3 --json
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
sys.path.insert(0, str(BENCHES))

from generate import generate  # noqa: E402


def memtui_command() -> list[str]:
    script = Path(sys.executable).parent / "memtui"
    return [str(script)] if script.exists() else [sys.executable, "-m", "memtui"]


def opened(root: Path, env: dict[str, str]) -> float:
    """Seconds `memtui queue list` takes on `root`, in a fresh process."""
    started = time.perf_counter()
    done = subprocess.run([*memtui_command(), "queue", "list", "--root", str(root)], capture_output=True, text=True,
                          env=env)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"memtui queue list failed on {root}: {done.stderr[:500]}")
    return elapsed


def baseline_written(state: Path, count: int) -> float:
    """Seconds until `count` folders have memtui's history beside them: a large folder's first open takes a look and
    writes the baseline of its history in a background process (memtui/core/storage/baseline.py), timed here to its end
    so that it does not run under the next measurement."""
    started = time.perf_counter()
    memories = state / "memtui" / "memories"
    from memtui.core.storage.places import LOOK_FILE

    while sum((s / "git").is_dir() and not (s / LOOK_FILE).exists() and not _running(s) for s in memories.iterdir())\
            < count:
        if time.perf_counter() - started > 600:
            raise RuntimeError("the baseline of history beside the folder was not written within 600 s")
        time.sleep(0.01)
    return time.perf_counter() - started


def _running(state: Path) -> bool:
    """Is the process that wrote the baseline still running (it records where history began after it: timed to
    its end, so that the later open is not measured beside it)? A zombie no one reaps has ended."""
    try:
        pid = int((state / "baseline-runner").read_text().strip())
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, ValueError, IndexError):
        return False


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def run(work: Path, *, files: int, megabytes: float, runs: int) -> dict:
    from memtui.core.grammar.config import CONFIG_TEMPLATE, DEFAULT_MODEL
    from memtui.core.storage.init import GITIGNORE

    plain = work / "plain"
    generate(plain, files=files, megabytes=megabytes, seed=7, state_inside=False)
    own = work / "memtui"
    shutil.copytree(plain, own)
    (own / ".gitignore").write_text(GITIGNORE)
    (own / ".memtui").mkdir()
    (own / ".memtui" / "config.toml").write_text(CONFIG_TEMPLATE.format(model=DEFAULT_MODEL))
    git(own, "init", "-q", "-b", "main")
    git(own, "add", "-A")
    git(own, "commit", "-q", "-m", "memtui: initialise memory root (benchmark memory)")
    env = {**os.environ, "XDG_STATE_HOME": str(work / "state"), "MEMTUI_USER": "bench"}
    times: dict[str, list[float]] = {"memtui": [], "foreign first": [], "baseline": [], "foreign again": []}
    for k in range(runs):
        times["memtui"].append(opened(own, env))
        copy = work / f"foreign-{k}"
        shutil.copytree(plain, copy)
        os.sync()
        times["foreign first"].append(opened(copy, env))
        times["baseline"].append(baseline_written(work / "state", k + 1))
        times["foreign again"].append(opened(copy, env))
        if k:
            shutil.rmtree(copy)
    def names(folder: Path) -> list[tuple[str, int]]:  # every path under it (hidden ones too) and a file's size
        # A folder's own size is left out: a copy's differs from its original's with nothing written (ext4 keeps a
        # directory's blocks as its history of entries left them), and said "changed" of every run.
        return sorted((p.relative_to(folder).as_posix(), -1 if p.is_dir() else p.lstat().st_size)
                      for p in folder.rglob("*"))

    medians = {name: statistics.median(values) for name, values in times.items()}
    return {"files": files, "megabytes": megabytes, "runs": runs,
            "median_ms": {name: round(v * 1000, 1) for name, v in medians.items()},
            "ratio_first": round(medians["foreign first"] / medians["memtui"], 2),
            "ratio_again": round(medians["foreign again"] / medians["memtui"], 2),
            "folder_untouched": names(work / "foreign-0") == names(plain)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--megabytes", type=float, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memtui-open-foreign-") as tmp:
        result = run(Path(tmp), files=args.files, megabytes=args.megabytes, runs=args.runs)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        m = result["median_ms"]
        print(f"{result['files']} files, {result['megabytes']} MB, medians of {result['runs']}:")
        print(f"  memtui memory (state inside)        {m['memtui']:8.1f} ms")
        print(f"  foreign folder, first open          {m['foreign first']:8.1f} ms  ({result['ratio_first']}x)")
        print(f"  foreign folder, its baseline after  {m['baseline']:8.1f} ms  (in the background)")
        print(f"  foreign folder, later opens         {m['foreign again']:8.1f} ms  ({result['ratio_again']}x)")
        print(f"  foreign folder left as it was:      {result['folder_untouched']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
