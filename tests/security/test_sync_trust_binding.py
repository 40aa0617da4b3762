"""A trusted remote's approval is bound to the key that signed it: `[sync] trust` takes a commit without review only
when the person its `Memtui-Approved-By` (or `Memtui-Actor`) trailer names is a principal of the signing key in git's
allowed-signers file. Written as a teammate with a key of their own would attack it: bob signs a commit that says
alice approved it, names two approvers, hides behind a wildcard principal or a look-alike address, or signs as an
agent. Real keys made by ssh-keygen, real git, two clones and a bare remote."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from memtui.core.writing.memory import Memory
from memtui.core.writing.sync import bound, relayed
from support.git_remote import bare, clone, first_machine, git, run_cli

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is needed to make and check "
                                "the ssh signatures this trust is built on")

FACT = "- [stated] The office moved to Lyon (2026-12-06, alice)\n"


class Team:
    """The victim (trusting origin), the remote and a teammate clone that signs with alice's or bob's key; both keys
    are in the victim's allowed-signers file, under the principals each test gives."""

    def __init__(self, tmp: Path, principals: dict[str, str]) -> None:
        keys = tmp / "keys"
        keys.mkdir()
        self.keys: dict[str, Path] = {}
        lines = []
        for name in ("alice", "bob", "agent-x"):
            path = keys / name
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)], check=True)
            self.keys[name] = path
            if name in principals:
                lines.append(f'{principals[name]} namespaces="git" {(keys / f"{name}.pub").read_text()}')
        self.signers = keys / "allowed_signers"
        self.signers.write_text("".join(lines))
        self.remote = bare(tmp / "remote.git")
        self.victim = first_machine(tmp, "file://" + str(self.remote))
        config = self.victim / ".memtui" / "config.toml"
        config.write_text(config.read_text() + '\n[sync]\ntrust = ["origin"]\n')
        git(self.victim, "commit", "-q", "-m", "sync: trust origin's signed approvals", "--", ".memtui/config.toml")
        git(self.victim, "config", "gpg.ssh.allowedSignersFile", str(self.signers))
        assert run_cli(self.victim, "sync").returncode == 0
        self.teammate = clone("file://" + str(self.remote), tmp / "teammate", "bob")
        git(self.teammate, "config", "gpg.format", "ssh")

    def commit(self, message: str, signer: str, line: str = FACT, section: str = "Facts") -> str:
        text = (self.teammate / "MEMORY.md").read_text()
        heading = f"## {section}\n\n"
        (self.teammate / "MEMORY.md").write_text(text.replace(heading, heading + line))
        git(self.teammate, "-c", f"user.signingkey={self.keys[signer]}", "commit", "-S", "-q", "-a", "-m", message)
        return git(self.teammate, "rev-parse", "HEAD")

    def push(self) -> None:
        git(self.teammate, "push", "-q", "origin", "HEAD:main")

    def sync(self) -> subprocess.CompletedProcess[str]:
        return run_cli(self.victim, "sync")

    def waiting(self) -> list:
        return Memory(self.victim).proposals(external=False)


def approved_by(*names: str) -> str:
    return "add a fact\n\nMemtui-Actor: agent-x\nMemtui-Proposal: p-0007\n" + "".join(
        f"Memtui-Approved-By: {n}\n" for n in names)


def held(team: Team, out: subprocess.CompletedProcess[str]) -> None:
    """Nothing was taken: the change waits for a person here, and the victim's memory does not hold it."""
    assert out.returncode == 4, out.stdout + out.stderr
    assert "taken without review," not in out.stdout, out.stdout
    assert FACT not in (team.victim / "MEMORY.md").read_text()
    (p,) = team.waiting()
    assert p.status == "pending" and p.file == "MEMORY.md"


def taken(team: Team, out: subprocess.CompletedProcess[str], approver: str) -> None:
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"taken without review, approved on origin by {approver} and signed" in out.stdout, out.stdout
    assert FACT in (team.victim / "MEMORY.md").read_text() and not team.waiting()
    decided = {r.get("decided_by") for r in Memory(team.victim).store.audit_records() if r.get("status") == "applied"
               and r.get("action") != "sync"}
    assert f"{approver} via origin" in decided, decided


def test_bob_signing_an_approval_in_alices_name_waits_and_says_so(tmp_path: Path) -> None:
    team = Team(tmp_path, {"alice": "alice", "bob": "bob"})
    team.commit(approved_by("alice"), "bob")
    team.push()
    out = team.sync()
    held(team, out)
    assert "the approval names alice but bob signed it" in out.stdout, out.stdout


def test_alice_signing_her_own_approval_is_taken(tmp_path: Path) -> None:
    team = Team(tmp_path, {"alice": "alice", "bob": "bob"})
    team.commit(approved_by("alice"), "alice")
    team.push()
    taken(team, team.sync(), "alice")


def test_one_forged_commit_among_honest_ones_holds_the_whole_range(tmp_path: Path) -> None:
    team = Team(tmp_path, {"alice": "alice", "bob": "bob"})
    team.commit(approved_by("bob"), "bob", "- [stated] Standup moved to 10:00 (2026-12-06, bob)\n")
    team.commit(approved_by("alice"), "bob")
    team.push()
    out = team.sync()
    assert out.returncode == 4 and "the approval names alice but bob signed it" in out.stdout, out.stdout
    assert FACT not in (team.victim / "MEMORY.md").read_text() and len(team.waiting()) == 1


def test_several_approvers_in_one_commit_wait(tmp_path: Path) -> None:
    team = Team(tmp_path, {"alice": "alice", "bob": "bob"})
    team.commit(approved_by("alice", "bob"), "alice")
    team.push()
    out = team.sync()
    held(team, out)
    assert "names 2 approvers (alice, bob)" in out.stdout, out.stdout


def test_one_approver_written_twice_is_one_approver(tmp_path: Path) -> None:
    team = Team(tmp_path, {"alice": "alice", "bob": "bob"})
    team.commit(approved_by("alice", "alice"), "alice")
    team.push()
    taken(team, team.sync(), "alice")


@pytest.mark.parametrize("trailer", ["alice", "alice@example.org", "ALICE@Example.ORG", "alice via origin"])
def test_any_principal_of_the_signing_key_may_be_the_approver(tmp_path: Path, trailer: str) -> None:
    # git names the signer by the line's first principal only (%GS = "alice"); the others are the same key's.
    # "alice via origin": an approval alice's memtui took from a remote, as it records it, coming back.
    team = Team(tmp_path, {"alice": "alice,alice@example.org", "bob": "bob"})
    team.commit(approved_by(trailer), "alice")
    team.push()
    taken(team, team.sync(), relayed(trailer))


@pytest.mark.parametrize("trailer", ["Alice <alice@example.org>", "alice@example.org.evil", "аlice@example.org",
                                     "Alice", "bob", "bob via origin", "alice via origin via ../x"])
def test_a_name_that_is_not_exactly_a_principal_of_the_key_waits(tmp_path: Path, trailer: str) -> None:
    # "Alice <alice@example.org>": memtui records approvers without <> (as "Alice alice@example.org"), which is no
    # principal; a Cyrillic "а"; a name whose case differs (names are compared as written, only emails without case).
    team = Team(tmp_path, {"alice": "alice,alice@example.org", "bob": "bob"})
    team.commit(approved_by(trailer), "alice")
    team.push()
    out = team.sync()
    held(team, out)
    assert "but alice signed it" in out.stdout, out.stdout


@pytest.mark.parametrize("trailer", ["alice@example.org", "bob@example.org"])
def test_a_wildcard_principal_signs_in_nobodys_name(tmp_path: Path, trailer: str) -> None:
    team = Team(tmp_path, {"alice": "alice@example.org", "bob": "*@example.org"})
    team.commit(approved_by(trailer), "bob")
    team.push()
    out = team.sync()
    held(team, out)
    assert f"the approval names {trailer} but *@example.org signed it" in out.stdout, out.stdout


@pytest.mark.parametrize("trailer", ["Memtui-Actor: agent-x", "Memtui-Approved-By: agent-x via origin"])
def test_an_agents_own_key_naming_itself_waits(tmp_path: Path, trailer: str) -> None:
    team = Team(tmp_path, {"alice": "alice", "agent-x": "agent-x"})
    team.commit(f"add a fact\n\n{trailer}\n", "agent-x")
    team.push()
    out = team.sync()
    held(team, out)
    assert "names no person who approved it" in out.stdout, out.stdout


@pytest.mark.parametrize("merger", ["bob", "alice"])
def test_a_merge_commit_is_bound_like_any_other(tmp_path: Path, merger: str) -> None:
    """alice's signed approval on a side branch, merged by a commit that also says alice approved it: bob's merge
    holds the range (his key on alice's name), alice's own merge lets it through."""
    team = Team(tmp_path, {"alice": "alice", "bob": "bob"})
    git(team.teammate, "switch", "-q", "-c", "side")
    team.commit(approved_by("alice"), "alice")
    git(team.teammate, "switch", "-q", "main")
    team.commit(approved_by("alice"), "alice", "- [stated] Releases ship on Tuesdays (2026-12-06, alice)\n",
                "Projects")
    git(team.teammate, "-c", f"user.signingkey={team.keys[merger]}", "merge", "-S", "--no-ff", "-q", "-m",
        approved_by("alice"), "side")
    assert len(git(team.teammate, "rev-list", "--parents", "-1", "HEAD").split()) == 3
    team.push()
    out = team.sync()
    if merger == "bob":
        assert out.returncode == 4 and "the approval names alice but bob signed it" in out.stdout, out.stdout
        assert FACT not in (team.victim / "MEMORY.md").read_text() and len(team.waiting()) == 1
    else:
        assert "taken without review, approved on origin by alice" in out.stdout, out.stdout
        assert FACT in (team.victim / "MEMORY.md").read_text() and not team.waiting()


def test_a_key_with_no_principal_for_git_waits(tmp_path: Path) -> None:
    """bob's key is listed only for another namespace: git finds no principal for it (%GS empty) and nothing binds."""
    team = Team(tmp_path, {"alice": "alice"})
    with team.signers.open("a") as f:
        f.write(f'bob namespaces="file" {(team.keys["bob"].with_suffix(".pub")).read_text()}')
    team.commit(approved_by("bob"), "bob")
    team.push()
    out = team.sync()
    held(team, out)
    assert "is not signed by a key in" in out.stdout, out.stdout


@pytest.mark.parametrize("approver, principal, binds", [
    ("alice", "alice", True), ("alice@x.org", "Alice@X.org", True), ("Alice", "alice", False),
    ("alice", "", False), ("", "", False), ("alice@x.org", "*@x.org", False), ("alice", "!bob", False),
    ("alice", "al?ce", False), ("alice", "alice,bob", False), ("ǅ@x.org", "ǆ@x.org", False),
    ("alice@x.org", "alice@x.org ", True), ("alice alice@x.org", "alice@x.org", False)])
def test_the_matching_rule(approver: str, principal: str, binds: bool) -> None:
    assert bound(approver, principal) is binds


@pytest.mark.parametrize("name, person", [("alice via origin", "alice"), ("alice via origin via laptop", "alice"),
                                          ("alice via ../x", "alice via ../x"), (" via origin", " via origin"),
                                          ("alice", "alice")])
def test_a_relayed_approval_names_the_person_who_approved_it(name: str, person: str) -> None:
    assert relayed(name) == person
