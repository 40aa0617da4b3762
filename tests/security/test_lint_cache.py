"""lint's cache of findings cannot hide a finding (issue 41, "bounded under flood"): the cache is a file in memtui's
state folder, so an agent with file access can write it. A planted cache, one sealed for another folder, a corrupted
one and a FIFO in its place are read as empty; a file changed after caching to hold a key is linted anew. Each
attack's memory is linted cold first, and every finding of that cold run must still be reported."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from memtui.core.basics.seal import mac
from memtui.core.hygiene import lint as lint_module
from memtui.core.hygiene.lint import CACHE_FILE, lint
from memtui.core.storage.init import init_root
from memtui.core.writing.memory import Memory

TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"  # a fake key in GitHub's format


def _memory(root: Path) -> Path:
    """A memory whose topic files hold a key, an untagged line and an entry deleted from history, all committed."""
    init_root(root)
    (root / "notes").mkdir(exist_ok=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x"}
    for version in (1, 2):
        for k in range(4):
            lines = ["# N", "", "## Facts", "", f"- [stated] Fact {k} holds (2026-08-01)"]
            if version == 1:
                lines.append(f"- [stated] Fact {k} was dropped later (2026-08-01)")
            lines += [f"- key {k}: {TOKEN}", f"- untagged {k}"]
            (root / "notes" / f"n{k}.md").write_text("\n".join(lines) + "\n")
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env)
        subprocess.run(["git", "-C", str(root), "commit", "-qm", f"v{version}", "--no-verify"], check=True, env=env)
    return root


def _render(root: Path) -> list[str]:
    return [f.render() for f in lint(Memory(root))]


def _cache(root: Path) -> Path:
    return Memory(root).store.state_folder / CACHE_FILE


def _kept(cache: Path) -> list[list]:
    """The cache's rows, one per kept file: [key, file, findings, deleted entries' findings]."""
    return [json.loads(line) for line in cache.read_bytes().split(b"\n")[1:-1]]


def _emptied(cache: Path) -> bytes:
    """The cache's lines with every kept file's findings taken out (no seal): what a planted cache would say."""
    head = cache.read_bytes().split(b"\n", 1)[0]
    return b"".join([head + b"\n"] + [json.dumps([key, file, [], []], separators=(",", ":")).encode() + b"\n"
                                      for key, file, _, _ in _kept(cache)])


def _sealed(cache: Path, body: bytes) -> bytes:
    """`body` sealed as memtui seals the cache at `cache` (an HMAC under the person's key)."""
    return body + mac(lint_module._payload(cache, hashlib.sha256(body).digest())).encode()


def _cold(root: Path) -> list[str]:
    cold = _render(root)
    assert {"secret", "untagged", "deleted-history"} <= {f.split("[")[1].split("]")[0] for f in cold}
    assert len(_kept(_cache(root))) == len(list((root / "notes").glob("*.md")))  # every topic file is kept
    return cold


def test_a_cache_sealed_for_this_folder_is_used_so_the_attacks_below_can_fail(tmp_path: Path) -> None:
    """The control: the emptied body sealed as memtui seals it here IS served (the findings go), so each attack
    below is refused by the seal, not by a key that never matched."""
    root = _memory(tmp_path / "m")
    cold = _cold(root)
    cache = _cache(root)
    body = _emptied(cache)
    cache.write_bytes(_sealed(cache, body))
    assert not [f for f in _render(root) if f.startswith("notes/")]
    assert [f for f in cold if not f.startswith("notes/")] == _render(root)


def test_a_planted_cache_hides_no_finding(tmp_path: Path) -> None:
    root = _memory(tmp_path / "m")
    cold = _cold(root)
    cache = _cache(root)
    body = _emptied(cache)
    for seal in (b"", b"\n", b"0" * 64, cache.read_bytes().rpartition(b"\n")[2]):
        cache.write_bytes(body + seal)  # no seal, an empty one, a made-up one, the real cache's old one
        assert _render(root) == cold, seal


def test_a_cache_sealed_for_another_folder_hides_no_finding(tmp_path: Path) -> None:
    """A cache sealed by this person's memtui, with this memory's own keys, but for another memory's folder."""
    root, other = _memory(tmp_path / "m"), _memory(tmp_path / "other")
    cold = _cold(root)
    _cold(other)
    cache = _cache(root)
    body = _emptied(cache)
    cache.write_bytes(_sealed(_cache(other), body))
    assert _render(root) == cold
    cache.write_bytes(_cache(other).read_bytes())  # the other memory's whole sealed cache, copied over
    assert _render(root) == cold


def test_a_corrupted_cache_hides_no_finding(tmp_path: Path) -> None:
    root = _memory(tmp_path / "m")
    cold = _cold(root)
    cache = _cache(root)
    good = cache.read_bytes()
    for bad in (good[:len(good) // 2], good.replace(b'"secret"', b'"secreT"', 1), b"\0" * 100, b"", b"\n\n"):
        cache.write_bytes(bad)
        assert _render(root) == cold
    cache.unlink()
    os.mkfifo(cache)  # a FIFO in its place: not opened to block, not read
    done = subprocess.run([sys.executable, "-c", "import sys; from memtui.core.hygiene.lint import lint; "
                           "from memtui.core.writing.memory import Memory; "
                           "print('\\n'.join(f.render() for f in lint(Memory(sys.argv[1]))))", str(root)],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == cold, done.stderr


def test_a_key_added_after_caching_is_reported(tmp_path: Path) -> None:
    """A file cached clean, then given a key (uncommitted, and then committed): the secret finding is there, masked,
    at once, and every other file's findings are as before."""
    root = _memory(tmp_path / "m")
    clean = root / "notes" / "clean.md"
    clean.write_text("# C\n\n## Facts\n\n- [stated] Nothing to see (2026-08-01)\n")
    cold = _cold(root)
    assert not [f for f in cold if f.startswith("notes/clean.md")]
    assert _render(root) == cold  # from the cache
    clean.write_text(clean.read_text() + f"- [stated] The deploy token is {TOKEN} (2026-08-02)\n")
    found = [f for f in _render(root) if f.startswith("notes/clean.md")]
    assert len(found) == 1 and "[secret]" in found[0] and TOKEN not in found[0], found
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "key",
                    "--no-verify"], check=True)
    again = _render(root)
    assert [f for f in again if f.startswith("notes/clean.md")] == found
    assert [f for f in again if not f.startswith("notes/clean.md")] == cold
    kept = _cache(root).read_bytes()
    assert TOKEN.encode() not in kept and TOKEN[4:20].encode() not in kept  # the cache holds findings masked


def test_a_foreign_folder_gets_its_cache_beside_it_and_nothing_in_it(tmp_path: Path) -> None:
    """An OpenClaw workspace kept in the person's git: lint's cache goes to memtui's state beside it; the folder's
    files and the person's git status are as before, and the second lint (from the cache) says the same."""
    from support.fixtures_openclaw import workspace
    from support.foreign import git_status, listing

    folder = workspace(tmp_path / "ws", git=True, files={"memory/projects.md": f"# P\n\n- key {TOKEN}\n- untagged\n"})
    before, status = listing(folder), git_status(folder)
    memory = Memory(folder)
    memory.store.state_ready()
    cold = [f.render() for f in lint(memory)]
    assert any("[secret]" in f and f.startswith("memory/projects.md") for f in cold), cold
    cache = memory.store.state_folder / CACHE_FILE
    assert cache.is_file() and not cache.resolve().is_relative_to(folder.resolve())
    assert len(_kept(cache)) >= 1  # the topic file is kept
    assert [f.render() for f in lint(Memory(folder))] == cold
    assert listing(folder) == before and git_status(folder) == status


def test_a_new_memory_ignores_the_cache_in_git(tmp_path: Path) -> None:
    root = _memory(tmp_path / "m")
    _cold(root)
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--ignored=no"], check=True,
                            capture_output=True, text=True).stdout
    assert status == "" and _cache(root).is_file(), status


def test_a_memory_made_before_the_cache_does_not_show_it_in_git_status(tmp_path: Path) -> None:
    """A memory's .gitignore has no line for lint's cache (init's is what it was before the cache, so a new memory's
    first commit is too): after a lint writes the cache, and after a second lint, `git status` is as clean as before,
    the cache's name is in the repository's own exclude list once, and nothing is committed or added to the memory's
    files."""
    root = _memory(tmp_path / "m")
    assert "lint-cache" not in (root / ".gitignore").read_text()
    status = ["git", "-C", str(root), "status", "--porcelain", "--ignored=no", "--untracked-files=all"]
    (root / ".memtui" / "lint-cache-probe").write_text("")  # the control: a new file there IS listed untracked
    assert ".memtui/lint-cache-probe" in subprocess.run(status, check=True, capture_output=True, text=True).stdout
    (root / ".memtui" / "lint-cache-probe").unlink()
    cold = _cold(root)
    assert _cache(root).is_file()
    assert subprocess.run(status, check=True, capture_output=True, text=True).stdout == ""
    assert _render(root) == cold
    exclude = (root / ".git" / "info" / "exclude").read_text().splitlines()
    assert exclude.count("/.memtui/lint-cache") == 1, exclude
    assert subprocess.run(status, check=True, capture_output=True, text=True).stdout == ""


def test_a_symlinked_exclude_list_is_not_written_through(tmp_path: Path) -> None:
    """An agent that replaces .git/info/exclude with a link to another file of the person's gets no line appended
    to that file."""
    root = _memory(tmp_path / "m")
    target = tmp_path / "dotfile"
    target.write_text("mine\n")
    exclude = root / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    exclude.symlink_to(target)
    _cold(root)
    assert target.read_text() == "mine\n" and exclude.is_symlink()
