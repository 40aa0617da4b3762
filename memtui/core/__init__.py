"""The memory domain: files, entries, proposals, review. Knows nothing of the terminal."""
