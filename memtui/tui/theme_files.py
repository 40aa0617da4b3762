"""Theme files (TOML) mapped onto Textual themes: the shipped ones in `memtui/themes/` and the user's own.

A theme file names Textual's base colours and adds `[variables]` for provenance, struck history, diffs and tree
badges. User themes live in `$MEMTUI_CONFIG_DIR/themes/` (default `~/.config/memtui/themes/`); a broken file
is reported, never fatal.
"""

from __future__ import annotations

import os
import tomllib
from functools import lru_cache
from importlib import resources
from pathlib import Path

from textual.theme import Theme

DEFAULT_THEME = "memtui-dark"
BASE_KEYS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground", "background",
             "surface", "panel", "boost")
# Every widget's CSS may use these; a Textual built-in theme gets the dark theme's values.
VARIABLES = ("prov-stated", "prov-observed", "prov-inferred", "prov-suggested", "prov-untagged", "struck",
             "diff-added", "diff-added-bg", "diff-removed", "diff-removed-bg", "diff-context",
             "badge-pending", "badge-external", "badge-changed")
ALIASES = {"dark": "memtui-dark", "light": "memtui-light", "contrast": "memtui-contrast",
           "high-contrast": "memtui-contrast"}


def config_dir() -> Path:
    env = os.environ.get("MEMTUI_CONFIG_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "memtui"


def theme_from_toml(text: str, origin: str) -> Theme:
    """A Textual Theme from one theme file; ValueError says what is wrong with it."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{origin}: not valid TOML ({exc})") from None
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{origin}: needs name = \"...\"")
    if not isinstance(raw.get("primary"), str):
        raise ValueError(f"{origin}: needs primary = \"#rrggbb\"")
    variables = raw.get("variables", {})
    if not isinstance(variables, dict):
        raise ValueError(f"{origin}: [variables] must be a table of name = \"colour\"")
    unknown = sorted(set(raw) - set(BASE_KEYS) - {"name", "dark", "variables"})
    if unknown:
        raise ValueError(f"{origin}: unknown keys {', '.join(unknown)}; use {', '.join(BASE_KEYS)}, dark, variables")
    kwargs = {k: str(raw[k]) for k in BASE_KEYS if k in raw}
    return Theme(name=name.strip(), dark=bool(raw.get("dark", True)),
                 variables={str(k): str(v) for k, v in variables.items()}, **kwargs)


@lru_cache(maxsize=1)
def shipped_themes() -> tuple[Theme, ...]:
    out = []
    for item in sorted(resources.files("memtui.themes").iterdir(), key=lambda p: p.name):
        if item.name.endswith(".toml"):
            out.append(theme_from_toml(item.read_text(encoding="utf-8"), f"memtui/themes/{item.name}"))
    return tuple(out)


def user_themes(folder: Path | None = None) -> tuple[list[Theme], list[str]]:
    """Themes from the user's config folder, and the problems found (one line each)."""
    folder = (folder or config_dir()) / "themes"
    themes, problems = [], []
    if not folder.is_dir():
        return themes, problems
    for path in sorted(folder.glob("*.toml")):
        try:
            themes.append(theme_from_toml(path.read_text(encoding="utf-8"), str(path)))
        except (ValueError, OSError) as exc:
            problems.append(str(exc))
    return themes, problems


@lru_cache(maxsize=1)
def variable_defaults() -> dict[str, str]:
    dark = next(t for t in shipped_themes() if t.name == DEFAULT_THEME)
    return {k: dark.variables[k] for k in VARIABLES}


def resolve(name: str | None) -> str | None:
    if not name:
        return None
    return ALIASES.get(name, name)


def theme_names() -> list[str]:
    """Every theme the app can show: Textual's own, memtui's, and the user's."""
    from textual.theme import BUILTIN_THEMES

    names = set(BUILTIN_THEMES) | {t.name for t in shipped_themes()} | {t.name for t in user_themes()[0]}
    return sorted(names)


def unknown_theme(name: str | None) -> str | None:
    """A clear refusal for a theme name that does not exist (aliases accepted), else None."""
    wanted = resolve(name)
    names = theme_names()
    if wanted is None or wanted in names:
        return None
    aliases = f" (or {', '.join(sorted(ALIASES))})" if ALIASES else ""
    return f"no theme {name!r}; themes: {', '.join(names)}{aliases}"
