"""Keeping a memory sound: lint, contradictions, `memtui doctor`'s finding and repair, and curating by hand."""
