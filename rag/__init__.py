"""Question answering over research-paper abstracts, with checked citations.

Importing the package points tiktoken at the encodings that llama-index-core ships, because these
machines cannot download them and tiktoken would otherwise try at first use.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

__version__ = "0.1.0"

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _offline_defaults() -> None:
    """Set the environment so nothing downloads at run time (DESIGN.md, habit 10)."""
    spec = importlib.util.find_spec("llama_index.core")  # locate, without the 1 s import
    if spec is not None and spec.submodule_search_locations:
        cache = Path(list(spec.submodule_search_locations)[0]) / "_static" / "tiktoken_cache"
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


_offline_defaults()
