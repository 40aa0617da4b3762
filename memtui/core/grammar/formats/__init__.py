"""The grammars of memory formats other tools own (one module each), read and written in their owner's terms."""
