"""Cline's memory bank in its own terms: a `memory-bank/` written by Cline's rules (tests/support/fixtures_cline.py),
detected by its files, each file a document whose sections are its headings, untagged bullets and prose fine.
Cline writes the files itself, straight to disk: those writes are reviewed as external changes, entry by entry;
approving records them, rejecting puts back the approved bytes exactly. Every test compares the folder (and the
person's `git status`) before and after (tests/support/untouched.py)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from app_support import drawn_rows, wait_for
from memtui.cli import main
from memtui.core.grammar.config import Config
from memtui.core.grammar.layout import CLINE, MEMTUI, detect
from memtui.core.writing.memory import Memory
from support.fixtures_cline import FILES, replace_in_file, write_bank, write_to_file
from support.foreign import git_status, listing
from support.untouched import untouched


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path


@pytest.fixture
def bank(home: Path) -> Path:
    return write_bank(home / "inventory")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=Wes", "-c", "user.email=wes@example.com", *args], cwd=repo,
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture
def kept_bank(home: Path) -> Path:
    """A bank the person keeps in a git repository of its own, everything committed."""
    bank = write_bank(home / "inventory")
    git(bank, "init", "-q")
    git(bank, "add", "-A")
    git(bank, "commit", "-qm", "memory bank")
    return bank


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out + out.err


def test_a_bank_is_detected_by_its_files_and_kind_overrides(bank: Path, tmp_path: Path) -> None:
    before = listing(bank)
    assert detect(str(bank), Config()).kind == CLINE
    assert Memory(bank).layout().layer("activeContext.md") == "core"
    assert Memory(bank).layout().layer("features/scanner.md") == "topic"
    elsewhere = tmp_path / "notes"  # three of the core files, under another name: still a bank
    for name in ("projectbrief.md", "activeContext.md", "progress.md"):
        write_to_file(elsewhere, name, FILES[name])
    assert detect(str(elsewhere), Config()).kind == CLINE
    one = tmp_path / "one"  # one core file in a folder of another name: not enough to say
    write_to_file(one, "progress.md", FILES["progress.md"])
    assert detect(str(one), Config()).kind == MEMTUI
    untouched(before, bank)


def test_each_file_is_a_document_sectioned_by_its_headings(bank: Path, capsys) -> None:
    before = listing(bank)
    doc = Memory(bank).document("activeContext.md")
    assert doc.section_names == ["Current Focus", "Recent Changes", "Next Steps", "Active Decisions"]
    code, out = cli(capsys, "show", "--root", str(bank), "activeContext.md", "--section", "Next Steps")
    assert code == 0 and out.startswith("## Next Steps\n1. Debounce repeated scans")
    code, out = cli(capsys, "lint", "--root", str(bank))
    assert code == 0 and out.strip() == "clean: no findings"  # no tags, prose beside bullets: Cline's format
    untouched(before, bank)


def test_an_agents_entry_waits_and_lands_in_its_section(bank: Path, capsys) -> None:
    before = listing(bank)
    code, out = cli(capsys, "update", "--root", str(bank), "--file", "progress.md", "--by", "claude-code",
                    "Known Issues", "add", "[observed] Scanner drops codes under 2 lux")
    assert "queued p-" in out, out
    assert listing(bank)["progress.md"] == before["progress.md"]
    pid = out.split("queued ", 1)[1].split(":", 1)[0]
    code, out = cli(capsys, "queue", "approve", pid, "--root", str(bank))
    assert code == 0, out
    data = (bank / "progress.md").read_bytes()
    assert data == FILES["progress.md"].encode() + b"- Scanner drops codes under 2 lux\n"
    untouched(before, bank, {"progress.md": sha(data)})


@pytest.mark.parametrize("newline,bom", [("\r\n", False), ("\n", True), ("\r\n", True)])
def test_crlf_and_bom_banks_keep_their_bytes(home: Path, newline: str, bom: bool, capsys) -> None:
    bank = write_bank(home / "inventory", newline=newline, bom=bom)
    before = listing(bank)
    doc = Memory(bank).document("projectbrief.md")
    assert doc.section_names == ["Overview", "Core Requirements", "Goals"]
    code, out = cli(capsys, "update", "--root", str(bank), "--file", "projectbrief.md", "--by", "wes", "Goals",
                    "add", "[stated] Pilot in the Leeds warehouse first")
    assert code == 0, out
    data = (bank / "projectbrief.md").read_bytes()
    original = (("\ufeff" if bom else "") + FILES["projectbrief.md"].replace("\n", newline)).encode()
    assert data == original + f"- Pilot in the Leeds warehouse first{newline}".encode()
    untouched(before, bank, {"projectbrief.md": sha(data)})


# Cline's own writes ---------------------------------------------------------------------------------------------
def test_clines_own_write_is_an_external_change_shown_entry_by_entry_and_approve_records_it(kept_bank: Path,
                                                                                            capsys) -> None:
    status = git_status(kept_bank)
    replace_in_file(kept_bank, "activeContext.md", "## Next Steps\n1. Debounce repeated scans of the same code\n",
                    "## Next Steps\n1. Ship the scanner to the floor\n")
    written = (kept_bank / "activeContext.md").read_bytes()
    before = listing(kept_bank)
    code, out = cli(capsys, "queue", "list", "--root", str(kept_bank))
    assert "external" in out and "activeContext.md" in out, out
    pid = out.split()[0]
    code, out = cli(capsys, "queue", "show", pid, "--root", str(kept_bank))
    assert "entry removed in § Next Steps: '1. Debounce repeated scans of the same code'" in out, out
    assert "entry added in § Next Steps: '1. Ship the scanner to the floor'" in out
    exact = out.split("To commit exactly these bytes: memtui queue approve ", 1)[1].split()[0]
    code, out = cli(capsys, "queue", "approve", exact, "--root", str(kept_bank))
    assert code == 0, out
    assert (kept_bank / "activeContext.md").read_bytes() == written
    assert git(kept_bank, "show", "HEAD:activeContext.md").encode() == written  # recorded in the person's history
    code, out = cli(capsys, "queue", "list", "--root", str(kept_bank))
    assert "activeContext.md" not in out
    untouched(before, kept_bank, repo=kept_bank, status=status)


def test_rejecting_clines_write_restores_the_approved_bytes_exactly(kept_bank: Path, capsys) -> None:
    status = git_status(kept_bank)
    approved = (kept_bank / "techContext.md").read_bytes()
    before = listing(kept_bank)
    write_to_file(kept_bank, "techContext.md", "# Tech Context\n\nEverything moved to Deno.\n")
    write_to_file(kept_bank, "features/offline.md", "# Offline\n\n- IndexedDB queue\n")  # a file of its own
    code, out = cli(capsys, "queue", "list", "--root", str(kept_bank))
    ids = {line.split()[-1]: line.split()[0] for line in out.splitlines() if "external" in line}
    assert set(ids) == {"techContext.md", "features/offline.md"}, out
    code, out = cli(capsys, "queue", "reject", ids["techContext.md"], "--reason", "not decided", "--root",
                    str(kept_bank))
    assert code == 0, out
    assert (kept_bank / "techContext.md").read_bytes() == approved
    code, out = cli(capsys, "queue", "reject", ids["features/offline.md"], "--reason", "no", "--root", str(kept_bank))
    assert code == 0, out
    assert not (kept_bank / "features" / "offline.md").exists()
    log = (kept_bank / "memory-log.jsonl").read_text() if (kept_bank / "memory-log.jsonl").exists() else ""
    audit = subprocess.run(["git", "log", "--all", "--format=%s"], cwd=kept_bank, capture_output=True,
                           text=True).stdout
    assert "Everything moved to Deno." in log or "Everything moved to Deno." in audit or _audited(kept_bank)
    untouched(before, kept_bank, {"features": "dir"}, repo=kept_bank, status=status)  # the folder Cline made stays


def _audited(bank: Path) -> bool:
    """The rejected bytes are kept in the audit records (memtui's state, wherever it lives)."""
    mem = Memory(bank)
    return any("Everything moved to Deno." in str(r) for r in mem.store.audit_records())


def test_a_bank_inside_the_persons_project_repository(home: Path, capsys) -> None:
    project = home / "inventory"
    bank = write_bank(project)
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "project with its memory bank")
    status = git_status(project)
    before = listing(bank)
    # A bank that merely sits in a project's repository gets memtui's own history beside it (memtui never commits
    # into the project's repository): the first `queue list` starts it with the files as they are, nothing pending.
    code, out = cli(capsys, "queue", "list", "--root", str(bank))
    assert code == 0 and "nothing pending" in out, out
    assert Memory(bank).store.where().startswith("history: memtui's, beside the folder")
    untouched(before, bank, repo=project, status=status)
    # Cline writes past memtui after that first open: `queue list` alone shows it as an external change.
    replace_in_file(bank, "progress.md", "- Reports\n", "- Reports (started)\n")
    before, status = listing(bank), git_status(project)
    code, out = cli(capsys, "queue", "list", "--root", str(bank))
    assert "progress.md" in out and "external" in out, out
    untouched(before, bank, repo=project, status=status)


# the app ----------------------------------------------------------------------------------------------------------
async def test_the_app_opens_a_bank_on_its_files_with_their_sections(bank: Path) -> None:
    from memtui.tui.app import MemtuiApp

    before = listing(bank)
    app = MemtuiApp(bank, watch=False)
    app.diff_wrap = False
    async with app.run_test(size=(150, 42)) as pilot:
        rows = await drawn_rows(pilot, app, "activeContext.md")
        assert any(r.startswith(" §") and "## Next Steps" in r for r in rows), rows
        assert not any("untagged" in r for r in rows), rows
    untouched(before, bank)


def test_layout_kind_overrides_detection_both_ways(bank: Path, tmp_path: Path) -> None:
    before = listing(bank)
    assert detect(str(bank), Config(raw={"layout": {"kind": "memtui"}})).kind == MEMTUI
    assert detect(str(bank), Config(raw={"layout": {"kind": "claude-code"}})).kind == "claude-code"
    plain = tmp_path / "plain"
    write_to_file(plain, "notes.md", "# Notes\n- one\n")
    assert detect(str(plain), Config()).kind == MEMTUI
    forced = detect(str(plain), Config(raw={"layout": {"kind": "cline"}}))
    assert forced.kind == CLINE and forced.layer("progress.md") == "core" and forced.log_dir is None
    untouched(before, bank)
