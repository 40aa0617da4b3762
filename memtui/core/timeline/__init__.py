"""What happened to a memory: a file's history and blame joined with the audit log, undo, an entry's lineage, each
line's provenance, and what changed today."""
