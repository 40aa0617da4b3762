"""Hermes' memories (`<home>/memories/MEMORY.md` and `USER.md`) in memtui, against the files Hermes' own memory tool
writes (tests/support/fixtures_hermes.py runs hermes-agent's MemoryStore in a subprocess).

Read as Hermes reads them (entries between `§` lines, usage against 2,200 / 1,375 characters); an agent's add,
revise and remove through memtui written byte for byte as Hermes' own add, replace and remove would write them, and
nothing of memtui's format with them; Hermes' own writes, which go straight to disk, reviewed entry by entry:
approve commits them, reject puts the approved bytes back exactly.

Every test that opens a fixture compares its listing before and after: memtui's state and history are kept beside
the folder, so `unchanged` finds nothing in it but what a person approved (memtui's bookkeeping named apart).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.grammar.formats import hermes as grammar
from memtui.core.grammar.layout import HERMES, MEMTUI, detect
from memtui.core.writing.memory import Memory
from support.fixtures_hermes import MEMORY_ENTRIES, USER_ENTRIES, entries_of, hermes, hermes_home, unchanged
from support.foreign import listing

NOW = "2026-08-20T14:05"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Hermes home whose memories Hermes wrote; memtui's user state kept under the test's folder."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("MEMTUI_NOW", NOW)
    hermes_home(tmp_path)
    return tmp_path / ".hermes"


def opened(folder: Path) -> Memory:
    """The memory as the app opens it: history started beside a folder without one (cli.start_history), then the
    memory."""
    from memtui.cli import start_history

    start_history(folder)
    return Memory(folder)


def cli(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MEMTUI_ROOT": str(folder), **(env or {})})


# reading ------------------------------------------------------------------------------------------------------
def test_entries_and_usage_are_what_hermes_itself_reads_and_counts(home: Path) -> None:
    text = (home / "memories" / "MEMORY.md").read_text()
    assert grammar.entries(text) == entries_of(text) == list(MEMORY_ENTRIES)
    # A § inside an entry's text is no separator; an entry's second line stays with it.
    assert "GitHub Actions § release" in grammar.entries(text)[1] and "\n" in grammar.entries(text)[0]
    # Hermes' own count: the tool reports it after a write that changes nothing (a duplicate add).
    said = hermes(home, ("add", "memory", MEMORY_ENTRIES[0]), ("add", "user", USER_ENTRIES[0]))
    for result, rel in zip(said, ("MEMORY.md", "USER.md")):
        used, cap = re.search(r"([\d,]+)/([\d,]+) chars", result["usage"]).groups()
        body = (home / "memories" / rel).read_text()
        assert grammar.usage(body) == int(used.replace(",", "")) and grammar.limit(rel) == int(cap.replace(",", ""))
        assert grammar.usage_line(rel, body) == f"{used} / {cap} characters"


def test_a_hermes_memories_folder_is_found_by_place_and_by_content(home: Path, tmp_path: Path) -> None:
    from memtui.core.grammar.config import Config

    folder = home / "memories"
    before = listing(folder)
    assert detect(str(folder), Config({})).kind == HERMES
    assert detect(str(folder), Config({})).core == ("MEMORY.md", "USER.md")
    elsewhere = tmp_path / "copied"
    elsewhere.mkdir()
    (elsewhere / "MEMORY.md").write_bytes((folder / "MEMORY.md").read_bytes())
    assert detect(str(elsewhere), Config({})).kind == HERMES  # by its § lines
    (elsewhere / "notes.md").write_text("# Notes\n")
    assert detect(str(elsewhere), Config({})).kind == MEMTUI  # other markdown beside it: not Hermes' folder
    assert listing(folder) == before  # detection only reads


# an agent's writes through memtui ---------------------------------------------------------------------------
def test_an_agents_add_revise_and_remove_are_written_as_hermes_writes_them(home: Path, tmp_path: Path) -> None:
    folder = home / "memories"
    twin = tmp_path / "twin"  # the same memories, changed by Hermes' own tool: the bytes memtui must write
    hermes_home(twin)
    before = listing(folder)
    mem = opened(folder)
    steps = [
        (("memory", "add", "Uses uv for virtualenvs\nnot pip"), ("add", "memory", "Uses uv for virtualenvs\nnot pip")),
        (("memory", "revise", "Deploys ship from the release workflow (tag vX.Y.Z)", "GitHub Actions §"),
         ("replace", "memory", "GitHub Actions §", "Deploys ship from the release workflow (tag vX.Y.Z)")),
        (("user", "remove", None, "UTC+1"), ("remove", "user", "UTC+1")),
        (("user", "add", "[stated] Likes tables"), ("add", "user", "Likes tables")),
    ]
    for (target, action, entry, *replaces), op in steps:
        rel = "USER.md" if target == "user" else "MEMORY.md"
        res = mem.update("anything", action, entry, replaces[0] if replaces else None, file=rel,
                         actor="agent-hermes")
        assert res.status == "queued", res.message
        assert mem.approve(res.id, by="wes").status == "applied"
        assert hermes(twin / ".hermes", op)[0]["success"]
        assert (folder / rel).read_bytes() == (twin / ".hermes" / "memories" / rel).read_bytes()
    for rel in ("MEMORY.md", "USER.md"):
        text = (folder / rel).read_text()
        assert not re.search(r"\[(stated|observed|inferred|suggested)\]|~~|<!--|\(2026-", text), text
    # Hermes reads memtui's writes back as its own: a replace after them passes its drift guard.
    assert hermes(home, ("replace", "memory", "uv for virtualenvs", "Uses uv"))[0]["success"]
    now = {name: (folder / name).read_bytes() for name in ("MEMORY.md", "USER.md")}
    unchanged(before, folder, now)


def test_a_proposal_is_reviewed_by_entry_with_usage_and_an_add_over_the_limit_is_warned(home: Path) -> None:
    folder = home / "memories"
    before = listing(folder)
    mem = opened(folder)
    res = mem.update("", "revise", "Works in UTC+2 since March", "UTC+1", file="USER.md", actor="agent-hermes")
    assert res.status == "queued"
    p = mem.get(res.id)
    assert "@@ -3,1 +3,1 @@ replaced entry 2 · " in p.diff and p.section is None
    assert "-Works in UTC+1; no meetings before 10:00\n+Works in UTC+2 since March\n" in p.diff
    room = grammar.limit("USER.md") - grammar.usage((folder / "USER.md").read_text()) - len(grammar.DELIMITER)
    big = mem.update("", "add", "x" * (room + 10), file="USER.md", actor="agent-hermes")
    assert big.status == "queued" and any("10 over Hermes' limit" in w for w in big.warnings), big.warnings
    assert f"{grammar.limit('USER.md') + 10:,} / 1,375 characters, 10 over" in mem.get(big.id).diff
    unchanged(before, folder)


# Hermes' own writes -------------------------------------------------------------------------------------------
def test_hermes_own_writes_are_reviewed_by_entry_approve_commits_reject_restores_the_bytes(home: Path) -> None:
    folder = home / "memories"
    mem = opened(folder)
    approved = {rel: (folder / rel).read_bytes() for rel in ("MEMORY.md", "USER.md")}
    before = listing(folder)
    got = hermes(home, ("replace", "memory", "pacman", "The user's laptop runs Arch Linux (pacman; yay for AUR)"),
                 ("add", "memory", "CI cache key: uv.lock hash"), ("remove", "memory", "GitHub Actions"),
                 ("add", "user", "Reads diffs in the terminal"))
    assert all(r["success"] for r in got), got
    pending = {p.file: p for p in mem.external_proposals()}
    assert set(pending) == {"MEMORY.md", "USER.md"}
    diff = pending["MEMORY.md"].diff
    heads = re.findall(r"^@@ .*? @@ (\w+ entry \d+)", diff, re.M)
    assert heads == ["removed entry 2", "replaced entry 2", "added entry 3"], diff
    assert "+The user's laptop runs Arch Linux (pacman; yay for AUR)\n" in diff and "@@ -1," not in diff
    assert re.findall(r"^@@ .*? @@ (\w+ entry \d+)", pending["USER.md"].diff, re.M) == ["added entry 3"]
    ok = mem.approve(pending["MEMORY.md"].id, by="wes", expect=pending["MEMORY.md"].after_hash)
    assert ok.status == "applied", ok.message
    assert mem.store.committed("MEMORY.md") == (folder / "MEMORY.md").read_bytes() != approved["MEMORY.md"]
    hermes_wrote = (folder / "MEMORY.md").read_bytes()
    assert mem.reject(pending["USER.md"].id, reason="not said", by="wes").status == "rejected"
    assert (folder / "USER.md").read_bytes() == approved["USER.md"]
    assert mem.external_proposals() == []
    unchanged(before, folder, {"MEMORY.md": hermes_wrote})


def test_a_split_of_an_approved_entry_by_a_hand_edit_is_shown_as_a_new_entry(home: Path) -> None:
    folder = home / "memories"
    before = listing(folder)
    mem = opened(folder)
    text = (folder / "MEMORY.md").read_text()
    (folder / "MEMORY.md").write_text(text.replace("\nRun tests with", "\n§\nRun tests with"))
    p = mem.external_proposals()[0]
    assert re.findall(r"^@@ .*? @@ (\w+ entry \d+)", p.diff, re.M) == ["replaced entry 1", "added entry 2"], p.diff
    unchanged(before, folder, {"MEMORY.md": (folder / "MEMORY.md").read_bytes()})  # the hand edit, still pending


# the CLI ------------------------------------------------------------------------------------------------------
def test_memtui_show_prints_entries_with_usage(home: Path) -> None:
    folder = home / "memories"
    before = listing(folder)
    shown = cli(folder, "show")
    assert shown.returncode == 0, shown.stderr
    used = grammar.usage((folder / "MEMORY.md").read_text())
    assert shown.stdout.splitlines()[:3] == [
        f"MEMORY.md · Hermes memory · 3 entries · {used:,} / 2,200 characters",
        "  1  Project memtui: Python 3.11, Textual app.",
        "     Run tests with: pytest -q -p no:cacheprovider"]
    data = json.loads(cli(folder, "show", "USER.md", "--json").stdout)
    assert data["format"] == "hermes" and data["limit"] == 1375
    assert [e["text"] for e in data["entries"]] == list(USER_ENTRIES)
    unchanged(before, folder)


def test_memtui_update_by_an_agent_queues_hermes_bytes_and_queue_show_warns_over_the_limit(home: Path) -> None:
    folder = home / "memories"
    before = listing(folder)
    done = cli(folder, "update", "-", "add", "Prefers tabs\nin every editor", "--file", "USER.md", "--by", "agent-x",
               "--json")
    res = json.loads(done.stdout)
    assert res["status"] == "queued", res
    shown = cli(folder, "queue", "show", res["id"]).stdout
    assert "added entry 3" in shown and "+Prefers tabs\n+in every editor\n" in shown
    long = "y" * (1375 - grammar.usage((folder / "USER.md").read_text()))
    over = json.loads(cli(folder, "update", "-", "add", long, "--file", "USER.md", "--by", "agent-x",
                          "--json").stdout)
    assert over["status"] == "queued"
    assert "warning: USER.md would hold 1,378 / 1,375 characters, 3 over Hermes' limit" in \
        cli(folder, "queue", "show", over["id"]).stdout
    unchanged(before, folder)


def test_memtui_open_hermes_finds_hermes_home_and_says_where_it_looked(tmp_path: Path) -> None:
    gone = cli(tmp_path, "open", "--hermes", env={"HERMES_HOME": str(tmp_path / "nowhere")})
    assert gone.returncode == 2
    assert f"no Hermes memories at {tmp_path / 'nowhere' / 'memories'}" in gone.stderr
    assert "set HERMES_HOME" in gone.stderr and not (tmp_path / "nowhere").exists()
    from memtui.cli import _hermes_folder

    class Args:
        json = False

    (tmp_path / "h" / "memories").mkdir(parents=True)
    os.environ["HERMES_HOME"] = str(tmp_path / "h")
    try:
        assert _hermes_folder(Args()) == tmp_path / "h" / "memories"
        del os.environ["HERMES_HOME"]
        os.environ["HOME"], home = str(tmp_path), os.environ["HOME"]
        (tmp_path / ".hermes" / "memories").mkdir(parents=True)
        try:
            assert _hermes_folder(Args()) == tmp_path / ".hermes" / "memories"
        finally:
            os.environ["HOME"] = home
    finally:
        os.environ.pop("HERMES_HOME", None)


def test_lint_names_what_hermes_would_read_differently_and_nothing_of_memtuis_grammar(home: Path) -> None:
    from memtui.core.hygiene.lint import lint

    folder = home / "memories"
    assert cli(folder, "lint").stdout.strip() == "clean: no findings"  # Hermes' own files: no untagged, no caps
    text = (folder / "USER.md").read_text()
    (folder / "USER.md").write_text(text + "\n §\nIgnore the rest\n§\n" + "u" * 1400)
    before = listing(folder)
    found = {(f.check, f.line) for f in lint(Memory(folder))}
    assert found == {("hermes-separator", 4), ("hermes-limit", None), ("hermes-entry-size", 7)}, found
    unchanged(before, folder)


def test_the_readmes_hermes_recipe_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shlex

    from test_recipes import recipe

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    folder = hermes_home(tmp_path)
    before = listing(folder)
    show, open_app = [line.split("#") for line in recipe("hermes").strip().splitlines()]
    done = subprocess.run(show[0], shell=True, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == show[1].strip()  # the output the README shows
    assert shlex.split(open_app[0]) == ["memtui", "open", "--hermes"]  # run under tmux: test_format_hermes_tmux.py
    unchanged(before, folder)


def test_hermes_lock_file_made_by_its_first_write_to_user_md_is_not_a_change_to_review(tmp_path: Path,
                                                                                       monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    folder = hermes_home(tmp_path, user=())  # Hermes has not written USER.md yet: no USER.md.lock either
    mem = opened(folder)
    assert hermes(tmp_path / ".hermes", ("add", "user", "Name: Bo"))[0]["success"]
    assert (folder / "USER.md.lock").is_file()
    assert [(p.file, p.action) for p in mem.external_proposals()] == [("USER.md", "create")]
    (folder / "USER.md.lock").write_text("not empty: not Hermes' lock any more")
    assert {p.file for p in mem.external_proposals()} == {"USER.md", "USER.md.lock"}


def test_an_entry_that_starts_like_a_bullet_is_approved_as_sent(home: Path) -> None:
    folder = home / "memories"
    before = listing(folder)
    mem = opened(folder)
    res = mem.update("", "add", "- checklist: lint, test, tag", actor="agent-hermes")
    assert res.status == "queued" and mem.get(res.id).entry == "- checklist: lint, test, tag"
    assert mem.approve(res.id, by="wes").status == "applied"
    assert (folder / "MEMORY.md").read_text().endswith("\n§\n- checklist: lint, test, tag")
    unchanged(before, folder, {"MEMORY.md": (folder / "MEMORY.md").read_bytes()})
