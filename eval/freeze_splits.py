"""Write each item's split into a hand-written dataset, once: `python -m eval.freeze_splits FILE...`.

An item's split is keyed by its first gold paper as the index resolves it (`RAG_HOME` must hold
the index the file is written for), so every question about one paper lands in the same split;
items without gold (unanswerable ones) are keyed by their id. Items that already carry a split
keep it: a split is assigned once and never moves."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rag.app import App
from rag.evaluation import resolve_gold, split_of
from rag.settings import Settings


def main() -> None:
    catalog = App(Settings()).index.load().catalog
    for name in sys.argv[1:]:
        path = Path(name)
        out = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            if "split" not in record:
                try:
                    gold = sorted(resolve_gold(record, catalog)) if record.get("answerable", True) else []
                except ValueError as err:
                    print(f"{path}: {record.get('id')}: {err}", file=sys.stderr)
                    gold = []
                record["split"] = split_of(gold[0] if gold else f"{path.stem}:{record['id']}")
            out.append(json.dumps(record, ensure_ascii=False))
        path.write_text("\n".join(out) + "\n", encoding="utf-8")
        counts = {s: sum(f'"split": "{s}"' in line for line in out) for s in ("train", "validation", "test")}
        print(path, counts)


if __name__ == "__main__":
    main()
