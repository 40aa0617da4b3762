"""A corpus of hostile paths and a runner that tries each one every way a caller can name a file.

Each path goes to `Memory.create`, `Memory.update(file=)`, `Memory.read_text` and `memtui show`. Every attempt must be
refused with a message (or, for harmless look-alike names, stay inside the root), never raise a traceback, never
touch the sentinel folder beside the root and never change a byte of the files already in the root.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
from dataclasses import dataclass, field
from pathlib import Path

from memtui.core.grammar.paths import PathRefused
from memtui.core.grammar.update import Refused

# (path, must be refused). Look-alike names (fullwidth dots, a division slash) are plain names inside the root: they
# may be accepted, but only as files under the root.
HOSTILE_PATHS: list[tuple[str, bool]] = [
    ("..", True), ("../x.md", True), ("../../etc/passwd", True), ("a/../../x.md", True), ("a/b/../../../x.md", True),
    ("/etc/passwd", True), ("/x.md", True), ("//x.md", True), ("~/x.md", True), ("~root/.bashrc", True),
    ("C:\\x.md", True), ("C:/x.md", True), ("..\\x.md", True), ("a\\..\\..\\x.md", True), ("\\\\server\\share\\x.md", True),
    ("%2e%2e/x.md", True), ("%2e%2e%2fx.md", True), ("%2E%2E/x.md", True), ("%252e%252e/x.md", True),
    ("..%2fx.md", True), ("..%5cx.md", True), ("%2e%2e%5c%2e%2e%5cx.md", True),
    ("x.md\x00.txt", True), ("\x00", True), ("x\n.md", True), ("x\r.md", True), ("\x1b[31mx.md", True),
    ("\x7fx.md", True), ("x\tab.md", True),
    ("/memories/../../x.md", True), ("/memories/../x.md", True), ("memories/../../x.md", True),
    ("MEMORY.md/../../x.md", True), ("log/../../x.md", True),
    ("out/secret.md", True), ("out/new.md", True), ("out", True), ("dangling/x.md", True), ("dangling", True),
    ("zero.md", True), ("fifo.md", True), ("sent_file.md", True), ("abs_link/passwd", True), ("loop/x.md", True),
    ("loop", True), ("notes/up/../../x.md", True),
    ("x" * 300 + ".md", True), ("a/" * 600 + "x.md", True), ("", True), (" ", True), (".", True), ("./", True),
    ("/", True), (".git/config", True), (".git/HEAD", True), (".memtui/config.toml", True),
    (".memtui/queue/p-0001.json", True), ("memory-log.jsonl", True), ("file:///etc/passwd", False),
    ("．．/x.md", False), ("‥/x.md", False), ("..\u2215x.md", False), ("\u2024\u2024/x.md", False),
    ("notes/up/MEMORY.md", False),
    # links a shared repo could ship, into git's and memtui's own files; nested repositories; names in any case;
    # invisible and direction-changing characters
    ("gitlink/config", True), ("gitlink/hooks/post-index-change", True), ("gitcfg.md", True), ("cfg_link.md", True),
    ("audit_link.md", True), ("state_link/config.toml", True), ("chain_link.md", True),
    (".GIT/config", True), (".Git/HEAD", True), ("log/.git/config", True), ("notes/.git", True),
    (".MEMTUI/config.toml", True), ("Memory-Log.jsonl", True), ("%2egit/config", True), ("GIT~1/config", True),
    (".git./config", True), ("nested/x.md", True), ("nested/new.md", True), ("gitfile_dir/y.md", True),
    ("a\u202egnp.md", True), ("a\u200bb.md", True), ("\ufeffMEMORY.md", True), ("x\u2066y.md", True),
    ("soft\u00adhyphen.md", True), ("line\u2028sep.md", True), ("nb\u00a0sp.md", True), ("zw\u2060j.md", True),
]


def tree_digest(path: Path, skip: tuple[str, ...] = ()) -> str:
    """A digest of every name and byte under `path` (symlinks by target), skipping top-level names in `skip`."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(path):
        rel_dir = os.path.relpath(dirpath, path)
        dirnames[:] = sorted(d for d in dirnames if not (rel_dir == "." and d in skip))
        for name in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
            if rel_dir == "." and name in skip:
                continue
            full = os.path.join(dirpath, name)
            h.update(f"{rel_dir}/{name}\0".encode())
            if os.path.islink(full):
                h.update(b"->" + os.readlink(full).encode())
            elif os.path.isfile(full):
                with open(full, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()


def make_hostile_root(base: Path) -> tuple[Path, Path]:
    """A memory root full of traps, and a sentinel folder beside it that nothing may touch."""
    from memtui.core.storage.init import init_root

    sentinel = base / "sentinel"
    sentinel.mkdir(parents=True)
    (sentinel / "secret.md").write_text("## Facts\n- [stated] secret (2026-01-01)\n")
    root = base / "root"
    init_root(root)
    (root / "notes").mkdir()
    (root / "notes" / "topic.md").write_text("# topic\n\n## Notes\n")
    os.symlink("../sentinel", root / "out")
    os.symlink("../nowhere", root / "dangling")
    os.symlink("/dev/zero", root / "zero.md")
    os.mkfifo(root / "fifo.md")
    os.symlink("../sentinel/secret.md", root / "sent_file.md")
    os.symlink("/etc", root / "abs_link")
    os.symlink("loop", root / "loop")
    os.symlink("..", root / "notes" / "up")
    for name, target in {"gitlink": ".git", "gitcfg.md": ".git/config", "cfg_link.md": ".memtui/config.toml",
                         "audit_link.md": "memory-log.jsonl", "state_link": ".memtui",
                         "chain_link.md": "gitcfg.md"}.items():
        os.symlink(target, root / name)
    (root / "nested").mkdir()
    (root / "nested" / ".git").mkdir()  # a repository inside the memory root
    (root / "nested" / "x.md").write_text("# nested\n")
    (root / "gitfile_dir").mkdir()
    (root / "gitfile_dir" / ".git").write_text("gitdir: ../.git\n")  # a gitlink file
    (root / "gitfile_dir" / "y.md").write_text("# y\n")
    return root, sentinel


@dataclass
class HostileReport:
    tried: int = 0
    refused: int = 0
    problems: list[str] = field(default_factory=list)


def try_paths(root: Path, sentinel: Path, paths: list[tuple[str, bool]] = HOSTILE_PATHS) -> HostileReport:
    from memtui.cli import main
    from memtui.core.writing.memory import Memory

    mem = Memory(root)
    rep = HostileReport()
    outside = tree_digest(sentinel)
    inside = {rel: (root / rel).read_bytes() for rel in ("MEMORY.md", "notes/topic.md")}
    # the look-alike names that are accepted are committed (objects, refs, index, queue change); these may not
    own = tree_digest(root / ".git" / "hooks") + "".join(
        (root / rel).read_text() for rel in (".git/config", ".git/HEAD", ".memtui/config.toml"))
    for path, must_refuse in paths:
        for how in ("create", "update", "read", "cli-show"):
            rep.tried += 1
            try:
                if how == "create":
                    res = mem.create(path, "## Facts\n- [stated] planted (2026-01-01)\n", actor="wes")
                    ok, msg = res.status == "refused", res.message
                    if res.status == "applied":
                        landed = Path(os.path.realpath(root / mem.store.check_path(path)))
                        if Path(os.path.realpath(root)) not in landed.parents:
                            rep.problems.append(f"create {path!r} wrote outside the root: {landed}")
                elif how == "update":
                    res = mem.update("Facts", "add", "[stated] planted by a hostile path", file=path, actor="wes")
                    ok, msg = res.status == "refused", res.message
                elif how == "read":
                    try:
                        mem.read_text(path)
                        ok, msg = False, ""
                    except (PathRefused, Refused) as exc:
                        ok, msg = True, str(exc)
                else:
                    out, err = io.StringIO(), io.StringIO()
                    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                        try:
                            code = main(["show", path, "--root", str(root)])
                        except SystemExit as exc:
                            code = int(exc.code or 0)
                    ok, msg = code != 0, err.getvalue()
            except Exception as exc:  # a traceback is exactly what this corpus hunts for
                rep.problems.append(f"{how} {path!r}: {type(exc).__name__}: {exc}")
                continue
            if ok:
                rep.refused += 1
                if not msg.strip():
                    rep.problems.append(f"{how} {path!r}: refused without a message")
            elif must_refuse and how != "read":
                rep.problems.append(f"{how} {path!r} was not refused")
            elif must_refuse and how == "read" and path not in ("",):
                rep.problems.append(f"read {path!r} was not refused")
    if tree_digest(root / ".git" / "hooks") + "".join(
            (root / rel).read_text() for rel in (".git/config", ".git/HEAD", ".memtui/config.toml")) != own:
        rep.problems.append("git's or memtui's own files changed")
    if tree_digest(sentinel) != outside:
        rep.problems.append("the sentinel folder outside the root changed")
    for rel, data in inside.items():
        if (root / rel).read_bytes() != data and rel != "MEMORY.md":
            rep.problems.append(f"{rel} changed")
    return rep
