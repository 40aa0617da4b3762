"""The theme files shipped with memtui (TOML, one theme each); `memtui.tui.theme_files` loads them."""
