"""Question answering over research-paper abstracts, with checked citations.

Importing the package sets the environment so that no library reaches the network (docs/DESIGN.md,
habit 10): it points tiktoken at the encodings that llama-index-core ships, because these machines
cannot download them, and it switches off every library's telemetry before that library is imported.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

__version__ = "0.1.0"

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# Set with setdefault, so a value the user sets explicitly wins. tests/test_offline.py checks, under
# strace, that with these defaults `rag ingest`, `rag ask` and `rag ui` connect to nothing but loopback.
OFFLINE_ENV: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",  # huggingface_hub: never look files up on the Hub
    "GRADIO_ANALYTICS_ENABLED": "False",  # gradio: no analytics or version check to api.gradio.app
    "ANONYMIZED_TELEMETRY": "False",  # chromadb: no posthog telemetry (store.py also passes it)
    # onnxruntime's official wheels build in Microsoft's 1DS telemetry SDK, on by default: initialising
    # onnxruntime writes a device id and an event queue under
    # $XDG_CACHE_HOME/Microsoft/DeveloperTools/.onnxruntime, and about 9 s later (then again on each
    # retry) uploads to https://mobile.events.data.microsoft.com/OneCollector/1.0/, which shows as DNS
    # queries from a long `rag ingest` or `rag ui`. Read when onnxruntime initialises, so it must be set
    # before `import onnxruntime` (onnxruntime/Privacy.md, "Disabling Telemetry").
    "ORT_DISABLE_TELEMETRY": "1",
}


def _offline_defaults() -> None:
    """Set the environment so nothing downloads or phones home at run time (docs/DESIGN.md, habit 10)."""
    spec = importlib.util.find_spec("llama_index.core")  # locate, without the 1 s import
    if spec is not None and spec.submodule_search_locations:
        cache = Path(list(spec.submodule_search_locations)[0]) / "_static" / "tiktoken_cache"
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache))
    for name, value in OFFLINE_ENV.items():
        os.environ.setdefault(name, value)


_offline_defaults()
