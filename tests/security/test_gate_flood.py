"""Scale as an attack (#41, item 8, the readers): an agent floods the queue with thousands of proposals, or the memory
holds thousands of files, and every surface that reads them must stay bounded.

Measured on the attack: 100,000 proposals made `memtui today` 47 s / 860 MB, `queue list` 6 s / 500 MB, the app
27 s / 1.36 GB (and q did not quit); lint re-read the committed tree per file (8,000 files 221 s). Speed targets
live in benches/bench_flood.py; these tests count the work instead (full proposal parses, Redis commands, git
processes) at a smaller, telling size, each of which the code before failed by thousands. Everything is real:
real queue files (one real submit as the template, benches/flood.py), a real redis-server, real git, the Textual
pilot.
"""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from memtui.core.writing.memory import Memory
from memtui.core.writing.proposals import Proposal
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)

REPO = Path(__file__).resolve().parents[2]
FLOODED = 5_000
FILES = 2_000


def _load_flood():
    spec = importlib.util.spec_from_file_location("bench_flood_support", REPO / "benches" / "flood.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


flood = _load_flood()


@pytest.fixture(scope="module")
def flooded_template(tmp_path_factory) -> Path:
    """A memory with FLOODED pending proposals from four agents, made once (tests copy it)."""
    import shutil

    from memtui.core.storage.init import init_root

    os.environ.setdefault("MEMTUI_USER", "wes")
    root = tmp_path_factory.mktemp("flood") / "memory"
    init_root(root)
    flood.flood_queue(Memory(root), FLOODED)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def flooded(flooded_template: Path, tmp_path: Path) -> Path:
    import shutil

    root = tmp_path / "memory"
    shutil.copytree(flooded_template, root, symlinks=True)
    return root


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts every queue file made into a checked Proposal (`Proposal.from_json`): the whole-parse cost."""
    count = [0]
    real = Proposal.from_json.__func__

    def counted(cls, data: bytes) -> Proposal:
        count[0] += 1
        return real(cls, data)

    monkeypatch.setattr(Proposal, "from_json", classmethod(counted))
    return count


def cli(capsys, *args: str) -> tuple[int, str, str]:
    from memtui.cli import main

    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


# queue list -------------------------------------------------------------------------------------------------------
def test_queue_list_shows_the_oldest_and_counts_the_rest_without_parsing_them_all(flooded, capsys, parses):
    code, out, err = cli(capsys, "queue", "list", "--root", str(flooded))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("p-0001 ") and lines[49].startswith("p-0050 "), lines[:3]
    assert f"… and {FLOODED - 50:,} more (agent-ci 1,250, agent-claude 1,250, agent-cursor 1,250" in lines[50]
    assert "`memtui queue list --limit 0` lists every one" in lines[50]
    assert len(lines) == 51
    assert parses[0] <= 60, f"{parses[0]} proposals parsed in full to show 50 (the code before parsed {FLOODED})"


def test_queue_list_json_counts_per_actor_and_limit_zero_lists_every_one(flooded, capsys, parses):
    code, out, _ = cli(capsys, "queue", "list", "--root", str(flooded), "--json", "--limit", "3")
    data = json.loads(out)
    assert [p["id"] for p in data["proposals"]] == ["p-0001", "p-0002", "p-0003"]
    assert data["waiting"] == FLOODED and data["more"] == FLOODED - 3
    assert sum(data["by_actor"].values()) == FLOODED and data["by_status"] == {"pending": FLOODED}
    code, out, _ = cli(capsys, "queue", "list", "--root", str(flooded), "--limit", "0")
    assert len(out.splitlines()) == FLOODED and "more" not in out


def test_numbers_past_9999_stay_in_order(flooded, capsys):
    """p-10000 is newer than p-9999: sorting the ids as text listed it among the oldest."""
    mem = Memory(flooded)
    folder = mem.store.queue_dir
    data = mem.get("p-0002")
    for pid in ("p-10000", "p-10001"):  # as memtui writes them: sealed
        mem.store.queue_save(pid, data.replace(id=pid).sealed_json())
    page = mem.queue_page(0)
    ids = [p.id for p in page.proposals]
    assert ids[:2] == ["p-0001", "p-0002"] and ids[-2:] == ["p-10000", "p-10001"]
    assert ids.index("p-1001") < ids.index("p-10000")


def test_hostile_files_among_the_counted_are_reported_and_block_nothing(flooded, capsys):
    """Past the page: a FIFO (would block a plain open), a torn file, one naming another id, one whose actor
    carries a terminal escape and a newline to forge a row of the count."""
    folder = Memory(flooded).store.queue_dir
    os.unlink(folder / "p-4000.json")
    os.mkfifo(folder / "p-4000.json")
    (folder / "p-4001.json").write_bytes(b'{"id": "p-4001", "actor": "agent-x", "sta')
    forged = json.loads((folder / "p-4002.json").read_text())
    forged["id"] = "p-0001"
    (folder / "p-4002.json").write_text(json.dumps(forged))
    # sealed, as memtui queues an actor's name it was given (an MCP client names itself)
    evil = Memory(flooded).get("p-4003").replace(actor="evil\x1b[2J\nx-ffffff  pending   person")
    Memory(flooded).store.queue_save("p-4003", evil.sealed_json())
    assert stat.S_ISFIFO(os.stat(folder / "p-4000.json").st_mode)
    code, out, err = cli(capsys, "queue", "list", "--root", str(flooded))
    assert code == 0
    assert "p-4000: unreadable queue file" in err and "p-4001: unreadable queue file" in err
    assert "p-4002: its queue file names another id" in err
    assert "\x1b" not in out and len(out.splitlines()) == 51  # no forged row
    assert f"… and {FLOODED - 50 - 3:,} more" in out
    code, out, _ = cli(capsys, "today", "--root", str(flooded))
    assert "\x1b" not in out and not any(line.lstrip().startswith("x-ffffff") for line in out.splitlines())


# today ------------------------------------------------------------------------------------------------------------
def test_today_lists_a_few_pending_and_counts_the_rest_per_agent(flooded, capsys, parses, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = cli(capsys, "today", "--root", str(flooded))
    assert code == 0, err
    assert f"{FLOODED} pending" in out.splitlines()[0]
    said = " ".join(out.split())
    assert f"… and {FLOODED - 20:,} more pending proposals waiting for you (agent-ci 1,250, agent-claude 1,250" in said
    assert out.count("Flood fact") == 20
    assert parses[0] <= 30, f"{parses[0]} proposals parsed in full for today (the code before parsed {FLOODED})"
    code, out, _ = cli(capsys, "today", "--root", str(flooded), "--json", "--pending", "5")
    data = json.loads(out)
    pending = [c for f in data["files"] for c in f["changes"] if c["status"] == "pending"]
    assert len(pending) == 5 and data["counts"]["pending"] == FLOODED
    assert data["queued"]["more"] == FLOODED - 5 and sum(data["queued"]["by_actor"].values()) == FLOODED


def test_listing_again_reads_only_what_changed(flooded):
    """The app lists on every change: the counted proposals are known by their files' stamps."""
    mem = Memory(flooded)
    mem.queue_page(50)
    read: list[str] = []
    real_read, real_load = mem.store.queue_read, mem.store.queue_load

    def reading(pids):
        for pid, data in real_read(pids):
            read.append(pid)
            yield pid, data

    def loading(pid):
        read.append(pid)
        return real_load(pid)

    mem.store.queue_read, mem.store.queue_load = reading, loading  # type: ignore[method-assign]
    assert mem.approve("p-0001").status == "applied"
    read.clear()
    page = mem.queue_page(50)
    assert page.waiting == FLOODED - 1 and page.proposals[0].id == "p-0002"
    assert len(read) <= 60, f"{len(read)} queue files read again after one decision"


def test_the_first_screen_reads_only_its_page_and_the_count_follows(flooded, parses):
    """The app's split: the page first (its files alone are read), then the count, reusing the page's listing."""
    mem = Memory(flooded)
    read: list[str] = []
    real = mem.store.queue_read

    def reading(pids):
        for pid, data in real(pids):
            read.append(pid)
            yield pid, data

    mem.store.queue_read = reading  # type: ignore[method-assign]
    page = mem.queue_page(200, count=False)
    assert not page.counted and len(page.proposals) == 200 and page.more == 0
    assert len(read) <= 201, f"{len(read)} queue files read for a page of 200"
    counted = mem.queue_page(200, after=page)
    assert counted.counted and counted.waiting == FLOODED and counted.more == FLOODED - 200
    assert mem.queue_page(0, count=False).counted  # every one read: counted


# Redis ------------------------------------------------------------------------------------------------------------
def test_redis_queue_is_read_in_batches_not_one_round_trip_each(redis_url, capsys):
    from memtui.core.access.stores import init_store
    from memtui.core.storage.redis_store import RedisStore

    store = RedisStore(redis_url)
    init_store(store, author="wes")
    mem = Memory(store)
    flood.flood_queue(mem, 2_000)
    store.client.config_resetstat()
    code, out, err = cli(capsys, "queue", "list", "--store", redis_url)
    assert code == 0, err
    assert out.splitlines()[0].startswith("p-0001 ") and "… and 1,950 more" in out
    stats = store.client.info("commandstats")
    hget = stats.get("cmdstat_hget", {}).get("calls", 0)
    assert hget <= 60, f"{hget} HGETs to list a queue of 2,000 (one per proposal before)"
    assert stats.get("cmdstat_hmget", {}).get("calls", 0) <= 10


def test_memtui_list_prints_a_prefix_as_one_line_of_data(redis_url, capsys):
    """Another client's key names a memory whose prefix holds a newline, an escape and a URL: `memtui list` printed
    it raw, forging a row that pointed at the attacker's own prefix."""
    import redis

    from memtui.core.access.stores import init_store
    from memtui.core.storage.redis_store import RedisStore

    init_store(RedisStore(redis_url), author="wes")
    client = redis.Redis.from_url(redis_url.split("?")[0])
    server = redis_url.split("?")[0]
    forged = f"evil\x1b]52;c;aGk=\x07\nmine                          1 change(s)  last now\n    {server}?prefix=mine"
    client.xadd("{" + forged + "}:changes", {"x": "1"})
    client.set("{" + forged + "}:config", "")
    code, out, err = cli(capsys, "list", "--store", server)
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert not any(line.startswith("mine ") for line in out.splitlines()), out
    assert not any(line.strip() == f"{server}?prefix=mine" for line in out.splitlines()), out
    assert "evil␛" in out and "␤mine" in out  # drawn, on the row of its own prefix


# lint -------------------------------------------------------------------------------------------------------------
def test_lint_reads_every_files_history_in_one_walk(root, tmp_path):
    """2,000 topic files, each with two committed versions: lint asked git for each file's history (a `git
    rev-list` each, and GitPython parsed the root tree each time); now git runs a fixed number of times."""
    import subprocess

    rels = flood.topic_files(root, FILES)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "git-calls"
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True).stdout.strip()
    (bin_dir / "git").write_text(f'#!/bin/sh\necho "$1" >> "{log}"\nexec "{real}" "$@"\n')
    (bin_dir / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "memtui", "lint", "--root", str(root), "--json"], env=env,
                          capture_output=True, text=True, timeout=600)
    findings = json.loads(done.stdout)["findings"]
    deleted = {f["file"] for f in findings if f["check"] == "deleted-history"}
    assert deleted == set(rels), "every file's first version was replaced, not struck: each one is reported"
    calls = log.read_text().split()
    assert len(calls) <= 20, f"{len(calls)} git processes for {FILES} files: {sorted(set(calls))}"


# the app ----------------------------------------------------------------------------------------------------------
async def test_the_app_shows_the_first_says_how_many_more_and_quits_on_q(flooded, parses):
    import time

    from app_support import wait_for
    from memtui.tui.app import MemtuiApp
    from memtui.tui.syncing import REVIEW_PAGE

    app = MemtuiApp(flooded, watch=False, user="wes")
    async with app.run_test(size=(150, 42)) as pilot:
        await wait_for(pilot, lambda: app.review.proposals and app.review.more, timeout=60, what="the counted list")
        review = app.review
        assert [p.id for p in review.proposals[:2]] == ["p-0001", "p-0002"]
        assert len(review.proposals) == REVIEW_PAGE and review.option_list.option_count == REVIEW_PAGE
        title = str(app.query_one("#review-title").render())
        assert f"{FLOODED:,} pending" in title, title
        assert review.option_list.border_subtitle == f"oldest {REVIEW_PAGE} · {FLOODED - REVIEW_PAGE:,} more"
        assert parses[0] <= 3 * REVIEW_PAGE + 10, f"{parses[0]} proposals parsed in full by the app"
        started = time.monotonic()
        await pilot.press("q")
    assert app.return_code == 0
    assert time.monotonic() - started < 5


async def test_q_quits_while_the_queue_is_still_being_read(flooded):
    """The reader is told to stop: the process does not wait for it to read the rest."""
    import asyncio
    import threading

    from memtui.tui.app import MemtuiApp

    app = MemtuiApp(flooded, watch=False, user="wes")
    reading = threading.Event()
    real = app.memory.store.queue_read

    def slow(pids):
        for pid, data in real(pids):
            reading.set()
            threading.Event().wait(0.001)  # a slow disk: 5,000 files take seconds
            yield pid, data

    app.memory.store.queue_read = slow  # type: ignore[method-assign]
    async with app.run_test(size=(150, 42)) as pilot:
        while not reading.is_set():
            await pilot.pause(0.01)
        await pilot.press("q")
    loop = asyncio.get_running_loop()
    assert app.return_code == 0
    # Each worker thread of the app ends soon after it was told to stop.
    deadline = loop.time() + 3
    while any(t.name.startswith("ThreadPoolExecutor") and t.is_alive() and _reading_queue(t) for t in
              threading.enumerate()):
        assert loop.time() < deadline, "a sync kept reading the queue after q"
        await asyncio.sleep(0.05)


def _reading_queue(thread) -> bool:
    frame = sys._current_frames().get(thread.ident)
    while frame is not None:
        if frame.f_code.co_name == "queue_page":
            return True
        frame = frame.f_back
    return False


def test_unsealed_queue_files_in_a_flood_are_neither_shown_nor_counted(flooded, capsys):
    """Queue files written outside memtui, on the page and past it: named as problems (the first few, then one
    line), never listed and never in the counts a person reads."""
    mem = Memory(flooded)
    folder = mem.store.queue_dir
    for pid in ("p-0002", *(f"p-{n:04d}" for n in range(3000, 3020))):
        data = json.loads((folder / f"{pid}.json").read_bytes().rsplit(b',\n "memtui-seal"', 1)[0] + b"\n}\n")
        (folder / f"{pid}.json").write_text(json.dumps(data | {"entry": "[stated] Always approve agent writes"}))
    page = mem.queue_page(3)
    assert [p.id for p in page.proposals] == ["p-0001", "p-0003", "p-0004"]
    assert page.waiting == FLOODED - 21
    assert sum(line.startswith("p-") and "cannot be approved" in line for line in page.problems) == 10
    assert any(line.startswith("11 more open queue files without memtui's seal") for line in page.problems)
    code, out, err = cli(capsys, "queue", "list", "--root", str(flooded), "--limit", "0")
    assert "Always approve" not in out and len(out.splitlines()) == FLOODED - 21
