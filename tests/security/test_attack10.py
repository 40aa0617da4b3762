"""Attacks on the changes of ab41db8..69c04a6 (the served search 15-29% faster, the lazy stylesheets, the import in
parts, MEMTUI_NOW checked): each test fails on 69c04a6."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import git
import pytest

from memtui.core.access.redis_transfer import export_memory, import_memory
from memtui.core.hygiene import doctor
from memtui.core.storage.init import init_root
from memtui.core.storage.redis_store import RedisStore
from memtui.core.timeline import history
from memtui.core.writing.memory import Memory
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)


def _files(root: Path) -> dict[str, bytes]:
    out = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith((".git/", ".memtui/")) and not p.name.startswith(".") \
                and rel != "memory-log.jsonl":
            out[rel] = p.read_bytes()
    return out


# redis import in parts -------------------------------------------------------------------------------------------
def test_a_commit_that_deletes_much_is_imported_in_parts_too(redis_url: str, tmp_path: Path) -> None:
    """A deleted file's whole text is in its change's diff (and read back with one MGET of what it replaces), but the
    parts counted only the bytes after the commit: a deletion weighed nothing, so `git rm -r` of a big folder was
    one call again, the one Redis refuses past 512 MB. Every part of several files must stay near `part_bytes`."""
    root = tmp_path / "memory"
    init_root(root)
    repo = git.Repo(root)
    (root / "notes").mkdir()
    for k in range(6):
        (root / "notes" / f"n{k}.md").write_text(("- [stated] fact " + "y" * 290 + "\n") * 10)
    repo.git.add("-A")
    repo.git.commit("-q", "-m", "six notes\n\nMemtui-Actor: ana")
    for k in range(3):
        (root / "notes" / f"n{k}.md").write_text(("- [stated] other " + "z" * 290 + "\n") * 10)
    repo.git.add("-A")
    repo.git.commit("-q", "-m", "rewrite three\n\nMemtui-Actor: ana")
    repo.git.rm("-q", "-r", "notes")
    repo.git.commit("-q", "-m", "drop notes\n\nMemtui-Actor: ana")
    store = RedisStore(redis_url)
    part_bytes = 8_000
    import_memory(root, store, part_bytes=part_bytes)
    for _sid, fields in store.changes():
        files = json.loads(fields["files"])
        if len(files) > 1:
            # the diff's own marks: a header per file, a "+" or "-" per line
            assert len(fields["diff"]) <= part_bytes + 200 * len(files), (fields["message"], len(fields["diff"]))
    assert {rel: store.read(rel) for rel in store.list_files("*")} == _files(root)
    assert store.external_changes() == []
    out = tmp_path / "exported"
    export_memory(store, out)
    assert _files(out) == _files(root)


def test_the_audit_lines_of_a_commit_in_parts_name_the_part_that_changed_their_file(
        redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent's scratch notes apply at once, and one sweep deletes them all in one commit with an audit line per
    note. Imported in parts, every audit line named the last part: the other parts' deletions showed in a file's
    history with no audit behind them, and the exported folder's doctor called them commits left by a crash (and
    would rebuild audit lines for them with --fix)."""
    root = tmp_path / "memory"
    init_root(root)
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    mem = Memory(root)
    for k in range(5):
        assert mem.scratch(f"note{k}", f"body {k}", ttl_minutes=30, actor="agent-x").status == "applied"
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T15:05")
    assert mem.sweep().status == "applied"
    store = RedisStore(redis_url)
    import_memory(root, store, part_files=2)
    changed = {sid: set(json.loads(fields["files"])) for sid, fields in store.changes()}
    sweeps = [sid for sid, fields in store.changes() if fields["message"].startswith("sweep:")]
    assert len(sweeps) == 3
    deletes = [r for r in store.audit_records() if r.get("action") == "delete"]
    assert len(deletes) == 5
    for rec in deletes:
        assert rec["file"] in changed[rec["commit"]], rec
    rm = Memory(store)
    for rec in deletes:
        [gone, made] = history.history(rm, rec["file"])
        assert gone.action == "delete" and made.action == "create"
    out = tmp_path / "exported"
    export_memory(store, out)
    found = [f.kind for f in doctor.diagnose(Memory(out)).findings]
    assert "unaudited-commit" not in found, found


def test_a_renamed_file_stays_in_one_part(redis_url: str, tmp_path: Path) -> None:
    """A rename is a deletion and an addition: cut between them, its audit line could name only one of the two
    parts. (Passes on 69c04a6, where a deletion weighed nothing; it guards the weighing of what a deletion removes,
    which without keeping the two together cuts a big file's rename in two.)"""
    root = tmp_path / "memory"
    init_root(root)
    repo = git.Repo(root)
    body = ("- [stated] fact " + "y" * 290 + "\n") * 10
    (root / "a.md").write_text(body)
    repo.git.add("-A")
    repo.git.commit("-q", "-m", "add a")
    repo.git.mv("a.md", "b.md")
    repo.git.commit("-q", "-m", "rename a\n\nMemtui-Actor: ana")
    store = RedisStore(redis_url)
    import_memory(root, store, part_bytes=len(body) + 10)
    [rename] = [fields for _sid, fields in store.changes() if fields["message"].startswith("rename a")]
    assert set(json.loads(rename["files"])) == {"a.md", "b.md"}
    assert {rel: store.read(rel) for rel in store.list_files("*")} == _files(root)


@pytest.mark.parametrize("replay", [True, False])
def test_a_file_deleted_during_the_import_is_not_counted_as_imported(
        redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replay: bool) -> None:
    """A file deleted between the folder's listing and its read is neither in Redis nor in the folder (with
    history, its deletion shows as an outside change, as in the folder), but the import counted it as imported."""
    from memtui.core.storage.folder import FolderStore

    root = tmp_path / "memory"
    init_root(root)
    (root / "a.md").write_text("# a\n")
    (root / "b.md").write_text("# b\n")
    repo = git.Repo(root)
    repo.git.add("-A")
    repo.git.commit("-q", "-m", "two notes")
    real = FolderStore.read

    def read(self: FolderStore, rel: str) -> bytes | None:
        if rel == "a.md":
            (root / "a.md").unlink(missing_ok=True)  # another process deletes it just before it is read
        return real(self, rel)

    monkeypatch.setattr(FolderStore, "read", read)
    store = RedisStore(redis_url)
    done = import_memory(root, store, history=replay)
    assert {rel: store.read(rel) for rel in store.list_files("*")} == _files(root)
    assert done.files == len(_files(root)) == 2 and f"and {done.files} file(s)" in done.message


# MEMTUI_NOW ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("now", "argv"), [
    # fromisoformat takes an offset, and the first comparison with a local time raised (naive against aware)
    ("2026-08-20T14:05+05:00", ["today"]),
    # ISO times memtui cannot date: context's days before year 1, a scratch note's expiry after 9999-12-31
    ("0001-01-01T00:00", ["context"]),
    ("9999-12-31T23:59", ["scratch", "n1"]),
])
def test_a_memtui_now_memtui_cannot_run_on_is_a_usage_error_not_a_traceback(tmp_path: Path, now: str,
                                                                            argv: list[str]) -> None:
    """`datetime.fromisoformat` takes these, so the check let them through, and the command raised."""
    root = tmp_path / "m"
    init_root(root)
    env = {"MEMTUI_NOW": now, "MEMTUI_ROOT": str(root), "PATH": "/usr/bin:/bin",
           "HOME": str(tmp_path), "MEMTUI_USER": "wes", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    r = subprocess.run([sys.executable, "-m", "memtui", *argv], env=env, capture_output=True, text=True,
                       timeout=60, input="body\n")
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 2 and "MEMTUI_NOW=" in r.stderr, (r.returncode, r.stderr)


# ==================================================================================================================
# Attacks on a0534d4 (recurrence signals sealed) and 22c02d8 (converting attributes: blobs by git hash-object).
# ==================================================================================================================
import os  # noqa: E402

from memtui.core.storage.folder import FolderStore  # noqa: E402
from memtui.core.storage.store import StoreError  # noqa: E402
from memtui.core.writing import recurrence  # noqa: E402

AGENT = "agent:claude"
LESSON = "[inferred] Prefers answers in German"


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The person's state folder (the HMAC key), outside the memory root and out of the agent's reach."""
    s = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(s))
    return s


def _qfile(mem: Memory, pid: str) -> Path:
    return mem.store.queue_dir / f"{pid}.json"


def _candidate(root: Path, now, days=("2026-08-20",), lesson: str = LESSON):
    mem = Memory(root)
    r = None
    for day in days:
        now(f"{day}T10:00")
        r = mem.update("Preferences", "add", lesson, actor=AGENT)
    assert r is not None and r.status == "queued", r
    return mem, r


def _confirmed(mem: Memory, pid: str):
    [line] = [a for a in mem.store.audit_records() if a["status"] == "applied" and a["proposal"] == pid]
    return line.get("confirmed")


def test_a_gate_met_flag_written_into_a_queue_file_is_not_what_the_person_is_shown(
        root: Path, now, state: Path) -> None:
    """Broke before the fix: the candidate flag was read verbatim from the queue file, so an agent wrote
    "candidate: 3 of 3 … (gate met)" on a 1-signal candidate (and on a proposal with no signals at all) and the
    review panel said "(enough to stand)". The flag is now counted again from the sealed signals on every read."""
    from memtui.tui.for_people import for_person

    mem, r = _candidate(root, now)
    other = mem.update("Preferences", "add", "[stated] Lives in Porto", actor=AGENT)
    assert other.status == "queued"
    forged = "candidate: 3 of 3 signals across 2 of 2 sessions (gate met)"
    for pid in (r.id, other.id):
        q = _qfile(mem, pid)
        data = json.loads(q.read_text())
        data["flags"] = [forged]
        q.write_text(json.dumps(data))
    again = Memory(root)
    assert again.get(r.id).flags == ["candidate: 1 of 3 signals across 1 of 2 sessions"]
    assert again.get(other.id).flags == []
    listed = {p.id: p.flags for p in again.proposals(external=False)}
    assert not any("enough to stand" in for_person(f) for fs in listed.values() for f in fs)
    # Since queue files are sealed, a rewritten one is not memtui's: not listed, and never approved.
    assert r.id not in listed and other.id not in listed
    assert sum(pid in problem for problem in again.queue_problems for pid in (r.id, other.id)) == 2
    assert again.approve(r.id, by="wes").status == "refused"


def test_a_queue_file_of_many_forged_signals_is_checked_with_the_key_read_once(
        root: Path, now, state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Broke before the fix: `counted` read the key file and parsed the candidate's lessons again for every
    signal, so 100k forged signals (a 16 MB queue file, 0.13 s to load) took 7.5 s in every tally (listing,
    `memtui candidates`, approval). Now one key read and one lesson parse per tally; none of them counts."""
    from memtui.core.basics import seal

    mem, r = _candidate(root, now)
    q = _qfile(mem, r.id)
    data = json.loads(q.read_text())
    [mine] = data["signals"]
    data["signals"] = [mine] + [{**mine, "session": f"day:2026-07-{k % 28 + 1:02d}", "seal": "0" * 64}
                                for k in range(5000)]
    q.write_text(json.dumps(data))
    p = Memory(root).get(r.id)
    reads = []
    real_key, real_lessons = seal._key, recurrence.lessons
    monkeypatch.setattr(seal, "_key", lambda: reads.append(1) or real_key())
    parses = []
    monkeypatch.setattr(recurrence, "lessons", lambda *a, **k: parses.append(1) or real_lessons(*a, **k))
    t = recurrence.tally(p)
    assert (t.signals, t.sessions) == (1, 1)
    assert len(reads) <= 1 and len(parses) <= 1, (len(reads), len(parses))


@pytest.mark.parametrize("hostile", [
    {"seal": 7}, {"seal": ["x"]}, {"seal": None}, {"seal": {"a": 1}}, {"ts": ["2026"], "session": {"a": [1]}},
    {"ts": 1e308, "session": None, "actor": 3, "named": []},
])
def test_hostile_signal_values_are_read_without_a_crash(root: Path, now, state: Path, hostile: dict) -> None:
    """Held: a sealed signal given a seal of the wrong type, or sessions/ts of any JSON type, counts nothing and
    crashes neither the tally, the flag, `memtui candidates --json`, nor the approval."""
    mem, r = _candidate(root, now)
    q = _qfile(mem, r.id)
    data = json.loads(q.read_text())
    [mine] = data["signals"]
    data["signals"].append({**mine, **hostile})
    q.write_text(json.dumps(data))
    again = Memory(root)
    p = again.get(r.id)
    assert (recurrence.tally(p).signals, p.flags) == (1, ["candidate: 1 of 3 signals across 1 of 2 sessions"])
    done = subprocess.run([sys.executable, "-m", "memtui", "candidates", "--json", "--root", str(root)],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == 0, done.stderr
    # A rewritten queue file is not memtui's: no candidate, and never approved.
    assert json.loads(done.stdout)["candidates"] == []
    assert again.approve(r.id, by="wes").status == "refused"


@pytest.mark.parametrize("change", ["entry: another lesson", "created", "entry: case only", "section"])
def test_a_met_candidate_edited_by_hand_keeps_its_seals_only_for_the_same_lesson(
        root: Path, now, state: Path, change: str) -> None:
    """Held: three real sessions met the gate; the agent then edits the candidate's queue file. Another lesson or
    another `created` voids every seal (the approval records the person's confirmation); a case-only change of the
    same lesson keeps them (the seal covers the casefolded lesson: same lesson); a moved section keeps them but the
    approval is refused (what it would write is not the diff that was shown)."""
    mem, r = _candidate(root, now, days=("2026-08-18", "2026-08-19", "2026-08-20"))
    assert "(gate met)" in r.message
    q = _qfile(mem, r.id)
    data = json.loads(q.read_text())
    if change == "entry: another lesson":
        data["entry"] = "[inferred] Prefers answers in French"
    elif change == "created":
        data["created"] = "2026-08-01T09:00:00"
    elif change == "entry: case only":
        data["entry"] = data["entry"].upper().replace("[INFERRED]", "[inferred]")
    else:
        data["section"] = "Facts"
    q.write_text(json.dumps(data))
    again = Memory(root)
    t = recurrence.tally(again.get(r.id))
    done = again.approve(r.id, by="wes")
    if change in ("entry: another lesson", "created"):
        assert t.signals == 0 and not t.met, t
        if done.status == "applied":
            assert _confirmed(again, r.id)["by"] == "wes"
    elif change == "entry: case only":
        assert t.met  # the same lesson: what is approved is still what the diff shows, or refused
        assert done.status != "applied" or "PREFERS ANSWERS" in (root / "MEMORY.md").read_text(), done.message
    else:
        assert t.met and done.status != "applied", done.message


def test_a_candidate_copied_under_a_new_id_adds_no_signal_to_either(root: Path, now, state: Path) -> None:
    """Held: the whole queue file copied as p-0099 verifies there (the seal does not name the id) but each copy
    keeps its own one signal, a later real signal joins only the first, and neither meets the gate sooner."""
    mem, r = _candidate(root, now)
    q = _qfile(mem, r.id)
    data = json.loads(q.read_text())
    data["id"] = "p-0099"
    (q.parent / "p-0099.json").write_text(json.dumps(data))
    now("2026-08-21T10:00")
    r2 = Memory(root).update("Preferences", "add", LESSON, actor=AGENT)
    again = Memory(root)
    tallies = {pid: recurrence.tally(again.get(pid)) for pid in (r.id, "p-0099")}
    assert r2.id == r.id and tallies[r.id].sessions == 2 and tallies["p-0099"].sessions == 1, tallies
    assert not any(t.met for t in tallies.values())


def test_a_rejected_candidate_set_back_to_pending_by_hand_stays_rejected(root: Path, now, state: Path) -> None:
    """Tried: reject a gate-met candidate, then flip its queue file's status back to pending."""
    mem, r = _candidate(root, now, days=("2026-08-18", "2026-08-19", "2026-08-20"))
    assert mem.reject(r.id, by="wes", reason="no").status == "rejected"
    q = _qfile(mem, r.id)
    data = json.loads(q.read_text())
    data.update(status="pending", decided_by=None, decided_at=None)
    q.write_text(json.dumps(data))
    assert r.id not in {p.id for p in Memory(root).proposals(external=False)}


# --- converting attributes (22c02d8) -------------------------------------------------------------------------
def _sh(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True).stdout


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "m"
    root.mkdir()
    _sh(root, "init", "-q", "-b", "main")
    (root / "MEMORY.md").write_bytes(b"# m\n")
    _sh(root, "add", ".")
    _sh(root, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qm", "i")
    return root


def _status(root: Path) -> str:
    return "".join(line + "\n" for line in _sh(root, "status", "--porcelain").decode().splitlines()
                   if line != "?? .memtui/")


def _commit(root: Path, rel: str, data: bytes) -> bytes:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(data)
    FolderStore(root).commit([rel], "w", "wes")
    return _sh(root, "cat-file", "blob", f"HEAD:{rel}")


@pytest.mark.parametrize("attrs", ["* working-tree-encoding=UTF-16LE\n", "*.md working-tree-encoding=UTF-32LE\n"])
def test_a_planted_working_tree_encoding_never_commits_other_text_than_approved(tmp_path: Path, attrs: str) -> None:
    """Broke before the fix: an untracked .gitattributes an agent planted made hash-object re-encode the approved
    UTF-8 text, and memtui committed '‣੭敨汬੯' for '# m\\nhello\\n'. Now git's blob is taken only when it differs
    from the bytes in line endings or an $Id$; otherwise the bytes themselves are committed."""
    root = _repo(tmp_path)
    (root / ".gitattributes").write_text(attrs)
    assert _commit(root, "MEMORY.md", b"# m\nhello\n") == b"# m\nhello\n"


def test_a_filter_driver_in_the_persons_global_config_never_runs_for_a_planted_attribute(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Broke before the fix: only the repository's own (--local) filter drivers were switched off, so a planted
    `* filter=g` ran the person's global driver (git-lfs's would store a pointer) and memtui committed what it
    printed (here the text upper-cased). Now the driver the attributes name is switched off for hash-object."""
    ran = tmp_path / "ran"
    cfg = tmp_path / "gitconfig"
    cfg.write_text(f'[filter "g"]\n\tclean = "touch {ran}; tr a-z A-Z"\n\trequired = true\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    root = _repo(tmp_path)
    (root / ".gitattributes").write_text("* filter=g\n")
    assert _commit(root, "MEMORY.md", b"# m\nhello\n") == b"# m\nhello\n"
    assert not ran.exists()


def test_a_bogus_working_tree_encoding_does_not_block_every_commit(root: Path, tmp_path: Path) -> None:
    """Broke before the fix: a planted `* working-tree-encoding=BOGUS` made hash-object fail, so every write of
    every file was refused ("failed to encode") until a person found the file. Now the approved bytes commit."""
    (root / ".gitattributes").write_text("* working-tree-encoding=BOGUS-ENC\n")
    mem = Memory(root)
    r = mem.update("Facts", "add", "[stated] Ships on Fridays", actor=AGENT)
    done = mem.approve(r.id, by="wes") if r.status == "queued" else r
    assert done.status == "applied", done.message
    assert b"Ships on Fridays" in _sh(root, "cat-file", "blob", "HEAD:MEMORY.md")


def test_a_fifo_attributes_file_in_a_subfolder_does_not_stall_commits_under_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Broke before the fix: with any converting attribute above it (`* text` in the root), a FIFO planted as
    sub/.gitattributes made git (hash-object) block opening it until memtui's time limit, for every commit under
    sub/. Now a FIFO anywhere among the attributes files means git is not asked (the bytes are stored)."""
    import time

    monkeypatch.setenv("MEMTUI_GIT_TIMEOUT", "5")
    root = _repo(tmp_path)
    (root / ".gitattributes").write_text("* text\n")
    (root / "sub").mkdir()
    os.mkfifo(root / "sub" / ".gitattributes")
    t = time.monotonic()
    assert _commit(root, "sub/a.md", b"a\n") == b"a\n"
    assert time.monotonic() - t < 4


@pytest.mark.parametrize("rel", ["-x/--help.md", "a b/\u00fc c.md", "--path=evil.md", "d/-.md"])
def test_a_path_under_text_auto_commits_exactly_and_git_status_stays_clean(tmp_path: Path, rel: str) -> None:
    """Held: names that could read as options to `hash-object --path=` (leading dashes, '--path='), spaces and
    non-ASCII, under a committed `* text=auto`: CRLF stored as LF, as git add does, and git status clean."""
    root = _repo(tmp_path)
    (root / ".gitattributes").write_text("* text=auto\n")
    _sh(root, "add", ".gitattributes")
    _sh(root, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qm", "a")
    assert _commit(root, rel, b"one\r\ntwo\r\n") == b"one\ntwo\n"
    assert _status(root) == ""


def test_a_committed_ident_attribute_still_stores_what_git_add_does(tmp_path: Path) -> None:
    """Held (kept by the fix): a person's committed `*.md ident` collapses $Id: …$ as git add does."""
    root = _repo(tmp_path)
    (root / ".gitattributes").write_text("*.md ident\n")
    _sh(root, "add", ".gitattributes")
    _sh(root, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qm", "a")
    assert _commit(root, "a.md", b"x $Id: abc $\r\n") == b"x $Id$\r\n"
    assert _status(root) == ""


@pytest.mark.parametrize("name", [".gitattributes", "notes/.gitattributes", "notes/.GitAttributes"])
def test_an_agent_cannot_propose_a_gitattributes_file(mem: Memory, name: str) -> None:
    """Held: a write that creates an attributes file is refused before it is queued."""
    r = mem.create(name, "* working-tree-encoding=UTF-16LE\n", actor=AGENT)
    assert r.status == "refused" and not (mem.store.root / name).exists(), r.message


def test_on_redis_a_forged_signal_or_flag_in_a_queue_entry_counts_nothing(redis_url: str, now, state: Path) -> None:
    """Held (Redis store): signals written into a queue entry by anyone with the store's URL, and a "(gate met)"
    flag, are counted from the seals as on a folder: one real session, flag recounted, approval a confirmation."""
    from memtui.core.access.stores import init_store

    store = RedisStore(redis_url)
    init_store(store, author="wes")
    mem = Memory(store)
    now("2026-08-20T10:00")
    r = mem.update("Preferences", "add", LESSON, actor=AGENT)
    assert r.status == "queued", r.message
    data = json.loads(store.queue_load(r.id))
    [mine] = data["signals"]
    data["signals"] += [{**mine, "ts": f"2026-08-{d}T10:00:00", "session": f"day:2026-08-{d}"} for d in (18, 19)]
    data["flags"] = ["candidate: 3 of 3 signals across 3 of 2 sessions (gate met)"]
    store.queue_save(r.id, json.dumps(data).encode())
    again = Memory(RedisStore(redis_url))
    p = again.get(r.id)
    assert recurrence.tally(p).sessions == 1 and p.flags == ["candidate: 1 of 3 signals across 1 of 2 sessions"]
    # The queue entry is sealed too: rewritten by another client, it is not memtui's, and never approved.
    assert p.foreign is not None and r.id not in {q.id for q in again.proposals(external=False)}
    assert again.approve(r.id, by="wes").status == "refused"
    assert not [a for a in again.store.audit_records() if a["status"] == "applied" and a["proposal"] == r.id]
