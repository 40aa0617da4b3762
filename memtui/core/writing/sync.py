"""Sync through a git remote: what another machine or a teammate pushed comes in as proposals for a person.

A sync is four steps, each safe to cut short and run again:

- `fetch`: `git fetch` of the remote's branch (the one this memory is on) into a private ref,
  `refs/memtui/fetched/<remote>`. A remote whose branch no longer contains what this memory already merged from it
  (`refs/memtui/seen/<remote>`: a force-push, a rewritten history) is refused before anything is recorded: the old
  fetched ref stays, nothing local changes.
- `incoming`: each file the remote changed since the merge base becomes one proposal in the review queue,
  submitted through the one write path with `review=True` (guarded as an agent's write and always queued, whatever
  the policy's rules say); a flag names the commits' authors, subjects and approval trailers. A path memtui refuses
  (`.memtui/`, a config, `.git`, `.gitmodules`, a symlink, a submodule, a file outside the layout's grammar, one
  over `MAX_INCOMING` bytes, bytes that are not UTF-8) is never queued: the refusal and its reason go to the audit
  log, and the merge keeps this memory's version. Where both sides changed a file since the merge base, what each
  side changed alone is merged line by line (a line is an entry); an entry both changed comes in as a revise of
  ours (approving strikes ours as superseded, rejecting keeps ours: neither is lost, the other stays in history).
- `decide`: run by the decision on the last open proposal of the fetched range (`settle`, from `Memory.approve`
  and `Memory.reject`, whatever the surface), else by the next sync. Where nothing diverged (every change approved
  as it came, no other commit here) the branch fast-forwards to the fetched commit, the approvals' own commits
  kept under `refs/memtui/approved/` and the decision in the audit log and a git note. Otherwise a merge commit
  (parents: HEAD and the fetched commit) whose tree is HEAD's — what was approved is already committed there,
  what was rejected or refused stays ours — so the same change never comes back.
- `push`: a plain `git push` of HEAD to the remote's branch, running the person's pre-push hook, bounded by
  `[sync] timeout`. Never forced: a remote that moved on refuses it, and the person is told to sync again.
  Nothing is lost either way.

Which range was queued whole is `refs/memtui/queued/<remote>`, so a second `memtui sync` before the decisions adds
nothing twice; its proposals are found again by their source (`<remote> <commit>`). git runs as a subprocess with
the memory's git dir, prompts off.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from memtui.core.basics.record import Record

if TYPE_CHECKING:  # a person's write imports this module (settles_incoming): no process module until git runs
    import subprocess

MAX_INCOMING = 1_000_000  # bytes: a memory file larger than this from a remote is refused, not read
MAX_FILES = 500  # files one sync may queue: a remote that floods the review queue is refused whole
MAX_VERIFIED = 200  # commits one sync checks the signatures of (a trusted remote's longer range is reviewed)
_REMOTE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_FETCHED, _SEEN, _QUEUED = "refs/memtui/fetched/", "refs/memtui/seen/", "refs/memtui/queued/"
_APPROVED = "refs/memtui/approved/"  # a fast-forwarded range's approval commits, which the audit log names
NOTES = "refs/notes/memtui-sync"  # who approved a fast-forwarded range, on its last commit (`git log --notes=...`)
_LINK, _GITLINK = "120000", "160000"


class SyncRefused(Exception):
    """A sync step that was not done, and why, in words for the person (nothing local was changed)."""


class SyncStatus(Record):
    """Where this memory stands against a remote, as last fetched: commits here not there (`ahead`), there not
    here (`behind`), and proposals of the fetched range still waiting for a person (`incoming`)."""

    remote: str
    ahead: int
    behind: int
    incoming: int

    def __init__(self, remote: str, ahead: int, behind: int, incoming: int) -> None:
        self.remote, self.ahead, self.behind, self.incoming = remote, ahead, behind, incoming

    def to_dict(self) -> dict[str, Any]:
        return {"remote": self.remote, "ahead": self.ahead, "behind": self.behind, "incoming": self.incoming}


class Report(Record):
    """What one `sync` did: the lines for a person, the proposals queued, the files refused, whether it pushed."""

    lines: list[str]
    queued: list[str]
    refused: list[dict[str, str]]
    pushed: bool

    def __init__(self, lines: list[str], queued: list[str], refused: list[dict[str, str]], pushed: bool) -> None:
        self.lines, self.queued, self.refused, self.pushed = lines, queued, refused, pushed


# git ----------------------------------------------------------------------------------------------------------
def _safe_config(*, hooks: bool = False) -> list[str]:
    """memtui's overrides for every git it runs (no hooks, no fsmonitor, no gc, no submodules: gitcall.py), except
    the three that keep git off the network: a sync's transport and the person's credentials are its own. `hooks`:
    the person's hooks run (a push runs their pre-push hook, as `git push` would)."""
    from memtui.core.storage.gitcall import NO_HOOKS, SAFE_CONFIG

    network = ("protocol.allow", "core.sshCommand", "credential.helper")
    out: list[str] = []
    for key, value in (*SAFE_CONFIG, *(() if hooks else (NO_HOOKS,))):
        if key not in network:
            out += ["-c", f"{key}={value}"]
    return out


_SAFE, _SAFE_WITH_HOOKS = _safe_config(), _safe_config(hooks=True)
NETWORK_TIMEOUT = 300.0  # seconds a fetch or a push (with the person's pre-push hook) may take: `[sync] timeout`


# git's progress meter, as `--progress` draws it on stderr ("Receiving objects:  45% (450/1000), 1.20 MiB | 800.00
# KiB/s", redrawn after a \r): only the phases named here are read, and only their numbers are kept. Lines from the
# remote ("remote: ...", its sideband) are the remote's words, escapes and all: never shown, never parsed.
_PHASES = ("Receiving objects", "Resolving deltas")
_METER = re.compile(rb"(" + b"|".join(p.encode() for p in _PHASES) + rb"): +(\d{1,3})% \((\d{1,12})/(\d{1,12})\)"
                    rb"(?:, (\d{1,9}(?:\.\d{1,2})?) (bytes|KiB|MiB|GiB|TiB))?")

Progress = Callable[[str, int, int, int, str], None]  # (phase, percent, done, total, bytes so far as "1.20 MiB")


class Meter:
    """Reads git's stderr as it comes and tells `heard` each new reading of a phase in `_PHASES`: the phase's name
    and bytes text are rebuilt from what the pattern matched (digits and a unit), so nothing a remote wrote reaches
    the callback. Everything read is kept (`text`) for the error message of a fetch that failed."""

    def __init__(self, heard: Progress) -> None:
        self.heard, self.buf, self.kept, self.last = heard, b"", bytearray(), (b"", -1)

    def feed(self, chunk: bytes) -> None:
        self.kept += chunk
        self.buf += chunk
        *lines, self.buf = re.split(rb"[\r\n]", self.buf)
        if len(self.buf) > 4096:  # a line that never ends (a hostile remote): not a meter git draws
            self.buf = b""
        for line in lines:
            found = None if line.startswith(b"remote:") else _METER.match(line)
            if found is None:
                continue
            phase, percent, done, total, size, unit = found.groups()
            if (phase, int(percent)) == self.last:
                continue
            self.last = (phase, int(percent))
            self.heard(phase.decode(), min(int(percent), 100), int(done), int(total),
                       f"{size.decode()} {unit.decode()}" if size else "")

    @property
    def text(self) -> bytes:
        return bytes(self.kept)


def _git(memory: Any, *args: str, check: bool = True, timeout: float = 600, stdin: bytes | None = None,
         env: dict[str, str] | None = None, hooks: bool = False, meter: Meter | None = None,
         config: tuple[str, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    """git on the memory's repository with memtui's overrides; `env`: variables added (e.g. who commits); `hooks`:
    the person's hooks run. A git still running after `timeout` seconds is stopped with everything it started (a
    hook that hangs, a remote that stops answering) and SyncRefused says so: git's own process group, so no hook is
    left holding the pipes open. `meter`: git's stderr goes to it as it comes (a thread reads a pipe of its own, so
    the wait and the stop above stay as they are)."""
    import subprocess

    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C", **(env or {})}
    overrides = [item for pair in config for item in ("-c", pair)]  # `config`: settings for this git only
    cmd = ["git", *(_SAFE_WITH_HOOKS if hooks else _SAFE), *overrides, "--git-dir", str(memory.store.git_dir), *args]
    reader, errors = (None, subprocess.PIPE) if meter is None else _reading(meter)
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=errors, env=env, start_new_session=True)
    finally:
        if reader is not None:
            os.close(errors)  # git has its end; the reader sees EOF when git and all it started close theirs
            reader.start()
    with proc:
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            from memtui.core.storage.gitcall import stop

            try:
                stop(proc)
            finally:
                if reader is not None:
                    reader.join(timeout=5)
            raise SyncRefused(f"git {args[0]} did not finish within {timeout:.0f} s and was stopped (a hook or a "
                              "remote that does not answer); nothing here was lost. Sync again later, or raise "
                              "[sync] timeout in .memtui/config.toml") from None
    if reader is not None and meter is not None:
        reader.join(timeout=5)  # a grandchild that left the group may hold the pipe: what was read is enough
        err = meter.text
    done = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    if check and done.returncode != 0:
        raise SyncRefused(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()[-500:]}")
    return done


def _reading(meter: Meter) -> tuple[Any, int]:
    """A daemon thread that feeds `meter` from a new pipe, and the pipe's write end for git's stderr."""
    import threading

    read_end, write_end = os.pipe()

    def read() -> None:
        with open(read_end, "rb", buffering=0) as pipe:
            while chunk := pipe.read(65536):
                try:
                    meter.feed(chunk)
                except Exception:  # a callback that failed (an app quitting): the fetch goes on, unmetered
                    meter.heard = lambda *_: None
    return threading.Thread(target=read, name="git-progress", daemon=True), write_end


def _network_timeout(memory: Any) -> float:
    """`[sync] timeout` (a duration: "5m", or minutes) in seconds; NETWORK_TIMEOUT when unset."""
    from memtui.core.grammar.config import parse_minutes

    value = memory.config.section("sync").get("timeout")
    try:
        return parse_minutes(value) * 60 if value is not None else NETWORK_TIMEOUT
    except ValueError:  # the config check names it; a sync still ends
        return NETWORK_TIMEOUT


def _read(memory: Any, *args: str, check: bool = True, timeout: float = 600,
          stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """A read of the memory's repository (rev-list, merge-base, log, cat-file, verify-commit...) through the owner of
    git reads (memtui.core.storage.gitcall.read_git), with `_git`'s overrides, environment, time limit and words:
    in a session of its own, stopped with everything it started after `timeout` seconds (a signing program that
    waits), SyncRefused saying so, or saying what git said when `check` and it failed."""
    import subprocess

    from memtui.core.storage.gitcall import read_git

    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}
    argv = [*_SAFE, "--git-dir", str(memory.store.git_dir), *args]
    done = read_git(argv, env, stdin, timeout=timeout, detached=True)
    program = next((a for i, a in enumerate(args) if a != "-c" and (i == 0 or args[i - 1] != "-c")), "")
    if done is None:
        raise SyncRefused(f"git {program} did not finish within {timeout:.0f} s and was stopped (a signing "
                          "program or a git that does not answer); nothing here was lost. Sync again later, or "
                          "raise [sync] timeout in .memtui/config.toml")
    read = subprocess.CompletedProcess(["git", *argv], *done)
    if check and read.returncode != 0:
        raise SyncRefused(f"git {program} failed: {read.stderr.decode(errors='replace').strip()[-500:]}")
    return read


def _out(memory: Any, *args: str) -> str:
    return _read(memory, *args).stdout.decode(errors="replace").strip()


def _ref(memory: Any, ref: str) -> str | None:
    done = _read(memory, "rev-parse", "-q", "--verify", ref + "^{commit}", check=False)
    return done.stdout.decode().strip() or None if done.returncode == 0 else None


def _ancestor(memory: Any, older: str, newer: str) -> bool:
    return _read(memory, "merge-base", "--is-ancestor", older, newer, check=False).returncode == 0


def _check_remote(memory: Any, remote: str) -> None:
    if not _REMOTE_NAME.fullmatch(remote) or ".." in remote:
        raise SyncRefused(f"{remote!r} is not a remote name: give one of `git remote`'s names (letters, digits, "
                          "'.', '-', '_'), e.g. origin")
    if not memory.store.has_git:
        raise SyncRefused("this memory has no git history to sync: run `memtui init --git` first")
    names = _out(memory, "remote").split()
    if remote not in names:
        known = ", ".join(names) or "none"
        places = memory.store.places
        # memtui's own history beside a folder is found only through its git dir: name it in the command.
        from shlex import quote

        where = f"--git-dir {quote(str(memory.store.git_dir))}" if places is not None and places.own_history else \
            f"-C {quote(str(memory.store.root))}"
        raise SyncRefused(f"no remote named {remote} (remotes: {known}); add one with "
                          f"`git {where} remote add {remote} URL`, then sync again")


def _branch(memory: Any) -> str:
    done = _read(memory, "symbolic-ref", "--short", "-q", "HEAD", check=False)
    name = done.stdout.decode().strip()
    if done.returncode != 0 or not name:
        raise SyncRefused("this memory's repository is not on a branch (a detached HEAD); check out its branch "
                          "and sync again")
    return name


# the range being decided --------------------------------------------------------------------------------------
def _items(memory: Any, remote: str, tip: str | None = None, *, decided: bool = False) -> list[Any]:
    """The proposals `incoming` queued from `remote` (of the range ending at `tip`, when given): open ones, and
    decided ones too when `decided`. Found by their source, actor and memtui's flag, as `_propose` wrote them."""
    want = f"{remote} {tip[:12]}" if tip else None
    # An agent can send any source and call itself "x via origin", but not a flag: only memtui writes those (and
    # the sealed queue file keeps them). Without the flag check an agent's proposal named like an incoming one
    # would stand in for a remote's change of its file, which would then never be queued.
    mark = _came_from(remote)
    return [p for p in memory.proposals(include_decided=decided, external=False)
            if p.source and p.actor.endswith(f" via {remote}") and any(f.startswith(mark) for f in p.flags)
            and (p.source == want if want else p.source.startswith(f"{remote} "))]


def _audit(memory: Any, status: str, remote: str, file: str | None, *, by: str | None = None,
           commit: str | None = None, **extra: Any) -> None:
    """One audit line of a sync step (action `sync`, actor `sync from <remote>`): a file refused, a history
    refused, a range merged. Stamped like every other line, so Today and the activity feed list it."""
    from memtui.core.writing import audit

    audit.append(memory.store, audit.masked(audit.record(status, actor=f"sync from {remote}", action="sync",
                                                         file=file, commit=commit, decided_by=by, remote=remote,
                                                         **extra)))


def _came_from(remote: str) -> str:
    return f"incoming from {remote}, applied only if you approve it; its commits: "


def came_in(proposal: Any) -> tuple[str, str] | None:
    """(remote, author) of a proposal `incoming` queued, by the same test as `_items` (memtui's flag, which no agent
    can send, matching its actor and source); None for any other writer's, whatever it calls itself."""
    actor, source = proposal.actor or "", proposal.source or ""
    if proposal.external or " via " not in actor:
        return None
    author, _, remote = actor.rpartition(" via ")
    if not source.startswith(f"{remote} ") or not any(f.startswith(_came_from(remote)) for f in proposal.flags):
        return None
    return remote, author


# the API ------------------------------------------------------------------------------------------------------
def status(memory: Any, remote: str = "origin", incoming: int | None = None) -> SyncStatus:
    """Ahead, behind and incoming against `remote` as last fetched (no network: `fetch` first for news); `incoming`:
    the count from a listing of the queue the caller made already (the app's), else the queue is listed here."""
    _check_remote(memory, remote)
    head, tip = _ref(memory, "HEAD"), _ref(memory, _FETCHED + remote)
    if tip is None:  # never fetched by memtui: a clone's own record of the remote (`git clone` wrote it) says as much
        branch = _read(memory, "symbolic-ref", "--short", "-q", "HEAD", check=False).stdout.decode().strip()
        tip = _ref(memory, f"refs/remotes/{remote}/{branch}") if branch else None
    ahead = behind = 0
    if head and tip:
        counts = _out(memory, "rev-list", "--left-right", "--count", f"{head}...{tip}").split()
        ahead, behind = int(counts[0]), int(counts[1])
    elif head:
        ahead = int(_out(memory, "rev-list", "--count", head))
    return SyncStatus(remote, ahead, behind, len(_items(memory, remote)) if incoming is None else incoming)


def fetch(memory: Any, remote: str = "origin", progress: Progress | None = None) -> str | None:
    """Fetch the remote's branch into `refs/memtui/fetched/<remote>`; its commit (None: the remote has no such
    branch yet). Refused, with nothing changed, when the remote dropped commits this memory already merged.
    `progress` hears git's meter as it goes (`Meter`: numbers only, never the remote's words)."""
    from memtui.core.basics.visible import visible

    _check_remote(memory, remote)
    branch = _branch(memory)
    landing = f"refs/memtui/fetching/{remote}"
    # git checks every object it receives (`fetch.fsckObjects`): a tree made by hand with a name twice or out of
    # order reads one way to git and another to a reader that trusts its order, so it never lands here at all. A
    # `.git` in a tree only warns: the sync refuses that file itself and names it, and takes the rest to review.
    done = _git(memory, "fetch", "--no-tags", "--no-recurse-submodules", "--no-write-fetch-head",
                *(("--progress",) if progress else ()), remote, f"+refs/heads/{branch}:{landing}", check=False,
                timeout=_network_timeout(memory), meter=Meter(progress) if progress else None,
                config=("fetch.fsckObjects=true", "fetch.fsck.hasDotgit=warn"))
    if done.returncode != 0:
        # The remote's own lines ("remote: ...") may carry escapes: shown with them made visible, on one line each.
        lines = done.stderr.decode(errors="replace").replace("\r", "\n").splitlines()
        err = "\n".join(visible(line, newlines=False) for line in lines if "%" not in line or "remote:" in line)
        err = err.strip()
        if "couldn't find remote ref" in err:
            return None
        if "fsck error" in err or "fsck failed" in err:
            _audit(memory, "refused", remote, None, reason="objects git's checks refuse (git fsck)")
            raise _refused_objects(remote, err)
        raise SyncRefused(f"could not fetch from {remote}: {err[-400:]}. Nothing here changed; try again when the "
                          "remote can be reached")
    tip = _ref(memory, landing)
    assert tip is not None
    seen = _ref(memory, _SEEN + remote)
    refused = _unchecked_objects(memory, tip, seen)
    if refused is not None:
        _git(memory, "update-ref", "-d", landing, check=False)
        _audit(memory, "refused", remote, None, reason="objects git's checks refuse (git fsck)")
        raise _refused_objects(remote, refused)
    if seen and not _ancestor(memory, seen, tip):
        _git(memory, "update-ref", "-d", landing, check=False)
        _audit(memory, "refused", remote, None, reason="history rewritten (a force-push)", seen=seen, fetched=tip)
        raise SyncRefused(
            f"{remote}'s {branch} no longer contains commit {seen[:12]}, which this memory already merged from it: "
            "its history was rewritten (a force-push). Nothing here changed. Ask whoever pushed it to push the "
            f"dropped commits back, or check the remote by hand (`git log {seen[:12]}` here shows them)")
    _git(memory, "update-ref", _FETCHED + remote, tip)
    _git(memory, "update-ref", "-d", landing, check=False)
    return tip


def _refused_objects(remote: str, said: str) -> SyncRefused:
    return SyncRefused(f"{remote} sent objects that git's own checks refuse ({said[-300:]}). Nothing here changed. "
                       "They were made with a tool other than git (a tree with a name twice or out of order, a "
                       "malformed commit): ask whoever pushed them to replace that commit. A history of your team's "
                       "own that an old tool made is let in by `git config fetch.fsck.<check> ignore`, naming the "
                       "check above")


def _unchecked_objects(memory: Any, tip: str, seen: str | None) -> str | None:
    """What git's checks say of the objects of `tip`'s history this memory has not merged (None: nothing wrong).
    The fetch checks only the objects it receives: one already here (a plain `git fetch`, an editor's auto-fetch,
    which check nothing by default) was never checked, so the range is packed and checked again (`index-pack
    --strict`, the fetch's own check, a `.git` only warned of as there)."""
    import tempfile

    nots = [ref for ref in (_ref(memory, "HEAD"), seen) if ref]
    names = _read(memory, "rev-list", "--objects", tip, "--not", *nots).stdout
    if not names.strip():
        return None
    pack = _read(memory, "pack-objects", "--stdout", "-q", stdin=names).stdout
    with tempfile.TemporaryDirectory(prefix="memtui-fsck-") as folder:
        path = Path(folder) / "range.pack"
        path.write_bytes(pack)
        done = _read(memory, "index-pack", f"--strict={_fsck_settings(memory)}", "-o",
                     str(path.with_suffix(".idx")), str(path), check=False)
    if done.returncode == 0:
        return None
    from memtui.core.basics.visible import visible

    return visible(done.stderr.decode(errors="replace").strip(), newlines=False) or "index-pack failed"


def _fsck_settings(memory: Any) -> str:
    """The fetch's checks for index-pack: the person's own `fetch.fsck.*` (what their git fetch would let in, a
    skip list for an old history among them), and a `.git` only warned of, as the fetch itself is told."""
    listed = _read(memory, "config", "--get-regexp", r"^fetch\.fsck\.", check=False).stdout.decode(errors="replace")
    pairs = []
    for line in listed.splitlines():
        key, _, value = line.partition(" ")
        name = key[len("fetch.fsck."):]
        if name and value and not re.search(r"[,=\s]", name + value) and name.lower() != "hasdotgit":
            pairs.append(f"{name}={value}")
    return ",".join([*pairs, "hasdotgit=warn"])


def incoming(memory: Any, remote: str = "origin", said: list[str] | None = None
             ) -> tuple[list[str], list[dict[str, str]]]:
    """Queue the fetched range's changes as proposals: (ids queued, files refused with the reason). A range
    already queued is not queued again; a newer range waits until the earlier one is decided. From a remote in
    `[sync] trust`, changes approved and signed there are approved here at once (`_take_verified`); `said` hears
    what was taken so, or why not."""
    tip = _ref(memory, _FETCHED + remote)
    head = _ref(memory, "HEAD")
    if tip is None or head is None or _ancestor(memory, tip, head):
        return [], []
    if _ref(memory, _QUEUED + remote) == tip:
        return [], []
    if any(p.source != f"{remote} {tip[:12]}" for p in _items(memory, remote)):
        raise SyncRefused(f"changes fetched from {remote} earlier still wait for a decision (`memtui queue list`); "
                          "decide them, then sync again to bring in what came since")
    base = _read(memory, "merge-base", head, tip, check=False).stdout.decode().strip()
    if not base:
        raise SyncRefused(f"{remote}'s history shares no commit with this memory's: it is another memory. Nothing "
                          "was brought in; clone the remote to start from it, or sync with the right remote")
    # A sync cut short after queueing some files of this range left their proposals: found again, they are kept
    # and their files not queued twice.
    earlier: dict[str, list[str]] = {}
    for p in _items(memory, remote, tip, decided=True):
        earlier.setdefault(p.file, []).append(p.id)
    queued: list[str] = []
    refused: list[dict[str, str]] = []
    changes = _changed(memory, base, tip)
    if len(changes) > MAX_FILES:
        _audit(memory, "refused", remote, None, reason=f"{len(changes)} files changed", fetched=tip)
        raise SyncRefused(f"{remote} changed {len(changes)} files since this memory last merged it, more than the "
                          f"{MAX_FILES} one sync puts in the review queue; nothing was queued. Look at it with "
                          f"`git log --stat {base[:12]}..{tip[:12]}` and bring in what you want by hand")
    for mode, path in changes:
        if path in earlier:
            queued.extend(earlier[path])
            continue
        why, theirs = _refused(memory, path, mode, tip)
        if why:
            refused.append({"file": path, "reason": why})
            _audit(memory, "refused", remote, path, reason=why, fetched=tip)
            continue
        for result in _propose(memory, remote, base, head, tip, path, theirs):
            if result.status == "queued" and result.id:
                queued.append(result.id)
            elif result.status == "refused":
                refused.append({"file": path, "reason": result.message})
    if queued and remote in _trusted_remotes(memory):
        taken = _take_verified(memory, remote, base, tip, queued, refused, said)
        queued = [pid for pid in queued if pid not in taken]
    _git(memory, "update-ref", _QUEUED + remote, tip)  # the range is queued whole: the next sync adds nothing
    return queued, refused


def _trusted_remotes(memory: Any) -> list[str]:
    """`[sync] trust`: remotes whose signed approvals are taken without review here (none unless the person says)."""
    trust = memory.config.section("sync").get("trust")
    return [r for r in trust if isinstance(r, str)] if isinstance(trust, list) else []


def _take_verified(memory: Any, remote: str, base: str, tip: str, queued: list[str], refused: list[dict[str, str]],
                   said: list[str] | None) -> list[str]:
    """Approve, as the person who approved them there, the changes of a trusted remote's range whose every commit
    carries memtui's approval trailer and a signature by a key in the allowed-signers file git is configured with
    (`gpg.ssh.allowedSignersFile`). Anything less (one unsigned commit, a refused file in the range, a guard's flag,
    an entry both sides changed) leaves them all waiting, and `said` hears why. The ids taken."""
    say = said.append if said is not None else (lambda _line: None)
    approver, why = _verified_approver(memory, remote, base, tip)  # (why: whose keys signed, when verified)
    if approver is None:
        say(f"not taken without review: {why}")
        return []
    if refused:
        say(f"not taken without review: {remote} also sent what this memory refuses ({refused[0]['file']}), so "
            "every change of it waits for a person here")
        return []
    mark = _came_from(remote)
    taken: list[str] = []
    for pid in queued:
        p = memory.get(pid)
        if p.action not in ("create", "edit", "delete") or any(not f.startswith(mark) for f in p.flags):
            continue  # an entry both sides changed is a choice; a guard's flag (hidden text, an instruction) is news
        done = memory.approve(pid, by=f"{approver} via {remote}")
        if done.status == "applied":
            taken.append(pid)
    if taken:
        from memtui.core.writing.journal import one_line

        say(f"taken without review, approved on {remote} by {approver} and signed by a key you allow "
            f"({one_line(why)[:200] or 'a key'}): {', '.join(taken)}")
    return taken


def _verified_approver(memory: Any, remote: str, base: str, tip: str) -> tuple[str | None, str]:
    """(the person who approved every commit of the range there, the principals whose keys signed them) when each
    commit is signed by a key in the allowed-signers file and names one person (not an agent) in its
    `Memtui-Approved-By` or `Memtui-Actor` trailer who is that key's principal (`bound`); else (None, why not, in
    words for the person). A signature proves who signed, a trailer only what the signer wrote: bob's key on a
    commit that says alice approved it is bob's word, not alice's approval."""
    signers = _read(memory, "config", "--get", "gpg.ssh.allowedSignersFile", check=False).stdout.decode().strip()
    if not signers:
        return None, (f"[sync] trust names {remote}, but git has no allowed-signers file to check its signatures "
                      "against; set one with `git config --global gpg.ssh.allowedSignersFile FILE`")
    commits = _out(memory, "rev-list", f"{base}..{tip}").split()
    if len(commits) > MAX_VERIFIED:
        return None, f"{len(commits)} commits are more than the {MAX_VERIFIED} one sync verifies"
    # Only ssh-keygen checks a signature: a program named in the repository's config runs nothing.
    verify = ["-c", "gpg.ssh.program=ssh-keygen", "-c", "gpg.program=false", "-c", "gpg.x509.program=false",
              "-c", f"gpg.ssh.allowedSignersFile={signers}"]
    from memtui.core.basics.actors import clean_actor
    from memtui.core.writing.journal import one_line

    people: set[str] = set()
    signed_by: set[str] = set()
    for sha in commits:
        if _read(memory, *verify, "verify-commit", sha, check=False).returncode != 0:
            return None, (f"commit {sha[:12]} from {remote} is not signed by a key in {signers}; its changes wait "
                          "for a person here")
        fmt = ("%G?%x01%GS%x01%(trailers:key=Memtui-Approved-By,valueonly,separator=%x00)%x01"
               "%(trailers:key=Memtui-Actor,valueonly)")
        good, signer, approved, actor = (_read(memory, *verify, "log", "-1", f"--format={fmt}", sha).stdout.decode(
            errors="replace").strip("\n").split("\x01") + ["", "", ""])[:4]
        named = [clean_actor(n) for n in (approved.split("\x00") if approved else [actor]) if n.strip()]
        names = list(dict.fromkeys(relayed(n) for n in named))
        if not names or any(memory.config.policy.is_agent(n) for n in (*named, *names)):
            return None, (f"commit {sha[:12]} from {remote} is signed but names no person who approved it (a "
                          "Memtui-Approved-By or Memtui-Actor trailer of a person); its changes wait for a person here")
        if len(names) > 1:
            return None, (f"commit {sha[:12]} from {remote} names {len(names)} approvers "
                          f"({one_line(', '.join(names))[:200]}); a signature is one person's approval, so its "
                          "changes wait for a person here")
        signer = one_line(signer)
        if good != "G" or not signer:
            return None, (f"commit {sha[:12]} from {remote} is signed, but git names no principal of {signers} for "
                          "its key; its changes wait for a person here")
        if not bound(names[0], signer) and not any(bound(names[0], p) for p in _principals(memory, sha, signers)):
            return None, (f"commit {sha[:12]} from {remote}: the approval names {one_line(names[0])[:80]} but "
                          f"{signer[:80]} signed it; a trusted approval must be signed by the approver's own key "
                          f"(a principal of it in {signers} equal to the name in Memtui-Approved-By), so its changes "
                          "wait for a person here")
        people.add(names[0])
        signed_by.add(signer)
    if len(people) != 1:
        return None, f"the commits from {remote} were approved by {len(people)} people; each is for a person here"
    return people.pop(), ", ".join(sorted(signed_by))


def relayed(name: str) -> str:
    """The person a trailer names: an approval memtui took from a remote is recorded as "NAME via REMOTE" (and a
    merge of it is made in that name), and comes back so on the next clone's sync; NAME is who approved it."""
    while True:
        person, via, remote = name.rpartition(" via ")
        if not (via and person.strip() and _REMOTE_NAME.fullmatch(remote)):
            return name
        name = person


def bound(approver: str, principal: str) -> bool:
    """Is `approver` (a trailer's name, as memtui records approvers) the signing key's `principal` (a name from the
    allowed-signers file)? Equal, as written; an email address (a principal with an @) equal without regard to
    ASCII case. A pattern (`*`, `?`, a `!` negation) stands for no one person and binds nobody: a key allowed for
    `*@example.org` may sign, but not in a particular person's name."""
    principal = principal.strip()
    if not principal or not approver or any(c in principal for c in "*?!,"):
        return False
    if "@" in principal:
        return approver.encode().lower() == principal.encode().lower()  # ASCII only: no look-alike folds in
    return approver == principal


def _principals(memory: Any, sha: str, signers: str) -> list[str]:
    """Every principal the allowed-signers file gives the key that signed `sha` for git (git names only the first,
    `%GS`: a line `alice,alice@example.org ...` lets either name be the approver). Asked of ssh-keygen, as git asks
    it (`-Y find-principals`, namespace git), over the signature in the commit's `gpgsig` header; [] when there is
    none or ssh-keygen cannot say. Called only after `git verify-commit` accepted that signature."""
    import subprocess
    import tempfile

    raw = _read(memory, "cat-file", "commit", sha).stdout
    head = raw.split(b"\n\n", 1)[0].split(b"\n")
    sig: list[bytes] = []
    for line in head:
        if line.startswith(b"gpgsig "):
            sig = [line[len(b"gpgsig "):]]
        elif sig and line.startswith(b" "):
            sig.append(line[1:])
        elif sig:
            break
    if not sig or not sig[0].startswith(b"-----BEGIN SSH SIGNATURE-----"):
        return []
    with tempfile.NamedTemporaryFile(prefix="memtui-sig-", suffix=".sig") as f:
        f.write(b"\n".join(sig) + b"\n")
        f.flush()
        try:
            done = subprocess.run(["ssh-keygen", "-Y", "find-principals", "-n", "git", "-f", signers, "-s", f.name],
                                  capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return []
    if done.returncode != 0:
        return []
    return [line.strip() for line in done.stdout.decode(errors="replace").splitlines() if line.strip()][:50]


def decide(memory: Any, remote: str = "origin") -> str | None:
    """Close the fetched range once nothing of it waits: a merge commit (HEAD and the fetched commit as parents,
    HEAD's tree) so it never comes in again. Its sha; None when there is nothing to close or items still wait."""
    tip = _ref(memory, _FETCHED + remote)
    if tip is None or _ref(memory, _QUEUED + remote) != tip or _items(memory, remote):
        return None
    from memtui.core.basics.actors import clean_actor, default_actor

    with memory.store.lock():
        memory.recover()  # a write a crash cut short is finished (or undone) before HEAD moves under it
        head = _ref(memory, "HEAD")
        if head is None or _ancestor(memory, tip, head):
            return None
        items = _items(memory, remote, tip, decided=True)
        # The merge is the decision of the person who decided the range last (the one syncing, when nothing was
        # queued: every file refused, or none changed).
        last = max(items, key=lambda p: p.decided_at or "", default=None)
        by = clean_actor(last.decided_by) if last is not None and last.decided_by else default_actor()
        approvals = _forward(memory, head, tip, items)
        if approvals is not None:
            # Nothing diverged: the branch moves to the remote's commit and this memory's history is the remote's.
            # The approvals' own commits (the same files, one by one) leave the branch but stay under a ref of
            # memtui's, as the audit log names them; the decision is in the audit log and a note on the commit.
            if approvals:  # first: a crash between the two leaves the approvals kept, never unreachable
                _git(memory, "update-ref", f"{_APPROVED}{remote}/{tip[:12]}", head)
            _git(memory, "update-ref", "-m", f"memtui sync: fast-forward to {remote}", "HEAD", tip, head)
            _git(memory, "update-ref", _SEEN + remote, tip)
            ids = [p.id for p in items]
            _note(memory, remote, head, tip, by, ids)
            _audit(memory, "applied", remote, None, by=by, commit=tip, fetched=tip, fast_forward=True, items=ids)
            return tip
        message = (f"memtui: merge {remote} ({tip[:12]}) after review\n\n"
                   f"{sum(p.status == 'applied' for p in items)} incoming change(s) approved, "
                   f"{sum(p.status != 'applied' for p in items)} rejected\n\nMemtui-Actor: {by}\n")
        who = {"GIT_AUTHOR_NAME": by, "GIT_COMMITTER_NAME": by,
               "GIT_AUTHOR_EMAIL": "memtui@localhost", "GIT_COMMITTER_EMAIL": "memtui@localhost"}
        from memtui.core.storage.folder_commit import sign_args, signing_wanted

        # Signed as the person's git signs (commit.gpgSign): a clone that trusts this remote checks the merge too.
        signing = signing_wanted(Path(memory.store.git_dir))
        done = _git(memory, *(sign_args() if signing else ["commit-tree"]), f"{head}^{{tree}}",
                    "-p", head, "-p", tip, stdin=message.encode(), env=who, check=False)
        if done.returncode != 0:
            why = done.stderr.decode(errors="replace").strip()[-400:]
            raise SyncRefused(f"could not make the merge commit ({why}). Nothing here was lost" + (
                "; git is set to sign commits (commit.gpgsign): make `git commit -S` work here, or turn signing off "
                "(git config commit.gpgsign false), then sync again" if signing else ""))
        merge = done.stdout.decode().strip()
        _git(memory, "update-ref", "-m", f"memtui sync: merge {remote}", "HEAD", merge, head)
        _git(memory, "update-ref", _SEEN + remote, tip)
        _audit(memory, "applied", remote, None, by=by, commit=merge, fetched=tip, items=[p.id for p in items])
    return merge


def _forward(memory: Any, head: str, tip: str, items: list[Any]) -> list[str] | None:
    """The commits a fast-forward to `tip` takes off the branch, when it may: every incoming change of the range
    was approved unchanged (this memory's files are then exactly the remote's) and the only commits here that the
    remote lacks are those approvals. None: something diverged (a rejection, a revision, a refused file, a write
    of this memory's own), and a merge keeps it."""
    if any(p.status != "applied" for p in items):
        return None
    if _out(memory, "rev-parse", f"{head}^{{tree}}") != _out(memory, "rev-parse", f"{tip}^{{tree}}"):
        return None
    ids = {p.id for p in items}
    raw = _out(memory, "log", "--format=%H%x00%(trailers:key=Memtui-Proposal,valueonly,separator=%x01)%x00",
               f"{tip}..{head}")
    local: list[str] = []
    for record in filter(None, (r.strip("\n") for r in raw.split("\x00\n"))):
        sha, _, pid = record.rstrip("\x00").partition("\x00")
        if pid.strip() not in ids:  # a write of this memory's own (or a person's git commit): keep it, merge
            return None
        local.append(sha)
    return local


def _note(memory: Any, remote: str, head: str, tip: str, by: str, ids: list[str]) -> None:
    """A git note on `tip` (refs/notes/memtui-sync) saying who approved the range here: the remote's commits stay
    as they are. It also names the range (`Memtui-Range`), so `arrived` knows these commits came from elsewhere."""
    from memtui.core.writing.journal import one_line

    base = _read(memory, "merge-base", head, tip, check=False).stdout.decode().strip()
    text = (f"memtui: fast-forward from {remote} after review\n\n"
            f"Memtui-Approved-By: {one_line(by)}\n"
            + (f"Memtui-Proposals: {' '.join(ids)}\n" if ids else "")
            + f"Memtui-Range: {base}..{tip}\n")
    who = {"GIT_AUTHOR_NAME": by, "GIT_COMMITTER_NAME": by,
           "GIT_AUTHOR_EMAIL": "memtui@localhost", "GIT_COMMITTER_EMAIL": "memtui@localhost"}
    _git(memory, "notes", f"--ref={NOTES}", "add", "-f", "-F", "-", tip, stdin=text.encode(), env=who, check=False)


def settle(memory: Any, pid: str) -> str | None:
    """After a person decided `pid` (through any surface: `memtui queue`, the app): when it came in from a remote
    and was the last open change of its fetched range, the range is closed now (`decide`: a fast-forward or a
    merge) rather than at the next sync. What was done, in words for the person; None when nothing was. Pushing
    stays with `memtui sync`: a decision never waits on the network."""
    try:
        came = came_in(memory.get(pid))
    except Exception:  # NotFound: a decision the queue no longer holds (an external change put back) closes nothing
        return None
    if came is None:
        return None
    remote = came[0]
    try:
        done = decide(memory, remote)
    except Exception as exc:  # SyncRefused, StoreError: the decision stands; the next sync closes the range
        return (f"every change fetched from {remote} is decided, but they could not be merged now ({exc}); "
                "`memtui sync` merges them")
    if done is None:
        return None
    if done == _ref(memory, _FETCHED + remote):  # the branch is the remote's commit now: nothing of it to push
        return f"that was the last change fetched from {remote}: fast-forwarded to {remote} ({done[:12]})"
    return f"that was the last change fetched from {remote}: merged {remote} as {done[:12]}; `memtui sync` pushes it"


def settles_incoming(method: Callable[..., Any]) -> Callable[..., Any]:
    """For `Memory.approve` and `Memory.reject`: a decision that was the last of a fetched range closes it."""
    import functools

    @functools.wraps(method)
    def deciding(self: Any, pid: str, *args: Any, **kwargs: Any) -> Any:
        result = method(self, pid, *args, **kwargs)
        if result.status in ("applied", "rejected") and self.store.git_dir is not None:
            said = settle(self, pid)
            if said:
                result = result.replace(message=f"{result.message.rstrip('.')}; {said}")
        return result

    return deciding


def push(memory: Any, remote: str = "origin") -> tuple[bool, str]:
    """Push HEAD to the remote's branch, never forced: (pushed, what happened in words for the person)."""
    _check_remote(memory, remote)
    branch = _branch(memory)
    head = _ref(memory, "HEAD")
    if head is None:
        return False, "nothing to push: this memory has no commits yet"
    tip = _ref(memory, _FETCHED + remote)
    if tip == head:
        return False, f"{remote} has everything here; nothing to push"
    if tip is not None and not _ancestor(memory, tip, head):
        return False, (f"not pushed: {remote} has changes this memory has not merged; decide them "
                       "(`memtui queue list`) and sync again")
    from memtui.core.storage import git_hooks

    # The person's pre-push hook runs, as with their own `git push` (unless `[git] hooks = false`), bounded in time.
    hooks = git_hooks.enabled(memory.store.config_text())
    try:
        done = _git(memory, "push", "--porcelain", remote, f"{head}:refs/heads/{branch}", check=False, hooks=hooks,
                    timeout=_network_timeout(memory))
    except SyncRefused as exc:
        return False, f"not pushed: {exc}"
    if done.returncode != 0:
        said = (done.stderr + done.stdout).decode(errors="replace").splitlines()
        # What the remote said (a hook's words) and git's reason, not git's progress.
        why = [line.strip() for line in said if line.startswith("remote:") or "rejected" in line or "fatal" in line]
        if not why:  # refused here, before anything was sent: the pre-push hook's own words
            why = [line.strip() for line in said if line.strip() and not line.startswith(("error: failed to push",
                                                                                          "To ", "Done"))]
            if why:
                return False, (f"not pushed: this repository's pre-push hook refused it: {' / '.join(why)[-600:]}. "
                               "Nothing here was lost; the next sync pushes again")
        why = why or [line.strip() for line in said if line.strip()][-2:]
        return False, (f"{remote} refused the push: {' / '.join(why)[-600:]}. Nothing here was lost; sync again "
                       "when the remote takes pushes (a remote that moved on is brought in first)")
    _git(memory, "update-ref", _FETCHED + remote, head)
    _git(memory, "update-ref", _SEEN + remote, head)
    return True, f"pushed {head[:12]} to {remote}/{branch}"


def sync(memory: Any, remote: str = "origin", *, push_after: bool = True,
         progress: Callable[[str], None] | None = None, fetching: Progress | None = None) -> Report:
    """`memtui sync`: fetch, queue what came in, close a range fully decided, push. Raises SyncRefused. `progress`,
    if given, hears the step under way (the app's feed: a fetch or a push over a slow link takes a while);
    `fetching`, the fetch's meter (`Meter`)."""
    say = progress or (lambda _step: None)
    lines: list[str] = []
    say(f"fetching {remote}…")
    tip = fetch(memory, remote, fetching)
    lines.append(f"fetched {remote}: {tip[:12]}" if tip else f"{remote} has no {_branch(memory)} branch yet")
    if tip:
        say(f"queueing what {remote} changed…")
    said: list[str] = []
    queued, refused = incoming(memory, remote, said)
    lines.extend(said)
    for item in refused:
        lines.append(f"refused {item['file']}: {item['reason']}")
    if queued:
        lines.append(f"{len(queued)} incoming change(s) wait for review: {', '.join(queued)} (`memtui queue list`)")
    merged = decide(memory, remote)
    if merged:
        lines.append(f"fast-forwarded to {remote} ({merged[:12]})" if merged == tip else
                     f"merged {remote} as {merged[:12]}: what was approved is kept, what was rejected stays ours")
    waiting = _items(memory, remote)
    pushed = False
    if waiting:
        lines.append(f"{len(waiting)} incoming change(s) from {remote} wait for a decision; approve or reject them: "
                     "the last decision merges them, and the next `memtui sync` pushes")
    elif push_after:
        say(f"pushing to {remote}…")
        pushed, said = push(memory, remote)
        lines.append(said)
    return Report(lines, queued, refused, pushed)


def arrived(memory: Any) -> set[str]:
    """Commits that came from a remote and were merged, not made here: reachable from what was fetched and merged
    (`refs/memtui/seen/*`) but not on HEAD's first-parent line. Their trailers (a `Memtui-Proposal: p-0003`, a
    `Memtui-Actor`) speak of another machine's queue and audit log, not this one's: `memtui doctor` must not take
    them for this machine's writes cut short, nor Today list them as changes applied here (what of them was taken
    is the local commit of each approval). Empty, without running git, for a memory that never synced."""
    git_dir = memory.store.git_dir
    if git_dir is None:
        return set()
    git_dir = Path(git_dir)
    try:
        packed = (git_dir / "packed-refs").read_bytes()
    except OSError:
        packed = b""
    if not (git_dir / "refs" / "memtui" / "seen").is_dir() and b" refs/memtui/seen/" not in packed:
        return set()
    done = _read(memory, "for-each-ref", "--format=%(objectname)", "refs/memtui/seen/", check=False)
    tips = done.stdout.decode().split()
    if not tips or _ref(memory, "HEAD") is None:
        return set()
    merged = set(_out(memory, "rev-list", *tips).split())
    return merged - set(_out(memory, "rev-list", "--first-parent", "HEAD").split()) | _forwarded(memory)


def _forwarded(memory: Any) -> set[str]:
    """Commits of ranges this memory fast-forwarded to (their notes' `Memtui-Range`): on HEAD's first-parent line,
    yet another machine's."""
    listed = _read(memory, "notes", f"--ref={NOTES}", "list", check=False).stdout.decode().split()
    if not listed:
        return set()
    blobs = "".join(f"{sha}\n" for sha in listed[0::2]).encode()
    text = _read(memory, "cat-file", "--batch", stdin=blobs).stdout.decode(errors="replace")
    out: set[str] = set()
    for span in re.findall(r"^Memtui-Range: ([0-9a-f]{40}\.\.[0-9a-f]{40})$", text, re.M):
        out |= set(_out(memory, "rev-list", span).split())
    return out


# one incoming file --------------------------------------------------------------------------------------------
def _changed(memory: Any, base: str, tip: str) -> list[tuple[str, str]]:
    """(new mode, path) of every path the remote changed since `base` (renames as a delete and an add)."""
    raw = _read(memory, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", base, tip).stdout
    parts = raw.split(b"\0")
    out = []
    for i in range(0, len(parts) - 1, 2):
        meta, path = parts[i].decode(), parts[i + 1].decode("utf-8", errors="surrogateescape")
        fields = meta.lstrip(":").split()
        if len(fields) >= 5:
            out.append((fields[1], path))
    return out


def _refused(memory: Any, path: str, mode: str, tip: str) -> tuple[str | None, str | None]:
    """(why an incoming path is never queued, None) or (None, its text at `tip`; None for a file the remote
    removed): the blob is read here once, checked, and the text handed on to be proposed."""
    why = _path_refused(memory, path, mode)
    if why or mode == "000000":
        return why, None
    size = int(_out(memory, "cat-file", "-s", f"{tip}:{path}"))
    if size > MAX_INCOMING:
        return f"{size} bytes, over the {MAX_INCOMING} bytes a memory file from a remote may have", None
    try:
        return None, _blob(memory, tip, path).decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text", None


def _path_refused(memory: Any, path: str, mode: str) -> str | None:
    """Why a path (by its name and git mode alone) is never taken from a remote; None: it may be."""
    parts = path.split("/")
    if any(part.lower() in (".git", ".memtui") for part in parts) or path.lower() == ".gitmodules":
        return "memtui's own state, git's or a submodule list: never taken from a remote"
    if path.lower().endswith(".toml") or path == "memory-log.jsonl":
        return "a config file or the audit log: only a person of this memory changes it, here"
    if mode == _LINK:
        return "a symlink: memory files are plain files"
    if mode == _GITLINK:
        return "a submodule: memory holds no other repositories"
    if not path.endswith(".md"):
        return "not a memory file (the layout holds .md files)"
    try:
        memory.store.check_path(path)
    except Exception as exc:  # PathRefused, and any name the store cannot hold
        return f"a path memory refuses: {exc}"
    return None


def _blob(memory: Any, commit: str, path: str) -> bytes:
    return _read(memory, "cat-file", "blob", f"{commit}:{path}").stdout


def _text_at(memory: Any, commit: str, path: str) -> str | None:
    """The file's text at `commit` (None: not there), in one git run."""
    done = _read(memory, "cat-file", "blob", f"{commit}:{path}", check=False)
    return done.stdout.decode("utf-8", errors="replace") if done.returncode == 0 else None


def _evidence(memory: Any, base: str, tip: str, path: str) -> str:
    """The remote's commits of `path` in the range: sha, author, subject and trailers (approvals carried)."""
    fmt = "%h %an <%ae>: %s%n%(trailers:only,unfold)"
    text = _out(memory, "log", "--no-color", f"--format={fmt}", f"{base}..{tip}", "--", path)
    from memtui.core.writing import secrets

    return secrets.mask("; ".join(line.strip() for line in text.splitlines() if line.strip())[:4000])


def _propose(memory: Any, remote: str, base: str, head: str, tip: str, path: str, theirs: str | None) -> list[Any]:
    """Submit the remote's change of `path` (its text there: `theirs`, already read and checked; None: removed) for
    review: one proposal, or for a file both sides changed, one for what merges cleanly plus one revise for each
    entry both sides changed."""
    from memtui.core.writing.proposals import Proposal

    ours = _text_at(memory, head, path)
    old = _text_at(memory, base, path)
    if theirs == ours:
        return []
    author = _out(memory, "log", "-1", "--format=%an", f"{base}..{tip}", "--", path) or "unknown"
    from memtui.core.basics import clock

    draft = {"id": "", "created": clock.now().isoformat(timespec="seconds"), "actor": f"{author} via {remote}",
             "file": path,
             "source": f"{remote} {tip[:12]}"}
    came = _came_from(remote) + _evidence(memory, base, tip, path)
    proposals: list[Proposal] = []
    if ours == old or ours is None or theirs is None:
        if theirs is None:
            proposals.append(Proposal(action="delete", **draft))
        elif ours is None:
            proposals.append(Proposal(action="create", content=theirs, **draft))
        else:
            proposals.append(Proposal(action="edit", old=ours, content=theirs, **draft))
    else:
        merged, both = merge_entries(ours, old or "", theirs)
        if merged != ours:
            proposals.append(Proposal(action="edit", old=ours, content=merged, **draft))
        for mine, other in both:
            if len(mine) == 1 and len(other) == 1 and _entry(mine[0]) and _entry(other[0]):
                proposals.append(Proposal(action="revise", section=_section_of(ours, path, mine[0]),
                                          replaces=_entry(mine[0]), entry=_entry(other[0]), **draft))
            else:  # not one entry each: their version of the lines, shown against ours
                proposals.append(Proposal(action="edit", old="".join(mine), content="".join(other), **draft))
    results = []
    for p in proposals:  # a flag: shown with the proposal in `memtui queue show` and the app, like the guard's
        p.flags.append(came)
        fallback = None
        if p.action == "revise":  # kept: the layout's grammar may refuse a revise (no sections, other entries)
            fallback = Proposal(action="edit", old=f"{p.replaces}", content=f"{p.entry}", flags=[came], **draft)
        result = memory.submit(p, review=True)
        if result.status == "refused" and fallback is not None:
            # Their version still comes in, as the line it is, rather than being lost to a refused revise.
            result = memory.submit(fallback, review=True)
        results.append(result)
    return results


def _section_of(text: str, path: str, line: str) -> str | None:
    """The title of the section holding `line` in `text`, as the grammar reads it (None: before any heading)."""
    from memtui.core.grammar.document import Document

    doc = Document(text, path)
    lines = text.splitlines()
    for sec in doc.sections:
        if sec.heading is not None and any(lines[i] == line.rstrip("\n") for i in range(sec.start, sec.end)):
            return sec.title
    return None


def _entry(line: str) -> str | None:
    """An entry line's text without its bullet (None for a line that is no entry)."""
    m = re.match(r"^\s*[-*]\s+(.*\S)\s*$", line)
    return m.group(1) if m else None


def merge_entries(ours: str, base: str, theirs: str) -> tuple[str, list[tuple[list[str], list[str]]]]:
    """Three-way merge by lines, which in memtui's grammar are entries: every change made on one side only is
    taken; where both sides changed the same lines differently, ours is kept in the text and the pair (our lines,
    their lines) returned for a person to choose between."""
    from memtui.core.storage.merge3 import clusters

    b, o, t = (x.splitlines(keepends=True) for x in (base, ours, theirs))
    for lines in (b, o, t):  # a last line without its newline would run into the next one merged after it
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
    out: list[str] = []
    both: list[tuple[list[str], list[str]]] = []
    pos = 0
    for cluster, end in clusters(b, o, t):
        start = cluster[0][0]
        out.extend(b[pos:start])
        sides = {h[3] for h in cluster}
        if len(sides) == 2 and not (len(cluster) == 2 and cluster[0][:3] == cluster[1][:3]):
            mine = _side(b, cluster, 0, start, end)
            other = _side(b, cluster, 1, start, end)
            # Lines both sides wrote alike (the same old entry struck by both revises, the same entry added) are no
            # choice to make; where one side's lines hold all of the other's, that side's version is the merge.
            lead = 0
            while lead < min(len(mine), len(other)) and mine[lead] == other[lead]:
                lead += 1
            tail = 0
            while tail < min(len(mine), len(other)) - lead and mine[-1 - tail] == other[-1 - tail]:
                tail += 1
            ours_left, theirs_left = mine[lead:len(mine) - tail], other[lead:len(other) - tail]
            out.extend(other if not ours_left else mine)
            if ours_left and theirs_left:
                both.append((ours_left, theirs_left))
        else:
            p = start
            for h_start, h_end, lines, _ in cluster[:1] if len(sides) == 2 else cluster:
                out.extend(b[p:h_start])
                out.extend(lines)  # type: ignore[arg-type]
                p = h_end
            out.extend(b[p:end])
        pos = end
    out.extend(b[pos:])
    return "".join(out), both


def _side(b: list[str], cluster: list[Any], side: int, start: int, end: int) -> list[str]:
    """One side's version of base lines start..end, from its hunks in the cluster."""
    out: list[str] = []
    p = start
    for h_start, h_end, lines, s in cluster:
        if s != side:
            continue
        out.extend(b[p:h_start])
        out.extend(lines)
        p = h_end
    out.extend(b[p:end])
    return out
