"""Export (Redis -> git folder, one commit per recorded change) and import (folder -> Redis) round trips."""

from __future__ import annotations

from pathlib import Path

import git

from memtui.cli import main
from memtui.core.access.redis_transfer import export_memory, import_memory
from memtui.core.access.stores import init_store
from memtui.core.storage.init import init_root
from memtui.core.storage.redis_store import RedisStore
from memtui.core.writing.memory import Memory
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)


def _files(root: Path) -> dict[str, bytes]:
    out = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith((".git/", ".memtui/")) and rel not in (".gitignore", "memory-log.jsonl"):
            out[rel] = p.read_bytes()
    return out


def _redis_files(store: RedisStore) -> dict[str, bytes]:
    return {rel: store.read(rel) for rel in store.list_files("*")}


def _busy_memory(url: str) -> RedisStore:
    store = RedisStore(url)
    init_store(store, author="wes")
    mem = Memory(store)
    mem.update("Preferences", "add", "[stated] Prefers dark mode")
    mem.update("Preferences", "revise", "[stated] Prefers light mode", replaces="dark mode")
    mem.create("people/ana.md", "# Ana\n\n- [stated] Leads the API team ünïcode\n")
    q = mem.update("Facts", "add", "[observed] Deploys on Fridays", actor="agent-claude")
    mem.approve(q.id, by="wes")
    mem.create("old.md", "# old\n")
    d = mem.delete("old.md")
    mem.approve(d.id, by="wes")
    mem.log("shipped v2")
    return store


def test_export_writes_one_commit_per_change_and_import_brings_it_back(redis_url: str, tmp_path: Path) -> None:
    store = _busy_memory(redis_url)
    changes = store.changes()
    out = tmp_path / "exported"
    assert main(["export", "--store", redis_url, "--to", str(out)]) == 0
    repo = git.Repo(out)
    commits = list(repo.iter_commits("HEAD", reverse=True))
    assert len(commits) == len(changes) == 8
    assert [c.message for c in commits] == [f["message"] for _, f in changes]
    assert [c.author.name for c in commits] == [f["actor"] for _, f in changes]
    assert "agent-claude" in [c.author.name for c in commits]
    assert _files(out) == _redis_files(store)
    assert not repo.is_dirty(untracked_files=True)
    # The folder is a memory memtui opens as it is: audit lines point at the new commits.
    folder = Memory(out)
    shas = {c.hexsha for c in commits}
    assert all(r["commit"] in shas for r in folder.store.audit_records() if r.get("commit"))
    assert folder.proposals() == [] and "[review]" in (folder.store.config_text() or "")

    back_url = redis_url.replace("prefix=", "prefix=back-")
    assert main(["import", str(out), "--store", back_url]) == 0
    back = RedisStore(back_url)
    assert _redis_files(back) == _redis_files(store)
    assert [(f["actor"], f["message"], f["after"]) for _, f in back.changes()] == \
        [(f["actor"], f["message"], f["after"]) for _, f in changes]
    assert back.external_changes() == [] and len(list(back.audit_records())) == len(list(store.audit_records()))
    again = tmp_path / "again"
    export_memory(back, again)
    assert _files(again) == _files(out)
    assert [c.message for c in git.Repo(again).iter_commits("HEAD")] == [c.message for c in repo.iter_commits("HEAD")]


def test_outside_changes_stay_outside_changes_both_ways(redis_url: str, tmp_path: Path) -> None:
    store = _busy_memory(redis_url)
    store.client.set(store.key("people/ana.md"), b"# Ana\n\nhand edit\n")
    out = tmp_path / "exported"
    export_memory(store, out)
    assert [c.path for c in Memory(out).store.external_changes()] == ["people/ana.md"]
    back = RedisStore(redis_url.replace("prefix=", "prefix=back-"))
    import_memory(out, back)
    assert [(c.path, c.after) for c in back.external_changes()] == [("people/ana.md", b"# Ana\n\nhand edit\n")]


def test_importing_a_folder_memory_replays_its_git_history(redis_url: str, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    init_root(root)
    mem = Memory(root)
    for fact in ("Uses Postgres", "Ships on Tuesdays", "Has two cats"):
        assert mem.update("Facts", "add", f"[stated] {fact}").status == "applied"
    store = RedisStore(redis_url)
    res = import_memory(root, store)
    commits = list(git.Repo(root).iter_commits("HEAD"))
    assert res.changes == len(commits) == 4
    assert store.read("MEMORY.md") == (root / "MEMORY.md").read_bytes()
    assert [c.author for c in store.history()] == [c.author.name for c in commits]
    again = import_memory  # a second import into the same memory is refused, saying what to do
    try:
        again(root, store)
    except Exception as exc:  # noqa: BLE001
        assert "already holds a memory" in str(exc)
    else:
        raise AssertionError("import into a non-empty memory was not refused")


def test_a_commit_too_big_for_one_call_is_imported_in_parts(redis_url: str, tmp_path: Path) -> None:
    """A folder's first commit holds every file: recorded as one call it hit Redis's 512 MB bulk limit and the
    client's 5 s read at 100,000 files. It is recorded in parts, every file there, its history readable."""
    root = tmp_path / "memory"
    init_root(root)
    for k in range(7):
        (root / "notes").mkdir(exist_ok=True)
        (root / "notes" / f"n{k}.md").write_text(f"# Note {k}\n\n- [stated] fact {k} " + "x" * 400 + "\n")
    repo = git.Repo(root)
    repo.git.add("-A")
    repo.git.commit("-q", "-m", "seven notes\n\nMemtui-Actor: ana")
    memory_files = {rel: data for rel, data in _files(root).items() if not rel.rsplit("/", 1)[-1].startswith(".")}
    assert len(memory_files) == 8
    store = RedisStore(redis_url)
    import_memory(root, store, part_files=3)
    assert _redis_files(store) == memory_files
    subjects = [c.message.splitlines()[0] for c in store.history()]
    parts = [s for s in subjects if s.startswith("seven notes")]
    assert parts == [f"seven notes (part {k} of 3)" for k in (3, 2, 1)] or \
        parts == [f"seven notes (part {k} of 3)" for k in (1, 2, 3)]
    assert {c.author for c in store.history() if c.message.startswith("seven notes")} == {repo.head.commit.author.name}
    assert store.external_changes() == []

    flat = RedisStore(redis_url.replace("prefix=", "prefix=flat-"))
    import_memory(root, flat, history=False, part_bytes=1_000)
    assert _redis_files(flat) == memory_files
    imports = [c.message for c in flat.history() if c.message.startswith("import ")]
    assert len(imports) >= 3 and all("(part " in m.splitlines()[0] and m.rstrip().endswith("Memtui-Actor: memtui")
                                     for m in imports)
    assert flat.external_changes() == []
    out = tmp_path / "exported"
    export_memory(flat, out)
    assert {rel: data for rel, data in _files(out).items() if not rel.rsplit("/", 1)[-1].startswith(".")} \
        == memory_files
