"""Helpers for the attack tests: zlib made to fail on purpose, and workers run on threads with their errors kept."""

from __future__ import annotations

import threading
import zlib
from typing import Any, Callable


def failing_compressobj(monkeypatch: Any, *, compress_call: int | None = None, exc: BaseException | None = None,
                        on_finish: BaseException | None = None) -> Callable[..., Any]:
    """zlib.compressobj patched: the compressors it makes raise `exc` at the `compress_call`-th compress call (counted
    over all of them), or `on_finish` when flushed to the end. Returns the real compressobj, to put back."""
    real = zlib.compressobj
    calls = {"n": 0}

    class Failing:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def compress(self, data: Any) -> bytes:
            calls["n"] += 1
            if calls["n"] == compress_call and exc is not None:
                raise exc
            return self.inner.compress(data)

        def flush(self, mode: int = zlib.Z_FINISH) -> bytes:
            if on_finish is not None and mode == zlib.Z_FINISH:
                raise on_finish
            return self.inner.flush(mode)

    monkeypatch.setattr(zlib, "compressobj", lambda *a: Failing(real(*a)))
    return real


def run_in_threads(worker: Callable[[int], None], count: int, timeout: float = 120) -> list[BaseException]:
    """`worker(0)` … `worker(count - 1)`, each on its own thread, all joined (none may still run after `timeout`):
    what any of them raised."""
    errors: list[BaseException] = []

    def run(n: int) -> None:
        try:
            worker(n)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout)
    assert not any(th.is_alive() for th in threads)
    return errors
