"""Claude Code's own memory writes through memtui's review: its PreToolUse, PostToolUse and Stop hooks, the hook
entries in its settings file, and its memory folders (`~/.claude/projects/*/memory/`).

Claude Code edits `MEMORY.md` and topic files with its Write, Edit and MultiEdit tools. The PreToolUse hook turns
such a call on a file inside a memory root into a proposal (same policy, same guard, actor `claude-code`) and
denies the tool call, so the file never changes behind memtui's back: a write the policy applies at once memtui
applies itself (audited and committed) and the reply says so; anything else waits in the queue and the reply
says "Queued as p-0012 for review; not in memory yet". A call on a file outside every memory root gets no reply
at all. Paths in the payload are hostile: a path is resolved both as written and through the file system, and a
path that gets into or out of a root through a symlink or `..`, or that the store's check refuses, is denied with
the reason. The PostToolUse and Stop hooks tell the session, once, how its queued writes were decided.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memtui.core.basics.jsontext import loads

ACTOR = "claude-code"
WRITE_TOOLS = ("Write", "Edit", "MultiEdit")
PRE_MATCHER = "Write|Edit|MultiEdit"
POST_MATCHER = "Write|Edit|MultiEdit|Read"
TOLD_DIR = "claude-code"  # under .memtui/: which decisions each session has been told about
# Beside each session's told file, `<session>.queued`: the ids its writes were queued as, one a line, appended by
# the PreToolUse hook. The decisions hook reads those queue files alone, where it used to read every proposal
# ever made (it runs after every Read). The marker says every session's queued ids are in such a log: before it
# exists (a memory from an older memtui), one full read of the queue writes them, once.
QUEUED_SUFFIX = ".queued"
QUEUED_MARKER = "queued-logs"
_PID = re.compile(r"p-[0-9]{4,11}")


def claude_home() -> Path:
    """Claude Code's configuration folder: $CLAUDE_CONFIG_DIR, else ~/.claude."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() if env else Path.home() / ".claude"


def memory_folders(home: Path | None = None) -> list[Path]:
    """Claude Code's memory folders, most recently changed first."""
    base = (home or claude_home()) / "projects"
    try:
        found = [p / "memory" for p in base.iterdir() if (p / "memory").is_dir() and not (p / "memory").is_symlink()]
    except OSError:
        return []
    return sorted(found, key=lambda p: (-_mtime(p), str(p)))


def project_slug(cwd: str | os.PathLike[str]) -> str:
    """Claude Code's name for a project's folder under projects/: the absolute path with / (and .) as -."""
    return re.sub(r"[^A-Za-z0-9-]", "-", os.path.abspath(cwd))


def folder_for_project(cwd: str | os.PathLike[str], home: Path | None = None) -> Path | None:
    folder = (home or claude_home()) / "projects" / project_slug(cwd) / "memory"
    return folder if folder.is_dir() else None


def _mtime(p: Path) -> float:
    try:
        return max([p.stat().st_mtime] + [c.stat().st_mtime for c in p.iterdir()])
    except OSError:
        return 0.0


# PreToolUse ---------------------------------------------------------------------------------------------------
class Denied(Exception):
    """A call on a memory file that memtui will not carry out; the message is the reason Claude is shown."""


@dataclass
class Target:
    root: Path
    rel: str


def locate(file_path: object, cwd: object, roots: list[Path]) -> Target | None:
    """The memory root and relative path a tool call's `file_path` names; None when it is outside every root.

    The path is read two ways, as written (made absolute against the payload's cwd, `..` folded) and as the file
    system resolves it (symlinks followed); a path inside a root one way and not the other is a trick: Denied."""
    if not isinstance(file_path, str) or not file_path:
        return None
    if "\0" in file_path:
        raise Denied("file_path contains a NUL character; send the plain absolute path of the memory file")
    raw = Path(file_path).expanduser()
    if not raw.is_absolute():
        base = cwd if isinstance(cwd, str) and os.path.isabs(cwd) else os.getcwd()
        raw = Path(base) / raw
    lexical = Path(os.path.normpath(raw))
    real = Path(os.path.realpath(raw))
    for root in roots:
        as_given, real_root = Path(os.path.abspath(root)), Path(os.path.realpath(root))
        lex_in = _inside(lexical, as_given) or _inside(lexical, real_root)
        real_in = _inside(real, real_root)
        if not lex_in and not real_in:
            continue
        if lex_in != real_in:
            where = "into" if real_in else "out of"
            raise Denied(f"{file_path} leads {where} the memory root {root} through a symlink or '..'; memtui "
                         "refuses it. Write to the memory file by its real path inside the root")
        if ".." in Path(file_path).parts:
            raise Denied(f"{file_path} contains '..'; send the plain absolute path of the memory file")
        rel = _relative(lexical, as_given) if _inside(lexical, as_given) else _relative(lexical, real_root)
        if not rel:
            raise Denied(f"{file_path} is the memory root itself, not a file")
        return Target(root, rel)
    return None


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _relative(path: Path, root: Path) -> str:
    return "" if path == root else path.relative_to(root).as_posix()


def new_text(tool: str, tool_input: dict[str, Any], before: str | None) -> str:
    """What the file would hold after the tool call, as Claude Code's tool would have written it."""
    if tool == "Write":
        content = tool_input.get("content")
        if not isinstance(content, str):
            raise Denied("Write needs content (a string)")
        return content
    if before is None:
        raise Denied(f"{tool_input.get('file_path')} does not exist; create it with Write first")
    if tool == "Edit":
        edits = [tool_input]
    else:
        edits = tool_input.get("edits")
        if not isinstance(edits, list) or not edits:
            raise Denied("MultiEdit needs edits: a list of {old_string, new_string, replace_all}")
    text = before
    for n, edit in enumerate(edits, 1):
        which = f"edit {n}: " if tool == "MultiEdit" else ""
        if not isinstance(edit, dict):
            raise Denied(f"{which}each edit is an object with old_string and new_string")
        old, new, every = edit.get("old_string"), edit.get("new_string"), edit.get("replace_all", False)
        if not isinstance(old, str) or not isinstance(new, str) or not isinstance(every, bool):
            raise Denied(f"{which}old_string and new_string must be strings and replace_all true or false")
        if old == new:
            raise Denied(f"{which}old_string and new_string are the same; there is nothing to change")
        count = text.count(old) if old else 0
        if count == 0:
            raise Denied(f"{which}old_string was not found in the file; read it again and send text that matches "
                         "exactly")
        if count > 1 and not every:
            raise Denied(f"{which}old_string occurs {count} times; include more context so it matches once, or set "
                         "replace_all")
        text = text.replace(old, new) if every else text.replace(old, new, 1)
    return text


def pre_tool_use(payload: Any, roots: list[Path]) -> dict[str, Any] | None:
    """The hook's JSON reply to a PreToolUse payload, or None (no output) for calls memtui leaves alone."""
    if not isinstance(payload, dict) or payload.get("tool_name") not in WRITE_TOOLS:
        return None
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    try:
        target = locate(tool_input.get("file_path"), payload.get("cwd"), roots)
        if target is None:
            return None
        return _deny(_propose(target, payload["tool_name"], tool_input, payload.get("session_id")))
    except Denied as exc:
        return _deny(f"memtui refused this write to memory: {exc}.")
    except Exception as exc:  # a hook that fails lets the tool run: for a memory file, fail closed instead
        return _deny(f"memtui could not review this write to memory ({type(exc).__name__}: {exc}), so it was not "
                     "made; tell the user to run `memtui doctor`.")


def _propose(target: Target, tool: str, tool_input: dict[str, Any], session: Any) -> str:
    from memtui.core.grammar.paths import PathRefused
    from memtui.core.grammar.update import Refused
    from memtui.core.storage.store import StoreError
    from memtui.core.writing.memory import Memory

    memory = Memory(target.root)
    try:
        rel = memory.store.check_path(target.rel)
        if not memory.config.policy.is_agent(ACTOR):
            raise Denied(f"[review] agents in {target.root}/.memtui/config.toml does not count {ACTOR!r} as an "
                         "agent, so its writes would skip review; add \"claude*\" to it")
        from memtui.core.storage.reading import decoded

        before = decoded(rel, memory.store.served(rel))  # a hard link is refused: no count or match of its bytes
        after = new_text(tool, tool_input, before)
        if before == after:
            raise Denied(f"{rel} already holds exactly this text; nothing to change")
        session = session if isinstance(session, str) and session.isprintable() and len(session) <= 200 else None
        if before is None:
            p = memory._draft(ACTOR, rel, "create", content=after, origin="agent", session=session)
        else:
            old, new = _as_edit(before, after)
            p = memory._draft(ACTOR, rel, "edit", old=old, content=new, origin="agent", session=session)
        result = memory.submit(p)
    except (PathRefused, Refused) as exc:
        raise Denied(str(exc)) from None
    except (OSError, StoreError) as exc:
        raise Denied(f"the memory root could not be read or written ({exc}); nothing was written") from None
    where = f"{target.root}/{rel}"
    if result.status == "queued" and session is not None:
        _note_queued(target.root, {session: [result.id]})
    if result.status == "queued":
        from memtui.core.writing.memory import QUEUED_MESSAGE

        why = result.message.removesuffix(QUEUED_MESSAGE).strip()  # why it waits, when it is one that would not
        why = f"{why} " if why else ""
        return (f"Queued as {result.id} for review; not in memory yet. {why}memtui holds this {tool} of {where} "
                "until a person approves, revises or rejects it in memtui; do not retry it or write the file another "
                "way. "
                + ("You will be told the decision." if session is not None else
                   "This session's id cannot be kept, so the decision will not be told here: read the file later."))
    if result.status == "applied":
        return (f"Applied by memtui ({result.message.rstrip('.')}): {where} already holds this change, so the tool "
                "call itself was not run. Do not write it again.")
    raise Denied(result.message)


def _deny(reason: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


def _as_edit(before: str, after: str) -> tuple[str, str]:
    """A narrow (old, new) replacement turning `before` into `after`: whole lines that occur once in `before`."""
    if not before:
        return "", after
    from memtui.agent.memory_tool import _as_edit as narrow

    return narrow(before, after)


# PostToolUse and Stop: decisions told once --------------------------------------------------------------------
def decisions(payload: Any, roots: list[Path]) -> dict[str, Any] | None:
    """Tell the session how its queued writes were decided since it was last told (None: nothing new)."""
    if not isinstance(payload, dict):
        return None
    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        return None
    event = payload.get("hook_event_name")
    if event == "Stop" and payload.get("stop_hook_active"):
        return None  # Claude is already continuing because of a Stop hook: never loop
    lines = []
    for root in roots:
        lines += _news(root, session)
    if not lines:
        return None
    text = "memtui review decisions on your earlier memory writes:\n" + "\n".join(lines)
    if event == "Stop":
        return {"decision": "block", "reason": text}
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": text}}


def _news(root: Path, session: str) -> list[str]:
    from memtui.core.writing.memory import Memory
    from memtui.core.writing.proposals import APPLIED, CONFLICT, REJECTED

    folder = _told_dir(root, create=True)
    if folder is None:
        return []
    memory = Memory(root)
    told_file = _session_file(folder, session, ".json")
    try:
        told = {x for x in loads(_read(told_file) or b"[]") if isinstance(x, str)}
    except (ValueError, TypeError):
        told = set()
    out, newly = [], []
    for p in _session_proposals(root, memory, folder, session, told):
        if p.actor != ACTOR or p.session != session or p.id in told:
            continue
        if p.status == APPLIED:
            out.append(f"- {p.id} ({p.action} {p.file}): approved by {p.decided_by or 'a person'}; it is in "
                       "memory now" + (" (revised before approval)" if p.reason else "") + ".")
        elif p.status == REJECTED:
            out.append(f"- {p.id} ({p.action} {p.file}): rejected by {p.decided_by or 'a person'}"
                       + (f": {p.reason}" if p.reason else "") + ". Do not write it again.")
        elif p.status == CONFLICT:
            out.append(f"- {p.id} ({p.action} {p.file}): not applied, the file changed since ({p.reason}); read "
                       "the file again before proposing anything else.")
        else:
            continue
        newly.append(p.id)
    if newly:
        from memtui.core.storage.folder import atomic_write

        try:
            atomic_write(told_file, json.dumps(sorted(told | set(newly))).encode())
        except OSError:
            pass  # no told file can be kept there (a folder an agent made): told now, and again later
    return out


def _session_proposals(root: Path, memory: Any, folder: Path, session: str, told: set[str]) -> list[Any]:
    """The session's queued proposals not yet told: from its queued log, reading only those queue files. Without
    the marker, every proposal once, noting each session's ids in its log (the marker follows)."""
    from memtui.core.writing.proposals import Proposal, unsealed_reason

    if _read(folder / QUEUED_MARKER) is None:
        everything = memory.proposals(include_decided=True, external=False)
        by_session: dict[str, list[str]] = {}
        for p in everything:
            if p.actor == ACTOR and p.session:
                by_session.setdefault(p.session, []).append(p.id)
        if _note_queued(root, by_session, skip_odd=True):
            from memtui.core.storage.folder import atomic_write

            marker = folder / QUEUED_MARKER
            try:
                if marker.is_dir() and not marker.is_symlink():
                    # A folder an agent made there would keep every hook reading everything: moved aside whole
                    # (a rename, however much it holds), never read again.
                    os.rename(marker, folder / f".{QUEUED_MARKER}.{os.getpid()}.{os.urandom(4).hex()}.gone")
                atomic_write(marker, b"every session's queued ids are in its .queued log\n")
            except OSError:
                pass  # the next hook reads the whole queue again
        return everything
    logged = (_read(_session_file(folder, session, QUEUED_SUFFIX)) or b"").decode("ascii", "replace").split()
    out = []
    for pid in dict.fromkeys(logged):  # a log names what to read; the queue file says whose it is
        if pid in told or not _PID.fullmatch(pid):
            continue
        data = memory.store.queue_load(pid) or b""
        try:
            p = Proposal.from_json(data)
        except (ValueError, TypeError):
            continue
        if p.id == pid and unsealed_reason(data) is None:  # a decision memtui did not record is not told
            out.append(p)
    return out


def _note_queued(root: Path, ids: dict[str, list[str]], *, skip_odd: bool = False) -> bool:
    """Append each session's queued ids to its log. On any failure the marker goes, so the next decisions hook
    reads the whole queue again rather than miss one: said by the return value (True: every id is noted).
    `skip_odd` (the full read) passes over a log that is no regular file (a folder, link or FIFO an agent put
    there): that session's hook finds nothing to read by, and every other session's hook stays cheap."""
    folder = _told_dir(root, create=True)
    try:
        if folder is None:
            raise OSError("its folder is not a plain folder")
        for session, pids in ids.items():
            log = _session_file(folder, session, QUEUED_SUFFIX)
            if skip_odd and _odd(log):
                continue
            fd = os.open(log,
                         os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise OSError("not a regular file")
                os.write(fd, "".join(f"{pid}\n" for pid in pids).encode())
            finally:
                os.close(fd)
        return True
    except OSError:
        if folder is not None:
            try:
                (folder / QUEUED_MARKER).unlink(missing_ok=True)
            except OSError:
                pass
        return False


def _odd(path: Path) -> bool:
    """Something other than a regular file is at `path` (nothing there is not odd)."""
    try:
        return not stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False
    except OSError:
        return True


def _told_dir(root: Path, *, create: bool = False) -> Path | None:
    """`claude-code/` in the memory's state folder (`.memtui/`, or beside a folder memtui did not make:
    memtui.core.storage.places) when it is a plain folder (not a link an agent put there); None else."""
    from memtui.core.storage.places import places_for

    places = places_for(root)
    state = places.state
    if create and places.beside:
        try:
            places.ready()
        except OSError:
            return None
    if not state.is_dir() or state.is_symlink():
        return None
    folder = state / TOLD_DIR
    if create:
        try:
            folder.mkdir(exist_ok=True)
        except OSError:
            return None
    return folder if folder.is_dir() and not folder.is_symlink() else None


def _session_file(folder: Path, session: str, suffix: str) -> Path:
    return folder / (re.sub(r"[^A-Za-z0-9_-]", "_", session)[:120] + suffix)


def _read(path: Path) -> bytes | None:
    """A regular file's bytes, or None (missing, a FIFO, a link loop, unreadable): a hook never waits on a file."""
    from memtui.core.storage.folder import _regular_bytes

    try:
        return _regular_bytes(path)
    except OSError:
        return None


# settings: installing the hooks --------------------------------------------------------------------------------
def hook_command(sub: str, root: Path | None) -> str:
    exe = shutil.which("memtui")
    argv = [exe] if exe else [sys.executable, "-m", "memtui"]
    argv += ["hook", sub]
    if root is not None:
        argv += ["--root", str(root)]
    return shlex.join(argv)


def wanted_hooks(root: Path | None) -> dict[str, tuple[str, str]]:
    """event → (matcher, command) memtui installs."""
    return {
        "PreToolUse": (PRE_MATCHER, hook_command("pre-tool-use", root)),
        "PostToolUse": (POST_MATCHER, hook_command("decisions", root)),
        "Stop": ("", hook_command("decisions", root)),
    }


def merged_settings(text: str | None, root: Path | None) -> str:
    """The settings file's text with memtui's hook entries added; every other key and hook is kept as it was.

    Idempotent: an entry already holding one of memtui's hook commands (for this root) is left alone."""
    try:
        settings = json.loads(text) if text and text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"the settings file is not valid JSON ({exc}); fix it by hand first, nothing was "
                         "written") from None
    if not isinstance(settings, dict):
        raise ValueError("the settings file is not a JSON object; fix it by hand first, nothing was written")
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError('"hooks" in the settings file is not an object; fix it by hand first, nothing was written')
    for event, (matcher, command) in wanted_hooks(root).items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ValueError(f'"hooks.{event}" in the settings file is not a list; fix it by hand first, nothing '
                             "was written")
        if any(_has_command(g, command) for g in groups):
            continue
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": command}]
        groups.append(group)
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def _has_command(group: Any, command: str) -> bool:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return False
    return any(isinstance(h, dict) and h.get("command") == command for h in group["hooks"])


def settings_path(project: Path | None, home: Path | None = None) -> Path:
    """The project's .claude/settings.json, else the user's ~/.claude/settings.json."""
    if project is not None:
        return project / ".claude" / "settings.json"
    return (home or claude_home()) / "settings.json"


def settings_diff(path: Path, before: str | None, after: str) -> str:
    return "".join(difflib.unified_diff((before or "").splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=str(path) if before is not None else "/dev/null",
                                        tofile=str(path)))
