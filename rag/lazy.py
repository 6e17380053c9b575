"""A part's public names, loaded on first use: each package of `rag` lists where its names live, and
importing the package costs nothing until one of them is asked for (so `rag --help` imports neither
Chroma nor the embedding model). One helper for every part (PEP 562's module `__getattr__`)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def exports(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: `where` maps each public name to its module."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        setattr(sys.modules[package], name, value)  # found once; later lookups skip this function
        return value

    return __getattr__
