"""How memory is written down: an entry line, a document's sections, the layouts and other tools' formats, the root's
config and review policy, which paths are memory files, and the edits of a file's text (update) as pure functions
from text to text. No store, no I/O."""
