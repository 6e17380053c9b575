"""The parts of `rag/` (papers, store, search, answer, evaluation) meet only through their public
names: a module of one part, of the top level or of the UI imports `rag.search`, never
`rag.search.retrieve`. Checked on the source, so a new deep import fails here, not in review."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = {p.name for p in (ROOT / "rag").iterdir() if (p / "__init__.py").exists()}


def deep_imports(source: str, where: str) -> list[str]:
    """`rag.<part>.<module>` imports in `source` of another part than the one of the file at
    `where` (a path relative to the repository)."""
    relative = Path(where).parts
    own = relative[1] if relative[0] == "rag" and len(relative) > 2 else None
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "rag" and len(parts) > 2 and parts[1] in PARTS and parts[1] != own:
                found.append(f"{where}: {name}")
    return found


def test_the_parts_are_the_expected_ones() -> None:
    assert {"papers", "store", "search", "answer", "evaluation"} <= PARTS


def test_no_module_reaches_into_another_part() -> None:
    files = [*(ROOT / "rag").rglob("*.py"), *(ROOT / "ui").rglob("*.py")]
    assert len(files) > 40
    offenders = [line for f in files for line in deep_imports(f.read_text(encoding="utf-8"), str(f.relative_to(ROOT)))]
    assert offenders == []


def test_a_deep_import_is_seen_and_one_within_the_part_is_not() -> None:
    source = "from rag.search.retrieve import Retriever\nimport rag.store\nfrom rag.answer.cite import x\n"
    assert deep_imports(source, "rag/answer/new.py") == ["rag/answer/new.py: rag.search.retrieve"]
    assert deep_imports(source, "rag/cli.py") == ["rag/cli.py: rag.search.retrieve", "rag/cli.py: rag.answer.cite"]
