"""A short readable label for a paper that has no title.

The rule lives in rag.text (the one home for text rules): the name the abstract introduces
("Celcomen", "NUCFL", "PersuasionBench"), never a generic word such as "LLM-based"; failing
that, its clipped first sentence. This module keeps the old import path working."""

from __future__ import annotations

from rag.text import derive_label

__all__ = ["derive_label"]
