"""Safe paths: every path a caller gives must resolve inside the memory root, or it is refused."""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path
from urllib.parse import unquote

MAX_NAME = 255
MAX_PATH = 1024


class PathRefused(ValueError):
    """A path that would leave the memory root, or that no memory file could have."""


def clean_rel(rel: str) -> str:
    """Normalise a caller's relative path to ``a/b.md`` form, refusing anything that could escape.

    Checks that need no file system: NUL and control characters, absolute paths, drive letters, ``..``
    (also percent-encoded), over-long names. Used by every store, including ones with no disk."""
    if not isinstance(rel, str) or not rel.strip():
        raise PathRefused("empty path: give a path relative to the memory root, e.g. MEMORY.md")
    if len(rel) > MAX_PATH:
        raise PathRefused(f"path too long ({len(rel)} characters, at most {MAX_PATH})")
    for candidate in {rel, unquote(rel), unquote(unquote(rel))}:
        if any(ord(c) < 32 or c == "\x7f" for c in candidate):
            raise PathRefused(f"path contains a NUL or control character: {rel!r}")
        if ".." in candidate.replace("\\", "/").split("/"):
            raise PathRefused(f"path leaves the memory root: {rel!r} (no '..' allowed)")
    p = rel.replace("\\", "/")
    if p.startswith("/memories/") or p == "/memories":
        p = p[len("/memories") :]
    if p.startswith(("/", "~")) or (len(p) > 1 and p[1] == ":"):
        raise PathRefused(f"absolute path refused: {rel!r}; give a path relative to the memory root")
    norm = posixpath.normpath(p)
    if norm in ("", "."):
        raise PathRefused("the path names the memory root itself, not a file")
    if any(len(part) > MAX_NAME for part in norm.split("/")):
        raise PathRefused(f"a name in {rel!r} is longer than {MAX_NAME} characters")
    return norm


def resolve_inside(root: Path, rel: str) -> Path:
    """Resolve `rel` under `root` on disk: symlinks that lead out (or dangle) and device files are refused.

    Returns the resolved path, so links that were checked are not followed again later."""
    norm = clean_rel(rel)
    real_root = Path(os.path.realpath(root))
    full = real_root / norm
    existing = full
    while not os.path.lexists(existing):
        existing = existing.parent
    if existing.is_symlink() and not existing.exists():
        raise PathRefused(f"path goes through a dangling symlink: {rel!r}")
    real = Path(os.path.realpath(existing))
    if real != real_root and real_root not in real.parents:
        raise PathRefused(f"path leaves the memory root through a symlink: {rel!r}")
    resolved = real / full.relative_to(existing) if existing != full else real
    if resolved.exists():
        mode = resolved.stat().st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise PathRefused(f"not a regular file: {rel!r}")
    return resolved
