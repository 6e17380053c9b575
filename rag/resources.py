"""Files shipped with the package: the prompt templates and the bundled sample. In the repository
they live at the top (`prompts/`, `data/sample/`: one source); `rag/assets/` links to them, and the
wheel carries copies, so a package installed anywhere finds them through `asset_dir`."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def asset_dir(name: str) -> Path:
    """The folder of a shipped asset ("prompts" or "sample") on the file system."""
    return Path(str(files("rag") / "assets" / name))
