"""The Store is the only way to the data: no code outside the stores asks what kind of store it has, and a folder
memory and a Redis memory (a real redis-server) holding the same files give the same search, viewer, tree,
history, today, lint and activity feed, through the same code."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from app_support import SIZE, wait_for
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)

from memtui.core.access.stores import init_store
from memtui.core.hygiene.lint import lint
from memtui.core.recall.search import search
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.init import init_root
from memtui.core.storage.redis_store import RedisStore
from memtui.core.storage.store import Store
from memtui.core.timeline.history import history
from memtui.core.timeline.today import today
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from memtui.tui.feed import AuditTail
from memtui.tui.tree import children
from memtui.tui.viewer import MemoryViewer

PACKAGE = Path(__file__).resolve().parent.parent / "memtui"
# The stores themselves: the only modules that know what kind of store they are.
STORE_MODULES = {"core/storage/store.py", "core/storage/folder.py", "core/storage/redis_store.py"}
# Type checks and lookups that are not a caller probing its store, each with why it stays.
ALLOWED = {
    ("core/storage/reading.py", "isinstance(root, Store)"): "MemoryReader(root) takes a folder path or a Store: "
    "argument types",
    ("commands/redis.py", "isinstance(store, RedisStore)"): "`memtui export/import` act on a Redis server itself",
    ("core/recall/next_session.py", "getattr(self._memory, name)"): "the memory as a proposal would leave it passes "
    "every other attribute to the memory it wraps: a proxy, not a probe",
}
# `memtui doctor` examines and repairs each store's own files (a folder's lock, git locks, temp files; a Redis
# memory's keys in an older layout): it is those stores' repair tool, not a reader of the memory.
ALLOWED_MODULES = {"core/hygiene/doctor.py"}


def _store_attributes() -> set[str]:
    names: set[str] = set()
    for cls in (Store, FolderStore, RedisStore):
        names |= {n for n in vars(cls) if not n.startswith("__")}
    return names | {"root", "base", "url", "prefix", "client", "cluster", "location", "store"}


def probes(package: Path = PACKAGE) -> list[str]:
    """Every getattr/hasattr on a store or memory (or naming a store attribute), and every isinstance or type()
    check against a Store class, outside the store modules."""
    attrs = _store_attributes()
    found = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel in STORE_MODULES or rel in ALLOWED_MODULES:
            continue
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or not node.args:
                continue
            call = ast.get_source_segment(source, node) or ""
            name = node.func.id
            if name in ("getattr", "hasattr") and len(node.args) >= 2:
                target = (ast.get_source_segment(source, node.args[0]) or "").lower()
                key = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
                on_store = "store" in target or "memory" in target
                # `args.root`, `args.store`: parsed command-line options, not a store
                option = target in ("args", "ns")
                if (on_store or (key in attrs and not option)) and (rel, call) not in ALLOWED:
                    found.append(f"{rel}:{node.lineno}: {call}")
            elif name == "isinstance" and len(node.args) == 2:
                kinds = ast.get_source_segment(source, node.args[1]) or ""
                if any(k.strip().endswith("Store") for k in kinds.strip("()").split(",")) \
                        and (rel, call) not in ALLOWED:
                    found.append(f"{rel}:{node.lineno}: {call}")
            elif name == "type" and "store" in (ast.get_source_segment(source, node.args[0]) or "").lower():
                found.append(f"{rel}:{node.lineno}: {call}")
    return found


def test_no_code_outside_the_stores_asks_what_kind_of_store_it_has() -> None:
    assert probes() == []


def test_the_probe_finder_finds_each_kind_of_probe(tmp_path: Path) -> None:
    """The test above can fail: the finder reports the probes this issue removed, written back into a module."""
    fake = tmp_path / "memtui"
    (fake / "tui").mkdir(parents=True)
    (fake / "tui" / "probe.py").write_text(
        "def f(store, memory, args):\n"
        "    a = getattr(store, 'root', None)\n"
        "    b = hasattr(memory, 'log_dir')\n"
        "    c = isinstance(memory.store, RedisStore)\n"
        "    d = isinstance(store, (FolderStore, int))\n"
        "    e = getattr(thing, 'audit_from', None)\n"
        "    ok = getattr(args, 'root', None) or getattr(args, 'json', False)\n"
        "    return type(store)\n", encoding="utf-8")
    found = probes(fake)
    assert [f.split(": ", 1)[0] for f in found] == [f"tui/probe.py:{n}" for n in (2, 3, 4, 5, 6, 8)]


# twins: the same files in a folder and in Redis ------------------------------------------------------------
FILES = {
    "MEMORY.md": "# Memory\n\n## Facts\n\n- [stated] Ana leads the API team (2026-08-10)\n"
                 "- [observed] The deploy runs on Fridays (2026-08-12)\n\n## Decisions\n\n"
                 "- [stated] Public API uses tRPC (2026-08-14)\n",
    "people/ana.md": "# Ana\n\n- [stated] Ana prefers written reviews (2026-08-11)\n",
    "projects/api/notes.md": "# API\n\n- [inferred] The API rollback takes ten minutes (2026-08-13)\n",
    "log/2026-08-20.md": "# 2026-08-20\n\n- 09:00 [observed] deploy rollback rehearsed\n",
}


@pytest.fixture
def twins(tmp_path: Path, redis_url: str, now, monkeypatch: pytest.MonkeyPatch) -> tuple[Memory, Memory]:
    """(folder memory, Redis memory), each given the same files by the same memtui writes at the same times."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    now("2026-08-19T18:00")
    root = tmp_path / "folder"
    init_root(root)
    folder = Memory(root)
    store = RedisStore(redis_url)
    init_store(store)
    redis = Memory(store)
    for mem in (folder, redis):
        now("2026-08-20T09:00")
        assert mem.create("people/ana.md", FILES["people/ana.md"], actor="wes").status == "applied"
        now("2026-08-20T09:10")
        assert mem.create("projects/api/notes.md", FILES["projects/api/notes.md"], actor="wes").status == "applied"
        now("2026-08-20T09:20")
        assert mem.create("log/2026-08-20.md", FILES["log/2026-08-20.md"], actor="wes").status == "applied"
        now("2026-08-20T09:30")
        old = mem.read_text("MEMORY.md") or ""
        assert mem.edit("MEMORY.md", old, FILES["MEMORY.md"], actor="wes").status == "applied"
        now("2026-08-20T10:00")
        # an agent's [stated] with no user words to back it is kept as [suggested] (memtui/core/writing/guard.py)
        assert mem.update("Facts", "add", "[stated] Ana moved to Porto", actor="agent").status == "queued"
        now("2026-08-20T10:05")
        [p] = mem.proposals(external=False)
        assert mem.approve(p.id, by="wes").status == "applied"
    now("2026-08-20T12:00")
    for rel in FILES:
        assert folder.read_text(rel) == redis.read_text(rel), rel
    return folder, redis


def test_search_goes_through_the_store_and_agrees(twins) -> None:
    folder, redis = twins
    for query in ("rollback", "ana", "api", "Porto", "zz-nothing", "de"):
        for kw in ({}, {"use_index": False}, {"path_glob": "projects"}, {"regex": True}):
            a, b = search(folder, query, limit=3, **kw).to_dict(), search(redis, query, limit=3, **kw).to_dict()
            assert a == b, (query, kw)
    assert search(redis, "rollback").results, "the Redis memory was searched"


def test_the_tree_lists_both_memories_the_same_through_the_store(twins) -> None:
    folder, redis = twins
    for rel in ("", "projects", "projects/api", "people", "log", "missing"):
        shown = children(folder.store, rel)
        # a folder on disk also shows its empty folders (`memtui init` makes scratch/); Redis has no folders
        empty = [e for e in shown if e.is_dir and not any(f.startswith(e.rel + "/") for f in folder.files())]
        assert [e for e in shown if e not in empty] == children(redis.store, rel), rel
    assert [e.rel for e in children(folder.store, "") if e.is_dir] == ["log", "people", "projects", "scratch"]
    assert [e.rel for e in children(redis.store, "")][:2] == ["MEMORY.md", "log"]


def test_history_and_today_are_the_same_on_both(twins) -> None:
    folder, redis = twins

    def commits(mem: Memory, rel: str) -> list[tuple]:
        return [(h.actor, h.proposal, h.approved_by, h.action, h.time) for h in history(mem, rel)]

    for rel in ("people/ana.md", "projects/api/notes.md"):
        assert commits(folder, rel) == commits(redis, rel) and commits(folder, rel)
    assert commits(folder, "MEMORY.md")[:-1] == commits(redis, "MEMORY.md")[:-1]  # all but the two inits

    def day(mem: Memory) -> list[tuple]:
        out = []
        for f in today(mem).files:
            for c in f.changes:
                changed = [ln for ln in (c.diff or "").splitlines()
                           if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
                out.append((f.file, c.time, c.actor, c.action, c.status, c.proposal, changed, c.line))
        return out

    assert day(folder) == day(redis)
    assert ("MEMORY.md", "2026-08-20T10:05:00", "agent", "add", "approved", "p-0001",
            ["+- [suggested] Ana moved to Porto (2026-08-20)"], 7) in day(redis)


def test_lint_finds_deleted_history_on_both(twins, now) -> None:
    """A line deleted instead of struck through is found from the store's past versions (git, or the stream)."""
    for mem in twins:
        text = mem.read_text("people/ana.md") or ""
        now("2026-08-20T11:00")
        assert mem.edit("people/ana.md", text, "# Ana\n", actor="wes").status == "applied"
    found = [[(f.check, f.file, f.message) for f in lint(mem) if f.check == "deleted-history"] for mem in twins]
    folder, redis = found
    assert len(folder) == 1 and "Ana prefers written reviews" in folder[0][2]
    assert [(c, f) for c, f, _ in redis] == [(c, f) for c, f, _ in folder]


def _records(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "commit"} for r in records]  # a git sha, or a stream id


def test_the_audit_tail_reads_the_same_records_from_both(twins, now) -> None:
    tails = [AuditTail(mem.store) for mem in twins]
    first = [_records(t.read_new(initial=True)) for t in tails]
    assert first[0] == first[1] == _records(list(twins[1].store.audit_records())) and len(first[0]) == 5
    assert [t.read_new() for t in tails] == [[], []]
    for mem in twins:
        now("2026-08-20T12:30")
        mem.update("Decisions", "add", "[stated] Releases are tagged", actor="wes")
    new = [_records(t.read_new()) for t in tails]
    assert new[0] == new[1] and [r["entry"] for r in new[0]] == ["[stated] Releases are tagged (2026-08-20)"]


def test_the_store_says_what_it_has_without_being_asked_its_type(twins) -> None:
    folder, redis = twins
    assert folder.store.local_root == Path(folder.location) and redis.store.local_root is None
    assert folder.store.has_git and not redis.store.has_git
    assert folder.store.keeps_history and redis.store.keeps_history
    assert folder.store.other_memories() == []
    for mem in twins:
        states = mem.store.file_states(["people/ana.md", "nothing.md"])
        assert list(states) == ["people/ana.md"] and states["people/ana.md"][1] == len(FILES["people/ana.md"])


async def test_the_viewer_shows_the_same_lines_read_through_either_store(twins) -> None:
    shown = []
    for mem in twins:
        app = MemtuiApp(memory=mem, watch=False)
        async with app.run_test(size=SIZE) as pilot:
            rels = ("MEMORY.md", "projects/api/notes.md")
            for rel in rels:
                app.open_file(rel)
                await wait_for(pilot, lambda: (v := app.viewer_for(rel)) is not None and v.state is not None,
                               what=f"{rel} in the viewer", timeout=20)
            viewers = [app.viewer_for(rel) for rel in rels]
            assert all(isinstance(v, MemoryViewer) for v in viewers)
            shown.append([(v.state.lines, v.state.missing, v.state.error) for v in viewers])  # type: ignore[union-attr]
            await pilot.pause()  # let the tab switches settle before the app closes
    assert shown[0] == shown[1]
    assert "- [suggested] Ana moved to Porto (2026-08-20)" in shown[0][0][0]


def test_memtui_index_builds_a_redis_memory_s_index_through_the_store(twins, tmp_path: Path, capsys) -> None:
    from memtui.cli import main

    folder, redis = twins
    url = redis.store.url  # type: ignore[attr-defined]
    assert main(["index", "--store", url, "--json"]) == 0
    built = json.loads(capsys.readouterr().out)
    assert main(["index", "--root", folder.location, "--json"]) == 0
    assert built == json.loads(capsys.readouterr().out)  # the same files, the same counts
    assert built["files"] == len(FILES) and built["added"] == len(FILES)
    assert main(["index", "--store", url, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["added"] == 0  # the second run finds nothing changed
    # `--watch` serves it (tests/test_search_socket_store.py)


def test_lint_sees_folders_and_missing_links_the_same_on_both(twins, now) -> None:
    for mem in twins:
        now("2026-08-20T11:30")
        old = mem.read_text("MEMORY.md") or ""
        links = "\nSee [api](projects/api), [notes](projects/api/notes.md) and [gone](nowhere/x.md).\n"
        assert mem.edit("MEMORY.md", old, old + links, actor="wes").status == "applied"
    dangling = [[(f.file, f.message) for f in lint(mem) if f.check == "dangling-link"] for mem in twins]
    assert dangling[0] == dangling[1] == [("MEMORY.md", "link to 'nowhere/x.md' points nowhere: fix the path or "
                                           "remove the line")]


class _NoFolder(FolderStore):
    """A store that keeps its files in a folder but does not say where: what any new store looks like to search."""

    @property
    def local_root(self) -> None:  # type: ignore[override]
        return None


def test_any_store_feeds_the_index_through_the_base_store_methods(twins) -> None:
    folder, _ = twins
    other = Memory(_NoFolder(folder.location))
    for query in ("rollback", "ana", "zz-nothing", "de"):
        for kw in ({}, {"use_index": False}, {"regex": True}):
            assert search(other, query, limit=3, **kw).to_dict() == search(folder, query, limit=3, **kw).to_dict()
    assert search(other, "rollback").method == "index"
    assert list((Path(folder.location).parent / "cache" / "memtui" / "index").glob("*/index.sqlite"))


def test_today_shows_the_diff_of_a_file_git_quotes_on_both(twins, now) -> None:
    """git quotes a non-ASCII path in a patch, so the split patch has no key for it: the store is asked for that
    file's diff alone (`Store.change_patch`)."""
    for mem in twins:
        now("2026-08-20T11:45")
        assert mem.create("people/zoë.md", "# Zoë\n\n- [stated] Zoë runs billing (2026-08-20)\n",
                          actor="wes").status == "applied"
    diffs = [[c.diff for f in today(mem).files if f.file == "people/zoë.md" for c in f.changes] for mem in twins]
    for found in diffs:
        assert len(found) == 1 and "+- [stated] Zoë runs billing (2026-08-20)" in (found[0] or "")
