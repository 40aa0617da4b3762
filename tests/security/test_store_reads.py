"""The viewer and the tree read through the Store, so they refuse what the store refuses: a symlink in the memory
that leads out of it (to a key, a password file) shows an error, not the file; a folder link that leads out is
not listed; and a Redis key whose name climbs or hides characters never becomes a tree entry."""

from __future__ import annotations

from pathlib import Path

from app_support import SIZE, wait_for
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)

from memtui.core.access.stores import init_store
from memtui.core.storage.init import init_root
from memtui.core.storage.redis_store import RedisStore
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from memtui.tui.tree import children

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- not for the viewer"


def leaky_folder(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "keys").mkdir(parents=True)
    (outside / "id_ed25519.md").write_text(SECRET + "\n")
    (outside / "keys" / "deploy.md").write_text(SECRET + "\n")
    root = tmp_path / "memory"
    init_root(root)
    (root / "leak.md").symlink_to(outside / "id_ed25519.md")
    (root / "linked").symlink_to(outside / "keys", target_is_directory=True)
    return root


async def test_the_viewer_shows_an_error_for_a_symlink_out_of_the_memory(tmp_path: Path) -> None:
    app = MemtuiApp(memory=Memory(leaky_folder(tmp_path)), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        app.open_file("leak.md")
        await wait_for(pilot, lambda: (v := app.viewer_for("leak.md")) is not None and v.state is not None,
                       what="leak.md in the viewer", timeout=20)
        state = app.viewer_for("leak.md").state  # type: ignore[union-attr]
        assert state is not None and state.error and "leaves the memory root" in state.error
        assert not any("PRIVATE KEY" in line for line in state.lines)
        await pilot.pause()


def test_the_tree_lists_no_folder_outside_the_memory(tmp_path: Path) -> None:
    store = Memory(leaky_folder(tmp_path)).store
    assert children(store, "linked") == []  # the link itself shows, but nothing beyond it is read
    for climbing in ("..", "../outside", "/etc", "linked/..", ".git", ".memtui"):
        assert children(store, climbing) == [], climbing
    assert "MEMORY.md" in [e.rel for e in children(store, "")]


def test_hostile_redis_key_names_never_reach_the_tree(redis_url: str) -> None:
    store = RedisStore(redis_url)
    init_store(store)
    head = f"{store.base}:file:"
    for name in ("../../etc/passwd.md", "/abs.md", "a/../../b.md", "bad\x1b[31m.md", "rtl\u202egnp.md",
                 ".git/config.md", "ok/fine.md"):
        store.client.set(head + name, SECRET.encode())
    shown = [e.rel for e in children(store, "")] + [e.rel for e in children(store, "ok")]
    assert shown == ["MEMORY.md", "ok", "ok/fine.md"]
    assert children(store, "..") == [] and children(store, "etc") == []
