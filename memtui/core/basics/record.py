"""Value classes without dataclasses: the repr, equality, hash and frozenness `@dataclass` gives, for classes on
`memtui context`'s path, which defines a dozen of them before its first byte of output, and on the write path (a
proposal, its result, its plan and its journal entry, for a person's `memtui update`). Importing dataclasses
costs ~10 ms (it imports inspect) and each class it makes ~1.5 ms (it compiles the methods it writes); these cost
neither. A record's fields are its class's own annotations, in order; its `__init__` is written by hand.
"""

from __future__ import annotations

import sys
from typing import Any


class FrozenInstanceError(AttributeError):
    """A field of a frozen record was assigned or deleted (what dataclasses raises, under the same name)."""


class Record:
    """Fields (the class's annotations), a dataclass's repr and equality (same class, equal fields); unhashable,
    as a dataclass with `eq` that is not frozen. `_not_compared` names fields equality and hash leave out."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _compared: tuple[str, ...] = ()
    _not_compared: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # a subclass keeps its parent's fields (as a dataclass's does): else its instances would all compare equal
        inherited = cls.__mro__[1]._fields if issubclass(cls.__mro__[1], Record) else ()
        cls._fields = tuple(dict.fromkeys((*inherited, *cls.__dict__.get("__annotations__", {}))))
        cls._compared = tuple(f for f in cls._fields if f not in cls._not_compared)
        cls.__match_args__ = cls._fields

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields) + ")"

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f) for f in self._compared)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._key() == other._key()  # type: ignore[attr-defined]
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def replace(self, **changes: Any) -> Any:
        """A copy with `changes` (as `dataclasses.replace`)."""
        return type(self)(**{f: changes.pop(f) if f in changes else getattr(self, f) for f in self._fields},
                          **changes)

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain data, as `dataclasses.asdict` gives them (see `plain`)."""
        return plain(self)


def plain(value: Any) -> Any:
    """`value` as `dataclasses.asdict` copies a field: records (and dataclasses) as dicts, lists, tuples and dicts
    copied all the way down, anything else as it is."""
    if isinstance(value, Record):
        return {name: plain(getattr(value, name)) for name in value._fields}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return type(value)(*map(plain, value)) if hasattr(value, "_fields") else tuple(map(plain, value))
    if isinstance(value, dict):
        return type(value)((plain(k), plain(v)) for k, v in value.items())
    dataclasses = sys.modules.get("dataclasses")  # a dataclass can only be here if its module was imported
    if dataclasses is not None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


class Frozen(Record):
    """A record whose fields are set once, in `__init__` (through `object.__setattr__`), and hashed."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._key())

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")
