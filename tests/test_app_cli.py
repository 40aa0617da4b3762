"""`memtui open` at the command line: theme names checked before the app starts, the demo's temporary folder
removed on exit (a folder the person named is kept), and `--store` opening a Redis memory, in a real terminal."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)


def memtui(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


def test_unknown_theme_fails_at_the_command_line_with_the_list(tmp_path: Path) -> None:
    done = memtui("open", str(tmp_path / "memory"), "--theme", "no-such-theme",
                  env={"MEMTUI_CONFIG_DIR": str(tmp_path / "config")})
    assert done.returncode == 2
    assert "no theme 'no-such-theme'" in done.stderr and "memtui-dark" in done.stderr and "nord" in done.stderr
    assert not (tmp_path / "memory").exists()  # refused before anything was created


class Terminal:
    """One program in a detached tmux session, read back with capture-pane."""

    def __init__(self, tmp_path: Path, command: list[str], env: dict[str, str]) -> None:
        if shutil.which("tmux") is None:
            pytest.skip("tmux is not installed")
        self.tmux = ["tmux", "-L", f"memtui-cli-{os.getpid()}-{id(self)}", "-f", "/dev/null"]
        env = {"HOME": str(tmp_path), "MEMTUI_CONFIG_DIR": str(tmp_path / "config"), "TERM": "xterm-256color",
               "PATH": os.environ["PATH"], "MEMTUI_USER": "wes", **env}
        line = " ".join(f"{k}='{v}'" for k, v in env.items()) + " " + " ".join(f"'{c}'" for c in command)
        subprocess.run([*self.tmux, "new-session", "-d", "-s", "app", "-x", "150", "-y", "42",
                        f"env -u COLUMNS -u LINES {line}"], check=True)

    def wait(self, condition, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = subprocess.run([*self.tmux, "capture-pane", "-p", "-t", "app"], capture_output=True,
                                    text=True).stdout
            if condition(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"the screen never showed what was expected; last screen:\n{screen}")

    def quit(self) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", "app", "q"], check=True)
        deadline = time.monotonic() + 10
        while subprocess.run([*self.tmux, "has-session", "-t", "app"], capture_output=True).returncode == 0:
            assert time.monotonic() < deadline, "q did not quit"
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)


def tree_of(root: Path) -> dict[str, bytes]:
    return {str(f.relative_to(root)): f.read_bytes() for f in sorted(root.rglob("*")) if f.is_file()}


@pytest.mark.parametrize("contents", [
    {"MEMORY.md": "# MEMORY.md\n\n## User\n- [stated] My own entry, no git (2024-01-02, me)\n"},
    {"notes.txt": "anything at all"},
    {".memtui/config.toml": "[review]\n"},  # a memtui memory, but not a demo
    {"MEMORY.md": "half a demo, interrupted before it was marked\n", ".memtui/queue/p-0001.json": "{}"},
])
def test_demo_refuses_a_folder_that_is_not_empty_and_not_a_demo(tmp_path: Path, contents: dict[str, str]) -> None:
    folder = tmp_path / "mine"
    for rel, text in contents.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    before = tree_of(folder)
    for argv in (["--demo", str(folder)], ["open", "--demo", str(folder)], ["--demo", "--root", str(folder)]):
        done = memtui(*argv, env={"MEMTUI_CONFIG_DIR": str(tmp_path / "config")})
        assert done.returncode == 2, done.stderr
        assert f"{folder} is not empty and is not a memtui demo" in done.stderr
        assert "nothing was written" in done.stderr and f"memtui {folder}" in done.stderr
        assert tree_of(folder) == before and not (folder / ".git").exists()


def test_demo_refuses_a_file(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("mine\n")
    done = memtui("--demo", str(path), env={"MEMTUI_CONFIG_DIR": str(tmp_path / "config")})
    assert done.returncode == 2 and "is not a folder" in done.stderr
    assert path.read_text() == "mine\n"


def test_demo_on_an_existing_demo_opens_it_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.demo import MARKER, make_demo

    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    monkeypatch.setenv("MEMTUI_USER", "wes")
    root = make_demo(tmp_path / "demo")
    assert (root / MARKER).is_file()
    # The person works in the demo: their change must survive reopening it.
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "- [stated] Mine, added by hand\n")
    before = tree_of(root)
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert make_demo(root) == root
    assert tree_of(root) == before  # not reset, no proposal queued a second time
    assert subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout == head


def test_demo_builds_in_an_empty_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.demo import MARKER, make_demo

    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    (tmp_path / "empty").mkdir()
    root = make_demo(tmp_path / "empty")
    assert (root / MARKER).is_file() and "Atlas" in (root / "MEMORY.md").read_text()
    assert len(list((root / ".memtui/queue").glob("p-*.json"))) >= 4


@pytest.mark.tmux
def test_demo_removes_its_temporary_folder_on_exit_and_keeps_a_named_one(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    app = Terminal(tmp_path, [sys.executable, "-m", "memtui", "--demo"], {"TMPDIR": str(temp)})
    try:
        app.wait(lambda s: "pending" in s and "MEMORY.md" in s)
        made = list(temp.glob("memtui-demo-*"))
        assert len(made) == 1 and (made[0] / "memory" / "MEMORY.md").exists()
        app.quit()
    finally:
        app.close()
    assert not made[0].exists()

    named = tmp_path / "kept"
    app = Terminal(tmp_path, [sys.executable, "-m", "memtui", "--demo", str(named)], {"TMPDIR": str(temp)})
    try:
        app.wait(lambda s: "pending" in s and "MEMORY.md" in s)
        app.quit()
    finally:
        app.close()
    assert (named / "MEMORY.md").exists() and not list(temp.glob("memtui-demo-*"))

    # Run again on the same folder: the demo opens as it was left, with the same proposals, none twice.
    queue = sorted(p.name for p in (named / ".memtui/queue").glob("*.json"))
    memory = (named / "MEMORY.md").read_bytes()
    app = Terminal(tmp_path, [sys.executable, "-m", "memtui", "--demo", str(named)], {"TMPDIR": str(temp)})
    try:
        app.wait(lambda s: "pending" in s and "MEMORY.md" in s)
        app.quit()
    finally:
        app.close()
    assert sorted(p.name for p in (named / ".memtui/queue").glob("*.json")) == queue
    assert (named / "MEMORY.md").read_bytes() == memory


@pytest.mark.tmux
def test_open_with_store_shows_the_redis_memory(tmp_path: Path, redis_url: str) -> None:
    app = Terminal(tmp_path, [sys.executable, "-m", "memtui", "open", "--store", redis_url], {})
    try:
        screen = app.wait(lambda s: "redis://127.0.0.1" in s and "## " in s)
        assert "MEMORY.md" in screen and "disconnected" not in screen
        app.quit()
    finally:
        app.close()
    from memtui.core.storage.redis_store import RedisStore

    assert RedisStore(redis_url).read("MEMORY.md") is not None  # the empty store was given a memory


def test_a_mistyped_command_is_not_made_a_memory(tmp_path: Path) -> None:
    """`memtui staus` used to create a git repository named staus and open the app on it."""
    for word, hint in (("quue", "Did you mean `memtui queue`?"), ("staus", "Did you mean `memtui status`?")):
        done = subprocess.run([sys.executable, "-m", "memtui", word], capture_output=True, text=True, cwd=tmp_path,
                              env={**os.environ, "MEMTUI_CONFIG_DIR": str(tmp_path / "config")})
        assert done.returncode == 2, done.stderr
        assert f"{word!r} is not a command, and there is no folder of that name here." in done.stderr
        assert hint in done.stderr and f"memtui init {word}" in done.stderr
        assert not (tmp_path / word).exists()


def test_the_app_without_a_terminal_says_so_and_makes_nothing(tmp_path: Path) -> None:
    """With its output a pipe the app drew for no one, at full CPU, until killed."""
    new = tmp_path / "new-memory"
    new.mkdir()  # an empty folder, which the app would make a memory in (a missing one is refused first)
    done = subprocess.run([sys.executable, "-m", "memtui", str(new)], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, env={**os.environ, "MEMTUI_CONFIG_DIR": str(tmp_path / "c")})
    assert done.returncode == 2, done.stderr
    assert "the app needs a terminal, and its output is not one" in done.stderr
    assert "memtui show MEMORY.md" in done.stderr and not any(new.iterdir())
