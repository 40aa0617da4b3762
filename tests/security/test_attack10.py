"""Attacks on the changes of ab41db8..69c04a6 (the served search 15-29% faster, the lazy stylesheets, the import in
parts, MEMTUI_NOW checked): each test fails on 69c04a6."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import git
import pytest

from memtui.core import doctor, history
from memtui.core.init import init_root
from memtui.core.memory import Memory
from memtui.core.redis_store import RedisStore
from memtui.core.redis_transfer import export_memory, import_memory
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
    from memtui.core.folder import FolderStore

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
