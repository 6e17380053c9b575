"""Search: dense and keyword rankers fused, the first papers reordered by their best sentence,
filters; and the map of the collection drawn from its vectors.

Other parts import from here, never from the modules inside; names load on first use, so
importing the package costs nothing until a name is needed (`rag --help` imports no model,
no Chroma)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag.lazy import exports

if TYPE_CHECKING:
    from rag.search.paper_map import PaperMap, compute_map
    from rag.search.rerank import Rerank, SentenceReranker
    from rag.search.retrieve import Fusion, Ranking, Retriever, SearchResult, fuse

_WHERE = {
    "Fusion": "rag.search.retrieve",
    "PaperMap": "rag.search.paper_map",
    "Ranking": "rag.search.retrieve",
    "Rerank": "rag.search.rerank",
    "Retriever": "rag.search.retrieve",
    "SearchResult": "rag.search.retrieve",
    "SentenceReranker": "rag.search.rerank",
    "compute_map": "rag.search.paper_map",
    "fuse": "rag.search.retrieve",
}
__all__ = [
    "Fusion",
    "PaperMap",
    "Ranking",
    "Rerank",
    "Retriever",
    "SearchResult",
    "SentenceReranker",
    "compute_map",
    "fuse",
]

__getattr__ = exports(__name__, _WHERE)
