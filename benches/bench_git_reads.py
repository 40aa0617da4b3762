"""Each kind of git read memtui makes, by every reader that can make it, in one run: which one the owner keeps.

A generated repository of `--files` files (10,000 by default) and `--commits` commits (10,000: the first adds every
file, each later one changes one file), read twice: as memtui's own commit path leaves it (loose objects) and
packed (`git repack -ad`, as `git gc` leaves it). Readers, each timed on the same work:

  objects  `<commit>:<path>` of `--reads` files at random commits: memtui's in-process reader
           (memtui.core.storage.gitobjects.Batch), one persistent `git cat-file --batch` (the same Batch's
           fallback), and GitPython's `repo.commit(sha).tree / path` read through its object database; then one
           such read with a fresh reader, twenty times (what a propose, an approve or a start-up pays); and
           `--reads` blobs by id, as lint's walk of past versions reads them (in process against `cat-file`)
  history  every commit's sha, parents, author, date and message (`FolderStore.history()` without the file lists):
           GitPython's `iter_commits` against the owner's one `git log` (gitcall.log_commits); and one file's commits
  status   external changes after a few files changed, were added and deleted past memtui (`ExternalReview`): the
           status and each named file as committed and as it is now, by the git CLI (gitcall.status_porcelain) and
           by GitPython's `repo.git.status` (the path folder_external took once GitPython was open); both read the
           committed bytes through one object reader

Each reader runs twice (status: seven times), interleaved, and keeps its best time; every reader's answers are
checked equal. The report gives milliseconds and the ratio to the fastest per kind.

    python benches/bench_git_reads.py                         # 10,000 commits, 10,000 files
    python benches/bench_git_reads.py --files 2000 --commits 2000 --reads 500 --json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def path_of(i: int) -> str:
    return f"topic{i // 100:03d}/note{i % 100:02d}.md"


def build(repo: Path, files: int, commits: int, one_file_commits: int) -> None:
    """One `git fast-import` stream: commit 1 adds every file, then each commit rewrites one line of one file (the
    first `one_file_commits` of them all in `topic000/note00.md`, so one file has a long history)."""
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    out: list[bytes] = []

    def blob(text: str) -> None:
        data = text.encode()
        out.append(b"data %d\n%s\n" % (len(data), data))

    stamp = 1_700_000_000
    out.append(b"commit refs/heads/master\ncommitter Bench <bench@example.com> %d +0000\n" % stamp)
    blob("memory: everything\n")
    for i in range(files):
        out.append(b"M 100644 inline %s\n" % path_of(i).encode())
        blob("".join(f"- fact {k} of note {i}\n" for k in range(20)))
    for n in range(1, commits):
        i = 0 if n <= one_file_commits else (n * 7919) % files
        line = n % 20
        out.append(b"commit refs/heads/master\ncommitter Bench <bench@example.com> %d +0000\n" % (stamp + n))
        blob(f"memory: revise {path_of(i)} ({n})\n\nline {line} changed by the agent\n")
        out.append(b"M 100644 inline %s\n" % path_of(i).encode())
        blob("".join(f"- fact {k} of note {i}" + (f", revised {n}" if k == line else "") + "\n" for k in range(20)))
    out.append(b"done\n")
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet", "--done"], input=b"".join(out), check=True,
                   env=GIT_ENV)
    subprocess.run(["git", "-C", str(repo), "reset", "-q", "--hard", "master"], check=True)


def unpack(repo: Path) -> None:
    """Every object loose, as memtui's in-process commit path writes them."""
    packs = sorted((repo / ".git/objects/pack").glob("*.pack"))
    for pack in packs:
        moved = pack.with_suffix(".bench")
        pack.rename(moved)
        pack.with_suffix(".idx").unlink()
        with open(moved, "rb") as f:
            subprocess.run(["git", "-C", str(repo), "unpack-objects", "-q"], stdin=f, check=True)
        moved.unlink()


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    got = fn()
    return time.perf_counter() - t, got


def object_readers(repo: Path, names: list[tuple[str, str]], times: int = 1,
                   ) -> dict[str, Callable[[], list[bytes]]]:
    """`times` > 1: the same reads that many times over, each time with a fresh reader (its process or Repo new)."""
    from memtui.core.storage.gitcall import repo_class
    from memtui.core.storage.gitobjects import Batch

    def in_process() -> list[bytes]:
        out = []
        for _ in range(times):
            batch = Batch(repo / ".git", repo)
            try:
                out += [batch.get(f"{sha}:{rel}").data for sha, rel in names]  # type: ignore[union-attr]
            finally:
                batch.close()
        return out

    def cat_file() -> list[bytes]:
        out = []
        for _ in range(times):
            batch = Batch(repo / ".git", repo)
            try:
                out += [batch._ask(f"{sha}:{rel}").data for sha, rel in names]  # type: ignore[union-attr]
            finally:
                batch.close()
        return out

    def gitpython() -> list[bytes]:
        out = []
        for _ in range(times):
            r = repo_class()(repo)
            try:
                out += [(r.commit(sha).tree / rel).data_stream.read() for sha, rel in names]
            finally:
                r.git.clear_cache()
        return out

    return {"in-process (gitobjects)": in_process, "git cat-file --batch": cat_file, "GitPython tree / path": gitpython}


def blob_readers(repo: Path, blobs: list[str]) -> dict[str, Callable[[], list[bytes]]]:
    """Blobs by id, as lint's walk of every file's past versions reads them (`past_versions_many`)."""
    from memtui.core.storage.gitobjects import Batch

    def in_process() -> list[bytes]:
        batch = Batch(repo / ".git", repo)
        try:
            return [batch.get(sha).data for sha in blobs]  # type: ignore[union-attr]
        finally:
            batch.close()

    def cat_file() -> list[bytes]:
        batch = Batch(repo / ".git", repo)
        try:
            return [batch._ask(sha).data for sha in blobs]  # type: ignore[union-attr]
        finally:
            batch.close()

    return {"in-process (gitobjects)": in_process, "git cat-file --batch": cat_file}


def history_readers(repo: Path, rel: str | None) -> dict[str, Callable[[], list[tuple[str, str, float, str]]]]:
    from memtui.core.storage.gitcall import log_commits, plumbing_env, repo_class

    def gitpython() -> list[tuple[str, str, float, str]]:
        r = repo_class()(repo)
        try:
            commits = r.iter_commits(paths=rel) if rel else r.iter_commits()
            return [(c.hexsha, c.author.name, float(c.authored_date), c.message) for c in commits]
        finally:
            r.git.clear_cache()

    def git_log() -> list[tuple[str, str, float, str]]:
        env = {**os.environ, **plumbing_env(repo / ".git", repo)}
        return [(c.sha, c.author, c.when, c.message) for c in log_commits(env, paths=[rel] if rel else None)]

    return {"GitPython iter_commits": gitpython, "git log (one process)": git_log}


def touch(repo: Path, files: int) -> None:
    """A few changes past memtui in the work tree: five files rewritten, one deleted, two new ones."""
    for i in range(5):
        (repo / path_of((i * 1999) % files)).write_text(f"- rewritten by hand {i}\n", encoding="utf-8")
    (repo / path_of(files - 1)).unlink()
    for name in ("new-a.md", "topic000/new-b.md"):
        (repo / name).write_text("- a file no commit holds\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(repo), "status", "-s"], check=True, capture_output=True)  # the index refreshed


def status_readers(repo: Path) -> dict[str, Callable[[], list[tuple[str, bytes | None, bytes | None]]]]:
    """The changed files with their committed bytes and their bytes now, each reader with its own status."""
    from memtui.core.storage.folder_external import _as_git_sees, _status_paths
    from memtui.core.storage.gitcall import STATUS_ARGS, config_env, repo_class, status_porcelain
    from memtui.core.storage.gitobjects import Batch

    batch = Batch(repo / ".git", repo)
    r = repo_class()(repo)  # open already, as it was when folder_external asked GitPython
    r.git.update_environment(**config_env(repo / ".git", repo))

    def changes(rels: list[str]) -> list[tuple[str, bytes | None, bytes | None]]:
        tree = batch.get("HEAD^{tree}")
        assert tree is not None
        out = []
        for rel in rels:
            got = batch.get(f"{tree.sha}:{rel}")
            out.append((rel, got.data if got is not None else None, _as_git_sees(repo / rel)))
        return out

    def git_cli() -> list[tuple[str, bytes | None, bytes | None]]:
        # The overrides read each time, as folder_external does (GitPython's Repo keeps them till the config changes)
        env = {**os.environ, **config_env(repo / ".git", repo), "GIT_DIR": str(repo / ".git")}
        done = status_porcelain(env, repo)
        assert done is not None and done[0] == 0
        return changes(_status_paths(done[1].decode("utf-8", "surrogateescape")))

    def gitpython() -> list[tuple[str, bytes | None, bytes | None]]:
        return changes(_status_paths(r.git.status(*STATUS_ARGS)))

    return {"git status (gitcall)": git_cli, "GitPython repo.git.status": gitpython}


def race(kind: str, readers: dict[str, Callable[[], Any]], rounds: int = 2) -> dict[str, Any]:
    """Each reader `rounds` times, interleaved; its best time (the first pass warms the page cache for all)."""
    seconds: dict[str, float] = {}
    answers = []
    for _ in range(rounds):
        for name, fn in readers.items():
            took, got = timed(fn)
            seconds[name] = min(took, seconds.get(name, took))
            answers.append(got)
    assert all(a == answers[0] for a in answers), f"{kind}: the readers disagree"
    fastest = min(seconds, key=seconds.__getitem__)
    return {"kind": kind, "seconds": seconds, "fastest": fastest,
            "ratios": {n: round(s / seconds[fastest], 2) for n, s in seconds.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--commits", type=int, default=10_000)
    ap.add_argument("--reads", type=int, default=2_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="memtui-bench-git-"))
    results = []
    try:
        loose, packed = tmp / "loose", tmp / "packed"
        t0 = time.perf_counter()
        build(packed, args.files, args.commits, 200)
        subprocess.run(["git", "-C", str(packed), "repack", "-adq"], check=True)
        shutil.copytree(packed, loose, symlinks=True)
        unpack(loose)
        built = time.perf_counter() - t0
        shas = subprocess.run(["git", "-C", str(packed), "rev-list", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.split()
        raw = subprocess.run(["git", "-C", str(packed), "log", "--raw", "--no-abbrev", "--format="],
                             capture_output=True, text=True, check=True).stdout.split()
        blobs = [word for word in raw if len(word) == 40][1::2][:args.reads]  # each change's new blob
        rng = random.Random(44)
        names = [(rng.choice(shas), path_of(rng.randrange(args.files))) for _ in range(args.reads)]
        for label, repo in (("loose", loose), ("packed", packed)):
            results.append({"repo": label, **race("objects", object_readers(repo, names))})
            # What a propose, an approve or a start-up read pays: a fresh reader, one file, twenty times over.
            results.append({"repo": label, **race("one object, fresh reader (x20)",
                                                  object_readers(repo, names[:1], times=20))})
            results.append({"repo": label, **race("blobs by id", blob_readers(repo, blobs))})
            results.append({"repo": label, **race("history", history_readers(repo, None))})
            results.append({"repo": label, **race("file history", history_readers(repo, path_of(0)))})
            touch(repo, args.files)
            results.append({"repo": label, **race("status", status_readers(repo), rounds=7)})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report = {"files": args.files, "commits": args.commits, "reads": args.reads, "built_s": round(built, 1),
              "results": results}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{args.commits:,} commits, {args.files:,} files, {args.reads:,} object reads (built in {built:.1f} s)")
    for r in results:
        print(f"\n{r['repo']:>6} {r['kind']}: fastest {r['fastest']}")
        for name, s in r["seconds"].items():
            print(f"  {name:<28} {s * 1000:9.1f} ms  x{r['ratios'][name]:.2f}")


if __name__ == "__main__":
    main()
