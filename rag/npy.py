"""NumPy files read safely from many threads.

`np.load` parses each array's header with `ast.literal_eval`, and CPython 3.11 keeps the AST
converter's recursion depth per interpreter, not per thread (gh-106905, fixed in 3.12): a thread
switch inside it (a finaliser run by the collector) lets two threads' parses interleave and one
raises "SystemError: AST constructor recursion depth mismatch". UI threads sharing one App reload
the keyword index together after another process rewrote it (a concurrency test met the error once
in six runs), and the map's .npz can load beside them. Every header read goes through one lock."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import numpy as np

_HEADERS = threading.Lock()


def load_array(path: Path, mmap_mode: Literal["r"] | None = None) -> np.ndarray:
    """One .npy; memory-mapped arrays make the lock cover a header read only."""
    with _HEADERS:
        return np.load(path, mmap_mode=mmap_mode, allow_pickle=False)


@contextmanager
def load_arrays(path: Path) -> Iterator[dict[str, np.ndarray]]:
    """All arrays of one .npz, read under the lock (an .npz parses a header per array on access)."""
    with _HEADERS, np.load(path, allow_pickle=False) as data:
        yield {name: data[name] for name in data.files}
