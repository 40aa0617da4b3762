"""Run memtui as `python -m memtui`."""

from memtui.cli import main

raise SystemExit(main())
