"""Evaluation: datasets with gold papers, the metrics, the runner behind `rag eval`, and its
reports.

Other parts import from here, never from the modules inside; names load on first use, so
importing the package costs nothing until a name is needed (`rag --help` imports no model,
no Chroma)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag.lazy import exports

if TYPE_CHECKING:
    from rag.evaluation.dataset import Item, load_items, resolve_gold
    from rag.evaluation.metrics import mean, ndcg_at_k, percentile, recall_at_k
    from rag.evaluation.results import ItemResult
    from rag.evaluation.runner import Config, parse_config, run_item
    from rag.evaluation.splits import SPLITS, split_of

_WHERE = {
    "Config": "rag.evaluation.runner",
    "Item": "rag.evaluation.dataset",
    "ItemResult": "rag.evaluation.results",
    "SPLITS": "rag.evaluation.splits",
    "load_items": "rag.evaluation.dataset",
    "mean": "rag.evaluation.metrics",
    "ndcg_at_k": "rag.evaluation.metrics",
    "parse_config": "rag.evaluation.runner",
    "percentile": "rag.evaluation.metrics",
    "recall_at_k": "rag.evaluation.metrics",
    "resolve_gold": "rag.evaluation.dataset",
    "run_item": "rag.evaluation.runner",
    "split_of": "rag.evaluation.splits",
}
__all__ = [
    "Config",
    "Item",
    "ItemResult",
    "SPLITS",
    "load_items",
    "mean",
    "ndcg_at_k",
    "parse_config",
    "percentile",
    "recall_at_k",
    "resolve_gold",
    "run_item",
    "split_of",
]

__getattr__ = exports(__name__, _WHERE)
