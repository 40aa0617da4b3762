"""Where a folder memory's parts live: the one place that decides it.

A memory folder holds the memory's files. memtui's own state (the review queue, the lock, undo points, intents,
rejected bytes, the config, the search index), its audit log and the git history live either

- **inside** the folder, as `memtui init` made it (and every older memtui): `<root>/.memtui/`,
  `<root>/memory-log.jsonl`, history in `<root>/.git`. A root holding `.memtui/` or `memory-log.jsonl` keeps this
  layout exactly; or
- **beside** it, for any other folder (a Claude Code, Hermes, OpenClaw or Cline memory, a folder of notes): nothing of
  memtui's is ever written into it. State and audit go to `$XDG_STATE_HOME/memtui/memories/<name>-<hash>/` (default
  `~/.local/state/memtui`), keyed by the folder's real path (so a symlink to the folder and the folder share one
  state), which is recorded there (`place.json`) so a moved folder's state can be found again. History is the
  person's own repository when the folder is the top of a git work tree (memtui's commits go there, and nothing of
  its bookkeeping enters their `git status`); otherwise a git repository of memtui's in the state folder whose
  work tree is the folder (git's `--git-dir`/`--work-tree` arrangement, `core.worktree` set). A folder inside a
  larger repository but not its top gets memtui's own history beside it: memtui never commits into a project's
  repository that a memory folder merely sits in.

A state folder must be a real folder owned by this user and writable by no one else: one planted by another user (or
a symlink to one) is refused, since its queue and config decide what is applied.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# Imported where used (hashlib, json, re, dataclasses): `memtui search` and `memtui context` on a memory with its
# state inside read this module and nothing else of it (tests/test_cli_commands.py counts their imports).

STATE_DIR = ".memtui"
AUDIT_FILE = "memory-log.jsonl"
PLACE_FILE = "place.json"  # in a state folder beside: {"root": the folder's real path}
GIT_BESIDE = "git"  # memtui's own repository in a state folder beside
# The first look at a large folder, until its baseline is committed (memtui/core/storage/baseline.py).
LOOK_FILE = "baseline-look.json"


class PlaceRefused(OSError):
    """A state folder memtui will not use: not a folder, not this user's, or writable by others."""


def state_home() -> Path:
    """`$XDG_STATE_HOME/memtui` (default `~/.local/state/memtui`): the person's, shared with the seal key."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "memtui"


def memories_home() -> Path:
    return state_home() / "memories"


def state_key(real: str) -> str:
    """`<name>-<hash>`: the folder's name made safe (plain letters, digits, '.', '-', '_'; at most 24, so a socket
    path under it fits) for a person reading the state folder's listing, and 16 hex digits of the real path's
    sha256, which make it unique."""
    import hashlib
    import re

    name = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(real.rstrip("/")) or "root").strip("._-")[:24] or "memory"
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    return f"{name}-{digest}"


def _is_inside(root: Path) -> bool:
    """Does the root keep memtui's state inside (made by `memtui init`, or an older memtui)? `.memtui` as a real
    folder, or the audit log; a `.memtui` that is a symlink or a file is not memtui's and not followed."""
    try:
        st = os.lstat(root / STATE_DIR)
        if stat.S_ISDIR(st.st_mode):
            return True
    except OSError:
        pass
    return os.path.lexists(root / AUDIT_FILE)


def _repo_top(real: str) -> bool:
    """Is the folder the top of a git work tree (its own `.git`, a folder or a gitlink file)?"""
    return os.path.lexists(os.path.join(real, ".git"))


class Places:
    """Where one folder memory's parts are. `inside`: today's layout; else state beside. `git_dir`: the repository
    (it may not exist yet); `own_history`: memtui's repository beside the folder, not the person's."""

    __slots__ = ("root", "real", "inside", "state", "audit", "git_dir", "own_history")

    def __init__(self, root: Path, real: str, inside: bool, state: Path, audit: Path, git_dir: Path,
                 own_history: bool) -> None:
        self.root, self.real, self.inside, self.state = root, real, inside, state
        self.audit, self.git_dir, self.own_history = audit, git_dir, own_history

    def with_git_in_folder(self) -> Places:
        """The same places once git is started in the folder itself (`memtui init --git`): the person's."""
        from memtui.core.storage.gitcall import git_dir_of

        return Places(self.root, self.real, self.inside, self.state, self.audit, git_dir_of(self.root), False)

    @property
    def work_tree(self) -> Path:
        return self.root

    @property
    def beside(self) -> bool:
        return not self.inside

    def has_git(self) -> bool:
        if self.own_history:  # memtui's own, once its baseline is written whole (not while the first look stands)
            return os.path.lexists(self.git_dir) and not os.path.lexists(self.state / LOOK_FILE)
        return os.path.lexists(self.root / ".git")

    def recording(self) -> bool:
        """Is memtui's history beside the folder being recorded: the first look taken, its baseline not yet whole
        (memtui/core/storage/baseline.py)? Said to the person as such, never as "no history"."""
        return self.own_history and os.path.lexists(self.state / LOOK_FILE)

    def describe(self) -> str:
        """One line for a person: where history is kept."""
        if self.own_history:
            if self.recording():
                return f"history is being recorded (baseline in progress), beside the folder at {self.git_dir}"
            return f"history: memtui's, beside the folder at {self.git_dir}"
        if self.inside:
            return f"history: git in the folder ({self.git_dir})" if self.has_git() else "history: none yet"
        return f"history: your git repository at {self.git_dir}"

    def keep_unlisted(self, path: Path) -> None:
        """`path` (in the state folder) named in the repository's own ignore list, `info/exclude` (never committed),
        when the state folder is inside the folder's work tree, so its `git status` does not list it: a memory made
        before `memtui init` wrote lint's cache into .gitignore showed it as untracked. Appended once; never through
        a symlink (an agent could plant one to have a line appended to another file of the person's); a repository
        whose `info` is a symlink is left alone. Beside the folder, the state is in no work tree: nothing to do."""
        if not self.inside:
            return
        listed = "/" + path.relative_to(self.root).as_posix()
        info = self.git_dir / "info"
        if not self.git_dir.is_dir() or info.is_symlink():
            return
        info.mkdir(exist_ok=True)
        fd = os.open(info / "exclude", os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
        with os.fdopen(fd, "r+b") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return
            lines = f.read().decode("utf-8", "replace")
            if listed not in lines.splitlines():
                f.write(("" if not lines or lines.endswith("\n") else "\n").encode() + listed.encode() + b"\n")

    def ready(self) -> None:
        """Make the state folder beside (mode 0700) and record the folder's path in it; refuse one that is not
        this user's own (see `check_state`). Nothing is made for a root that keeps its state inside."""
        if self.inside:
            return
        _make_private(self.state)
        import json

        record = self.state / PLACE_FILE
        text = json.dumps({"root": self.real}, ensure_ascii=False) + "\n"
        try:
            if record.read_text(encoding="utf-8") == text:
                return
        except (OSError, UnicodeDecodeError):
            pass
        import threading

        # One name per writer, thread included: two threads of one process writing the record at once each rename
        # their own file (with the pid alone, the second rename found the first had taken it).
        tmp = record.with_name(f".{PLACE_FILE}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, record)  # whole or not at all (a record lost in a crash is written again next time)


def _make_private(state: Path | None = None) -> None:
    """`$XDG_STATE_HOME/memtui/memories/` (and `state` in it) made if missing, mode 0700, each checked."""
    for folder in (state_home(), memories_home(), *((state,) if state is not None else ())):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except FileNotFoundError:
            os.makedirs(folder, 0o700, exist_ok=True)
        check_state(folder, shared=folder == state_home())


def check_state(folder: Path, *, shared: bool = False) -> None:
    """Refuse a state folder that is a symlink, not a folder, not owned by this user, or writable by group or
    others: its queue and config decide what is applied to the memory, so only its owner may write there.
    `shared`: `$XDG_STATE_HOME/memtui`, which other parts of memtui make with the umask's mode (owner checked)."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise PlaceRefused(f"memtui's state folder {folder} is not a folder (a symlink or a file); move it aside "
                           "and open the memory again (a fresh state folder is made; the memory's files are kept)")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise PlaceRefused(f"memtui's state folder {folder} belongs to another user (uid {st.st_uid}); memtui uses "
                           "only state you own. Move it aside and open the memory again")
    if st.st_mode & 0o022 and not shared:
        raise PlaceRefused(f"memtui's state folder {folder} can be written by other users (mode "
                           f"{stat.S_IMODE(st.st_mode):o}); run `chmod go-w {folder}` if it is yours, or move it aside")


def places_for(root: str | os.PathLike[str]) -> Places:
    """Where the memory at `root` keeps its parts (nothing is made or written: see `Places.ready`)."""
    root = Path(root).expanduser().absolute()
    if _is_inside(root):
        from memtui.core.storage.gitcall import git_dir_of

        return Places(root, os.path.realpath(root), True, root / STATE_DIR, root / AUDIT_FILE, git_dir_of(root), False)
    real = os.path.realpath(root)
    state = memories_home() / state_key(real)
    if _repo_top(real):
        from memtui.core.storage.gitcall import git_dir_of

        return Places(root, real, False, state, state / AUDIT_FILE, git_dir_of(root), False)
    return Places(root, real, False, state, state / AUDIT_FILE, state / GIT_BESIDE, True)


def state_of(root: str | os.PathLike[str]) -> Path:
    """The state folder of the folder memory at `root` (inside or beside; not made)."""
    return places_for(root).state


def beside(root: str | os.PathLike[str]) -> bool:
    """Does the folder at `root` keep memtui's state beside it (nothing of memtui's may be written into it)?"""
    return not _is_inside(Path(root).expanduser().absolute())


def recorded_root(state: Path) -> str | None:
    """The folder path recorded in a state folder beside (None when there is none or it cannot be read)."""
    import json

    try:
        raw = json.loads((state / PLACE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = raw.get("root") if isinstance(raw, dict) else None
    return value if isinstance(value, str) else None


def orphaned() -> list[tuple[Path, str]]:
    """State folders beside whose recorded folder is gone (moved, renamed or deleted): (state folder, old path)."""
    out = []
    try:
        names = sorted(os.listdir(memories_home()))
    except OSError:
        return out
    for name in names:
        state = memories_home() / name
        old = recorded_root(state)
        if old is not None and not os.path.isdir(old):
            out.append((state, old))
    return out


def move_state(old: str | os.PathLike[str], new: str | os.PathLike[str]) -> Path:
    """Keep a moved or renamed folder's history: the state folder recorded for `old` becomes `new`'s (its git's
    `core.worktree` pointed at `new`). Refused when `new` already has state of its own, or `old` has none."""
    new_places = places_for(new)
    if new_places.inside:
        raise PlaceRefused(f"{new} keeps its state inside (.memtui/); it needs no move")
    old_real = os.path.realpath(Path(old).expanduser().absolute())
    source = memories_home() / state_key(old_real)
    if not source.is_dir():
        found = [s for s, path in orphaned() if path == old_real]
        if not found:
            raise PlaceRefused(f"no memtui state is recorded for {old}; nothing to move (`memtui doctor` lists "
                               "state folders whose folder is gone)")
        source = found[0]
    check_state(source)
    if os.path.lexists(new_places.state):
        if _holds_record(new_places.state):
            raise PlaceRefused(f"{new} already has memtui history or reviews of its own at {new_places.state}; "
                               "move that aside first (nothing was moved)")
        import shutil

        check_state(new_places.state)
        shutil.rmtree(new_places.state)  # a lock, an index, the path record: nothing a person made
    _make_private()
    os.rename(source, new_places.state)
    new_places.ready()
    git_dir = new_places.state / GIT_BESIDE
    if git_dir.is_dir() and not any(c in new_places.real for c in "\r\n\0"):
        _set_worktree(git_dir, Path(new_places.real))
    return new_places.state


def _holds_record(state: Path) -> bool:
    """Does a state folder hold anything a person would miss: history, the audit log, a proposal?"""
    queue = state / "queue"
    try:
        proposals = any(n.endswith(".json") for n in os.listdir(queue)) if queue.is_dir() else False
    except OSError:
        proposals = True
    return os.path.lexists(state / GIT_BESIDE) or os.path.lexists(state / AUDIT_FILE) or proposals


def _set_worktree(git_dir: Path, work_tree: Path) -> None:
    import subprocess

    subprocess.run(["git", "--git-dir", str(git_dir), "config", "core.worktree", str(work_tree)], check=True,
                   capture_output=True)
