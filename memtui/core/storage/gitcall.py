"""memtui's own git: one owner per repository that serialises every call, bounds it in time, and runs it with config
overrides that a repository's own config (which an agent might have written) cannot turn into code execution.

GitPython keeps persistent `git cat-file` processes per Repo and talks to them over pipes with no locking, so two
threads sharing a Repo interleave requests and both wait forever. `GitOwner.use()` is the only way in: a re-entrant
lock (one thread at a time), a watchdog that kills a git that stops answering, and a `StoreError` that says so.
"""

from __future__ import annotations

import os
import re
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple

from memtui.core.storage.store import StoreError

# Seconds one git call (or one block of calls under `use`) may take before memtui stops it.
DEFAULT_TIMEOUT = 60.0

# Overrides for every git memtui runs. Each names something that runs a program or reads a file the repository's
# config chooses: the file-system monitor hook, signature checks (gpg.program), the pager, the blame ignore list,
# automatic gc (which runs hooks) and submodule recursion (which reads the submodule's config).
SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("log.showSignature", "false"),
    ("blame.ignoreRevsFile", ""),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("protocol.allow", "never"),
    ("core.sshCommand", "false"),
    ("credential.helper", ""),
)
# memtui's plumbing (status, update-index) would otherwise run the repository's post-index-change hook. Code that
# means to run the person's hooks (a `git commit` on their behalf) builds its environment with `config_env(...,
# hooks=True)`: every other override still applies.
NO_HOOKS = ("core.hooksPath", "/dev/null")
# Keys of a driver section that run a program; a driver defined in the repository's own config is switched off.
FILTER_KEYS = ("clean", "smudge", "process")


_SECTION = re.compile(r"^\s*\[([^\]]*)\]", re.M)


def git_timeout() -> float:
    try:
        return float(os.environ.get("MEMTUI_GIT_TIMEOUT", "") or DEFAULT_TIMEOUT)
    except ValueError:
        return DEFAULT_TIMEOUT


def git_dir_of(root: Path) -> Path:
    """The repository folder of a work tree: `.git`, or where a gitlink file (`gitdir: …`) points."""
    dot = root / ".git"
    if dot.is_file():
        text = dot.read_text(errors="replace").strip()
        if text.startswith("gitdir:"):
            target = Path(text[len("gitdir:"):].strip())
            return target if target.is_absolute() else (root / target)
    return dot


def local_drivers(git_dir: Path) -> list[str]:
    """Filter drivers the repository's own config (with its includes) defines: `filter.<name>` section names.

    Read by `git config --local --includes --list`, which parses and runs nothing, as git itself would read them
    (conditional includes too); GitPython's parser where git cannot say. A config neither can parse is also read
    for section headers line by line, so a broken file does not hide a driver."""
    config = git_dir / "config"
    if not config.exists():
        return []
    listed = _listed_drivers(git_dir)
    names: set[str] = set(listed or ())
    sections: list[str] = []
    if listed is None:
        try:
            from git.config import GitConfigParser

            reader = GitConfigParser(str(config), read_only=True)
            reader.read()
            sections = reader.sections()
        except Exception:  # a config GitPython cannot parse; git may still read parts of it
            sections = []
    try:
        text = config.read_text(errors="replace")
    except OSError:
        text = ""
    sections += [m.group(1).strip() for m in _SECTION.finditer(text)]
    for section in sections:
        kind, _, name = section.partition(" ")
        if kind.strip().lower() == "filter" and name.strip().startswith('"'):
            names.add(name.strip().strip('"'))
        elif kind.lower().startswith("filter.") and not name:
            names.add(kind[len("filter."):])
    return sorted(names)


def _listed_drivers(git_dir: Path, *, local: bool = True) -> list[str] | None:
    """`filter.<name>` names in the repository's config (with `local` False: in every config git reads for it, the
    person's global one too) as git lists them, or None when git cannot list it."""
    env = {**os.environ, **_config_env([*SAFE_CONFIG, NO_HOOKS]), "GIT_DIR": str(git_dir)}
    env.pop("GIT_WORK_TREE", None)
    done = run_plumbing(["git", "config", *(("--local",) if local else ()), "--includes", "--null", "--list"], env)
    if done is None or done[0] != 0:
        return None
    names = []
    for item in done[1].split(b"\0"):
        key = item.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
        section, _, rest = key.partition(".")
        if section.lower() == "filter" and "." in rest:
            names.append(rest.rsplit(".", 1)[0])
    return names


def safe_config(git_dir: Path, *, hooks: bool = False) -> list[tuple[str, str]]:
    pairs = list(SAFE_CONFIG)
    if not hooks:
        pairs.append(NO_HOOKS)
    pairs += drivers_off(local_drivers(git_dir))
    return pairs


# What memtui sets besides config pairs, passed on where only the GIT_* part of the environment is handed over.
KEPT_ENV = ("GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS")


def _config_env(pairs: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> dict[str, str]:
    """GIT_CONFIG_COUNT/KEY_n/VALUE_n (git 2.31+): command-scope config, above every config file."""
    env = dict(os.environ)
    # Pairs the person's environment already sets are kept, ahead of ours (the later pair wins in git).
    try:
        theirs = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    except ValueError:
        theirs = 0
    kept = [(env.get(f"GIT_CONFIG_KEY_{i}", ""), env.get(f"GIT_CONFIG_VALUE_{i}", "")) for i in range(theirs)]
    pairs = [p for p in kept if p[0]] + list(pairs)
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for i, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    env["GIT_TERMINAL_PROMPT"] = "0"
    # No optional lock: `git status` would otherwise rewrite the person's index (stat data it refreshed) as a side
    # effect of memtui only looking, a change nobody asked for, and one racing their own git for index.lock.
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


def all_drivers(git_dir: Path) -> list[str] | None:
    """Every filter driver any config git reads for the repository defines (the person's global ones too, such as
    git-lfs's), or None when git cannot list them."""
    return _listed_drivers(git_dir, local=False)


def drivers_off(names: list[str]) -> list[tuple[str, str]]:
    """Config pairs that switch the filter drivers `names` off (no clean, smudge or process command; not required)."""
    return [pair for name in names for pair in
            [*((f"filter.{name}.{key}", "") for key in FILTER_KEYS), (f"filter.{name}.required", "false")]]


def config_env(git_dir: Path, work_tree: Path | None, *, hooks: bool = False,
               extra: list[tuple[str, str]] | None = None) -> dict[str, str]:
    """The environment memtui's git runs in (only the GIT_* part: GitPython merges it over os.environ); `extra`
    config pairs after memtui's own."""
    full = _config_env([*safe_config(git_dir, hooks=hooks), *(extra or [])])
    env = {k: v for k, v in full.items() if k.startswith("GIT_CONFIG_") or k in KEPT_ENV}
    # A `core.worktree` (or `core.bare`) in the repository's config would point git at another folder.
    if work_tree is not None:
        env["GIT_WORK_TREE"] = str(work_tree)
    return env


def plumbing_env(git_dir: Path, work_tree: Path) -> dict[str, str]:
    """`config_env` for plumbing that runs no filters, hooks or monitor (`rev-parse`, `cat-file blob`): the same
    overrides less the repository's own filter names, so nothing is parsed in process and GitPython stays unloaded
    (the app's start path reads the committed config this way)."""
    full = _config_env([*SAFE_CONFIG, NO_HOOKS])
    env = {k: v for k, v in full.items() if k.startswith("GIT_CONFIG_") or k in KEPT_ENV}
    return {**env, "GIT_WORK_TREE": str(work_tree), "GIT_DIR": str(git_dir)}


def run_plumbing(args: list[str], env: dict[str, str], stdin: bytes | None = None,
                 cwd: Path | None = None, *, detached: bool = False,
                 timeout: float | None = None) -> tuple[int, bytes, bytes] | None:
    """(exit status, stdout, stderr) of one plumbing git command fed `stdin`, or None when git cannot be run or does
    not answer within `timeout` seconds (`git_timeout()` unless given; then it and anything it started are killed,
    as the git owner does). `detached`: in a session of its own, without the terminal, so nothing git starts (a
    signing program asking for a passphrase) can prompt over the app's screen or wait on keys it will never get:
    it fails and says so; stopped, its whole process group goes too."""
    import subprocess

    try:
        proc = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, start_new_session=detached)
    except OSError:
        return None
    try:
        out, err = proc.communicate(stdin, timeout=git_timeout() if timeout is None else timeout)
    except subprocess.TimeoutExpired:
        stop(proc, tree=True, group=detached)
        return None
    return proc.returncode, out, err


def stop(proc: Any, *, tree: bool = False, group: bool = True) -> tuple[bytes, bytes]:
    """Stop a program that did not answer in time (git, a hook, what either started) and give what it had written.
    `tree`: it and every process it started, found by parent (a git alias or wrapper script may sit between);
    `group`: its whole process group, for one started in a session of its own (a child whose parent is gone has
    left the tree but not the group). Its pipes are drained for at most 5 s: a grandchild that left the group may
    still hold one, and is left rather than waited on forever."""
    import signal
    import subprocess

    if tree:
        kill_tree(proc.pid)
    if group:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        out, err = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        return b"", b""
    return out or b"", err or b""


def _children(pid: int) -> list[int]:
    out = []
    proc = Path("/proc")
    if not proc.is_dir():
        return out
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1] == str(pid):
            out.append(int(entry.name))
    return out


def kill_tree(pid: int) -> None:
    """SIGKILL a process and everything it started (a git alias or wrapper script may sit between)."""
    import signal

    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += [c for c in _children(p) if c not in seen]
    for p in reversed(seen):
        try:
            os.kill(p, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class GitOwner:
    """The one way memtui reaches a repository: `with owner.use() as repo:` serialises every git call on it across
    threads, and stops a git that does not answer within `timeout` seconds with a `StoreError`."""

    def __init__(self, root: Path, git_dir: Path | None = None, timeout: float | None = None,
                 vet: Callable[[Path], None] | None = None,
                 stamp: Callable[[Path], object] | None = None) -> None:
        self.root = root
        # Signs that git's config may have changed, the files it includes too (memtui.core.storage.gitobjects.
        # config_stamp): memtui's filter overrides are made again when they move. None: the config file's own stat.
        self._stamp = stamp
        # Checks git's folder before GitPython opens it (its config reader opens files in process, unbounded):
        # raises what is wrong (memtui.core.storage.gitobjects.refuse_blocking_include).
        self._vet = vet
        # A repository kept beside the folder (memtui.core.storage.places): every call names it (GIT_DIR), so git
        # neither looks for `.git` in the folder nor finds a repository above it. None: `<root>/.git`, found as git
        # finds it.
        self.git_dir = git_dir
        self.timeout = git_timeout() if timeout is None else timeout
        self._lock = threading.RLock()
        self._depth = 0
        self._repo: Any = None
        self._expired: str | None = None
        self._env_key: Any = None

    def vet(self) -> None:
        """Raise what is wrong with git's folder that would make git wait for ever (the `vet` given), if anything:
        for a plumbing read that did not answer, so its error says what to do rather than only that it timed out."""
        where = self.root / ".git" if self.git_dir is None else self.git_dir
        if self._vet is not None and os.path.isdir(where):
            self._vet(Path(where))

    @property
    def opened(self) -> bool:
        """Has the Repo (GitPython) been opened yet? One-shot readers use plumbing git until it has."""
        return self._repo is not None

    @property
    def repo(self) -> Any:
        """The Repo, opened on first use (None when the root has no repository); use it only inside `use()`."""
        with self._lock:
            where = self.root / ".git" if self.git_dir is None else self.git_dir
            if self._repo is None and os.path.lexists(where):
                import git

                if self._vet is not None and os.path.isdir(where):
                    self._vet(Path(where))

                try:
                    self._repo = repo_class()(self.root if self.git_dir is None else self.git_dir)
                except (git.exc.GitError, ValueError, OSError) as exc:
                    raise StoreError(
                        f"the git repository at {where} is unreadable ({type(exc).__name__}: {exc}); "
                        "run `memtui doctor` to see what is wrong. Memory files were not changed"
                    ) from None
                self._env_key = None
            if self._repo is not None:
                self._refresh_env()
            return self._repo

    def adopt(self, repo: Any) -> Any:
        """Take over a Repo opened elsewhere (`git init`): its calls get the same overrides."""
        self.forget()
        if not isinstance(repo, repo_class()):
            repo = repo_class()(repo.working_tree_dir if self.git_dir is None else self.git_dir)
        self._repo = repo
        self._refresh_env()
        return repo

    def forget(self) -> None:
        """Drop the Repo (its cat-file processes end); the next use opens it again."""
        if self._repo is not None:
            try:
                self._repo.git.clear_cache()
            except Exception:  # a process already gone
                pass
        self._repo = None

    def _refresh_env(self) -> None:
        """Recompute the overrides when a config file git reads changes (a filter driver added, say), the files it
        includes too: a driver defined in an included file moves no byte of the config (`gitobjects.config_stamp`,
        a few stats and small reads for each use; asking `git config` would be a process each time)."""
        git_dir = Path(self._repo.common_dir)  # a linked worktree's config lives in the main repository
        if self._stamp is not None:
            key: object = self._stamp(Path(self._repo.git_dir))
        else:
            try:
                st = os.stat(git_dir / "config")
                key = (st.st_mtime_ns, st.st_size, st.st_ino)
            except OSError:
                key = None
        if key != self._env_key:
            env = config_env(git_dir, self.root)
            if self.git_dir is not None:
                env["GIT_DIR"] = str(self.git_dir)
            self._repo.git.update_environment(**env)
            self._env_key = key

    @contextmanager
    def serial(self) -> Iterator[None]:
        """This repository's git calls, from this thread alone until the block ends, without opening GitPython
        (plumbing that has its own time limit, `run_plumbing`)."""
        if not self._lock.acquire(timeout=self.timeout):
            raise StoreError(f"git at {self.root} is busy: another thread's git call has run for over "
                             f"{self.timeout:g}s; try again, or run `memtui doctor`")
        try:
            yield
        finally:
            self._lock.release()

    @contextmanager
    def use(self, what: str = "git") -> Iterator[Any]:
        """The repository (or None), for this thread alone until the block ends; bounded by `timeout`."""
        if not self._lock.acquire(timeout=self.timeout):
            raise StoreError(f"git at {self.root} is busy: another thread's git call has run for over "
                             f"{self.timeout:g}s; try again, or run `memtui doctor`")
        outer = self._depth == 0
        self._depth += 1
        timer = None
        try:
            if outer:
                self._expired = None
                timer = threading.Timer(self.timeout, self._expire, args=(what,))
                timer.daemon = True
                timer.start()
            try:
                yield self.repo
            except Exception as exc:
                if self._expired is not None or timed_out(exc):
                    raise self._timeout_error(what) from None
                raise
            if outer and self._expired is not None:
                raise self._timeout_error(what)
        finally:
            if timer is not None:
                timer.cancel()
            self._depth -= 1
            if outer and self._expired is not None and self._repo is not None:
                self._repo.git.clear_cache()  # the killed cat-file processes: start fresh ones next time
            self._lock.release()

    def _timeout_error(self, what: str) -> StoreError:
        return StoreError(f"git did not answer within {self.timeout:g}s ({what} in {self.root}); memtui stopped "
                          "it and nothing was changed by that call. Check for a stuck git process, then run "
                          "`memtui doctor`")

    def _expire(self, what: str) -> None:
        """The watchdog: kill the persistent cat-file processes a stuck read waits on (the read then ends)."""
        self._expired = what
        repo = self._repo
        if repo is None:
            return
        for cmd in (getattr(repo.git, "cat_file_all", None), getattr(repo.git, "cat_file_header", None)):
            proc = getattr(cmd, "proc", None)
            if proc is not None and proc.poll() is None:
                kill_tree(proc.pid)


class GitErrors(NamedTuple):
    """What a read through `GitOwner` raises: `command` when git refuses or fails (GitPython's GitCommandError),
    `bad_name` when a name does not resolve to an object (BadName), `any` for both and the rest of GitPython's."""

    command: type[Exception]
    bad_name: type[Exception]
    any: type[Exception]


def errors() -> GitErrors:
    """GitPython's error classes, so callers catch them without importing GitPython (this module is the one owner of
    git reads). An `except` clause evaluates this only when an exception is raised: start-up imports nothing."""
    import git

    return GitErrors(git.GitCommandError, git.BadName, git.exc.GitError)


def timed_out(exc: BaseException) -> bool:
    import git

    return isinstance(exc, git.exc.GitCommandError) and "did not complete in" in str(exc)


_REPO_CLASS: Any = None


def repo_class() -> Any:
    """A Repo whose git commands all run with a time limit (GitPython's kill_after_timeout)."""
    global _REPO_CLASS
    if _REPO_CLASS is None:
        import git

        class BoundedGit(git.Git):
            def execute(self, command: Any, *args: Any, **kwargs: Any) -> Any:
                if not kwargs.get("as_process") and kwargs.get("kill_after_timeout") is None:
                    kwargs["kill_after_timeout"] = git_timeout()
                return super().execute(command, *args, **kwargs)

        class BoundedRepo(git.Repo):
            GitCommandWrapperType = BoundedGit

        _REPO_CLASS = BoundedRepo
    return _REPO_CLASS



# Reads: every git program memtui runs to read a repository is spelled here (issue #44: one owner of git reads). The
# object reader itself (refs, loose objects, packs, and its `cat-file --batch` for the rest) is the sibling
# memtui/core/storage/gitobjects.py (`Batch`), measured fastest for object reads (benches/bench_git_reads.py).


def read_git(args: list[str], env: dict[str, str], stdin: bytes | None = None, cwd: Path | None = None, *,
             timeout: float | None = None, detached: bool = False) -> tuple[int, bytes, bytes] | None:
    """`git <args>` for a read (status, ls-files, diff-index, rev-parse, config, log): `run_plumbing`'s answer. The
    caller's `env` (or `-c` options in `args`, as `memtui sync` gives them) carries memtui's overrides
    (`plumbing_env` or `config_env`); `timeout` and `detached` as `run_plumbing` takes them."""
    return run_plumbing(["git", *args], env, stdin, cwd, detached=detached, timeout=timeout)


def read_or_raise(program: str, args: list[str], env: dict[str, str], stdin: bytes | None = None,
                  cwd: Path | None = None) -> bytes:
    """`read_git`'s output, or StoreError saying that git `program` did not answer or what it said."""
    done = read_git(args, env, stdin, cwd)
    if done is None:
        raise StoreError(f"git {program} did not answer within {git_timeout():g}s; check for a stuck git process, "
                         "then run `memtui doctor`")
    code, out, err = done
    if code != 0:
        raise StoreError(f"git {program} failed: {err.decode('utf-8', 'replace').strip()[:400]}")
    return out


def status_porcelain(env: dict[str, str], cwd: Path, spec: tuple[str, ...] = ()) -> tuple[int, bytes, bytes] | None:
    """`git status` as memtui reads it for external changes: porcelain v1, NUL-separated, every untracked file and
    every ignored one (a .gitignore, even one that ignores itself, must not hide a memory file from review), no
    renames, no submodules; `spec` the paths to look at (all when empty)."""
    return read_git(["status", *STATUS_ARGS, *spec], env, cwd=cwd)


# The flags of that status (benches/bench_git_reads.py asks GitPython's Repo the same, to measure the two).
STATUS_ARGS = ("--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all",
               "--ignored=traditional")


def cat_file_batch(env: dict[str, str]) -> Any:
    """One persistent `git cat-file --batch` (a `subprocess.Popen` with pipes), for `gitobjects.Batch`'s names that
    only git can resolve."""
    import subprocess

    return subprocess.Popen(["git", "cat-file", "--batch"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)


class LogCommit(NamedTuple):
    sha: str
    parents: tuple[str, ...]
    author: str
    when: float
    message: str


# sha, parents, author name (as written: no .mailmap an agent might plant), author time, raw message; `-z` ends
# each commit with NUL and a message cannot hold one (git stops at it), so the fields come in fives.
_LOG_FORMAT = "--format=%H%x00%P%x00%an%x00%at%x00%B"


def log_commits(env: dict[str, str], rev: str = "HEAD", paths: list[str] | None = None, since: float | None = None,
                max_count: int | None = None, cwd: Path | None = None) -> list[LogCommit]:
    """History newest first, as GitPython's `iter_commits` walks it (`git rev-list` order, the same path
    simplification) in one `git log`: 2-7x faster than GitPython's walk, which reads each commit back through
    `cat-file` and parses it in Python (benches/bench_git_reads.py). `rev` that reads as an option is no commit:
    StoreError; git failing (no such rev, no repository) too, with git's words."""
    args = []
    if since is not None:
        args.append(f"--since=@{int(since)}")
    if max_count is not None:
        args.append(f"--max-count={int(max_count)}")
    return [LogCommit(*fields) for fields in _log(env, rev, args, paths, cwd)]


class ReplayedCommit(NamedTuple):
    """A commit as an import replays it: its committer's name too."""

    sha: str
    parents: tuple[str, ...]
    author: str
    when: float
    message: str
    committer: str


def first_parent_commits(env: dict[str, str], rev: str = "HEAD", cwd: Path | None = None) -> list[ReplayedCommit]:
    """The commits of `rev`'s first-parent line, oldest first (GitPython's `iter_commits(rev, reverse=True,
    first_parent=True)`), with each committer's name as written; errors as `log_commits`'."""
    return [ReplayedCommit(*fields) for fields in _log(env, rev, ["--first-parent", "--reverse"], None, cwd,
                                                       committer=True)]


def _log(env: dict[str, str], rev: str, extra: list[str], paths: list[str] | None, cwd: Path | None,
         *, committer: bool = False) -> list[tuple[Any, ...]]:
    """One `git log -z` of `rev`: per commit (sha, parents, author, author time, message[, committer name])."""
    if rev.startswith("-"):
        raise StoreError(f"{rev[:80]!r} is not a commit name; name a commit by its id")
    # log.follow (a repository's config may set it) would follow one path's renames, which rev-list does not
    fmt = _LOG_FORMAT.replace("%at%x00", "%at%x00%cn%x00") if committer else _LOG_FORMAT
    args = ["-c", "log.follow=false", "log", "-z", fmt, "--encoding=UTF-8", "--no-color",
            "--no-show-signature", "--no-mailmap", *extra, rev, "--", *(paths or [])]
    out = read_or_raise("log", args, env, cwd=cwd)
    width = 6 if committer else 5
    fields = out.split(b"\0")
    commits: list[tuple[Any, ...]] = []
    for i in range(0, len(fields) - width + 1, width):
        sha, parents, author, when, *rest = fields[i:i + width]
        commit = (sha.lstrip(b"\n").decode("ascii", "replace"), tuple(parents.decode("ascii", "replace").split()),
                  author.decode("utf-8", "replace"), float(when or 0), rest[-1].decode("utf-8", "replace"))
        commits.append((*commit, rest[0].decode("utf-8", "replace")) if committer else commit)
    return commits


class TreeChange(NamedTuple):
    """One file a commit changed, as `git diff-tree --raw` names it: its status letter (A, D, M, T, R...), the old
    and new modes and blob ids, its path and, for a rename, the new path."""

    status: str
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str
    path: str
    new_path: str | None


def commit_changes(env: dict[str, str], pairs: list[tuple[str, str | None]],
                   cwd: Path | None = None) -> dict[str, list[TreeChange]]:
    """What each commit changed against the parent given with it (None: a root commit, everything added), renames
    found as GitPython's `diff` finds them (`-M`), in git's path order; one `git diff-tree --stdin` for them all.
    A commit that changed nothing is absent. StoreError when git fails or does not answer."""
    if not pairs:
        return {}
    lines = "".join(f"{sha} {parent}\n" if parent else f"{sha}\n" for sha, parent in pairs)
    if any(c not in "0123456789abcdef \n" for c in lines):
        raise StoreError("a commit id holds characters no commit id has; name commits by their ids")
    out = read_or_raise("diff-tree", ["diff-tree", "--stdin", "-r", "--root", "-M", "--raw", "-z", "--full-index",
                                      "--abbrev=40", "--no-color", "--no-ext-diff", "--no-textconv"], env,
                        lines.encode(), cwd=cwd)
    found: dict[str, list[TreeChange]] = {}
    current: list[TreeChange] = []
    tokens = iter(out.split(b"\0"))
    for token in tokens:
        if not token:
            continue
        if not token.startswith(b":"):  # the next commit's id
            current = found.setdefault(token.decode("ascii", "replace"), [])
            continue
        old_mode, new_mode, old_blob, new_blob, status = token[1:].decode("ascii", "replace").split()
        path = next(tokens).decode("utf-8", "surrogateescape")
        new_path = next(tokens).decode("utf-8", "surrogateescape") if status[0] in "RC" else None
        current.append(TreeChange(status[0], old_mode, new_mode, old_blob, new_blob, path, new_path))
    return found
