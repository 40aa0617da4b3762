"""Where OpenClaw keeps its agents' workspaces on this machine, found by OpenClaw's own documented rules.

OpenClaw (docs/concepts/agent-workspace.md, docs/gateway/config-agents/workspace-and-bootstrap.md,
docs/help/environment.md) resolves a workspace like this: `OPENCLAW_HOME` replaces the home folder; the state
directory is `OPENCLAW_STATE_DIR`, else `~/.openclaw-<profile>` for an `OPENCLAW_PROFILE` other than "default",
else `~/.openclaw`; the config is `OPENCLAW_CONFIG_PATH`, else `<state>/openclaw.json` (JSON5); an explicit
`agents.defaults.workspace` there wins over `OPENCLAW_WORKSPACE_DIR`, which wins over `<state>/workspace`; each
agent of a roster may name its own (`agents.entries.<id>.workspace`). Only read: nothing here writes.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Mapping


def _set(value: str | None) -> str | None:
    """An environment value as OpenClaw reads it: blank, "undefined" and "null" are unset."""
    v = (value or "").strip()
    return None if v in ("", "undefined", "null") else v


def openclaw_home(env: Mapping[str, str] | None = None) -> Path:
    """The home folder OpenClaw's paths start from: `OPENCLAW_HOME` (a `~` in it is the user's home), else HOME."""
    env = os.environ if env is None else env
    base = Path(_set(env.get("HOME")) or Path.home())
    home = _set(env.get("OPENCLAW_HOME"))
    return _expand(home, base) if home else base


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where OpenClaw keeps config, credentials and sessions (and, by default, the workspace)."""
    env = os.environ if env is None else env
    home = openclaw_home(env)
    given = _set(env.get("OPENCLAW_STATE_DIR"))
    if given:
        return _expand(given, home)
    profile = _set(env.get("OPENCLAW_PROFILE"))
    return home / (f".openclaw-{profile}" if profile and profile != "default" else ".openclaw")


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """The `openclaw.json` OpenClaw reads."""
    env = os.environ if env is None else env
    given = _set(env.get("OPENCLAW_CONFIG_PATH"))
    return _expand(given, openclaw_home(env)) if given else state_dir(env) / "openclaw.json"


def workspaces(env: Mapping[str, str] | None = None) -> list[Path]:
    """Every workspace OpenClaw's config and environment name that exists as a folder, the default one first."""
    env = os.environ if env is None else env
    home, state = openclaw_home(env), state_dir(env)
    config = read_config(config_path(env))
    agents = config.get("agents") if isinstance(config.get("agents"), dict) else {}
    defaults = agents.get("defaults") if isinstance(agents.get("defaults"), dict) else {}
    named = defaults.get("workspace") if isinstance(defaults.get("workspace"), str) else None
    given = _set(env.get("OPENCLAW_WORKSPACE_DIR"))
    found = [_expand(named, home) if named else _expand(given, home) if given else state / "workspace"]
    entries = agents.get("entries") if isinstance(agents.get("entries"), dict) else {}
    for agent in entries.values():
        if isinstance(agent, dict) and isinstance(agent.get("workspace"), str):
            found.append(_expand(agent["workspace"], home))
    out: list[Path] = []
    for path in found:
        if path.is_dir() and path not in out:
            out.append(path)
    return out


def _expand(path: str, home: Path) -> Path:
    if path == "~" or path.startswith("~/"):
        return home / path[2:]
    return Path(path).absolute()


def read_config(path: Path) -> dict[str, Any]:
    """`openclaw.json` read as JSON5 (comments, unquoted keys, single quotes, trailing commas); {} when it is
    missing or cannot be read: a workspace is then looked for where OpenClaw puts it by default."""
    try:
        if not path.is_file() or path.stat().st_size > 1_000_000:
            return {}
        data = json.loads(json5_to_json(path.read_text(encoding="utf-8", errors="replace")))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


_KEY = re.compile(r"[A-Za-z_$][\w$]*")


def json5_to_json(text: str) -> str:
    """The JSON5 subset config files use, as JSON: comments dropped, bare keys and single-quoted strings quoted,
    trailing commas removed. Strings are copied as they are, so a `//` inside a path stays."""
    out: list[str] = []
    last = ""  # the last character written that is not white space: a bare key follows "{" or ","
    i, n = 0, len(text)
    while i < n:
        if out and out[-1].strip():
            last = out[-1].strip()[-1]
        c = text[i]
        if c in "\"'":
            j, buf = i + 1, []
            while j < n and text[j] != c:
                if text[j] == "\\" and j + 1 < n:
                    buf.append(text[j:j + 2])
                    j += 2
                    continue
                buf.append('\\"' if text[j] == '"' else text[j])
                j += 1
            out.append('"' + "".join(buf) + '"')
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c == ",":
            k = i + 1
            while k < n and (text[k] in " \t\r\n" or text.startswith(("//", "/*"), k)):
                if text.startswith("//", k):
                    k = text.find("\n", k) if "\n" in text[k:] else n
                elif text.startswith("/*", k):
                    k = text.find("*/", k + 2) + 2 if "*/" in text[k + 2:] else n
                else:
                    k += 1
            if k < n and text[k] in "}]":
                i += 1  # a trailing comma
            else:
                out.append(c)
                i += 1
        elif last in ("{", ",") and (m := _KEY.match(text, i)) and text[m.end():].lstrip().startswith(":"):
            out.append(json.dumps(m.group()))
            i = m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def chosen_workspace(env: Mapping[str, str] | None = None) -> Path | None:
    """The workspace `memtui open --openclaw` opens: the only one found, else None with what was found (or where
    it was looked for) said on stderr."""
    import sys

    found = workspaces(env)
    if len(found) == 1:
        return found[0]
    if not found:
        print(f"memtui: no OpenClaw workspace found (looked in {state_dir(env) / 'workspace'}, "
              f"OPENCLAW_WORKSPACE_DIR and {config_path(env)}); `openclaw setup` creates one, or open a folder "
              "with `memtui open PATH`", file=sys.stderr)
        return None
    from memtui.core.basics.visible import reveal

    print("memtui: several OpenClaw workspaces; open one with `memtui open PATH`:", file=sys.stderr)
    for folder in found:
        print(reveal(f"  {folder}"), file=sys.stderr)  # names from the person's config: hidden characters shown
    return None
