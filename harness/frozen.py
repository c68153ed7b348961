"""``@frozen``: a frozen dataclass that is built at half the cost.

A frozen dataclass's generated ``__init__`` sets each field with ``object.__setattr__`` (its own
``__setattr__`` refuses), one call per field: building an ``HttpRequest`` cost twice what it
costs for a plain dataclass, and capture's writer, lint and replay build several per exchange.
``frozen`` generates an ``__init__`` that sets the instance's whole ``__dict__`` in one call
instead. Everything else is the dataclass's own: equality, hashing, ``repr``, ``replace``,
``FrozenInstanceError`` on assignment.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import dataclass_transform


@dataclass_transform(frozen_default=True)  # type checkers see the dataclass
def frozen[T](cls: type[T]) -> type[T]:
    """``@dataclass(frozen=True)`` with an ``__init__`` that sets all fields at once (the
    dataclass's own is kept for what this one does not cover: ``default_factory``, ``init=False``
    or keyword-only fields, ``__post_init__``)."""
    cls = dataclass(frozen=True)(cls)
    declared = fields(cls)  # type: ignore[arg-type]
    if hasattr(cls, "__post_init__") or any(
            f.default_factory is not MISSING or not f.init or f.kw_only for f in declared):
        return cls
    namespace: dict[str, object] = {"_set": object.__setattr__}
    params, entries = [], []
    for f in declared:
        if f.default is MISSING:
            params.append(f.name)
        else:
            namespace[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        entries.append(f"{f.name!r}: {f.name}")
    exec(f"def __init__(self, {', '.join(params)}):\n"  # only field names go into the code
         f"    _set(self, '__dict__', {{{', '.join(entries)}}})\n", namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    cls.__init__ = init  # type: ignore[misc]
    return cls
