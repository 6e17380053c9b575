"""Reading papers and deciding who each is: the readers of every input format, a paper's
identity keys and the merge of its copies, the name its abstract coins, and its chunks.

Other parts import from here, never from the modules inside; names load on first use, so
importing the package costs nothing until a name is needed (`rag --help` imports no model,
no Chroma)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag.lazy import exports

if TYPE_CHECKING:
    from rag.papers.chunk import Chunker
    from rag.papers.identity import (
        abstract_key,
        coined_keys,
        copies_digest,
        copy_digest,
        copy_key,
        derived_id,
        idless_keys,
        looks_idless,
        title_head,
        title_key,
    )
    from rag.papers.merge import listed_claims, merge_papers
    from rag.papers.naming import introduced_name
    from rag.papers.readers import FORMATS_HELP, FileReport, Reading, ReadOptions, estimate_records, read_paths

_WHERE = {
    "Chunker": "rag.papers.chunk",
    "FORMATS_HELP": "rag.papers.readers",
    "FileReport": "rag.papers.readers",
    "ReadOptions": "rag.papers.readers",
    "Reading": "rag.papers.readers",
    "abstract_key": "rag.papers.identity",
    "coined_keys": "rag.papers.identity",
    "copies_digest": "rag.papers.identity",
    "copy_digest": "rag.papers.identity",
    "copy_key": "rag.papers.identity",
    "derived_id": "rag.papers.identity",
    "estimate_records": "rag.papers.readers",
    "idless_keys": "rag.papers.identity",
    "introduced_name": "rag.papers.naming",
    "listed_claims": "rag.papers.merge",
    "looks_idless": "rag.papers.identity",
    "merge_papers": "rag.papers.merge",
    "read_paths": "rag.papers.readers",
    "title_head": "rag.papers.identity",
    "title_key": "rag.papers.identity",
}
__all__ = [
    "Chunker",
    "FORMATS_HELP",
    "FileReport",
    "ReadOptions",
    "Reading",
    "abstract_key",
    "coined_keys",
    "copies_digest",
    "copy_digest",
    "copy_key",
    "derived_id",
    "estimate_records",
    "idless_keys",
    "introduced_name",
    "listed_claims",
    "looks_idless",
    "merge_papers",
    "read_paths",
    "title_head",
    "title_key",
]

__getattr__ = exports(__name__, _WHERE)
