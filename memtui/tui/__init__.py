"""The memtui app (Textual). Importing this package imports nothing; `memtui.tui.app` is the entry point."""
