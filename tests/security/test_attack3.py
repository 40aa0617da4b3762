"""attack3: an outsider's attacks on this session's changes: the big external file kept between listings
(ExternalReview._bytes_now), backslash names refused, `memtui WORD` and the app without a terminal refused, the footer
rebuilt only when its keys change, help kept, and an edit selected once a sync lists it. Real git, real files."""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from support.git_judge import person_repo, sh, status

from memtui.core.storage.store import content_hash
from memtui.core.writing.memory import Memory

BIG = 2 << 20  # past SEEN_MIN_BYTES


def listed(mem: Memory, rel: str) -> str | None:
    found = [p for p in mem.external_proposals() if p.file == rel]
    return found[0].after_hash if found else None


def committed_big(tmp_path: Path) -> tuple[Path, Path]:
    """A person's repository with big.md committed (so a change to it is an external edit)."""
    root = person_repo(tmp_path / "m")
    (root / "big.md").write_bytes(b"a" * BIG)
    sh(root, "add", "big.md")
    sh(root, "commit", "-qm", "big")
    return root, root / "big.md"


# --- 1. the big file kept between listings ----------------------------------------------------------------------

@contextmanager
def dirty_mapping(log: Path) -> Iterator[mmap.mmap]:
    """`log` mapped shared, its first page already written through the mapping (so later writes move no time)."""
    fd = os.open(log, os.O_RDWR)
    m = mmap.mmap(fd, 0)
    try:
        m[0:1] = b"b"
        yield m
    finally:
        m.close()
        os.close(fd)


def test_a_write_through_a_shared_mmap_to_a_dirty_page_is_seen(tmp_path: Path) -> None:
    """A write through a shared mapping to a page already dirty changes no time on Linux (the time is set at the
    page's first write fault only), so the stat stands while the bytes change. Broke: the review kept showing the
    bytes of the first write; fixed by comparing the bytes read with the kept ones."""
    root, log = committed_big(tmp_path)
    with dirty_mapping(log) as m:
        mem = Memory(root)
        assert listed(mem, "big.md") == content_hash(log.read_bytes())
        assert "big.md" in mem.store.outside._seen
        before = os.stat(log)
        m[1:2] = b"c"  # same page, still dirty: no time moves
        after = os.stat(log)
        assert (before.st_mtime_ns, before.st_ctime_ns) == (after.st_mtime_ns, after.st_ctime_ns)
        now = log.read_bytes()
        assert now[:2] == b"bc"
        p = next(p for p in mem.external_proposals() if p.file == "big.md")
        assert p.after_hash == content_hash(now)
        # and what the person approves, having seen it, is what is committed
        r = mem.approve(p.id, by="wes", expect=p.after_hash)
        assert r.status == "applied", r.message
        assert sh(root, "show", "HEAD:big.md").encode()[:2] == b"bc"


def test_an_approval_of_bytes_shown_before_an_mmap_write_is_refused(tmp_path: Path) -> None:
    """Whatever the listing kept, the approval re-reads: bytes changed since the person looked are not committed."""
    root, log = committed_big(tmp_path)
    with dirty_mapping(log) as m:
        mem = Memory(root)
        [p] = [p for p in mem.external_proposals() if p.file == "big.md"]
        head = sh(root, "rev-parse", "HEAD")
        m[1:2] = b"c"
        r = mem.approve(p.id, by="wes", expect=p.after_hash)
        assert r.status == "refused" and "changed again" in r.message, r.message
        assert sh(root, "rev-parse", "HEAD") == head


def test_a_change_through_a_hard_link_under_another_name_is_seen(tmp_path: Path) -> None:
    root, log = committed_big(tmp_path)
    log.write_bytes(b"b" * BIG)
    other = tmp_path / "outside-name"
    os.link(log, other)  # a second name for the inode, outside the memory
    mem = Memory(root)
    assert listed(mem, "big.md") == content_hash(b"b" * BIG)
    with open(other, "r+b") as f:
        f.write(b"c" * BIG)
    assert listed(mem, "big.md") == content_hash(b"c" * BIG)


def test_truncated_and_extended_to_the_same_size_with_the_times_put_back_is_seen(
        tmp_path: Path) -> None:
    root, log = committed_big(tmp_path)
    log.write_bytes(b"b" * BIG)
    mem = Memory(root)
    listed(mem, "big.md")
    old = os.stat(log)
    os.truncate(log, 0)
    os.truncate(log, BIG)  # the same size, all zero bytes now
    os.utime(log, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert listed(mem, "big.md") == content_hash(b"\0" * BIG)


def test_a_kept_file_replaced_by_a_folder_is_listed_as_gone(tmp_path: Path) -> None:
    root, log = committed_big(tmp_path)
    log.write_bytes(b"b" * BIG)
    mem = Memory(root)
    listed(mem, "big.md")
    log.unlink()
    log.mkdir()
    (log / "inner.md").write_text("inside\n")
    found = {p.file: p for p in mem.external_proposals()}
    assert "big.md" in found and found["big.md"].after_hash == content_hash(None)
    assert "big.md" not in mem.store.outside._seen


def test_a_tracked_file_replaced_by_a_fifo_does_not_hang_the_listing_or_the_decision(tmp_path: Path) -> None:
    """Broke (before this session too): git lists a tracked file become a FIFO as modified, and the listing (and
    an approval's read) opened it blocking, waiting for a writer for ever: the app's sync worker, `memtui queue
    list`. Now anything not a regular file reads as no file: listed as gone, and rejecting puts the file back."""
    root, log = committed_big(tmp_path)
    mem = Memory(root)
    log.unlink()
    os.mkfifo(log)
    out: list = []
    t = threading.Thread(target=lambda: out.append(mem.external_proposals()), daemon=True)
    t.start()
    t.join(5)
    if t.is_alive():  # unblock the hung open so the run ends
        fd = os.open(log, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        t.join(5)
        pytest.fail("the listing hung opening a FIFO")
    [p] = [p for p in out[0] if p.file == "big.md"]
    assert p.after_hash == content_hash(None)
    head = sh(root, "rev-parse", "HEAD")
    r = mem.approve(p.id, by="wes", expect=p.after_hash)  # a name that is no file is refused, saying so
    assert r.status == "refused" and "not a regular file" in r.message, r.message
    assert sh(root, "rev-parse", "HEAD") == head
    done = mem.reject(p.id, reason="not a file", by="wes")
    assert done.status == "refused" and "remove it by hand" in done.message, done.message


def test_threads_listing_at_once_all_see_the_files_bytes(tmp_path: Path) -> None:
    """The app lists in worker threads: listings racing each other and a writer never show a hash the file did not
    have at some point, and once the writer stops, every listing shows the last bytes."""
    root, log = committed_big(tmp_path)
    mem = Memory(root)
    versions = [bytes([65 + i]) * BIG for i in range(6)]
    hashes = {content_hash(v) for v in versions} | {content_hash(b"a" * BIG)}
    seen: list[str | None] = []
    errors: list[BaseException] = []

    def lister() -> None:
        try:
            for _ in range(6):
                seen.append(listed(mem, "big.md"))
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=lister) for _ in range(3)]
    for t in threads:
        t.start()
    for v in versions:
        tmp = root / "big.tmp"
        tmp.write_bytes(v)
        os.replace(tmp, log)
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert set(seen) - {None} <= hashes  # None: listed in the instant between replace and status
    for _ in range(2):
        assert listed(mem, "big.md") == content_hash(versions[-1])


def test_two_memories_on_one_root_each_see_the_others_rejection(tmp_path: Path) -> None:
    root, log = committed_big(tmp_path)
    log.write_bytes(b"b" * BIG)
    one, two = Memory(root), Memory(root)
    assert listed(one, "big.md") == listed(two, "big.md") == content_hash(b"b" * BIG)
    [p] = [p for p in two.external_proposals() if p.file == "big.md"]
    assert two.reject(p.id, reason="not mine", by="wes").status == "rejected"
    assert listed(one, "big.md") is None and log.read_bytes() == b"a" * BIG
    log.write_bytes(b"c" * BIG)
    assert listed(one, "big.md") == content_hash(b"c" * BIG)


def test_an_unreadable_kept_file_is_not_shown_from_the_cache(tmp_path: Path) -> None:
    """A file made unreadable is read again at the next listing, never shown from what was kept (as root the read
    still succeeds: what matters is that the listing reads and the bytes are the file's)."""
    root, log = committed_big(tmp_path)
    log.write_bytes(b"b" * BIG)
    mem = Memory(root)
    listed(mem, "big.md")
    assert "big.md" in mem.store.outside._seen
    os.chmod(log, 0)
    try:
        try:
            got = listed(mem, "big.md")
        except PermissionError:
            return  # refused to read: nothing shown from the cache either
        assert got == content_hash(log.read_bytes())
    finally:
        os.chmod(log, 0o644)


# --- 2. backslash names ------------------------------------------------------------------------------------------

BACKSLASH_NAMES = ["a\\..\\MEMORY.md", "\\MEMORY.md", "MEMORY.md\\", ".git\\config", "a\\b\\c.md", "x\\\x1b]0;t\x07.md"]


@pytest.mark.parametrize("name", BACKSLASH_NAMES)
def test_a_backslash_name_is_refused_on_approval_and_rejecting_it_touches_only_it(tmp_path: Path, name: str) -> None:
    root = person_repo(tmp_path / "m")
    (root / "MEMORY.md").write_text("- [stated] the real memory\n")
    sh(root, "add", "MEMORY.md")
    sh(root, "commit", "-qm", "memory")
    (root / name).write_text("- [stated] planted\n")
    head = sh(root, "rev-parse", "HEAD")
    mem = Memory(root)
    [x] = [p for p in mem.external_proposals() if p.file == name]
    r = mem.approve(x.id, by="wes", expect=x.after_hash)
    assert r.status == "refused" and "backslash" in r.message, r.message
    assert sh(root, "rev-parse", "HEAD") == head
    done = mem.reject(x.id, reason="not memory", by="wes")
    assert done.status == "rejected", done.message
    assert not os.path.lexists(root / name)
    assert (root / "MEMORY.md").read_text() == "- [stated] the real memory\n"
    assert (root / ".git" / "config").read_text().startswith("[core]")
    assert sh(root, "rev-parse", "HEAD") == head and status(root) in ("", "?? memory-log.jsonl\n")


def test_a_folder_named_with_a_backslash_holding_a_file_is_refused(tmp_path: Path) -> None:
    root = person_repo(tmp_path / "m")
    (root / "a\\b").mkdir()
    (root / "a\\b" / "c.md").write_text("- [stated] planted\n")
    (root / "a").mkdir()
    (root / "a" / "b").mkdir()
    (root / "a" / "b" / "c.md").write_text("- [stated] another file\n")
    mem = Memory(root)
    files = {p.file: p for p in mem.external_proposals()}
    x = files["a\\b/c.md"]
    r = mem.approve(x.id, by="wes", expect=x.after_hash)
    assert r.status == "refused" and "backslash" in r.message, r.message
    assert mem.reject(x.id, reason="no", by="wes").status == "rejected"
    assert not (root / "a\\b" / "c.md").exists()
    assert (root / "a" / "b" / "c.md").read_text() == "- [stated] another file\n"


def test_a_percent_encoded_backslash_is_a_plain_name(tmp_path: Path) -> None:
    """`%5C` is three plain characters, not a backslash: nothing decodes it, so it is an ordinary name."""
    root = person_repo(tmp_path / "m")
    (root / "a%5Cb.md").write_text("- [stated] plain\n")
    mem = Memory(root)
    [x] = [p for p in mem.external_proposals() if p.file == "a%5Cb.md"]
    r = mem.approve(x.id, by="wes", expect=x.after_hash)
    assert r.status == "applied", r.message
    assert "a%5Cb.md" in sh(root, "ls-files").split() and not (root / "a").exists()


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], capture_output=True,
                          text=True, check=False, timeout=60,
                          env={**os.environ, "MEMTUI_CONFIG_DIR": str(root.parent / "c")})


def test_the_queue_cli_refuses_a_backslash_name_and_prints_no_control_character(tmp_path: Path) -> None:
    root = person_repo(tmp_path / "m")
    name = "x\\..\\\x1b]0;owned\x07mem.md"
    (root / name).write_text("- [stated] planted\n")
    head = sh(root, "rev-parse", "HEAD")
    from memtui.core.writing.memory import external_id

    pid = external_id(name)
    out = cli(root, "queue", "list")
    assert "\x1b" not in out.stdout + out.stderr and "\x07" not in out.stdout + out.stderr
    assert pid in out.stdout, out.stdout + out.stderr
    shown = cli(root, "queue", "show", pid)
    assert "\x1b" not in shown.stdout + shown.stderr and f"{pid}@" in shown.stdout, shown.stdout + shown.stderr
    done = cli(root, "queue", "approve", f"{pid}@{content_hash(b'- [stated] planted' + bytes([10]))}")
    assert done.returncode != 0 and "backslash" in done.stdout + done.stderr, done.stdout + done.stderr
    assert "\x1b" not in done.stdout + done.stderr
    assert sh(root, "rev-parse", "HEAD") == head
    done = cli(root, "queue", "reject", pid, "--reason", "no")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "\x1b" not in done.stdout + done.stderr
    assert not os.path.lexists(root / name) and sh(root, "rev-parse", "HEAD") == head


# --- 3. `memtui WORD` and no terminal ----------------------------------------------------------------------------

@pytest.mark.parametrize("word", ["-", "", "stat\nus", "st\x1b[2Jus", "~nobody-here", "--"])
def test_odd_words_make_nothing_and_print_no_control_character(tmp_path: Path, word: str) -> None:
    here = tmp_path / "here"
    here.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run([sys.executable, "-m", "memtui", word], capture_output=True, text=True, check=False,
                          cwd=here, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "MEMTUI_CONFIG_DIR": str(tmp_path / "c"), "HOME": str(home),
                               "MEMTUI_ROOT": str(tmp_path / "default-root"), "XDG_DATA_HOME": str(home / "d")})
    # No word names a command: a named root that is missing (the empty word leaves $MEMTUI_ROOT's), a mistyped
    # command or the want of a terminal: each a usage error (2), never a traceback.
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "\x1b" not in done.stderr and list(here.iterdir()) == []
    assert not (tmp_path / "default-root").exists()
    if word in ("stat\nus", "st\x1b[2Jus"):
        assert f"{word!r} is not a command" in done.stderr


def test_a_word_naming_a_file_not_a_folder_makes_nothing(tmp_path: Path) -> None:
    (tmp_path / "notes").write_text("a file\n")
    done = subprocess.run([sys.executable, "-m", "memtui", "notes"], capture_output=True, text=True, check=False,
                          cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "MEMTUI_CONFIG_DIR": str(tmp_path / "c")})
    # Refused as a named root that is not a folder (a usage error, as a missing one), before the terminal is looked at.
    assert done.returncode == 2 and "notes is not a folder" in done.stderr, done.stdout + done.stderr
    assert (tmp_path / "notes").read_text() == "a file\n" and sorted(p.name for p in tmp_path.iterdir()) == ["notes"]


# --- 4-6. the app: footer, help, an edit selected once listed ----------------------------------------------------

PERSON = "ana"


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


def footer_shows(app) -> list[tuple[str, str, bool]]:
    """(key, action, disabled) of every key the footer on the app's main screen shows."""
    from memtui.tui.keys import KeyFooter

    return [(k.key, k.action, k.disabled) for k in app.base.query_one(KeyFooter).keys]


def footer_due(app) -> list[tuple[str, str, bool]]:
    """What Textual's own footer would show for the main screen's keys now: one key per action, shown ones only,
    the palette's key last."""
    seen: dict[str, tuple[str, str, bool]] = {}
    palette = None
    for key, (_node, b, enabled, _tip) in app.base.active_bindings.items():
        if key == app.COMMAND_PALETTE_BINDING:
            palette = (b.key, b.action, not enabled)
        if b.show and b.action not in seen:
            seen[b.action] = (b.key, b.action, not enabled)
    return [*seen.values(), *([palette] if palette and app.ENABLE_COMMAND_PALETTE else [])]


async def started(pilot):
    from memtui.tui.viewer import MemoryViewer

    await wait_for(pilot, lambda: settled(pilot.app), what="the app to settle")
    return pilot.app.query_one(MemoryViewer)


async def footer_caught_up(pilot) -> None:
    await pilot.pause()
    try:
        await wait_for(pilot, lambda: footer_shows(pilot.app) == footer_due(pilot.app), timeout=5,
                       what="the footer to show the keys that apply")
    except AssertionError:
        raise AssertionError(f"footer shows {footer_shows(pilot.app)}, due {footer_due(pilot.app)}") from None


async def reviewing_first(app, pilot) -> None:
    """The app started, p-0001 selected in the focused review list, and the footer caught up with it."""
    await started(pilot)
    app.review.select("p-0001")
    app.review.option_list.focus()
    await footer_caught_up(pilot)


async def test_the_cursor_hidden_under_help_leaves_no_cursor_key_in_the_footer(demo: Path) -> None:
    from memtui.tui.app import MemtuiApp

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await started(pilot)
        viewer.focus()
        await pilot.pause()
        await pilot.press("j")
        await wait_for(pilot, lambda: viewer.cursor is not None, what="the cursor")
        await footer_caught_up(pilot)
        assert any(k == "x" for k, _, _ in footer_shows(app))
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen is not app.base, what="help")
        viewer.entry_cursor.set_cursor(None)  # as a reload under the help would
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.base, what="help closed")
        await footer_caught_up(pilot)
        assert not any(k == "x" or a == "undo_own" for k, a, _ in footer_shows(app))
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen is not app.base, what="help")
        viewer.entry_cursor.set_cursor(2)  # and shown again under the help: in the footer once it closes
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.base, what="help closed")
        await footer_caught_up(pilot)
        assert viewer.cursor == 2 and app.focused is viewer, (viewer.cursor, app.focused)
        assert any(a == "undo_own" for _, a, _ in footer_shows(app)), footer_due(app)  # the cursor's u


async def test_a_tab_switched_and_focus_moved_under_a_dialog_is_shown_when_it_closes(demo: Path) -> None:
    from memtui.tui.app import MemtuiApp

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await reviewing_first(app, pilot)
        reviewing = footer_shows(app)
        await pilot.press("r")  # the reject dialog
        await wait_for(pilot, lambda: app.screen is not app.base, what="the reject dialog")
        app.base.set_focus(app.query_one("MemoryViewer"))  # focus moves beneath it
        app.action_open_pane("today")
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.base, what="the dialog closed")
        await footer_caught_up(pilot)
        assert footer_shows(app) != reviewing or footer_due(app) == reviewing


async def test_a_rebound_approve_key_is_the_footers_and_a_does_not_approve(demo: Path) -> None:
    """[keys] approve = "space": the footer offers space for approve, and `a`, no longer bound, approves nothing."""
    from memtui.tui.app import MemtuiApp

    cfg = demo / ".memtui" / "config.toml"
    cfg.write_text(cfg.read_text() + '\n[keys]\napprove = "space"\n')
    sh(demo, "commit", "-qm", "keys", "--", ".memtui/config.toml")  # a config change is in effect once committed
    head = sh(demo, "rev-parse", "HEAD")
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await reviewing_first(app, pilot)
        shown = footer_shows(app)
        assert ("space", "approve", False) in shown and not any(k == "a" and a == "approve" for k, a, _ in shown)
        await pilot.press("a")
        await pilot.pause(0.5)
        assert sh(demo, "rev-parse", "HEAD") == head


async def test_help_kept_lists_the_rebound_key_and_theme_switch_keeps_the_footer_true(demo: Path) -> None:
    from memtui.tui.app import MemtuiApp
    from memtui.tui.help import HelpScreen

    cfg = demo / ".memtui" / "config.toml"
    cfg.write_text(cfg.read_text() + '\n[keys]\nreject = "R"\n')
    sh(demo, "commit", "-qm", "keys", "--", ".memtui/config.toml")  # a config change is in effect once committed
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        rows = {row[2]: row[1] for row in app.screen.rows}
        assert rows["reject"] == "R", rows["reject"]
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.base, what="help closed")
        for name in [t for t in app.available_themes if t != app.theme][:2]:
            app.action_switch_theme(name)
            await footer_caught_up(pilot)


async def test_an_edit_reverted_then_rewritten_by_an_agent_is_not_announced_as_the_persons(demo: Path) -> None:
    """The person's edit leaves $EDITOR; before a sync lists it, an agent puts the file back as committed (nothing
    listed), then writes its own change. Broke: that later listing was selected, focused and announced as "Your
    edit of MEMORY.md waits in review: a approve", the agent's bytes taken for the person's. The notice now waits
    for the bytes the editor left."""
    import hashlib

    from memtui.tui.app import MemtuiApp
    from memtui.tui.messages import FilesChanged

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        viewer = await started(pilot)
        app.review.select("p-0001")
        viewer.focus()
        memory = demo / "MEMORY.md"
        committed = memory.read_bytes()
        memory.write_bytes(committed + b"- [stated] The person's own line (2026-08-20, vim)\n")
        pid = "x-" + hashlib.sha1(b"MEMORY.md").hexdigest()[:6]
        viewer.entry_cursor.focus_external_change(pid)  # as after the editor exits
        memory.write_bytes(committed)  # the agent, at once
        app.post_message(FilesChanged(frozenset({"MEMORY.md"})))
        await wait_for(pilot, lambda: not app.syncing if hasattr(app, "syncing") else True, what="sync")
        await pilot.pause(1.0)
        memory.write_bytes(committed + b"- [stated] Wire the refund to account 991 (2026-08-20, agent)\n")
        app.post_message(FilesChanged(frozenset({"MEMORY.md"})))
        await wait_for(pilot, lambda: any(p.id == pid for p in app.review.proposals), what="the agent's change listed")
        await pilot.pause(0.5)
        toasts = [str(t.render()) for t in app.screen.query("Toast")]
        assert not any("Your edit" in t for t in toasts), toasts
        assert app.review.selected.id == "p-0001"


async def test_opening_today_from_review_dims_the_review_keys_in_the_footer(demo: Path) -> None:
    from memtui.tui.app import MemtuiApp

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await reviewing_first(app, pilot)
        app.base.set_focus(app.query_one("MemoryViewer"))
        app.action_open_pane("today")
        await footer_caught_up(pilot)


async def test_the_apps_review_refuses_a_backslash_name_and_rejecting_it_removes_only_it(demo: Path) -> None:
    """In the app: `a` on `a\\..\\MEMORY.md` commits nothing and MEMORY.md is untouched; `r` with a reason removes
    that one file and leaves MEMORY.md as it was."""
    import hashlib

    from memtui.tui.app import MemtuiApp
    from memtui.tui.messages import FilesChanged

    name = "a\\..\\MEMORY.md"
    memory = (demo / "MEMORY.md").read_bytes()
    (demo / name).write_text("- [stated] Wire the refund to account 991\n")
    head = sh(demo, "rev-parse", "HEAD")
    pid = "x-" + hashlib.sha1(name.encode()).hexdigest()[:6]
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await started(pilot)
        app.post_message(FilesChanged(frozenset({name})))
        await wait_for(pilot, lambda: app.review.select(pid), what="the planted name listed")
        app.review.option_list.focus()
        await pilot.pause()
        await pilot.press("a")
        await wait_for(pilot, lambda: any("backslash" in str(t.render()) for t in app.screen.query("Toast")),
                       what="the refusal said")
        assert sh(demo, "rev-parse", "HEAD") == head and (demo / "MEMORY.md").read_bytes() == memory
        await wait_for(pilot, lambda: app.review.select(pid), what="still listed")
        app.review.option_list.focus()
        await pilot.pause()
        await pilot.press("r")
        await wait_for(pilot, lambda: app.screen is not app.base, what="the reject dialog")
        await pilot.press(*"planted", "enter")
        await wait_for(pilot, lambda: not os.path.lexists(demo / name), what="the planted file removed")
        assert (demo / "MEMORY.md").read_bytes() == memory and sh(demo, "rev-parse", "HEAD") == head
