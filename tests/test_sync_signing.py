"""memtui's own commits are signed when the person's git signs theirs (`commit.gpgsign`, `gpg.format = ssh`,
`user.signingkey`): an approval made on one machine verifies with `git verify-commit` on another, and a clone that
trusts the remote (`[sync] trust`) takes it without review, end to end through a bare remote. Without signing
configured memtui's commits stay as they were (made in process, unsigned); a commit git cannot sign is not made
unsigned. Real ssh keys, real git."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.core.writing.memory import Memory
from support.git_remote import bare, clone, first_machine, git, run_cli, ssh_key as key

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen makes and checks the keys")

ENTRY = "[observed] The staging database moved to eu-west-2 (2026-12-06, agent-x)"


def signs(root: Path, private: Path) -> None:
    """The person's git set to sign every commit with their ssh key, as git's documentation tells them to."""
    git(root, "config", "gpg.format", "ssh")
    git(root, "config", "user.signingkey", str(private))
    git(root, "config", "commit.gpgsign", "true")


class Machines:
    """wes's laptop (signing with wes's key), the bare remote, and wes's server, which trusts origin's signed
    approvals and allows wes's key under the principal memtui records wes by."""

    def __init__(self, tmp: Path) -> None:
        keys = tmp / "keys"
        keys.mkdir()
        self.key = key(keys, "wes")
        self.signers = keys / "allowed_signers"
        self.signers.write_text(f'wes namespaces="git" {self.key.with_suffix(".pub").read_text()}')
        self.remote = bare(tmp / "remote.git")
        self.laptop = first_machine(tmp, "file://" + str(self.remote))
        config = self.laptop / ".memtui" / "config.toml"
        config.write_text(config.read_text() + '\n[sync]\ntrust = ["origin"]\n')
        git(self.laptop, "commit", "-q", "-m", "sync: trust origin's signed approvals", "--", ".memtui/config.toml")
        git(self.laptop, "push", "-q", "origin", "main")
        self.server = clone("file://" + str(self.remote), tmp / "server", "wes")
        git(self.server, "config", "gpg.ssh.allowedSignersFile", str(self.signers))
        signs(self.laptop, self.key)

    def approve_on_laptop(self, entry: str = ENTRY) -> str:
        mem = Memory(self.laptop)
        queued = mem.update("Facts", "add", entry, actor="agent-x")
        assert queued.status == "queued", queued.message
        done = mem.approve(queued.id, by="wes")
        assert done.status == "applied", done.message
        return git(self.laptop, "rev-parse", "HEAD")

    def verifies(self, root: Path, sha: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-c", f"gpg.ssh.allowedSignersFile={self.signers}", "verify-commit", sha],
                              cwd=root, capture_output=True, text=True, timeout=60)


def test_an_approval_made_with_signing_configured_verifies_and_a_trusting_clone_takes_it(tmp_path: Path) -> None:
    m = Machines(tmp_path)
    sha = m.approve_on_laptop()
    checked = m.verifies(m.laptop, sha)
    assert checked.returncode == 0 and 'Good "git" signature for wes' in checked.stderr, checked.stderr
    assert "Memtui-Approved-By: wes" in git(m.laptop, "log", "-1", "--format=%B", sha)
    assert ENTRY in (m.laptop / "MEMORY.md").read_text()
    out = run_cli(m.laptop, "sync")
    assert out.returncode == 0 and "pushed" in out.stdout, out.stdout + out.stderr

    out = run_cli(m.server, "sync")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "taken without review, approved on origin by wes and signed by a key you allow (wes)" in out.stdout
    assert ENTRY in (m.server / "MEMORY.md").read_text() and not Memory(m.server).proposals(external=False)
    assert git(m.server, "rev-parse", "HEAD") == sha  # nothing diverged: the server's branch is the laptop's commit


def test_a_merge_memtui_makes_is_signed_too(tmp_path: Path) -> None:
    """The laptop wrote something of its own while the server's approval was on the remote: the sync's merge commit
    (memtui's, on the laptop) is signed, so the server takes the merged range without review as well."""
    m = Machines(tmp_path)
    signs(m.server, m.key)  # the server signs as wes too, and the laptop checks its signatures
    git(m.laptop, "config", "gpg.ssh.allowedSignersFile", str(m.signers))
    server_entry = "[observed] Backups run at 02:00 UTC (2026-12-06, agent-x)"
    mem = Memory(m.server)
    queued = mem.update("Decisions", "add", server_entry, actor="agent-x")
    assert mem.approve(queued.id, by="wes").status == "applied"
    assert run_cli(m.server, "sync").returncode == 0
    m.approve_on_laptop()  # the laptop's own approval, not on the remote yet
    out = run_cli(m.laptop, "sync")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "taken without review" in out.stdout and "pushed" in out.stdout, out.stdout
    merge = git(m.laptop, "rev-parse", "HEAD")
    assert len(git(m.laptop, "rev-list", "--parents", "-1", merge).split()) == 3
    assert m.verifies(m.laptop, merge).returncode == 0
    out = run_cli(m.server, "sync")
    assert out.returncode == 0 and "taken without review" in out.stdout, out.stdout + out.stderr
    text = (m.server / "MEMORY.md").read_text()
    assert ENTRY in text and server_entry in text and not Memory(m.server).proposals(external=False)


def test_without_signing_configured_memtuis_commit_is_unsigned_and_the_clone_reviews_it(tmp_path: Path) -> None:
    m = Machines(tmp_path)
    git(m.laptop, "config", "commit.gpgsign", "false")
    sha = m.approve_on_laptop()
    assert git(m.laptop, "log", "-1", "--format=%G?", sha) == "N"
    assert run_cli(m.laptop, "sync").returncode == 0
    out = run_cli(m.server, "sync")
    assert out.returncode == 4 and "is not signed by a key in" in out.stdout, out.stdout
    assert len(Memory(m.server).proposals(external=False)) == 1


def test_a_commit_git_cannot_sign_is_not_made_unsigned(tmp_path: Path) -> None:
    m = Machines(tmp_path)
    git(m.laptop, "config", "user.signingkey", str(tmp_path / "keys" / "gone"))
    before = (m.laptop / "MEMORY.md").read_bytes()
    head = git(m.laptop, "rev-parse", "HEAD")
    mem = Memory(m.laptop)
    queued = mem.update("Facts", "add", ENTRY, actor="agent-x")
    done = mem.approve(queued.id, by="wes")
    assert done.status != "applied"
    assert "could not sign memtui's commit" in done.message and "git config commit.gpgsign false" in done.message, \
        done.message
    assert (m.laptop / "MEMORY.md").read_bytes() == before and git(m.laptop, "rev-parse", "HEAD") == head
    assert Memory(m.laptop).get(queued.id).status == "pending"  # nothing lost: the proposal still waits


def test_a_signed_commit_holds_what_the_unsigned_one_would(tmp_path: Path) -> None:
    """Signing changes only the signature: the same tree, parent, author, committer and message as memtui's own
    commit object. Also the cost, printed: a signed commit runs git and ssh-keygen."""
    m = Machines(tmp_path)
    timings = {}
    shas = {}
    for signing in ("false", "true"):
        git(m.laptop, "config", "commit.gpgsign", signing)
        started = time.perf_counter()
        shas[signing] = m.approve_on_laptop(ENTRY.replace("eu-west-2", f"eu-west-{2 if signing == 'true' else 3}"))
        timings[signing] = time.perf_counter() - started
    fmt = "%an <%ae>|%cn <%ce>|%B"
    unsigned, signed = (git(m.laptop, "log", "-1", f"--format={fmt}", shas[s]) for s in ("false", "true"))
    assert unsigned.replace("eu-west-3", "eu-west-2").replace("p-0001", "p-0002") == signed
    assert git(m.laptop, "rev-parse", f"{shas['true']}^") == shas["false"]
    raw = git(m.laptop, "cat-file", "commit", shas["true"])
    assert "\ngpgsig -----BEGIN SSH SIGNATURE-----" in raw and "\nencoding " not in raw
    print(f"approve + commit: unsigned {timings['false'] * 1000:.0f} ms, signed {timings['true'] * 1000:.0f} ms")


def test_the_signing_recipe_in_the_docs_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/sync.md's three lines in a fresh home with a key at ~/.ssh/id_ed25519: memtui's next approval is signed
    and the trusting clone takes it."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "sync.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"<!-- recipe:sync-signing -->\n```\w*\n(.*?)```", page, re.S)
    m = Machines(tmp_path)
    for name in ("gpg.format", "user.signingkey", "commit.gpgsign"):
        git(m.laptop, "config", "--unset", name)
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    shutil.copy(m.key, home / ".ssh" / "id_ed25519")
    shutil.copy(m.key.with_suffix(".pub"), home / ".ssh" / "id_ed25519.pub")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    done = subprocess.run(["bash", "-c", block], cwd=m.laptop, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    sha = m.approve_on_laptop()
    assert m.verifies(m.laptop, sha).returncode == 0
    assert run_cli(m.laptop, "sync").returncode == 0
    out = run_cli(m.server, "sync")
    assert out.returncode == 0 and "taken without review, approved on origin by wes" in out.stdout, out.stdout


def test_a_key_that_needs_a_passphrase_fails_at_once_and_never_prompts_on_the_terminal(tmp_path: Path) -> None:
    """`memtui queue approve` on a terminal (a pty it controls), signing with a passphrase-protected key and no
    ssh-agent: ssh-keygen would open the terminal and wait for the passphrase (in the app, over its screen) until
    the git time limit. Run without the terminal, it fails at once, and the person is told to use an agent."""
    import fcntl
    import pty
    import termios

    m = Machines(tmp_path)
    locked = tmp_path / "keys" / "locked"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "a long passphrase", "-f", str(locked)], check=True)
    git(m.laptop, "config", "user.signingkey", str(locked))
    queued = Memory(m.laptop).update("Facts", "add", ENTRY, actor="agent-x")
    master, slave = pty.openpty()

    def own_terminal() -> None:  # the pty becomes the command's controlling terminal, as a person's shell's is
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    env = {**os.environ, "MEMTUI_GIT_TIMEOUT": "20"}
    env.pop("SSH_AUTH_SOCK", None)
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "memtui", "queue", "approve", queued.id, "--by", "wes", "--root",
                             str(m.laptop)], stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True,
                            preexec_fn=own_terminal)
    os.close(slave)
    said = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the command ended and closed the terminal
            break
        if not chunk:
            break
        said += chunk
    proc.wait(timeout=60)
    elapsed = time.monotonic() - started
    os.close(master)
    text = said.decode(errors="replace")
    assert proc.returncode != 0 and "could not sign memtui's commit" in text and "ssh-add" in text, text
    assert "did not answer in time" not in text and elapsed < 15, (elapsed, text)
    assert Memory(m.laptop).get(queued.id).status == "pending" and ENTRY not in (m.laptop / "MEMORY.md").read_text()


@pytest.mark.skipif(shutil.which("ssh-agent") is None, reason="ssh-agent holds the key in this test")
def test_a_key_with_a_passphrase_held_by_ssh_agent_signs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the docs tell a person with a passphrase: `ssh-add` it. memtui's commit (git, off the terminal) then
    signs through the agent and the clone that trusts the remote takes it."""
    m = Machines(tmp_path)
    locked = tmp_path / "keys" / "locked"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "a long passphrase", "-C", "wes", "-f", str(locked)],
                   check=True)
    m.signers.write_text(f'wes namespaces="git" {locked.with_suffix(".pub").read_text()}')
    git(m.laptop, "config", "user.signingkey", str(locked))
    agent = subprocess.run(["ssh-agent", "-s", "-a", str(tmp_path / "agent.sock")], capture_output=True, text=True,
                           check=True).stdout
    pid = int(re.search(r"SSH_AGENT_PID=(\d+)", agent).group(1))
    try:
        monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "agent.sock"))
        askpass = tmp_path / "askpass"
        askpass.write_text("#!/bin/sh\necho 'a long passphrase'\n")
        askpass.chmod(0o700)
        adding = {**os.environ, "SSH_ASKPASS": str(askpass), "SSH_ASKPASS_REQUIRE": "force"}
        subprocess.run(["ssh-add", str(locked)], env=adding, stdin=subprocess.DEVNULL, capture_output=True, check=True,
                       timeout=30)
        sha = m.approve_on_laptop()
        assert m.verifies(m.laptop, sha).returncode == 0
        assert run_cli(m.laptop, "sync").returncode == 0
        out = run_cli(m.server, "sync")
        assert out.returncode == 0 and "taken without review, approved on origin by wes" in out.stdout, out.stdout
    finally:
        os.kill(pid, signal.SIGTERM)
