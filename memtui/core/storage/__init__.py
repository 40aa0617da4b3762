"""Where a memory's bytes, history and queue live: the Store interface, the folder (its git readers and writers, its
state kept beside it, its watch) and Redis, and a memory opened to read it. Below the write path: nothing here
imports the packages above."""
