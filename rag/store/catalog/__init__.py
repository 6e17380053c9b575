"""The paper catalogue: a local SQLite view of the change log kept in Chroma (`rag.store.log`).

It holds every copy of every paper as read (the log's state), the merged paper shown for each id,
and what lookup and filtering need: folded venue/year/track/decision columns with counts per value,
author names, a full-text table over title, label and authors, and identity keys for ingest
(whole-abstract hash, title hash, the name a title opens with, the label of an id-less abstract).
It updates in place, so adding a thousand papers to a million costs a thousand rows, and it is
read on demand, so a command that looks at ten papers reads ten rows.

Applying the log is commutative: each copy and each vector entry is a last-writer-wins register
keyed by its own identity and versioned by (time, writer, position), so machines that apply the
same segments in different orders end with the same catalogue.

Each thread gets its own connection (SQLite connections are not shared across threads); writes
happen under `Index`'s write lock."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rag.store.catalog.connection import SCHEMA_VERSION, SchemaChanged
from rag.store.catalog.names import NameIndex, name_key, names_of
from rag.store.catalog.projection import LogProjection, tracks_of
from rag.store.catalog.rows import CopyRow, PaperState
from rag.store.log import CopyEntry
from rag.types import Paper

__all__ = ["SCHEMA_VERSION", "Catalog", "CopyRow", "PaperState", "SchemaChanged", "name_key", "names_of", "tracks_of"]


class Catalog(LogProjection, NameIndex):
    """The catalogue, put together from its parts (one module each): `connection` (the file, its
    schema and transactions), `rows` (papers, filters, facets, identity lookups), `names` (the name
    and mention index) and `projection` (applying the change log)."""

    @classmethod
    def of(cls, papers: Sequence[Paper], path: Path | None = None) -> Catalog:
        """A catalogue holding just these papers (each its own single copy): for tests and tools
        that need catalogue operations without an index."""
        import tempfile

        catalog = cls(path or Path(tempfile.mkdtemp(prefix="rag-catalog-")) / "catalog.sqlite")
        copies: list[CopyEntry] = [
            ((1, "of", i), f"of|{p.id}", p.id, p.source or "of", str(i), p.to_dict()) for i, p in enumerate(papers)
        ]
        catalog.apply("of", copies, [], lambda paper: ("v", 1), {p.id: (p, "v", 1) for p in papers})
        return catalog
