"""The memory domain: files, entries, proposals, review. Knows nothing of the terminal.

Its packages are layers in the order a write's data takes, ground first: basics, grammar, storage, writing, then
recall and timeline, then hygiene and access; each imports only the layers below it (docs/internals.md)."""
