"""The grammars of memory formats memtui opens but did not define (memtui/core/layout.py names the kinds)."""
