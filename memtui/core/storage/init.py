"""Creating a memory root: MEMORY.md from a template, the layer folders, config, .gitignore and git."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memtui.core.grammar.config import CONFIG_TEMPLATE, DEFAULT_MODEL
from memtui.core.storage.folder import AUDIT_FILE, STATE_DIR, FolderStore, atomic_write
from memtui.core.storage.store import StoreError

TEMPLATES = {
    "personal": ("User", "Preferences", "Projects", "Facts", "Decisions"),
    "project": (
        "Project Facts", "Preferences", "Working Recipes", "Known Issues & Failed Approaches", "Decisions Log",
    ),
}
ALWAYS = {"personal": ("Preferences",), "project": ("Preferences", "Known Issues & Failed Approaches")}

INIT_RECORD = "init.json"  # the first commit and who ran `memtui init`, sealed (memtui/core/timeline/provenance.py)

GITIGNORE = f"""\
# memtui's own state: the review queue, the search index, locks and rejected bytes are not memory.
{STATE_DIR}/queue/
{STATE_DIR}/index.sqlite*
{STATE_DIR}/lock
{STATE_DIR}/rejected/
{STATE_DIR}/*.tmp
{STATE_DIR}/intent.json
{STATE_DIR}/corrupt/
{STATE_DIR}/undo/
{AUDIT_FILE}
"""


def memory_template(kind: str = "personal") -> str:
    if kind not in TEMPLATES:
        raise ValueError(f"unknown template {kind!r}: use one of {', '.join(TEMPLATES)}")
    sections = TEMPLATES[kind]
    caps = " ".join(f"{s}=30" for s in sections) if kind == "personal" else ", ".join(f"{s}=30" for s in sections)
    always = ", ".join(ALWAYS[kind])
    body = "\n".join(f"## {s}\n" for s in sections)
    return f"""<!-- memtui:format
One entry per line: "- [stated|observed|inferred|suggested] text (YYYY-MM-DD, source)".
[stated] the user said it; [observed] seen in a tool result, file or log; [inferred] the agent's conclusion;
[suggested] the agent's idea, never committed to by the user.
Revise, don't duplicate: strike the old line and add the new one below it.
caps: {caps}
always: {always}
entry-max: 200
file-lines: 200
file-bytes: 25000
-->
# MEMORY.md

> Long-term memory. Read at the start of every session; durable facts, preferences and decisions only.
> Daily notes live in log/, short-lived notes in scratch/, everything else in topic files found by search.

{body}"""


@dataclass
class InitResult:
    root: Path
    created: bool
    commit: str | None
    message: str


def init_root(path: str | Path, template: str = "personal", *, adopt_git: bool = False) -> InitResult:
    """Create a memory root (with git). On an existing memory nothing changes, unless `adopt_git` asks for git."""
    root = Path(path).expanduser().absolute()
    if root.exists() and not root.is_dir():
        raise StoreError(f"{root} is a file, not a folder; give a folder for the memory (nothing was changed)")
    store = FolderStore(root)
    # A folder with files of its own (another tool's memory) is opened as it is; only --git changes anything.
    holds_files = root.is_dir() and any(root.iterdir())
    if (root / "MEMORY.md").exists() or (root / STATE_DIR).exists() or (adopt_git and holds_files):
        if adopt_git and store.places.own_history and store.has_git:
            where = store.move_history_in()
            return InitResult(root, False, None, f"{root}: memtui's history moved into the folder ({where}), every "
                                                 "change kept; your git now sees it")
        if adopt_git and not store.has_git:
            sha = store.init_git()  # the person asks for git in their folder: theirs; memtui's state stays beside
            return InitResult(root, False, sha, f"{root} is already a memory root; initialised git with its files")
        return InitResult(root, False, None, f"{root} is already a memory root; nothing changed")
    text = memory_template(template)
    root.mkdir(parents=True, exist_ok=True)
    atomic_write(root / "MEMORY.md", text.encode())
    for layer in ("log", "scratch"):
        (root / layer).mkdir(exist_ok=True)
        (root / layer / ".gitkeep").touch()
    atomic_write(root / STATE_DIR / "config.toml", CONFIG_TEMPLATE.format(model=DEFAULT_MODEL).encode())
    if not (root / ".gitignore").exists():
        atomic_write(root / ".gitignore", GITIGNORE.encode())
    store = FolderStore(root)  # opened again: the root keeps its state inside now (`.memtui/`), as places decides
    sha = store.init_git()
    store.start_queue_record()  # from here every queue file is memtui's only if it wrote it (queue_record.py)
    if sha:
        _record_init(store, sha)
    return InitResult(root, True, sha, f"created a {template} memory root at {root}")


def init_record(root: Path) -> Path:
    """Where the record of who ran `memtui init` on `root` is kept: the person's state folder, by the real path."""
    import os

    from memtui.core.storage.places import memories_home, state_key

    return memories_home() / state_key(os.path.realpath(root)) / INIT_RECORD


def _record_init(store: FolderStore, sha: str) -> None:
    """Who ran `memtui init`: the template's lines are theirs, not an unreviewed outside writer's (blame showed them
    so: the first commit has no audit line). Kept in the person's state folder, outside the memory (`init_record`:
    nothing new in the memory's files or its `git status`), and sealed with their key (memtui/core/basics/seal.py): a
    record planted or altered by anything that writes files names no one."""
    import json
    import os

    from memtui.core.basics.actors import clean_actor
    from memtui.core.basics import seal

    by = os.environ.get("MEMTUI_USER")
    if not by:
        import getpass

        try:
            by = getpass.getuser()
        except (KeyError, OSError):
            by = "person"
    payload = json.dumps({"commit": sha, "by": clean_actor(by or "person"), "root": str(store.root)}).encode()
    try:
        from memtui.core.storage.places import _make_private

        record = init_record(store.root)
        _make_private(record.parent)
        atomic_write(record, seal.seal(payload))
    except OSError:
        pass  # not recorded: blame shows the template's lines as a commit without a review record, as before
