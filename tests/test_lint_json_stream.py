"""`memtui lint --json` writes its findings a thousand at a time (issue 41, "bounded under flood": json's indenting
encoder took 4.3 s of a 50,000-file lint and held the whole text). The streamed text must be the one `emit` made:
`json_safe(json.dumps(..., ensure_ascii=False, indent=2))`, byte for byte, across a thousand-finding boundary and
for an agent's hostile text (quotes, backslashes, controls, bidi overrides, tag characters, non-ASCII names; lint
quotes a line by its repr, so most of them reach the JSON as escapes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memtui.core.basics.visible import json_safe
from memtui.core.hygiene.lint import lint
from memtui.core.storage.init import init_root
from memtui.core.writing.memory import Memory

HOSTILE = ["quote \" and back\\slash", "bell \x07 and del \x7f", "bidi \u202egnp.exe", "tag \U000E0041\U000E0042",
           "ünïcödé 数据 🙂", "line sep \u2028 para \u2029", "c1 \x85 nbsp \xa0", "zero width \u200b",
           "hangul filler \u3164 braille blank \u2800"]  # printable: quoted raw, hidden


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", "lint", "--root", str(root), *args], capture_output=True,
                          text=True, timeout=120, encoding="utf-8", errors="surrogateescape")


def _expected(root: Path) -> str:
    findings = lint(Memory(root))
    data = {"ok": not any(f.level == "error" for f in findings), "findings": [f.to_dict() for f in findings]}
    return json_safe(json.dumps(data, ensure_ascii=False, indent=2, default=str)) + "\n"


def test_streamed_json_is_the_json_emit_made_byte_for_byte(tmp_path: Path) -> None:
    root = tmp_path / "m"
    init_root(root)
    (root / "notes").mkdir()
    lines = ["# N", "", "## Facts", ""] + [f"- untagged {k} {HOSTILE[k % len(HOSTILE)]}" for k in range(1203)]
    (root / "notes" / "flood.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "notes" / "ünï 数据.md").write_text("# O\n\n## Facts\n\n- one untagged line\n", encoding="utf-8")
    # Entries committed and then deleted: deleted-history's advice ("~~…~~") in the same chunks as hostile text.
    gone = root / "notes" / "gone.md"
    gone.write_text("# G\n\n## Facts\n\n" + "".join(f"- [stated] gone {k} {HOSTILE[k % len(HOSTILE)]}\n"
                                                   for k in range(40)), encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x"}
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "v1", "--no-verify"], check=True, env=env)
    gone.write_text("# G\n\n## Facts\n\n- [stated] what is left\n", encoding="utf-8")
    expected = _expected(root)
    done = _run(root, "--json")
    assert done.returncode == 1, done.stderr
    assert len(json.loads(done.stdout)["findings"]) > 1200  # past the first thousand: the boundary is crossed
    assert done.stdout == expected
    assert '"file": "notes/ünï 数据.md"' in done.stdout  # not ASCII-escaped, as emit printed it
    assert "~~…~~" in done.stdout and '"check": "deleted-history"' in done.stdout
    assert "\u3164" not in done.stdout and "\u2800" not in done.stdout and "\\u3164" in done.stdout
    assert _run(root, "--json").stdout == expected  # the second lint, from the cache: the same bytes


def test_a_clean_memory_prints_the_same_json_as_before(tmp_path: Path) -> None:
    root = tmp_path / "m"
    init_root(root)
    done = _run(root, "--json")
    assert done.returncode == 0 and done.stdout == _expected(root) == '{\n  "ok": true,\n  "findings": []\n}\n'
