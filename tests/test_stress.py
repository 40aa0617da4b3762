"""Many writers on one memory at once, and writers killed with SIGKILL: nothing lost, nothing torn, all accounted.

The short runs here go with every test run; `pytest -m stress` (and `python benches/stress.py`) run the long ones.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from memtui.core.hygiene.doctor import diagnose
from memtui.core.writing.memory import Memory
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures: a real redis-server)
from support.stress import Plan, Run, crash_run, logged_outcomes, make_redis_memory, make_root, redis_run, verify


def _assert_clean(report) -> None:
    assert not report.problems, "\n".join(report.problems[:20])


def test_concurrent_cli_and_inprocess_writers_lose_nothing(tmp_path: Path) -> None:
    root = make_root(tmp_path / "memory")
    plan = Plan(cli_writers=2, cli_agents=1, approvers=1, log_appenders=1, inproc_threads=2, cli_writes=3,
                inproc_writes=6, refuse_every=3)
    report = Run(root, plan, seed=1).go()
    _assert_clean(report)
    counts = report.counts()
    assert counts["cli:applied"] >= 2 and counts["cli:refused"] >= 2  # each writer's third write is refused
    assert counts["inproc:applied"] >= 4 and counts["cli-log:applied"] == 3
    assert counts["approver:applied"] + counts["approver:rejected"] + counts["approver:conflict"] >= 1
    assert report.reads > 50  # a reader checked whole versions all along


def test_mcp_server_and_app_write_and_decide_alongside_cli_writers(tmp_path: Path, monkeypatch) -> None:
    """A `memtui mcp` process (driven by an MCP client) and a headless app deciding with `a`/`r`, among CLI and
    in-process writers; the app is the only decider, so every queued proposal must end decided by it."""
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    root = make_root(tmp_path / "memory")
    plan = Plan(cli_writers=1, cli_agents=1, approvers=0, log_appenders=0, inproc_threads=1, cli_writes=3,
                inproc_writes=4, refuse_every=3, reject_every=3, mcp_clients=1, mcp_writes=6, mcp_batch=2,
                app_deciders=1)
    report = Run(root, plan, seed=7).go()
    _assert_clean(report)
    counts = report.counts()
    assert counts["mcp:queued"] == 2 and counts["mcp:refused"] == 2 and counts["mcp-log:applied"] == 2
    assert counts["app:applied"] >= 2 and counts["app:rejected"] >= 1
    assert not [p for p in Memory(root).proposals(external=False) if p.status == "pending"]
    # The checks can fail for these writers too: a decision the audit log gives to someone else, a queued
    # proposal with no queue file, an applied log line that is not in its file.
    app = next(o for o in report.outcomes if o.kind == "app" and o.status == "applied")
    queued = next(o for o in report.outcomes if o.kind == "mcp" and o.status == "queued")
    logged = next(o for o in report.outcomes if o.kind == "mcp-log" and o.status == "applied")
    forged = [replace(app, actor="someone-else"), replace(queued, id="p-9999"),
              replace(logged, text="stress mcp log never written")]
    again = verify(root, forged)
    assert len(again.audit) == 2 and len(again.lost) == 1, again.problems


def test_verify_catches_a_lost_update_and_a_torn_file(tmp_path: Path) -> None:
    """The checker itself can fail: remove an applied entry behind memtui's back and tear the audit log."""
    root = make_root(tmp_path / "memory")
    report = Run(root, Plan(cli_writers=1, cli_agents=0, approvers=0, log_appenders=0, inproc_threads=1,
                            cli_writes=2, inproc_writes=3, refuse_every=0), seed=2).go()
    _assert_clean(report)
    victim = next(o for o in report.outcomes if o.status == "applied" and o.entry)
    path = root / victim.file
    path.write_text(path.read_text().replace(victim.entry, "gone"))
    with open(root / "memory-log.jsonl", "ab") as f:
        f.write(b'{"torn": ')
    again = verify(root, report.outcomes)
    assert any("missing" in p for p in again.lost)
    assert again.torn and any("uncommitted" in p for p in again.git)


def test_writers_killed_with_sigkill_leave_every_file_whole_and_doctor_makes_it_consistent(tmp_path: Path) -> None:
    root = make_root(tmp_path / "memory")
    crash = crash_run(root, kills=8, seed=3, min_life=0.15, max_life=0.5)
    assert crash.kills == 8 and not crash.problems, crash.problems
    assert crash.writes_logged > 5
    diagnose(Memory(root), fix=True)
    assert diagnose(Memory(root)).ok
    _assert_clean(verify(root, logged_outcomes(root)))


@pytest.mark.stress
def test_long_concurrent_run(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    root = make_root(tmp_path / "memory")
    plan = Plan(cli_writers=4, cli_agents=2, approvers=1, log_appenders=2, inproc_threads=4, cli_writes=10,
                inproc_writes=40, mcp_clients=2, mcp_writes=20, mcp_batch=3, app_deciders=2)
    _assert_clean(Run(root, plan, seed=11).go())


@pytest.mark.stress
def test_long_crash_run(tmp_path: Path) -> None:
    root = make_root(tmp_path / "memory")
    crash = crash_run(root, kills=60, seed=12, workers=3)
    assert not crash.problems, crash.problems
    diagnose(Memory(root), fix=True)
    assert diagnose(Memory(root)).ok
    _assert_clean(verify(root, logged_outcomes(root)))


def test_redis_store_writer_processes_with_a_kill_lose_nothing(redis_url: str, tmp_path: Path) -> None:
    make_redis_memory(redis_url)
    report = redis_run(redis_url, tmp_path / "logs", workers=2, seconds=2.0, kills=1, seed=5)
    _assert_clean(report)
    assert report.counts()["inproc:applied"] >= 3


@pytest.mark.stress
def test_long_redis_run(redis_url: str, tmp_path: Path) -> None:
    make_redis_memory(redis_url)
    _assert_clean(redis_run(redis_url, tmp_path / "logs", workers=4, seconds=20, kills=10, seed=6))


@pytest.mark.stress
def test_redis_run_with_mcp_servers_and_the_app(redis_server, tmp_path: Path, monkeypatch) -> None:
    """`memtui mcp --store URL` processes and a headless app on the Redis memory, among killed writer processes
    (a short lock lease, so a killed writer's lock lapses quickly)."""
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    url = redis_server.url(lock_ttl=2)
    make_redis_memory(url)
    report = redis_run(url, tmp_path / "logs", workers=3, seconds=8, kills=3, seed=8,
                       plan=Plan(mcp_clients=2, mcp_writes=12, app_deciders=1))
    _assert_clean(report)
    counts = report.counts()
    assert counts["mcp:queued"] >= 4 and counts["mcp-log:applied"] >= 4
    assert counts["app:applied"] + counts["app:rejected"] >= 1
