"""The repository's `pre-commit` and `commit-msg` hooks, run for memtui's own commits as `git commit` runs them.

memtui commits with plumbing (memtui/core/storage/folder_commit.py writes the objects and moves the branch itself),
which never runs hooks, so a repository guarded by a memory-lint hook would take any line memtui wrote. Before each
commit the hooks found where git looks (`core.hooksPath`, else `.git/hooks`; executable files only, as git ignores the
rest) run in the work tree with git's environment for them: `GIT_INDEX_FILE` names a temporary index holding exactly the
tree about to be committed (HEAD plus this write, none of a person's staged changes), `GIT_EDITOR=:`, and the
author. `commit-msg` gets the message in a file and may rewrite it, as with git. A hook that fails, hangs past the
time limit, or changes the staged content refuses the commit with its output (StoreError), and the write path
undoes the file writes, so nothing is applied. `[git] hooks = false` in .memtui/config.toml turns this off.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable

from memtui.core.storage.store import StoreError

HOOKS = ("pre-commit", "commit-msg")
# A hook that takes longer than this is stopped (with everything it started) and the write is refused.
TIMEOUT = 60.0
OUTPUT_MAX = 4000
# memtui's own git calls here must not run code from repository config (the hooks themselves are the exception).
_SAFE = ["-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false"]
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]")


class HookRefused(StoreError):
    """A repository hook refused memtui's commit; the message carries the hook's output."""


def enabled(config_text: str | None) -> bool:
    """`[git] hooks` in .memtui/config.toml: on unless set to false."""
    from memtui.core.grammar.config import load_config

    return load_config(config_text).section("git").get("hooks", True) is not False


def hooks_dir(git_dir: Path, work_tree: Path, configured: str) -> Path:
    """Where git looks for hooks: `core.hooksPath` (`configured`; relative to the work tree, `~` expanded), else
    .git/hooks (of the main repository: a linked worktree shares them)."""
    if configured:
        path = Path(os.path.expanduser(str(configured)))
        return path if path.is_absolute() else work_tree / path
    from memtui.core.storage.gitobjects import common_dir

    return common_dir(git_dir) / "hooks"


def runnable(hooks: Path) -> dict[str, Path]:
    """The hooks git would run: regular (or linked) executable files named pre-commit or commit-msg."""
    out = {}
    for name in HOOKS:
        path = hooks / name
        if path.is_file() and os.access(path, os.X_OK):
            out[name] = path
    return out


def before_commit(
    git_dir: Path, work_tree: Path, config_text: str | None, tree_hex: str, message: str, author: tuple[str, str],
    author_date: str | None, hooks_path: Callable[[], str],
) -> str:
    """Run the hooks for a commit of tree `tree_hex`; the message to commit (commit-msg may rewrite it).
    `hooks_path` says what `core.hooksPath` is set to ("" for none), asked only when hooks are on.

    Raises HookRefused when a hook fails; runs no hook process when hooks are off or there are none."""
    if not enabled(config_text):
        return message
    hooks = runnable(hooks_dir(git_dir, work_tree, hooks_path()))
    if not hooks:
        return message
    import tempfile  # only a commit that runs hooks needs these

    with tempfile.TemporaryDirectory(prefix="memtui-hooks-", dir=git_dir) as tmp:
        index = Path(tmp) / "index"
        env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
        if Path(git_dir) != Path(work_tree) / ".git" and not (Path(work_tree) / ".git").exists():
            # memtui's repository beside the folder (memtui.core.storage.places): named, or git would find none (or the
            # project's, above a folder nested in one)
            env.update(GIT_DIR=str(git_dir), GIT_WORK_TREE=str(work_tree))
        env.update(GIT_INDEX_FILE=str(index), GIT_EDITOR=":", GIT_AUTHOR_NAME=author[0], GIT_AUTHOR_EMAIL=author[1])
        if author_date:
            env["GIT_AUTHOR_DATE"] = author_date
        _git(["read-tree", tree_hex], env, work_tree)
        if "pre-commit" in hooks:
            _hook(hooks["pre-commit"], [], env, work_tree)
            staged = _git(["write-tree"], env, work_tree).strip()
            if staged != tree_hex:
                raise HookRefused(
                    "the repository's pre-commit hook changed the staged content (it staged or rewrote files); "
                    "memtui commits exactly what was written or approved, so the write was refused. Make the hook "
                    "check rather than fix, or set `[git] hooks = false` in .memtui/config.toml")
        if "commit-msg" in hooks:
            msg_file = Path(tmp) / "COMMIT_EDITMSG"
            msg_file.write_text(message, encoding="utf-8")
            _hook(hooks["commit-msg"], [str(msg_file)], env, work_tree)
            rewritten = msg_file.read_text(encoding="utf-8", errors="replace")
            if not rewritten.strip():
                raise HookRefused("the repository's commit-msg hook left an empty commit message; nothing was "
                                  "committed")
            message = rewritten
    return message


def _hook(path: Path, args: list[str], env: dict[str, str], cwd: Path) -> None:
    name = path.name
    code, output = _run([str(path), *args], env, cwd)
    if code is None:
        raise HookRefused(f"the repository's {name} hook did not finish within {TIMEOUT:g} seconds and was "
                          f"stopped; nothing was committed{_shown(output)}")
    if code != 0:
        raise HookRefused(f"the repository's {name} hook refused this commit (exit {code}){_shown(output)}")


def _git(args: list[str], env: dict[str, str], cwd: Path) -> str:
    code, output = _run(["git", *_SAFE, *args], env, cwd, merge=False)
    if code != 0:
        raise HookRefused(f"could not prepare the index for the repository's hooks (git {args[0]} "
                          f"{'timed out' if code is None else f'exit {code}'}){_shown(output)}")
    return output


def _run(argv: list[str], env: dict[str, str], cwd: Path, merge: bool = True) -> tuple[int | None, str]:
    """Run `argv` in its own process group with the time limit; (exit code or None on timeout, output)."""
    import subprocess

    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT if merge else subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise HookRefused(f"could not run {Path(argv[0]).name}: {exc.strerror or exc}") from None
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        from memtui.core.storage.gitcall import stop

        out, _ = stop(proc)
        return None, out.decode("utf-8", errors="replace")
    text = (out or b"").decode("utf-8", errors="replace")
    if not merge and proc.returncode != 0:
        text = (err or b"").decode("utf-8", errors="replace")
    return proc.returncode, text


def _shown(output: str) -> str:
    """The hook's output as plain text (no terminal escapes or control characters), trimmed."""
    text = _CONTROL.sub("", output).strip()
    if len(text) > OUTPUT_MAX:
        text = text[:OUTPUT_MAX] + "…"
    return f":\n{text}" if text else ""
