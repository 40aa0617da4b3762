"""memtui's memory tool against the installed SDK's reference `BetaLocalFilesystemMemoryTool`, on twin folders.

Hypothesis generates command sequences (good and bad paths, `..`, symlinks in and out, view ranges, insert lines,
unicode and CRLF text); each command runs on both tools, and after every command the replies (or error texts) and
the resulting files and folders must be identical, byte for byte. memtui's side is a real memory root with git
and a review rule that applies every write, so its replies are the applied ones. Where the reference crashes with
a Python exception rather than answering (e.g. a file used as a folder) memtui must answer with an error, and the
sequence stops there.

Not generated, because memtui answers differently on purpose (tests/test_memory_tool.py checks those): paths into
`.git`, `.memtui` or the audit log, control characters and percent-encoded `..` (refused with "Error: …"), writes
that review makes wait (answered "Queued as p-… for review"), and deleting a folder that holds hidden, linked or
node_modules files (memtui deletes the memory files in it, one reviewed delete each, and leaves the rest).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memtui.agent.memory_tool import MemtuiMemoryTool
from memtui.core.writing.memory import Memory

APPLY_ALL = '[[review.rule]]\nactor = "*"\ndecision = "apply"\n'
SEED = {"a.md": "# A\n- one\n- two\n- one\n", "dir/b.md": "b\r\nline two\r\n", "dir/sub/c.md": "ü\n\nend",
        "empty.md": ""}

PATHS = [
    "/memories", "/memories/", "/memories/a.md", "/memories/new.md", "/memories/dir", "/memories/dir/",
    "/memories/dir/b.md", "/memories/dir/sub", "/memories/dir/sub/c.md", "/memories/dir/sub/deep/d.md",
    "/memories/empty.md", "/memories/ünï cødé.md", "/memories/link.md", "/memories/out.md", "/memories/linkdir",
    "/memories/linkdir/b.md", "/memories/../x.md", "/memories/dir/../a.md", "/memories/../memories/new.md",
    "/memories/dir/../../etc/passwd", "/etc/passwd", "memories/a.md", "/memoriesnew.md", "/memories/other/e.md",
]
PIECES = list("ab \n\r\tüé—#-[]`") + ["one", "two", "\r\n", "😀"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
OLD = st.one_of(st.sampled_from(["one", "two", "- one\n", "b\r\n", "ü", "\n", "", "x", "line two\r\n", "end"]),
                TEXT)
LINE = st.integers(min_value=-2, max_value=9)

COMMANDS = st.one_of(
    st.builds(lambda p: {"command": "view", "path": p}, st.sampled_from(PATHS)),
    st.builds(lambda p, r: {"command": "view", "path": p, "view_range": r}, st.sampled_from(PATHS),
              st.lists(LINE, min_size=2, max_size=2)),
    st.builds(lambda p, t: {"command": "create", "path": p, "file_text": t}, st.sampled_from(PATHS), TEXT),
    st.builds(lambda p, o, n: {"command": "str_replace", "path": p, "old_str": o, "new_str": n},
              st.sampled_from(PATHS), OLD, TEXT),
    st.builds(lambda p, n, t: {"command": "insert", "path": p, "insert_line": n, "insert_text": t},
              st.sampled_from(PATHS), LINE, TEXT),
    st.builds(lambda p: {"command": "delete", "path": p}, st.sampled_from(PATHS)),
    st.builds(lambda a, b: {"command": "rename", "old_path": a, "new_path": b}, st.sampled_from(PATHS),
              st.sampled_from(PATHS)),
)


def seed(root: Path, outside: Path) -> None:
    for rel, text in SEED.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode())
    (root / "link.md").symlink_to("a.md")  # a linked file inside the root
    (root / "linkdir").symlink_to("dir")  # a linked folder inside the root
    (root / "out.md").symlink_to(outside)  # a link that leads out


def tree(root: Path) -> dict[str, object]:
    """Every visible file (bytes), link (target) and folder under `root`; memtui's bookkeeping left out."""
    out: dict[str, object] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in dirs + files:
            full = Path(folder) / name
            rel = full.relative_to(root).as_posix()
            if name.startswith(".") or rel == "memory-log.jsonl":
                continue
            if full.is_symlink():
                out[rel] = ("link", os.readlink(full))
            elif full.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = full.read_bytes()
    return out


def run_reference(tool: BetaLocalFilesystemMemoryTool, command: dict) -> tuple[str, object]:
    try:
        return "ok", tool.call(command)
    except ToolError as exc:
        return "error", exc.content
    except Exception as exc:  # the reference has no answer here, only a Python exception
        return "crash", f"{type(exc).__name__}: {exc}"


def run_memtui(tool: MemtuiMemoryTool, command: dict) -> tuple[str, object]:
    out = tool.run(command)
    return ("error" if out.is_error else "ok"), out.text


@pytest.fixture
def twins(tmp_path: Path):
    outside = tmp_path / "outside-secret.md"

    def make(n: int) -> tuple[BetaLocalFilesystemMemoryTool, MemtuiMemoryTool, Path, Path]:
        outside.write_text("secret\n")
        ref_base = tmp_path / f"ref{n}"
        reference = BetaLocalFilesystemMemoryTool(base_path=str(ref_base))
        ref_root = ref_base / "memories"
        mt_root = tmp_path / f"mt{n}" / "memories"  # named like the reference's, so `../memories` agrees
        mt_root.mkdir(parents=True)
        seed(ref_root, outside)
        seed(mt_root, outside)
        (mt_root / ".memtui").mkdir()
        (mt_root / ".memtui" / "config.toml").write_text(APPLY_ALL)
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "seed"]):
            subprocess.run(["git", "-C", str(mt_root), *args], check=True, capture_output=True)
        return reference, MemtuiMemoryTool(Memory(mt_root), actor="wes"), ref_root, mt_root

    counter = iter(range(10**6))
    return lambda: make(next(counter))


def test_the_twins_start_identical(twins) -> None:
    _, _, ref_root, mt_root = twins()
    assert tree(ref_root) == tree(mt_root)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(st.lists(COMMANDS, min_size=1, max_size=8))
@example(commands=[{"command": "delete", "path": "/memories/linkdir"},
                   {"command": "create", "path": "/memories/dir", "file_text": ""},  # a file where a folder went
                   {"command": "rename", "old_path": "/memories/other/e.md", "new_path": "/memories/dir/b.md"}])
def test_every_reply_and_every_file_matches_the_reference(twins, commands: list[dict]) -> None:
    reference, memtui, ref_root, mt_root = twins()
    for step, command in enumerate(commands):
        want = run_reference(reference, command)
        got = run_memtui(memtui, command)
        if want[0] == "crash":
            assert got[0] == "error", (step, command, want, got)
            return
        assert got == want, (step, command)
        assert tree(mt_root) == tree(ref_root), (step, command)
    assert (Path(ref_root).parent.parent / "outside-secret.md").read_text() == "secret\n"


@pytest.mark.parametrize("command", [
    {"command": "view", "path": "/memories/dir/b.md"},  # CRLF lines keep their CR
    {"command": "view", "path": "/memories/dir/sub/c.md", "view_range": [2, -1]},
    {"command": "view", "path": "/memories/a.md", "view_range": [3, 2]},  # an empty range
    {"command": "view", "path": "/memories/dir/"},  # the path as given, trailing slash and all
    {"command": "view", "path": "/memories"},  # sizes, folders, the linked file listed, the link out left out
    {"command": "view", "path": "/memories/nope"},
    {"command": "view", "path": "/memories/../x.md"},
    {"command": "view", "path": "/elsewhere"},
    {"command": "str_replace", "path": "/memories/a.md", "old_str": "- one", "new_str": "- uno"},
    {"command": "str_replace", "path": "/memories/a.md", "old_str": "two", "new_str": "2\n3\n4"},
    {"command": "str_replace", "path": "/memories/dir", "old_str": "x", "new_str": "y"},
    {"command": "str_replace", "path": "/memories/empty.md", "old_str": "", "new_str": "filled\n"},
    {"command": "insert", "path": "/memories/a.md", "insert_line": 9, "insert_text": "x"},
    {"command": "insert", "path": "/memories/nope.md", "insert_line": 0, "insert_text": "x"},
    {"command": "insert", "path": "/memories/dir/sub/c.md", "insert_line": 3, "insert_text": "tail\n\n"},
    {"command": "insert", "path": "/memories/empty.md", "insert_line": 0, "insert_text": "first"},
    {"command": "create", "path": "/memories", "file_text": "x"},
    {"command": "create", "path": "/memories/link.md", "file_text": "x"},
    {"command": "delete", "path": "/memories/dir"},
    {"command": "delete", "path": "/memories/"},
    {"command": "rename", "old_path": "/memories/dir", "new_path": "/memories/moved/dir"},
    {"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
    {"command": "rename", "old_path": "/memories/nope.md", "new_path": "/memories/a.md"},
    {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories"},
    {"command": "rename", "old_path": "/memories/out.md", "new_path": "/memories/in.md"},
])
def test_named_cases_match_the_reference(twins, command: dict) -> None:
    reference, memtui, ref_root, mt_root = twins()
    want = run_reference(reference, command)
    assert want[0] != "crash", want
    assert run_memtui(memtui, command) == want
    assert tree(mt_root) == tree(ref_root)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(COMMANDS)
def test_where_review_makes_a_write_wait_the_reply_says_queued_and_nothing_changes(twins, command: dict) -> None:
    reference, person_tool, ref_root, mt_root = twins()
    (mt_root / ".memtui" / "config.toml").unlink()  # the default policy: an agent's writes to these files wait
    agent = MemtuiMemoryTool(person_tool.memory, actor="agent:claude")
    before = tree(mt_root)
    want = run_reference(reference, command)
    got = run_memtui(agent, command)
    if got[0] == "ok" and str(got[1]).startswith("Queued as p-"):
        assert want[0] == "ok", (command, want, got)  # only what the reference would have done is queued
        assert "for review; not in memory yet" in str(got[1])
        assert tree(mt_root) == before
    elif want[0] == "crash":
        assert got[0] == "error", (command, want, got)
    else:
        assert got == want, command
