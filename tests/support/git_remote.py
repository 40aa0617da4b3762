"""Real git remotes for the sync tests: a bare repository over file://, one served on loopback by `git daemon`, and
clones of it standing for other machines and teammates (plain git, as a person or another tool would push)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from memtui.core.storage.init import init_root


def git(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=120)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.strip()


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`memtui ARGS --root ROOT` in a process of its own, as a person at a terminal (or a cron job) runs it."""
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], capture_output=True,
                          text=True, timeout=120)


def ssh_key(where: Path, name: str) -> Path:
    """A fresh ed25519 key pair without a passphrase, `where/name` and `where/name.pub`, made by ssh-keygen."""
    path = where / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)], check=True)
    return path


def bare(where: Path) -> Path:
    """An empty bare repository on branch main."""
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(where)], check=True)
    return where


def first_machine(tmp: Path, url: str, name: str = "laptop") -> Path:
    """A memory made by `memtui init`, its remote `origin` = url, pushed there as the remote's first history."""
    root = tmp / name
    init_root(root)
    git(root, "remote", "add", "origin", url)
    git(root, "push", "-q", "origin", "main")
    return root


def clone(url: str, dest: Path, person: str) -> Path:
    """Another machine or a teammate: a clone of the remote (its memtui layout came with it)."""
    subprocess.run(["git", "clone", "-q", url, str(dest)], check=True, capture_output=True, timeout=120)
    git(dest, "config", "user.name", person)
    git(dest, "config", "user.email", f"{person}@example.org")
    return dest


def push_files(clone_dir: Path, files: dict[str, bytes | None], message: str, *, force: bool = False) -> str:
    """A teammate's plain-git commit of `files` (None removes one) pushed to origin; the commit's sha."""
    for rel, data in files.items():
        path = clone_dir / rel
        if data is None:
            git(clone_dir, "rm", "-q", rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        git(clone_dir, "add", "-f", rel)  # a teammate's push may hold what the .gitignore leaves out
    git(clone_dir, "commit", "-q", "-m", message)
    git(clone_dir, "push", "-q", *(["--force"] if force else []), "origin", "HEAD:main")
    return git(clone_dir, "rev-parse", "HEAD")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class GitDaemon:
    """`git daemon` serving `base` on a loopback port, receive-pack enabled; `stop` ends it (also killed: see
    `kill`), `start` serves again on the same port."""

    def __init__(self, base: Path) -> None:
        self.base, self.port = base, free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def start(self) -> GitDaemon:
        self.proc = subprocess.Popen(
            ["git", "daemon", "--reuseaddr", f"--base-path={self.base}", "--export-all", "--enable=receive-pack",
             "--listen=127.0.0.1", f"--port={self.port}", str(self.base)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise AssertionError("git daemon did not start")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(timeout=10)
        self.proc = None


def push_raw_entries(clone_dir: Path, entries: list[str], message: str) -> str:
    """Push a commit whose tree is HEAD's plus `entries` (`git mktree` lines: "MODE TYPE SHA\\tNAME"), made with
    plumbing: what a hostile remote can hold that `git add` would refuse (a `.git` folder, a submodule link)."""
    lines = git(clone_dir, "ls-tree", "HEAD").splitlines()
    names = {entry.split("\t", 1)[1] for entry in entries}
    kept = [line for line in lines if line.split("\t", 1)[1] not in names]
    tree = subprocess.run(["git", "mktree", "--missing"], cwd=clone_dir, input="\n".join(kept + entries) + "\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    commit = git(clone_dir, "commit-tree", tree, "-p", "HEAD", "-m", message)
    git(clone_dir, "update-ref", "HEAD", commit)
    git(clone_dir, "push", "-q", "origin", "HEAD:main")
    return commit


def blob(clone_dir: Path, data: bytes) -> str:
    return subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=clone_dir, input=data, capture_output=True,
                          check=True).stdout.decode().strip()


def tree_of(clone_dir: Path, entries: list[str]) -> str:
    return subprocess.run(["git", "mktree", "--missing"], cwd=clone_dir, input="\n".join(entries) + "\n",
                          capture_output=True, text=True, check=True).stdout.strip()
