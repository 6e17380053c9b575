"""Ingest: merge what was read with what the index holds, embed only what changed, write.

Crash safety comes from the order of writes. For each batch: chunk vectors first (deterministic
ids `paper_id#n`, so a repeated upsert overwrites rather than duplicates), then the catalogue
record with its content hash (the commit marker: until it is written, a re-run sees the paper as
changed and redoes it), then deletions of what was replaced. Every run ends with a sweep that
deletes chunks no catalogue record accounts for, so a run killed anywhere leaves nothing behind
once it is run again."""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from rag.chunk import Chunker
from rag.errors import InputError
from rag.index import Index
from rag.merge import SOURCES, canonical_id, merge_papers, raw, source_key
from rag.store import PaperRecord
from rag.types import Chunk, Paper

log = logging.getLogger(__name__)
BATCH_PAPERS = 64


@dataclass
class IngestReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[InputError] = field(default_factory=list)
    orphans_removed: int = 0
    chunks_embedded: int = 0
    files: list[str] = field(default_factory=list)

    def public(self) -> dict[str, Any]:
        return {
            "added": len(self.added),
            "updated": len(self.updated),
            "unchanged": len(self.unchanged),
            "merged_away": len(self.removed),
            "skipped": len(self.skipped),
            "errors": [
                {"file": e.source, "line": e.line, "reason": e.reason} for e in self.skipped
            ],
            "chunks_embedded": self.chunks_embedded,
            "orphans_removed": self.orphans_removed,
            "files": self.files,
        }


@dataclass
class _Entry:
    """A catalogue record being rebuilt: its id and every source's copy."""

    id: str
    sources: dict[str, dict[str, Any]]
    previous: PaperRecord | None = None


def _hash(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:20]


def chunk_metadata(paper: Paper, chunk: Chunk) -> dict[str, Any]:
    """Paper metadata stored beside each chunk (Chroma accepts only scalars)."""
    meta: dict[str, Any] = {
        "paper_id": paper.id,
        "chunk": chunk.index,
        "tokens": chunk.tokens,
        "title": paper.title,
        "label": paper.label,
        "authors": "; ".join(paper.authors),
        "venue": paper.venue,
        "track": paper.track,
        "decision": paper.decision,
        "url": paper.url,
    }
    if paper.year is not None:
        meta["year"] = paper.year
    return meta


class Ingester:
    def __init__(self, index: Index, chunker: Chunker, progress: bool | None = None) -> None:
        self.index = index
        self.chunker = chunker
        self.progress = sys.stderr.isatty() if progress is None else progress

    def run(self, papers: list[Paper], errors: list[InputError] | None = None) -> IngestReport:
        report = IngestReport(skipped=list(errors or []))
        store = self.index.store.open(create=True)
        existing = {r.paper.id: r for r in store.papers()}
        entries, removed = self._plan(papers, existing)
        report.removed = sorted(removed)

        work: list[tuple[PaperRecord, list[Chunk], str]] = []  # record, chunks, action
        for entry in entries.values():
            parts = [Paper.from_dict(p) for p in entry.sources.values()]
            paper = merge_papers(parts, entry.id)
            paper.extra[SOURCES] = entry.sources
            chunks = self.chunker.chunk(paper)
            text_hash = _hash([c.text for c in chunks])
            record = PaperRecord(paper, _hash(paper.to_dict()), text_hash, len(chunks))
            prev = entry.previous
            if prev is not None and prev.paper.id == paper.id and prev.content_hash == record.content_hash:
                report.unchanged.append(paper.id)
                continue
            action = "updated" if prev is not None else "added"
            (report.updated if action == "updated" else report.added).append(paper.id)
            reembed = prev is None or prev.paper.id != paper.id or prev.text_hash != text_hash
            work.append((record, chunks, "embed" if reembed else "metadata"))

        if work or removed:
            # Mark the index as changing before the first write, so caches built from it are
            # stale even if this run is killed before it finishes.
            store.bump_generation()
        bar = tqdm(total=sum(len(c) for _, c, a in work if a == "embed"), unit="chunk", desc="embedding",
                   disable=not self.progress or not work, file=sys.stderr)
        for start in range(0, len(work), BATCH_PAPERS):
            batch = work[start : start + BATCH_PAPERS]
            self._write(batch, existing, bar, report)
        bar.close()
        # Records merged into another paper go only after their replacement is written.
        store.delete_chunks([cid for pid in removed for cid in self._chunk_ids(existing[pid])])
        store.delete_papers(sorted(removed))
        final = {pid: r for pid, r in existing.items() if pid not in removed}
        final.update((r.paper.id, r) for r, _, _ in work)
        report.orphans_removed = self.sweep(list(final.values()))
        if work or removed or report.orphans_removed:
            generation = store.bump_generation()
            self.index.rebuild(generation, list(final.values()))
        return report

    def _plan(self, papers: list[Paper], existing: dict[str, PaperRecord]) -> tuple[dict[str, _Entry], set[str]]:
        """Assign each incoming copy to a record: by id, else by abstract, else by file position."""
        by_id: dict[str, str] = {}
        by_key: dict[str, str] = {}
        by_source: dict[str, str] = {}
        for pid, record in existing.items():
            by_id[pid] = pid
            if record.paper.key:
                by_key[record.paper.key] = pid
            for skey in record.paper.extra.get(SOURCES, {}):
                by_source[skey] = pid
        entries: dict[str, _Entry] = {}

        def entry_for(pid: str) -> _Entry:
            if pid not in entries:
                record = existing[pid]
                entries[pid] = _Entry(pid, dict(record.paper.extra.get(SOURCES, {})), record)
            return entries[pid]

        for paper in papers:
            skey = source_key(paper)
            target = by_id.get(paper.id) or (by_key.get(paper.key) if paper.key else None) or by_source.get(skey)
            if target is None:
                entries[paper.id] = _Entry(paper.id, {})
                target = paper.id
            entry = entries.get(target) or entry_for(target)
            moved_from = by_source.get(skey)
            if moved_from and moved_from != target:
                entry_for(moved_from).sources.pop(skey, None)
            entry.sources[skey] = raw(paper)
            by_id[paper.id] = target
            if paper.key:
                by_key[paper.key] = target
            by_source[skey] = target

        removed: set[str] = set()
        final: dict[str, _Entry] = {}
        for pid, entry in entries.items():
            if not entry.sources:
                removed.add(pid)
                continue
            new_id = canonical_id([s["id"] for s in entry.sources.values()], pid)
            if new_id != pid:
                if entry.previous is not None:
                    removed.add(pid)
                if new_id in existing and new_id not in entries:
                    # The own id already names a record: fold this one into it.
                    other = entry_for(new_id)
                    other.sources.update(entry.sources)
                    final[new_id] = other
                    continue
                entry = _Entry(new_id, entry.sources, existing.get(new_id, entry.previous))
            final[new_id] = entry
        removed -= set(final)
        return final, removed

    @staticmethod
    def _chunk_ids(record: PaperRecord) -> list[str]:
        return [f"{record.paper.id}#{i}" for i in range(record.n_chunks)]

    def _write(self, batch: list[tuple[PaperRecord, list[Chunk], str]], existing: dict[str, PaperRecord],
               bar: tqdm, report: IngestReport) -> None:
        store = self.index.store
        embed = [(r, c) for r, c, a in batch if a == "embed" and c]
        chunks = [c for _, cs in embed for c in cs]
        if chunks:
            vectors = self.index.embedder.embed([c.text for c in chunks])
            metas = [chunk_metadata(r.paper, c) for r, cs in embed for c in cs]
            store.upsert_chunks([c.id for c in chunks], vectors, [c.text for c in chunks], metas)
            report.chunks_embedded += len(chunks)
            bar.update(len(chunks))
        meta_only = [(r, c) for r, cs, a in batch if a == "metadata" for c in cs]
        if meta_only:
            store.update_chunk_metadata([c.id for _, c in meta_only], [chunk_metadata(r.paper, c) for r, c in meta_only])
        store.upsert_papers([r for r, _, _ in batch])
        stale = []
        for record, _, _ in batch:
            prev = existing.get(record.paper.id)
            if prev is not None and prev.n_chunks > record.n_chunks:
                stale += [f"{record.paper.id}#{i}" for i in range(record.n_chunks, prev.n_chunks)]
        store.delete_chunks(stale)

    def sweep(self, records: list[PaperRecord]) -> int:
        """Delete chunks that no catalogue record accounts for (left by a killed run)."""
        store = self.index.store
        expected = {cid for r in records for cid in self._chunk_ids(r)}
        orphans = [cid for cid in store.chunk_ids() if cid not in expected]
        store.delete_chunks(orphans)
        if orphans:
            log.warning("removed %d orphaned chunks", len(orphans))
        return len(orphans)
