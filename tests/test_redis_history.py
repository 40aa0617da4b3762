"""Today, history, blame and undo on a Redis memory (a real redis-server): the same answers as on a folder, made
from the `changes` stream; undo records a new stream entry, audited, and a conflicting revert writes nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)

from memtui.cli import main
from memtui.core.access.stores import init_store
from memtui.core.storage.init import init_root
from memtui.core.storage.merge3 import merge3
from memtui.core.storage.redis_store import RedisStore
from memtui.core.timeline.history import blame, history, restore, revert, short, undo_last
from memtui.core.writing.memory import Memory

ANA = b"# Ana\n\n- [stated] Ana runs the API team (2026-08-20)\n"


def scripted_day(mem: Memory, now, outside_edit) -> dict[str, str]:
    """The day of issue 7 on any memory: approved, revised and rejected proposals, an outside edit accepted, a
    person's own edit, a refused write and a pending proposal. Returns the ids and commits it made."""
    ids: dict[str, str] = {}
    now("2026-08-20T09:00")
    ids["approved"] = mem.update("Preferences", "add", "[stated] Prefers dark mode", actor="agent").id or ""
    now("2026-08-20T09:05")
    ids["approved_commit"] = mem.approve(ids["approved"], by="wes").commit or ""
    now("2026-08-20T09:10")
    ids["revised"] = mem.update("Facts", "add", "[inferred] Lives in Lisbon", actor="agent").id or ""
    now("2026-08-20T09:15")
    ids["revised_commit"] = mem.approve(ids["revised"], by="wes", entry="[stated] Lives in Porto").commit or ""
    now("2026-08-20T09:20")
    ids["rejected"] = mem.update("Facts", "add", "[suggested] Likes jazz", actor="agent").id or ""
    now("2026-08-20T09:25")
    assert mem.reject(ids["rejected"], reason="never said so", by="wes").status == "rejected"
    now("2026-08-20T09:30")
    outside_edit("people/ana.md", ANA)
    [ext] = mem.external_proposals()
    now("2026-08-20T09:35")
    assert mem.approve(ext.id, by="wes").status == "applied"
    now("2026-08-20T10:00")
    ids["own_commit"] = mem.update("Decisions", "add", "[stated] Public API uses tRPC", actor="wes").commit or ""
    now("2026-08-20T11:10")
    assert mem.update("Preferences", "add", "[stated] prefers DARK mode!", actor="agent").status == "refused"
    now("2026-08-20T11:20")
    ids["pending"] = mem.update("Projects", "add", "[observed] memtui ships Friday", actor="agent").id or ""
    now("2026-08-20T12:00")
    return ids


def redis_day(url: str, now) -> tuple[Memory, RedisStore, dict[str, str]]:
    now("2026-08-19T18:00")
    store = RedisStore(url)
    init_store(store)
    mem = Memory(store)
    return mem, store, scripted_day(mem, now, lambda rel, data: store.client.set(store.key(rel), data))


def folder_day(root: Path, now) -> tuple[Memory, dict[str, str]]:
    now("2026-08-19T18:00")
    init_root(root)
    mem = Memory(root)

    def outside_edit(rel: str, data: bytes) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)

    return mem, scripted_day(mem, now, outside_edit)


def stream_len(store: RedisStore) -> int:
    return int(store.client.xlen(store.k_changes))


def cli(capsys: pytest.CaptureFixture[str], url: str, tmp_path: Path, *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--json", "--store", url, "--root", str(tmp_path / "unused")])
    return code, json.loads(capsys.readouterr().out)


def test_today_on_redis_lists_the_day_with_actors_statuses_and_diffs(redis_url, tmp_path, now, capsys):
    mem, store, ids = redis_day(redis_url, now)
    code, data = cli(capsys, redis_url, tmp_path, "today")
    assert code == 0
    flat = sorted((c for f in data["files"] for c in f["changes"]), key=lambda c: c["time"])
    assert [(c["time"][11:16], c["actor"], c["action"], c["status"], c["file"]) for c in flat] == [
        ("09:05", "agent", "add", "approved", "MEMORY.md"),
        ("09:15", "agent", "add", "revised", "MEMORY.md"),
        ("09:25", "agent", "add", "rejected", "MEMORY.md"),
        ("09:35", "external", "create", "approved", "people/ana.md"),
        ("10:00", "wes", "add", "applied", "MEMORY.md"),
        ("11:10", "agent", "add", "refused", "MEMORY.md"),
        ("11:20", "agent", "add", "pending", "MEMORY.md"),
    ]
    approved = flat[0]
    assert approved["proposal"] == ids["approved"] and approved["commit"] == ids["approved_commit"]
    # the diff comes from the stream entry, split to the file, and points at the line it added
    added = [line for line in approved["diff"].splitlines() if line.startswith("+- [")]
    assert len(added) == 1 and "Prefers dark mode" in added[0] and "people/ana.md" not in approved["diff"]
    text = (mem.read_text("MEMORY.md") or "").splitlines()
    assert "Prefers dark mode" in text[approved["line"] - 1]
    assert "+- [stated] Ana runs the API team" in flat[3]["diff"]
    assert flat[1]["proposed"].startswith("[inferred] Lives in Lisbon")


def test_history_and_blame_on_redis_name_the_change_and_proposal_behind_each_line(redis_url, tmp_path, now):
    mem, store, ids = redis_day(redis_url, now)
    hist = history(mem, "MEMORY.md")
    assert [(h.commit, h.actor, h.proposal, h.approved_by) for h in hist[:3]] == [
        (ids["own_commit"], "wes", None, None),
        (ids["revised_commit"], "agent", ids["revised"], "wes"),
        (ids["approved_commit"], "agent", ids["approved"], "wes"),
    ]
    assert hist[-1].actor == "memtui" and len(hist) == 4
    assert hist[2].audit[0]["decided_by"] == "wes" and hist[2].short == ids["approved_commit"]

    lines = blame(mem, "MEMORY.md")
    by_text = {b.text: b for b in lines}
    dark = next(b for t, b in by_text.items() if "Prefers dark mode" in t)
    porto = next(b for t, b in by_text.items() if "Lives in Porto" in t)
    trpc = next(b for t, b in by_text.items() if "Public API uses tRPC" in t)
    assert (dark.commit, dark.actor, dark.proposal, dark.approved_by, dark.action, dark.time) == (
        ids["approved_commit"], "agent", ids["approved"], "wes", "add", "2026-08-20T09:05:00")
    assert (porto.commit, porto.proposal) == (ids["revised_commit"], ids["revised"])
    assert (trpc.commit, trpc.actor, trpc.proposal) == (ids["own_commit"], "wes", None)
    assert by_text["## Facts"].actor == "memtui"
    assert [b.line for b in lines] == list(range(1, len(lines) + 1))
    assert "\n".join(b.text for b in lines) == (mem.read_text("MEMORY.md") or "").rstrip("\n")

    # a raw SET that bypassed memtui is not recorded: its line has no change yet
    store.client.set(store.key("MEMORY.md"), (mem.read_text("MEMORY.md") or "").encode() + b"- typed in redis-cli\n")
    assert blame(mem, "MEMORY.md")[-1].actor == "uncommitted"


def test_redis_gives_the_same_history_and_blame_as_a_folder(redis_url, tmp_path, now):
    rmem, _, _ = redis_day(redis_url, now)
    fmem, _ = folder_day(tmp_path / "memory", now)
    assert rmem.read_text("MEMORY.md") == fmem.read_text("MEMORY.md")

    def lines(mem: Memory) -> list[tuple]:
        return [(b.text, b.actor, b.proposal, b.approved_by, b.action, b.time) for b in blame(mem, "MEMORY.md")]

    def commits(mem: Memory, rel: str) -> list[tuple]:
        return [(h.actor, h.proposal, h.approved_by, h.action, h.time) for h in history(mem, rel)]

    assert lines(rmem) == lines(fmem)
    assert commits(rmem, "MEMORY.md")[:-1] == commits(fmem, "MEMORY.md")[:-1]  # all but the two inits
    assert commits(rmem, "people/ana.md") == commits(fmem, "people/ana.md")


def test_reverting_a_change_twice_says_it_is_undone_on_both_stores(redis_url, tmp_path, now):
    """The second revert of a change with later changes on top merges to the file as it is: nothing to record
    (it used to report "reverted … as ." with an empty commit, on a folder too)."""
    rmem, rstore, rids = redis_day(redis_url, now)
    fmem, fids = folder_day(tmp_path / "memory", now)
    for mem, ids in ((rmem, rids), (fmem, fids)):
        assert revert(mem, ids["approved_commit"], "wes").status == "applied"
        audit = len(list(mem.store.audit_records()))
        again = revert(mem, ids["approved_commit"], "wes")
        assert (again.status, again.commit) == ("applied", None)
        assert again.message == f"{short(ids['approved_commit'])} is already undone; nothing to change"
        assert len(list(mem.store.audit_records())) == audit


def test_undo_on_redis_restores_the_previous_content_as_a_new_audited_change(redis_url, tmp_path, now, capsys):
    mem, store, ids = redis_day(redis_url, now)
    before_own = store.file_at("MEMORY.md", ids["revised_commit"])
    entries = stream_len(store)
    now("2026-08-20T12:30")
    subject = history(mem, "MEMORY.md")[0].subject
    res = undo_last(mem, "wes")
    assert res.status == "applied", res.message
    assert subject.startswith("add MEMORY.md § Decisions: [stated] Public API uses tRPC")
    assert res.message == f"reverted {ids['own_commit']} ({subject}) as {res.commit}."
    assert store.read("MEMORY.md") == before_own
    assert [line for line in res.diff.splitlines() if line.startswith(("+- [", "-- ["))] == [
        "-- [stated] Public API uses tRPC (2026-08-20)"]
    assert stream_len(store) == entries + 1  # a new change; nothing rewritten
    [(sid, entry)] = store.changes(res.commit or "", count=1)
    assert (entry["action"], entry["actor"], entry["file"]) == ("revert", "wes", "MEMORY.md")
    assert f"Memtui-Reverts: {ids['own_commit']}" in entry["message"]
    last = list(store.audit_records())[-1]
    assert (last["action"], last["status"], last["actor"], last["commit"], last["reverts"]) == (
        "revert", "applied", "wes", sid, ids["own_commit"])
    assert not mem.external_proposals()  # recorded: nothing left looking like an outside change
    # the undo shows in today, and undo again goes one further back (the accepted outside file)
    code, data = cli(capsys, redis_url, tmp_path, "today")
    assert any(c["action"] == "revert" and c["reverts"] == ids["own_commit"] for f in data["files"]
               for c in f["changes"])
    code, data = cli(capsys, redis_url, tmp_path, "undo")
    assert code == 0 and data["status"] == "applied" and store.read("people/ana.md") is None


def test_a_conflicting_revert_on_redis_is_refused_and_nothing_changes(redis_url, tmp_path, now, capsys):
    mem, store, ids = redis_day(redis_url, now)
    assert mem.update("Preferences", "revise", "[stated] Prefers light mode", replaces="dark mode",
                      actor="wes").status == "applied"
    text, entries, audit = store.read("MEMORY.md"), stream_len(store), len(list(store.audit_records()))
    code, data = cli(capsys, redis_url, tmp_path, "revert", ids["approved_commit"])
    assert code != 0 and data["status"] == "conflict"
    assert "changed since in the same lines" in data["message"] and "Nothing was written" in data["message"]
    assert store.read("MEMORY.md") == text and stream_len(store) == entries
    records = list(store.audit_records())
    assert len(records) == audit + 1
    assert (records[-1]["action"], records[-1]["status"], records[-1]["reverts"]) == (
        "revert", "conflict", ids["approved_commit"])


def test_revert_on_redis_merges_past_later_unrelated_changes(redis_url, now):
    mem, store, ids = redis_day(redis_url, now)
    res = revert(mem, ids["approved_commit"], "wes")
    assert res.status == "applied", res.message
    text = mem.read_text("MEMORY.md") or ""
    assert "Prefers dark mode" not in text and "Lives in Porto" in text and "Public API uses tRPC" in text
    assert revert(mem, ids["approved_commit"], "wes").message.endswith("is already undone; nothing to change")
    assert revert(mem, "deadbeef", "wes").status == "refused"
    assert revert(mem, ids["approved_commit"], "agent").status == "refused"
    first = history(mem, "MEMORY.md")[-1].commit
    assert "it is the first commit" in revert(mem, first, "wes").message


def test_restore_on_redis_and_the_cli_commands(redis_url, tmp_path, now, capsys):
    mem, store, ids = redis_day(redis_url, now)
    code, data = cli(capsys, redis_url, tmp_path, "restore", "MEMORY.md", "--to", ids["approved_commit"])
    assert code == 0 and data["status"] == "applied", data
    assert store.read("MEMORY.md") == store.file_at("MEMORY.md", ids["approved_commit"])
    text = mem.read_text("MEMORY.md") or ""
    assert "Prefers dark mode" in text and "Lives in Porto" not in text
    last = list(store.audit_records())[-1]
    assert (last["action"], last["restored_from"], last["commit"]) == ("restore", ids["approved_commit"], data["commit"])
    assert store.change(data["commit"])["action"] == "restore"
    code, data = cli(capsys, redis_url, tmp_path, "restore", "people/ana.md", "--to", ids["approved_commit"])
    assert data["status"] == "refused" and "did not exist at" in data["message"]

    code, data = cli(capsys, redis_url, tmp_path, "history", "MEMORY.md")
    assert code == 0 and data["commits"][0]["action"] == "restore" and data["commits"][2]["proposal"] == ids["revised"]
    code, data = cli(capsys, redis_url, tmp_path, "blame", "MEMORY.md")
    assert code == 0 and any("Prefers dark mode" in b["text"] and b["commit"] == ids["approved_commit"]
                             for b in data["lines"])
    code, data = cli(capsys, redis_url, tmp_path, "revert", "nope")
    assert code == 3 and "no commit" in data["message"]
    # human output names a Redis change by its whole stream id (its first 8 characters are a shared timestamp)
    assert main(["history", "MEMORY.md", "--store", redis_url, "--root", str(tmp_path / "unused")]) == 0
    assert ids["revised_commit"] in capsys.readouterr().out and short(ids["revised_commit"]) == ids["revised_commit"]


def test_undo_on_an_empty_redis_memory_says_there_is_nothing(redis_url, tmp_path, capsys):
    code, data = cli(capsys, redis_url, tmp_path, "undo")
    assert data["status"] == "refused" and "no applied change" in data["message"]
    code, data = cli(capsys, redis_url, tmp_path, "revert", "1-0")
    assert code == 1 and "no recorded changes" in data["message"]


CASES = [
    # (ours, base, theirs): every line-level case the revert meets
    (b"a\nB\nc\nd\ne\n", b"a\nb\nc\nd\ne\n", b"a\nb\nc\nD\ne\n"),      # apart: both apply
    (b"a\nB\nc\nd\ne\n", b"a\nb\nc\nd\ne\n", b"a\nb\nC\nd\ne\n"),      # adjacent: conflict, as git says
    (b"a\nB\nc\nd\ne\n", b"a\nb\nc\nd\ne\n", b"a\nX\nc\nd\ne\n"),      # same line: conflict
    (b"a\nB\nc\nd\ne\n", b"a\nb\nc\nd\ne\n", b"a\nB\nc\nd\ne\n"),      # the same change on both sides
    (b"x\na\nb\nc\nd\ne\n", b"a\nb\nc\nd\ne\n", b"a\nb\nc\nd\ne\ny\n"),  # insertions at both ends
    (b"a\nb\nc\nd\ne", b"a\nb\nc\nd\ne\nf\n", b"a\nc\nd\ne\nf\n"),       # no newline at the end
]


@pytest.mark.parametrize("ours,base,theirs", CASES)
def test_the_pure_python_merge_agrees_with_git_merge_file(ours, base, theirs, tmp_path):
    paths = []
    for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
        (tmp_path / name).write_bytes(data)
        paths.append(str(tmp_path / name))
    git = subprocess.run(["git", "merge-file", "-p", "--quiet", *paths], capture_output=True)
    assert merge3(ours, base, theirs) == (git.stdout if git.returncode == 0 else None)
