"""A memory repo that ships symlinks, nested repositories and hostile names (as a cloned, shared memory could): no
surface reads or writes git's or memtui's own files through them, and the tree (with .git and .memtui) is unchanged
by every attempt. Symlinks to ordinary memory files keep working: the real file is written and committed."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest

from memtui.agent.memory_tool import MemtuiMemoryTool
from memtui.cli import main
from memtui.core.access.tools import run_tool
from memtui.core.grammar.paths import PathRefused, check_rel
from memtui.core.storage.folder import FolderStore
from memtui.core.writing.memory import Memory

AGENT = "agent:claude"
SECRETS = (b"fsmonitor", b"auto_approve", b'"actor"')  # what .git/config, the config and the audit log hold


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def shared(root: Path) -> Path:
    """The memory root with committed traps: links into .git, .memtui and the audit log, a nested repository, a
    gitlink file, and links to ordinary memory files (which must keep working)."""
    mem = Memory(root)
    assert mem.update("Facts", "add", "[stated] The audit log has a line").status == "applied"
    git(root, "config", "core.fsmonitor", "false")  # a marker the leak checks look for
    (root / ".memtui" / "config.toml").write_text((root / ".memtui" / "config.toml").read_text()
                                                  + "\n# auto_approve marker\n")
    (root / "topics").mkdir()
    (root / "topics" / "work.md").write_text("# work\n\n## Notes\n- [stated] Ships on Fridays (2026-01-01)\n")
    links = {
        "notes": ".git", "notes.md": ".git/config", "head.md": ".git/HEAD", "cfg.md": ".memtui/config.toml",
        "state": ".memtui", "audit.md": "memory-log.jsonl", "hooks": ".git/hooks", "chain.md": "notes.md",
        "deep/in.md": "../.git/config", "alias.md": "topics/work.md", "topics2": "topics",
    }
    for name, target in links.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / name)
    (root / "vendor").mkdir()
    subprocess.run(["git", "init", "-q", str(root / "vendor")], check=True)
    (root / "vendor" / "x.md").write_text("# vendored\n")
    (root / "sub").mkdir()
    (root / "sub" / ".git").write_text("gitdir: ../.git\n")
    (root / "sub" / "y.md").write_text("# y\n")
    git(root, "add", "-A", "--", *links, "topics", ".memtui/config.toml")
    git(root, "commit", "-q", "-m", "a shared memory repo ships links")
    return root


def digest(root: Path, skip: tuple[str, ...]) -> dict[str, bytes]:
    """Every name under `root` (with .git and .memtui) and its bytes (a link: its target), but for `skip`."""
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            if rel.startswith(skip):
                continue
            out[rel] = os.readlink(full).encode() if os.path.islink(full) else Path(full).read_bytes()
    return out


class Snapshot:
    """The whole tree (with .git and .memtui) and the audit log: after an attack, only refusals may be added (and,
    for a decision, the proposal's own queue file may record it)."""

    def __init__(self, root: Path, *, decided: str | None = None) -> None:
        self.root = root
        self.skip = ("memory-log.jsonl",) + ((f".memtui/queue/{decided}.json",) if decided else ())
        self.tree = digest(root, self.skip)
        self.audit = (root / "memory-log.jsonl").read_bytes()
        self.statuses = ("refused", "conflict") if decided else ("refused",)

    def unchanged(self, what: str) -> None:
        now = digest(self.root, self.skip)
        changed = sorted(k for k in set(now) | set(self.tree) if now.get(k) != self.tree.get(k))
        assert not changed, f"{what} changed {changed}"
        after = (self.root / "memory-log.jsonl").read_bytes()
        assert after.startswith(self.audit), f"{what} rewrote the audit log"
        added = [json.loads(line) for line in after[len(self.audit):].splitlines() if line.strip()]
        assert all(r.get("status") in self.statuses for r in added), (what, added)


def cli(root: Path, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([*args, "--root", str(root)])
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def attempts(mem: Memory, path: str) -> dict[str, Callable[[], Any]]:
    """Every surface that can name a file, each returning (refused?, message, text shown)."""
    root = Path(mem.location)
    tool = MemtuiMemoryTool(mem, actor=AGENT)

    def result(r: Any) -> tuple[bool, str, str]:
        return r.status == "refused", r.message, r.message

    def read() -> tuple[bool, str, str]:
        try:
            text = mem.read_text(path)
        except PathRefused as exc:
            return True, str(exc), ""
        return False, "", text or ""

    def via_tool(cmd: dict[str, Any]) -> tuple[bool, str, str]:
        out = tool.run(cmd)
        return out.is_error, out.text, out.text

    def via_tools(name: str, args: dict[str, Any]) -> tuple[bool, str, str]:
        out = run_tool(mem, name, args, AGENT)
        return out.is_error, out.text, out.text

    def via_cli(*args: str) -> tuple[bool, str, str]:
        code, out, err = cli(root, *args)
        return code != 0, out + err, out + err

    entry = "[stated] planted through a link"
    return {
        "create": lambda: result(mem.create(path, "[core]\n\tfsmonitor = /tmp/evil\n", actor="wes")),
        "create-agent": lambda: result(mem.create(path, "[core]\n", actor=AGENT)),
        "update": lambda: result(mem.update("Facts", "add", entry, file=path, actor="wes")),
        "edit": lambda: result(mem.edit(path, "false", "/tmp/evil", actor="wes")),
        "delete": lambda: result(mem.delete(path, actor="wes")),
        "rename": lambda: result(mem.rename(path, "moved.md", actor="wes")),
        "rename-onto": lambda: result(mem.rename("MEMORY.md", path, actor="wes")),
        "read": read,
        "cli-show": lambda: via_cli("show", path),
        "cli-update": lambda: via_cli("update", "Facts", "add", entry, "--file", path),
        "tool-view": lambda: via_tool({"command": "view", "path": f"/memories/{path}"}),
        "tool-create": lambda: via_tool({"command": "create", "path": f"/memories/{path}", "file_text": "x\n"}),
        "tool-replace": lambda: via_tool({"command": "str_replace", "path": f"/memories/{path}",
                                          "old_str": "false", "new_str": "/tmp/evil"}),
        "tool-delete": lambda: via_tool({"command": "delete", "path": f"/memories/{path}"}),
        "mcp-read": lambda: via_tools("memory_read", {"path": path}),
        "mcp-edit": lambda: via_tools("memory_edit", {"path": path, "old": "false", "new": "/tmp/evil"}),
        "mcp-update": lambda: via_tools("memory_update", {"section": "Facts", "action": "add", "entry": entry,
                                                          "file": path}),
    }


PROTECTED = [
    "notes/config", "notes/HEAD", "notes.md", "head.md", "cfg.md", "state/config.toml", "state/lock", "audit.md",
    "hooks/post-index-change", "chain.md", "deep/in.md", ".git/config", ".GIT/config", ".Git/HEAD", "x/.git/config",
    "log/.git/config", ".MEMTUI/config.toml", ".Memtui/queue/p-0001.json", "Memory-Log.JSONL", "memory-log.jsonl",
    "%2egit/config", ".git./config", "GIT~1/config", "vendor/x.md", "vendor/new.md", "sub/y.md", "sub/.git",
    ".gitattributes", "notes/.gitmodules",
    "a\u202egnp.md", "a\u200b.md", "\ufeffMEMORY.md", "x\u2066y.md", "soft\u00adhyphen.md", "line\u2028sep.md",
    "nb\u00a0sp.md", "hangul\u3164.md", "zw\u2060j.md", "bidi\u200f.md",
]


@pytest.mark.parametrize("path", PROTECTED, ids=[p.encode("unicode_escape").decode() for p in PROTECTED])
def test_every_surface_refuses_protected_places_and_changes_nothing(shared: Path, path: str) -> None:
    mem = Memory(shared)
    snap = Snapshot(shared)
    for how, attempt in attempts(mem, path).items():
        refused, message, shown = attempt()
        assert refused, f"{how} {path!r} was not refused: {shown[:200]}"
        assert message.strip() and "Traceback" not in shown, f"{how} {path!r}: {shown[:300]}"
        assert not any(s in shown.encode() for s in SECRETS), f"{how} {path!r} showed protected bytes: {shown[:300]}"
        snap.unchanged(f"{how} {path!r}")


def test_refusals_say_what_was_wrong(shared: Path) -> None:
    mem = Memory(shared)
    assert "git's or memtui's own" in mem.update("Facts", "add", "[stated] x", file="notes.md").message
    assert "nested git repository" in mem.create("vendor/new.md", "# n\n").message
    assert "U+202E" in mem.create("a\u202egnp.md", "# n\n").message
    assert "git's or memtui's own" in mem.create(".GIT/config", "[core]\n").message


def test_ordinary_links_write_and_commit_the_real_file(shared: Path) -> None:
    mem = Memory(shared)
    store = mem.store
    assert isinstance(store, FolderStore)
    assert store.real_path("alias.md") == "topics/work.md"
    assert store.real_path("topics2/work.md") == "topics/work.md"
    res = mem.update("Notes", "add", "[stated] Written through a file link", file="alias.md")
    assert res.status == "applied", res
    assert os.readlink(shared / "alias.md") == "topics/work.md"  # the link stays a link
    assert b"through a file link" in (shared / "topics" / "work.md").read_bytes()
    res = mem.update("Notes", "add", "[stated] Written through a folder link", file="topics2/work.md")
    assert res.status == "applied", res
    assert git(shared, "status", "--porcelain", "--untracked-files=no") == ""  # the real file was committed
    assert "topics/work.md" in git(shared, "show", "--name-only", "--format=", "HEAD")
    assert git(shared, "cat-file", "-p", "HEAD:alias.md") == "topics/work.md"


def test_a_failed_write_through_a_link_is_undone(shared: Path) -> None:
    """A write through a link that cannot commit (detached HEAD here is refused first; a commit that fails after
    writing is undone): the real file is restored and the link left as it was."""
    store = FolderStore(shared)
    before = (shared / "topics" / "work.md").read_bytes()
    point = store.undo_point(["alias.md"])
    store.write("alias.md", b"# overwritten\n")
    assert (shared / "topics" / "work.md").read_bytes() == b"# overwritten\n"
    store.undo(point)
    assert (shared / "topics" / "work.md").read_bytes() == before and os.readlink(shared / "alias.md")
    point = store.undo_point(["alias.md"])
    store.delete("alias.md")
    assert not os.path.lexists(shared / "alias.md") and (shared / "topics" / "work.md").read_bytes() == before
    store.undo(point)
    assert os.readlink(shared / "alias.md") == "topics/work.md"
    store.drop_undo_point(point)


def test_listing_skips_protected_links_nested_repos_and_hidden_names(shared: Path) -> None:
    (shared / "a\u202egnp.md").write_text("# bidi\n")
    (shared / "Memory-Log.JSONL").write_text("{}\n")
    store = FolderStore(shared)
    listed = store.list_files("**/*")
    assert "topics/work.md" in listed
    for rel in listed:
        check_rel(rel)
        store.check_path(rel)
    assert not any(rel.startswith(("vendor/", "sub/", "notes/", "state/", "hooks/")) for rel in listed), listed
    tool = MemtuiMemoryTool(Memory(shared), actor=AGENT)
    shown = tool.run({"command": "view", "path": "/memories"}).text
    assert "fsmonitor" not in shown and "vendor" not in shown and "\u202e" not in shown


def test_an_untracked_link_to_the_config_shows_as_a_link_not_its_bytes(shared: Path) -> None:
    os.symlink(".git/config", shared / "leak.md")
    store = FolderStore(shared)
    change = next(c for c in store.external_changes() if c.path == "leak.md")
    assert change.after == b".git/config"
    for p in Memory(shared).external_proposals():
        assert b"fsmonitor" not in (p.diff or "").encode()


@pytest.mark.parametrize("name", ["notes", "notes.md", "cfg.md", "audit.md"])
def test_a_link_swapped_in_after_the_proposal_is_checked_again_on_approval(shared: Path, name: str) -> None:
    """A link swapped in after a proposal was queued is checked again when the proposal is applied."""
    mem = Memory(shared)
    (shared / "plain.md").write_text("## Facts\n")
    git(shared, "add", "plain.md")
    git(shared, "commit", "-q", "-m", "plain")
    res = mem.update("Facts", "add", "[stated] queued for review", file="plain.md", actor=AGENT)
    assert res.status == "queued", res
    (shared / "plain.md").unlink()
    os.symlink(os.readlink(shared / name), shared / "plain.md")
    snap = Snapshot(shared, decided=res.id)
    out = mem.approve(res.id, by="wes")
    assert out.status in ("refused", "conflict"), out
    snap.unchanged(f"approving after plain.md became a link like {name}")


def test_approving_an_untracked_link_commits_the_link(shared: Path) -> None:
    os.symlink("topics/work.md", shared / "alias2.md")
    mem = Memory(shared)
    store = mem.store
    assert isinstance(store, FolderStore)
    assert "alias2.md" in {c.path for c in store.external_changes()}
    store.commit(["alias2.md"], "add a link", "wes")
    assert git(shared, "cat-file", "-p", "HEAD:alias2.md") == "topics/work.md"
    assert "alias2.md" not in {c.path for c in store.external_changes()}


def test_a_link_into_git_is_never_committed(shared: Path) -> None:
    os.symlink(".git/config", shared / "leak.md")
    store = FolderStore(shared)
    head = git(shared, "rev-parse", "HEAD")
    with pytest.raises(Exception, match="symlink to '.git/config'"):
        store.commit(["leak.md"], "ship the trap", "wes")
    assert git(shared, "rev-parse", "HEAD") == head


def test_search_leaves_out_nested_repos_links_and_invisible_names(shared: Path) -> None:
    (shared / "a\u202egnp.md").write_text("## Notes\n- [stated] zanzibar in a bidi name (2026-01-01)\n")
    (shared / "vendor" / "v.md").write_text("## Notes\n- [stated] zanzibar in a nested repo (2026-01-01)\n")
    (shared / "topics" / "z.md").write_text("## Notes\n- [stated] zanzibar in a memory file (2026-01-01)\n")
    out = run_tool(Memory(shared), "memory_search", {"query": "zanzibar", "limit": 10}, AGENT)
    assert "topics/z.md" in out.text, out.text
    assert "nested repo" not in out.text and "bidi" not in out.text and "\u202e" not in out.text
    out = run_tool(Memory(shared), "memory_search", {"query": "fsmonitor", "limit": 10}, AGENT)
    assert "fsmonitor = false" not in out.text
