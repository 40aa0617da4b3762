"""A long fetch shows how far it got: git's own meter (`git fetch --progress`, read as it comes) reaches a callback as
numbers, the CLI draws it on one redrawn line only when stderr is a terminal, and the app's header shows "fetching
origin 45% (1.20 MiB)" until the fetch ends. What a remote writes on git's stderr (its "remote: ..." lines, or an
upload-pack that prints escapes) never reaches the terminal raw."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from app_support import wait_for
from memtui.core.writing import sync
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from memtui.tui.header import MemtuiHeader
from memtui.tui.sync_view import SyncView
from support.git_remote import bare, clone, first_machine, git, push_files
from support.terminal import stderr_on_a_terminal

# More than git's unpack limit (100 objects), so the fetch keeps a pack and index-pack draws "Receiving objects";
# random bytes so nothing compresses: about 3 MB over the wire.
BLOBS = {f"blobs/b{i:03}.bin": os.urandom(20_000) for i in range(150)}
ESC = b"\x1b"


def remote_with_blobs(tmp_path: Path) -> Path:
    """A server whose remote gained 3 MB the server has not fetched (files that are not .md: refused, not queued)."""
    url = "file://" + str(bare(tmp_path / "remote.git"))
    first_machine(tmp_path, url)
    server = clone(url, tmp_path / "server", "wes")
    push_files(clone(url, tmp_path / "teammate", "ana"), BLOBS, "three megabytes of blobs")
    return server


def uploadpack(server: Path, script: str) -> None:
    """The remote's upload-pack, as this server's git starts it: a shell script around git's own."""
    path = server.parent / "upload-pack.sh"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    git(server, "config", "remote.origin.uploadpack", str(path))


def slowed(server: Path, pause: float) -> None:
    """The remote's upload-pack sends its pack in 64 KiB pieces, `pause` seconds apart: a fetch long enough to watch."""
    uploadpack(server, f"""git-upload-pack "$@" | python3 -c '
import sys, time
while chunk := sys.stdin.buffer.read1(65536):
    sys.stdout.buffer.write(chunk); sys.stdout.buffer.flush(); time.sleep({pause})
'
""")


def run_cli(root: Path, *, tty: bool) -> tuple[int, bytes]:
    """`memtui sync --no-push`: its exit status and what reached stderr (a pty when `tty`, else a pipe)."""
    cmd = [sys.executable, "-m", "memtui", "sync", "--no-push", "--root", str(root)]
    if not tty:
        done = subprocess.run(cmd, capture_output=True, timeout=120)
        return done.returncode, done.stderr
    return stderr_on_a_terminal(cmd)


def test_a_fetch_tells_the_callback_increasing_percentages(tmp_path: Path) -> None:
    server = remote_with_blobs(tmp_path)
    heard: list[tuple[str, int, int, int, str]] = []
    tip = sync.fetch(Memory(server), "origin", lambda *reading: heard.append(reading))
    assert tip == git(tmp_path / "remote.git", "rev-parse", "main")
    receiving = [r for r in heard if r[0] == "Receiving objects"]
    percents = [r[1] for r in receiving]
    assert len(set(percents)) >= 10 and percents == sorted(percents) and percents[-1] == 100, heard
    assert receiving[-1][2] == receiving[-1][3] >= 150  # done == total: every blob and its trees and commit
    assert all(re.fullmatch(r"(\d+(\.\d+)? (bytes|KiB|MiB|GiB|TiB))?", r[4]) for r in heard), heard
    # Without a callback nothing changes: the same fetch, no --progress.
    assert sync.fetch(Memory(server), "origin") == tip


def test_the_cli_draws_one_redrawn_line_on_a_terminal_and_nothing_in_a_pipe(tmp_path: Path) -> None:
    server = remote_with_blobs(tmp_path)
    twin = tmp_path / "twin"
    subprocess.run(["cp", "-a", str(server), str(twin)], check=True)
    code, shown = run_cli(server, tty=True)
    assert code in (0, 3), shown  # the blobs are refused (not .md), nothing waits
    meter = re.findall(rb"\rfetching origin: receiving objects (\d+)% \(\d+/\d+(?:, [\d.]+ \w+)?\) *", shown)
    assert len(meter) >= 5 and int(meter[-1]) == 100, shown[-2000:]
    assert b"\n" not in shown.split(b"\rfetching origin")[1]  # redrawn on one line, not a line each
    assert shown.rstrip(b" ").count(b"\r") >= len(meter)  # and cleared at the end
    code, piped = run_cli(twin, tty=False)
    assert code in (0, 3), piped
    assert b"receiving" not in piped.lower() and b"\r" not in piped and b"%" not in piped


def test_a_hostile_remotes_words_never_reach_the_terminal_raw(tmp_path: Path) -> None:
    server = remote_with_blobs(tmp_path)
    # The remote's side writes what a hostile server would: OSC 52 (set the clipboard), a screen clear, a meter
    # line with escapes after its numbers, and its own "remote:" line, before serving the fetch as usual.
    uploadpack(server, r"""printf 'remote: \033]52;c;cm0gLXJmIH4=\007 hi\r\n' >&2
printf '\033[2J\033]0;owned\007Receiving objects:  50%% (1/2)\r' >&2
printf 'Receiving objects:  51%% (1/2), 1.00 MiB\033[8m hidden\r' >&2
exec git-upload-pack "$@"
""")
    code, shown = run_cli(server, tty=True)
    assert code in (0, 3), shown
    assert ESC not in shown and b"\x07" not in shown and b"owned" not in shown and b"hidden" not in shown
    assert b"receiving objects 51% (1/2, 1.00 MiB)" in shown  # its numbers, drawn by memtui's words
    # A remote that fails after its escapes: the refusal shows them made visible, and the fetch is refused whole.
    uploadpack(server, r"""printf 'remote: \033]52;c;cm0gLXJmIH4=\007 denied\n' >&2
exit 1
""")
    git(server, "update-ref", "-d", "refs/memtui/fetched/origin")
    code, said = run_cli(server, tty=False)
    assert code == 3 and b"could not fetch from origin" in said and "␛]52".encode() in said, said
    assert ESC not in said and b"\x07" not in said
    code, said = run_cli(server, tty=True)
    assert code == 3 and ESC not in said and b"\x07" not in said, said


def test_the_meter_reads_only_numbers_from_a_crafted_stream() -> None:
    heard: list[tuple] = []
    meter = sync.Meter(lambda *r: heard.append(r))
    stream = (b"remote: Receiving objects:  99% (9/9), 9.00 GiB\r\n"  # the remote's: never read
              b"Receiving objects:   5% (1/20)\rReceiving obj" b"ects:  10% (2/20), 1.5" b"0 MiB | 1 MiB/s\r"
              b"Receiving objects:  10% (2/20), 1.50 MiB\x1b]52;c;eA==\x07\r"  # the same reading again: once
              b"Resolving deltas: 100% (3/3), done.\n" b"\x1b[2JReceiving objects: 77% (7/9)\n"
              + b"x" * 10_000 + b"Receiving objects: 88% (8/9)\n")  # one endless line, then a meter: dropped
    for i in range(0, len(stream), 7):  # in the pieces a pipe may give
        meter.feed(stream[i:i + 7])
    assert heard == [("Receiving objects", 5, 1, 20, ""), ("Receiving objects", 10, 2, 20, "1.50 MiB"),
                     ("Resolving deltas", 100, 3, 3, "")]
    assert meter.text == stream  # kept whole for a failed fetch's message (made visible there)


async def press_sync(pilot, app: MemtuiApp) -> tuple[SyncView, MemtuiHeader]:
    """Once the app knows its remote, `P`: the sync view and the header that shows the fetch."""
    view = app.query_one(SyncView)
    await wait_for(pilot, lambda: view.has_remote is True, what="the remote's status")
    await pilot.press("P")
    return view, app.query_one(MemtuiHeader)


def test_the_app_header_shows_the_fetch_meter_and_clears_it_after(tmp_path: Path) -> None:
    server = remote_with_blobs(tmp_path)
    # A slow link: git's own upload-pack, its pack handed on 64 KB every 40 ms (about 2 s for 3 MB).
    slowed(server, 0.04)
    seen: list[str] = []

    async def run() -> None:
        app = MemtuiApp(server, watch=False, user="wes")
        async with app.run_test(size=(120, 35)) as pilot:
            view, header = await press_sync(pilot, app)

            def metered() -> bool:
                seen.append(header.render().plain)  # type: ignore[union-attr]
                return bool(re.search(r"fetching origin \d+%", seen[-1]))
            await wait_for(pilot, metered, what="the fetch's percentage in the header")
            await wait_for(pilot, lambda: not view.running, what="the sync to end", timeout=60)
            await wait_for(pilot, lambda: "origin ↑" in header.render().plain, what="the count back")  # type: ignore
            assert "%" not in header.render().plain  # type: ignore[union-attr]
            assert not any("%" in line for line in app.feed.texts())  # the meter is the header's, not the feed's

    asyncio.run(run())
    found = [int(m) for line in seen for m in re.findall(r"fetching origin (\d+)%", line)]
    assert found and found == sorted(found), seen


def test_quitting_during_a_fetch_loses_nothing_and_the_next_sync_resumes(tmp_path: Path) -> None:
    server = remote_with_blobs(tmp_path)
    head = git(server, "rev-parse", "HEAD")
    slowed(server, 0.1)

    async def run() -> None:
        app = MemtuiApp(server, watch=False, user="wes")
        async with app.run_test(size=(80, 24)) as pilot:
            _, header = await press_sync(pilot, app)
            await wait_for(pilot, lambda: re.search(r"fetching origin [1-9]\d?%", header.render().plain),  # type: ignore
                           what="the fetch under way")
            await pilot.press("q")

    began = time.monotonic()
    asyncio.run(run())
    assert time.monotonic() - began < 30  # the app ended: the meter does not hold it (the sync under way finishes)
    tip = git(tmp_path / "remote.git", "rev-parse", "main")
    fetched = sync._ref(Memory(server), "refs/memtui/fetched/origin")
    # All or nothing: the fetch landed whole (and its range was decided: every blob refused), or nothing moved.
    assert (fetched, git(server, "rev-parse", "HEAD")) == (None, head) or fetched == tip
    git(server, "config", "--unset", "remote.origin.uploadpack")
    code, said = run_cli(server, tty=False)
    assert code in (0, 3), said
    assert sync._ref(Memory(server), "refs/memtui/fetched/origin") == git(tmp_path / "remote.git", "rev-parse", "main")
