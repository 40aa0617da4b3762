"""Safe paths: every path a caller gives must resolve inside the memory root to an ordinary memory file, or it is refused."""

from __future__ import annotations

import functools
import os
import posixpath
import stat
import unicodedata
from pathlib import Path
from urllib.parse import unquote

from memtui.core.basics.visible import is_hidden

MAX_NAME = 255
MAX_PATH = 1024

# Names that are git's or memtui's own, in any case (a case-insensitive disk, or a clone onto one, makes `.GIT` the
# repository). `.gitattributes` and `.gitmodules` name filter drivers and submodules: config, not memory.
PROTECTED_NAMES = frozenset({".git", ".memtui", "memory-log.jsonl", ".gitattributes", ".gitmodules"})


class PathRefused(ValueError):
    """A path that would leave the memory root, reach memtui's or git's own files, or that no memory file could have."""


def _bad_char(name: str) -> str | None:
    """The first character no file name may hold: one a person cannot see (visible.hidden, the definition every
    surface shares), or a space other than U+0020 (a name that looks like another)."""
    for i, c in enumerate(name):
        if is_hidden(name, i) or c in "\t\n" or (unicodedata.category(c) == "Zs" and c != " "):
            return c
    return None


def protected_name(name: str) -> bool:
    """Is this one path component git's or memtui's own? Any case; trailing dots and spaces (which Windows drops),
    an NTFS stream suffix (`.git::$INDEX_ALLOCATION` is the folder `.git` there; git fsck: hasDotgit) and the 8.3
    short name `GIT~1` count as `.git`."""
    folded = name.casefold().split(":", 1)[0].rstrip(". ")
    return folded in PROTECTED_NAMES or folded == "git~1" or name.casefold() in PROTECTED_NAMES


def plain_name(name: str) -> bool:
    """Could this one file name be part of a memory path (no control, invisible or direction-changing character)?
    Plain ASCII, the common case, answers without the full check's decoding."""
    if name.isascii() and name.isprintable() and "%" not in name and "\\" not in name:
        return True
    try:
        clean_rel(name)
    except PathRefused:
        return False
    return True


def _clean_rel(rel: str) -> str:
    """The check behind `clean_rel`, uncached."""
    if not isinstance(rel, str) or not rel.strip():
        raise PathRefused("empty path: give a path relative to the memory root, e.g. MEMORY.md")
    if len(rel) > MAX_PATH:
        raise PathRefused(f"path too long ({len(rel)} characters, at most {MAX_PATH})")
    # Printable ASCII with no '%', the common case, holds no control or invisible character and unquotes to
    # itself: only '..' is left to look for (a Redis memory's cold search checks every key's path).
    plain = rel.isascii() and rel.isprintable() and "%" not in rel
    for candidate in (rel,) if plain else {rel, unquote(rel), unquote(unquote(rel))}:
        if not plain:
            if any(ord(c) < 32 or c == "\x7f" for c in candidate):
                raise PathRefused(f"path contains a NUL or control character: {rel!r}")
            bad = _bad_char(candidate)
            if bad is not None:
                raise PathRefused(f"path contains an invisible or direction-changing character (U+{ord(bad):04X}): "
                                  f"{rel!r}; use plain letters, digits, '-', '_' and '.' in file names")
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


def _check_rel(rel: str) -> str:
    """The check behind `check_rel`, uncached."""
    norm = _clean_rel(rel)
    for candidate in {norm, unquote(norm), unquote(unquote(norm))}:
        for part in candidate.split("/"):
            if protected_name(part):
                raise PathRefused(f"{rel!r} names {part!r}, which is git's or memtui's own bookkeeping, not a "
                                  "memory file; give a memory file such as MEMORY.md or notes/topic.md")
    return norm


# Both checks look at the string alone (no file system), so an answer holds for ever: each path is checked once per
# process, where a propose + approve asked ~30 times (~2 ms of its ~18). A refusal is not kept: it is raised anew.
# Only paths up to CACHED_PATH characters are kept, 1,024 a cache: kept up to MAX_PATH, 4,096 a cache, distinct
# paths of emoji an agent asked to read pinned ~50 MB in the two caches for the life of the process; now ~2 MB.
_checked = functools.lru_cache(maxsize=1024)
CACHED_PATH = 128


def clean_rel(rel: str) -> str:
    """Normalise a caller's relative path to ``a/b.md`` form, refusing anything that could escape or hide.

    Checks that need no file system: NUL, control and invisible characters (bidi overrides, zero-width), absolute
    paths, drive letters, ``..`` (also percent-encoded), over-long names. Used by every store, including ones with
    no disk; `check_rel` adds the names no memory file may have."""
    return _clean_cached(rel) if type(rel) is str and len(rel) <= CACHED_PATH else _clean_rel(rel)


def check_rel(rel: str) -> str:
    """`clean_rel`, then refuse any component that is git's or memtui's own (`.git`, `.memtui`, the audit log),
    in any case and also percent-encoded."""
    return _check_cached(rel) if type(rel) is str and len(rel) <= CACHED_PATH else _check_rel(rel)


_clean_cached = _checked(_clean_rel)
_check_cached = _checked(_check_rel)


def resolve_inside(root: Path, rel: str, real_root: str | None = None) -> Path:
    """Resolve `rel` under `root`, component by component, to the file it really names; refuse it unless that is an
    ordinary memory path inside the root.

    Every symlink on the way is followed and its target checked: a link that leads out, dangles, loops, or reaches
    a protected place (`.git` anywhere, `.memtui/`, the audit log) is refused, for reads and writes alike. So is a
    path into a nested repository (a folder holding its own `.git`, or a gitlink file) and a device or FIFO.
    Returns the resolved path, so links that were checked are not followed again later. (Plain `os.path` strings:
    this runs for every read and write.) `real_root`: the root's real path as a reader of every file found it once
    (`FolderStore.pinned_root`; `realpath` of a deep root was a third of lint's reading of 8,000 files)."""
    norm = check_rel(rel)
    real_root = real_root or os.path.realpath(root)
    prefix = real_root + os.sep
    current = real_root
    parts = norm.split("/")
    for i, part in enumerate(parts):
        step = os.path.join(current, part)
        try:
            st = os.lstat(step)
        except (FileNotFoundError, NotADirectoryError):
            current = os.path.join(step, *parts[i + 1:])
            break
        if stat.S_ISLNK(st.st_mode):
            target = os.path.realpath(step)
            if not os.path.lexists(target) or os.path.islink(target):
                raise PathRefused(f"path goes through a dangling or looping symlink: {rel!r}")
            if target != real_root and not target.startswith(prefix):
                raise PathRefused(f"path leaves the memory root through a symlink: {rel!r}")
            if target != real_root:
                inner = target[len(prefix):].replace(os.sep, "/")
                try:
                    check_rel(inner)
                except PathRefused as exc:
                    raise PathRefused(f"{rel!r} goes through a symlink to {inner!r}: {exc}") from None
            step = target
        current = step
    # Every folder between the root and the file: none may be (or hold) another repository.
    if current != real_root:
        folders = current[len(prefix):].split(os.sep)
        folder = real_root
        for part in folders[:-1]:
            folder = os.path.join(folder, part)
            if _holds_git(folder):
                raise PathRefused(f"{rel!r} is inside a nested git repository "
                                  f"({folder[len(prefix):].replace(os.sep, '/')}); memtui reads and writes only "
                                  "the memory root's own files")
    try:
        mode = os.stat(current).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return Path(current)
    if stat.S_ISDIR(mode):
        if current != real_root and _holds_git(current):
            raise PathRefused(f"{rel!r} is a nested git repository, not a memory file")
    elif not stat.S_ISREG(mode):
        raise PathRefused(f"not a regular file: {rel!r}")
    return Path(current)


def _holds_git(folder: str) -> bool:
    """Does this folder hold a `.git` (a repository, or a gitlink file naming one)? One lstat, not a listing: git
    itself finds a repository by this exact name (a case-insensitive disk answers for `.GIT` too)."""
    return os.path.lexists(os.path.join(folder, ".git"))


def join_link(base: str, target: str) -> str | None:
    """The root-relative path a markdown link `target` names from the folder `base` ("" for the root), or None
    where it climbs out of the root: `](../../etc/passwd)` names nothing memtui reads. `%XX` escapes are undone."""
    from urllib.parse import unquote

    parts: list[str] = [p for p in base.split("/") if p]
    for part in unquote(target).split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) or None
