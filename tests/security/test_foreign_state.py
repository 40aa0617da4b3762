"""Attacks on where memtui keeps the state of a folder it did not make (memtui.core.storage.places): a hostile folder
name, a state folder that is a symlink, one planted by another user or left writable by others, a `.memtui` link planted
in the folder. Each is refused with a message that says what to do, or works without writing into the folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.storage.places import memories_home, places_for, state_key
from support.foreign import listing

WORKTREE = Path(__file__).resolve().parents[2]
MEMORY = "# Memory\n\n## Notes\n- Likes tea\n"


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(WORKTREE)})


def folder(tmp_path: Path, name: str = "notes") -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / "MEMORY.md").write_text(MEMORY)
    return root


@pytest.mark.parametrize("name", ["a\nb", "..", "line\rfeed", "\u202eevil.md", "x" * 200, "-rf", " spaced out ",
                                  "\x1b[2Jclear"])
def test_a_hostile_folder_name_gets_a_plain_state_name_and_works(tmp_path: Path, name: str) -> None:
    root = folder(tmp_path / "box" if name == ".." else tmp_path, name) if name != ".." else None
    if root is None:  # ".." is no folder name of its own: a folder reached through it
        (tmp_path / "box").mkdir()
        root = folder(tmp_path, "dots")
        root = tmp_path / "box" / ".." / "dots"
    before = listing(root)
    key = state_key(os.path.realpath(root))
    assert key.replace("-", "").replace("_", "").replace(".", "").isalnum() and len(key) <= 41
    assert places_for(root).state.parent == memories_home()
    queued = cli(root, "update", "--by", "agent", "Notes", "add", "[observed] Drinks green tea")
    assert queued.returncode == 4, queued.stderr
    assert listing(root) == before
    assert cli(root, "queue", "approve", "p-0001").returncode == 0
    assert "Drinks green tea" in (root / "MEMORY.md").read_text()
    recorded = json.loads((places_for(root).state / "place.json").read_text())["root"]
    assert recorded == os.path.realpath(root)  # the exact path, newline and all, as JSON


def test_a_state_folder_that_is_a_symlink_is_refused_and_nothing_is_written_through_it(tmp_path: Path) -> None:
    root = folder(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    memories_home().mkdir(parents=True, exist_ok=True, mode=0o700)
    state = places_for(root).state
    state.symlink_to(elsewhere)
    before = listing(root)
    try:
        done = cli(root, "update", "--by", "agent", "Notes", "add", "[observed] Drinks green tea")
        said = done.stdout + done.stderr
        assert done.returncode == 3, said  # refused, as any write that cannot be made
        assert "is not a folder (a symlink or a file)" in said and "move it aside" in said
        assert list(elsewhere.iterdir()) == [] and listing(root) == before
    finally:
        state.unlink()


def test_a_state_folder_another_user_owns_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    root = folder(tmp_path)
    state = places_for(root).state
    state.mkdir(parents=True, mode=0o700)
    (state / "queue").mkdir()
    (state / "queue" / "p-0001.json").write_text("{}")  # another user's proposal, planted
    os.chown(state, 54321, 54321)
    before = listing(root)
    done = cli(root, "queue", "approve", "p-0001")
    assert done.returncode != 0
    assert "belongs to another user" in done.stdout + done.stderr and listing(root) == before


def test_a_state_folder_others_can_write_is_refused(tmp_path: Path) -> None:
    root = folder(tmp_path)
    state = places_for(root).state
    state.mkdir(parents=True, mode=0o700)
    os.chmod(state, 0o777)
    done = cli(root, "update", "--by", "agent", "Notes", "add", "[observed] Drinks green tea")
    said = done.stdout + done.stderr
    assert done.returncode == 3 and "can be written by other users" in said and "chmod go-w" in said, said
    assert (root / "MEMORY.md").read_text() == MEMORY


def test_a_memtui_link_planted_in_the_folder_does_not_move_state_into_it(tmp_path: Path) -> None:
    root = folder(tmp_path)
    target = tmp_path / "agent-owned"
    target.mkdir()
    (root / ".memtui").symlink_to(target)
    before = listing(root)
    places = places_for(root)
    assert places.beside and places.state.parent == memories_home()
    assert cli(root, "update", "--by", "agent", "Notes", "add", "[observed] Drinks green tea").returncode == 4
    assert list(target.iterdir()) == [] and listing(root) == before


def test_a_folder_path_with_a_newline_keeps_history_and_reviews_outside_edits(tmp_path: Path) -> None:
    root = folder(tmp_path, "two\nlines")
    assert cli(root, "queue", "list").returncode == 0
    approved = (root / "MEMORY.md").read_bytes()
    (root / "MEMORY.md").write_bytes(approved + b"- planted\n")
    listed = cli(root, "queue", "list").stdout
    xid = next(w for w in listed.split() if w.startswith("x-"))
    assert cli(root, "queue", "reject", xid, "--reason", "not mine").returncode == 0
    assert (root / "MEMORY.md").read_bytes() == approved
    assert sorted(os.listdir(root)) == ["MEMORY.md"]


def test_the_first_history_beside_holds_every_file_exactly_whatever_its_name_or_attributes(tmp_path: Path) -> None:
    """History beside starts with one `git fast-import` stream: a name with a quote, a backslash or a line break
    must not end a command early, and a `.gitattributes` asking for conversion must not change the bytes kept."""
    root = folder(tmp_path)
    (root / ".gitattributes").write_text("* text eol=lf\n")
    names = {'quote"d.md': b"q\r\n", "back\\slash.md": b"b\r\n", "crlf.md": b"- one\r\n- two\r\n", "M\nx.md": b"x\n"}
    for name, data in names.items():
        (root / name).write_bytes(data)
    (root / "link.md").symlink_to("crlf.md")
    assert cli(root, "queue", "list").returncode == 0
    git_dir = str(places_for(root).git_dir)

    def kept(name: str) -> bytes:
        return subprocess.run(["git", "--git-dir", git_dir, "cat-file", "blob", f"HEAD:{name}"], capture_output=True,
                              check=True).stdout

    for name, data in names.items():
        if "\n" not in name:  # a name with a line break is no memory path: left out, shown as a change
            assert kept(name) == data, name
    listed = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "HEAD", "link.md"], capture_output=True,
                            text=True, check=True).stdout
    assert listed.startswith("120000 blob") and kept("link.md") == b"crlf.md"
    (root / "crlf.md").write_bytes(b"- one\r\n- planted\r\n")
    listed = cli(root, "queue", "list").stdout
    xid = next(w for w in listed.split() if w.startswith("x-") and "crlf.md" in listed)
    assert cli(root, "queue", "reject", xid, "--reason", "no").returncode == 0
    assert (root / "crlf.md").read_bytes() == b"- one\r\n- two\r\n"
