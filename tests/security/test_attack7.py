"""Attacks on today's caches: the kept git objects (memtui/core/storage/gitobjects.py) and the kept path checks
(memtui/core/grammar/paths.py). What is measured is the memory each really holds (its entries' sizes, or tracemalloc),
not the cache's own count."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from app_support import demo_template  # noqa: F401 (fixture)
from memtui.core.grammar import paths
from memtui.core.grammar.paths import check_rel, clean_rel
from memtui.core.storage import gitobjects

TINY = 20_000


def git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", str(root), *args], input=stdin, check=True, capture_output=True).stdout


def tiny_repo(root: Path) -> list[tuple[str, bytes]]:
    """A repository of 20,000 distinct blobs of a few bytes each, in one pack as fast-import writes it."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    stream = [b"blob\nmark :%d\ndata %d\n%d\n" % (k + 1, len(b"%d" % k), k) for k in range(TINY)]
    stream.append(b"commit refs/heads/main\ncommitter t <t@t> 0 +0000\ndata 1\nx\n")
    stream += [b"M 100644 :%d f%d.md\n" % (k + 1, k) for k in range(TINY)]
    git(root, "fast-import", "--quiet", stdin=b"".join(stream))
    listed = git(root, "ls-tree", "-z", "HEAD").split(b"\0")
    blobs = {item.split(b"\t")[1].decode(): item.split(b" ")[2].split(b"\t")[0].decode() for item in listed if item}
    return [(blobs[f"f{k}.md"], b"%d" % k) for k in range(TINY)]


@pytest.fixture(scope="module")
def tiny_objects(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str, bytes]]]:
    """`tiny_repo`'s objects loose, as git unpacks them."""
    root = tmp_path_factory.mktemp("tiny") / "memory"
    blobs = tiny_repo(root)
    pack = next((root / ".git/objects/pack").glob("*.pack"))
    data = pack.read_bytes()
    for f in (root / ".git/objects/pack").iterdir():
        f.unlink()
    git(root, "unpack-objects", "-q", stdin=data)
    return root, blobs


def read_every(root: Path, blobs: list[tuple[str, bytes]]) -> gitobjects.Batch:
    """A Batch on `root` that has read each of `blobs` by its sha, each read checked."""
    batch = gitobjects.Batch(root / ".git", root)
    for sha, data in blobs:
        got = batch.get(sha)
        assert got is not None and got.data == data
    return batch


def test_tiny_objects_cannot_hold_many_times_the_object_cache_s_bound(
        tiny_objects: tuple[Path, list[tuple[str, bytes]]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: the cache counted only each object's bytes. 20,000 objects of ~4 bytes counted 90 KB and held 5.3 MB
    (~260 bytes each: the sha, the kind, the tuple, the bytes' header): at the 4 MB bound, objects of a few bytes
    each (a memory of one-line files) could hold ~250 MB. What is kept, counted as it costs, stays under the bound."""
    root, blobs = tiny_objects
    bound = 256 << 10
    monkeypatch.setattr(gitobjects, "OBJECT_CACHE_BYTES", bound)
    batch = read_every(root, blobs)
    try:
        held = sys.getsizeof(batch._objs) + sum(
            sys.getsizeof(sha) + sys.getsizeof(obj) + sys.getsizeof(obj.kind) + sys.getsizeof(obj.data)
            for sha, obj in batch._objs.items())
        assert batch._objs_bytes <= bound
        assert held <= bound, f"{len(batch._objs)} kept objects hold {held:,} bytes; the bound is {bound:,}"
        assert batch.get(blobs[0][0]).data == blobs[0][1]  # and what is read after a clear is right
    finally:
        batch.close()


def test_tiny_packed_objects_cannot_hold_many_times_the_pack_reader_s_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same in the pack reader's cache of whole objects and delta bases (memtui/core/storage/gitpack.py, 16 MB): it
    counted bytes alone too, so 20,000 packed objects of ~4 bytes counted 90 KB and held ~5 MB; at its bound,
    objects of a few bytes could hold ~800 MB. What it keeps, counted as it costs, stays under the bound."""
    from memtui.core.storage import gitpack

    root = tmp_path / "memory"
    blobs = tiny_repo(root)
    bound = 256 << 10
    monkeypatch.setattr(gitpack, "CACHE_BYTES", bound)
    batch = read_every(root, blobs)
    try:
        made = batch._packs.made
        held = sys.getsizeof(made) + sum(
            sys.getsizeof(key) + sum(map(sys.getsizeof, key)) + sys.getsizeof(kept) + sys.getsizeof(kept[1])
            for key, kept in made.items())
        assert held <= bound, f"{len(made)} kept pack objects hold {held:,} bytes; the bound is {bound:,}"
    finally:
        batch.close()


def test_paths_an_agent_sends_cannot_pin_tens_of_megabytes_in_the_path_cache() -> None:
    """Was: every path up to 1,024 characters that passed was kept, 4,096 in each of the two caches, key and answer:
    8,192 distinct paths of 1,024 emoji (4 bytes each, allowed in names), sent by an agent as reads of files that
    need not exist, pinned ~50 MB for the life of the process (the MCP server, the app); 512 of them (here, to keep
    the test short) ~6 MB. A long path is now checked uncached."""
    clean_cache = paths._clean_cached
    check_cache = paths._check_cached
    clean_cache.cache_clear()
    check_cache.cache_clear()
    emoji = "\U0001F600"
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for k in range(512):
            rel = "/".join([emoji * 250 + "%05d" % k, emoji * 255, emoji * 255, emoji * 200 + ".md"])
            assert len(rel) <= paths.MAX_PATH
            assert check_rel(rel) == rel and clean_rel(rel) == rel
        del rel
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        clean_cache.cache_clear()
        check_cache.cache_clear()
    assert held <= 256 << 10, f"the path checks keep {held:,} bytes"


def test_short_paths_are_still_kept_and_refusals_still_raised() -> None:
    """The cache still answers a memory's ordinary paths (it is there for speed) and never keeps a refusal."""
    paths._check_cached.cache_clear()
    for _ in range(3):
        assert check_rel("notes/topic.md") == "notes/topic.md"
        with pytest.raises(paths.PathRefused):
            check_rel("notes/../../x")
    info = paths._check_cached.cache_info()
    assert info.hits >= 2 and info.currsize == 1


# --- the app's decisions under way (memtui/tui/deciding.py `under_way`): none is left stuck ---------------------------

@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    from app_support import demo_root

    return demo_root(tmp_path, monkeypatch, demo_template)


async def test_no_proposal_is_left_under_way_by_a_dismissed_dialog_or_an_approve_all_partly_refused(
        demo: Path) -> None:
    """A reject dialog dismissed (escape; enter with no reason, then escape) leaves nothing under way; an approve-all
    one of whose proposals a person rejected meanwhile from the command line (so core refuses it) leaves nothing
    under way either: every proposal can be decided again, and the rejected one is not applied."""
    import json

    from app_support import SIZE, settled, wait_for
    from memtui.tui.app import MemtuiApp
    from memtui.tui.dialogs import ConfirmScreen, RejectScreen

    def status(pid: str) -> str:
        return json.loads((demo / ".memtui/queue" / f"{pid}.json").read_text())["status"]

    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        assert app.review.selected.id == "p-0001"
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, RejectScreen), what="the reject dialog")
        await pilot.press("escape")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, RejectScreen), what="the reject dialog again")
        await pilot.press("enter")  # no reason: the dialog stays and says so
        await pilot.pause(0.1)
        assert isinstance(app.screen, RejectScreen)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, RejectScreen), what="the dialog to go")
        assert not app.deciding.under_way and status("p-0001") == "pending"
        pending = [p.id for p in app.review.proposals if p.status == "pending" and not p.external]
        assert "p-0002" in pending and len(pending) >= 3
        done = subprocess.run([sys.executable, "-m", "memtui", "queue", "reject", "p-0002", "--root", str(demo),
                               "--reason", "not this one"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirm dialog")
        await pilot.press("y")
        await wait_for(pilot, lambda: all(status(pid) != "pending" for pid in pending) and not app.deciding.under_way,
                       what="approve-all to finish")
        assert status("p-0002") == "rejected"
        assert all(status(pid) == "applied" for pid in pending if pid != "p-0002")
