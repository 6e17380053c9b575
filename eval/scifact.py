"""SciFact adapter: its corpus is ingested like any JSONL list (`id`, `title`, `abstract`), and
its queries (`query`, `gold_ids`) become retrieval items scored by the same metrics as the dev set."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass
class RetrievalItem:
    id: str
    query: str
    gold_ids: list[str]


def load_queries(path: Path, limit: int | None = None) -> list[RetrievalItem]:
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            items.append(RetrievalItem(str(record["id"]), record["query"], [str(g) for g in record["gold_ids"]]))
    return items[:limit] if limit else items
