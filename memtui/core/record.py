"""Value classes without dataclasses: the repr, equality, hash and frozenness `@dataclass` gives, for classes on
`memtui context`'s path, which defines a dozen of them before its first byte of output, and on the write path (a
proposal, its result, its plan and its journal entry, for a person's `memtui update`). Importing dataclasses
costs ~10 ms (it imports inspect) and each class it makes ~1.5 ms (it compiles the methods it writes); these cost
neither. A record's fields are its class's own annotations, in order; its `__init__` is written by hand.
"""

from __future__ import annotations

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


class Frozen(Record):
    """A record whose fields are set once, in `__init__` (through `object.__setattr__`), and hashed."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._key())

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")
