"""Lets spyne 2.14 import on Python 3.12+.

spyne 2.14 (its last release) vendors six 1.14 as ``spyne.util.six``. That six serves
``six.moves`` through a meta-path importer that has only ``find_module``/``load_module``, which
Python 3.12 no longer calls, so ``import spyne`` fails with "No module named
'spyne.util.six.moves'" (arskom/spyne#700, #708). six 1.16 fixed it by adding ``find_spec``; this
finder does the same for the vendored copy, by asking the vendored importer.

Import this module before spyne.
"""

from __future__ import annotations

import importlib.util
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType

VENDORED = "spyne.util.six"


class VendoredSixMoves:
    """Meta-path finder and loader for ``spyne.util.six.moves.*``, as six >= 1.16 does it."""

    @staticmethod
    def _importer() -> object | None:
        six = sys.modules.get(VENDORED)
        return getattr(six, "_importer", None)

    @classmethod
    def find_spec(cls, fullname: str, path: object = None,
                  target: object = None) -> ModuleSpec | None:
        importer = cls._importer()
        if not fullname.startswith(VENDORED + ".") or importer is None:
            return None
        if fullname not in importer.known_modules:
            return None
        return importlib.util.spec_from_loader(fullname, cls)

    @classmethod
    def create_module(cls, spec: ModuleSpec) -> ModuleType:
        return cls._importer().load_module(spec.name)

    @staticmethod
    def exec_module(module: ModuleType) -> None:
        """load_module has run the module already."""


if sys.version_info >= (3, 12) and VendoredSixMoves not in sys.meta_path:
    sys.meta_path.insert(0, VendoredSixMoves)
