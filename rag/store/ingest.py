"""Ingest: apply the plan of which paper each copy belongs to, embed only what changed, write safely.

Which paper each copy belongs to (identity, merges, copies kept apart) is decided per batch by
`rag.store.plan.plan_batch`, from what the catalogue holds; this module reads those inputs,
commits the plan and reports it.

Write order, per batch, is what makes a killed run safe to re-run and concurrent writers safe:
1. the chunk vectors of new text versions (ids `paper#version#n`: a repeat overwrites itself);
2. the log segment (the commit: copies, new vectors, tombstones of replaced vectors);
3. the deletion of the chunks that this run itself replaced or removed, or that are live but
   not the paper's own text version any more (two writers changed one paper at once): garbage
   proven by the tombstones it just wrote. A killed run's chunks without a segment are orphans:
   the re-run overwrites them (ids are deterministic) and `rag compact` deletes the rest;
4. the local catalogue and keyword index (derived; rebuilt from the log if lost).
Nothing else is ever deleted: not "what my catalogue did not know", so a second writer's fresh
chunks are safe. Whether a paper is unchanged is decided against Chroma itself: its vectors must
exist there, else the paper is re-embedded (repaired).

A file read whole (no shard, category or date filter, no bad record) is the authority on its own
copies: copies it held before and holds no more are removed, and with them any paper that no
other source lists.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from rag.embed import EmbedPool
from rag.errors import InputError
from rag.papers import Chunker, FileReport, Reading, copies_digest, copy_key, looks_idless, merge_papers
from rag.progress import Progress
from rag.store.index import Index, keyword_text
from rag.store.keyword import FLUSH_DOCS, SegmentBuilder
from rag.store.log import CopyChange, PaperHint, Segment, VectorChange
from rag.store.plan import Known, Merge, Staged, ids_to_list, plan_batch, reconcile
from rag.store.writer import InlineWriter, StoreWriter, Writes
from rag.types import Chunk, ChunkId, Paper

log = logging.getLogger(__name__)
BATCH_PAPERS = 2000
COMMIT_BATCHES = 10  # the catalogue commits every this many batches (20,000 papers by default)


@dataclass
class IngestReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    merges: list[Merge] = field(default_factory=list)
    skipped: list[InputError] = field(default_factory=list)
    notes: list[InputError] = field(default_factory=list)
    files: list[FileReport] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    papers_read: int = 0
    title_only_read: int = 0
    chunks_embedded: int = 0
    chunks_deleted: int = 0
    segments_written: int = 0
    snapshot: dict[str, Any] | None = None  # published for new machines (`Index.publish_snapshot_if_due`)
    papers: int = 0  # what the index holds at the end, as `rag status` counts it
    title_only: int = 0

    def public(self) -> dict[str, Any]:
        return {
            "added": len(self.added),
            "updated": len(self.updated),
            "unchanged": self.unchanged,
            "removed": len(self.removed),
            "repaired": len(self.repaired),
            "merges": [m.public() for m in self.merges],
            "papers_read": self.papers_read,
            "title_only_read": self.title_only_read,
            "skipped": len(self.skipped),
            "errors": [{"file": e.source, "line": e.line, "reason": e.reason} for e in self.skipped],
            "notes": [{"file": e.source, "line": e.line, "note": e.reason} for e in self.notes],
            "files": [f.public() for f in self.files],
            "ignored_files": self.ignored,
            "chunks_embedded": self.chunks_embedded,
            "chunks_deleted": self.chunks_deleted,
            "log_segments_written": self.segments_written,
            "snapshot_published": self.snapshot,
            "papers": self.papers,
            "title_only": self.title_only,
        }

    def settle(self, present: set[str], totals: tuple[int, int]) -> None:
        """Count each paper once, as the index holds it at the end of the run (`present`): a paper
        added and then merged into another in the same run was not added, one added and then
        updated was added, one removed and merged away was not removed. `totals` (papers, title
        only) are the index's, the figures `rag status` shows."""
        added = [p for p in dict.fromkeys(self.added) if p in present]
        self.updated = [p for p in dict.fromkeys(self.updated) if p in present and p not in set(added)]
        self.removed = [p for p in dict.fromkeys(self.removed) if p not in present]
        self.repaired = [p for p in dict.fromkeys(self.repaired) if p in present]
        self.added = added
        self.papers, self.title_only = totals


def batched(items: Iterable[Paper], size: int) -> Iterator[list[Paper]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


class Ingester:
    def __init__(
        self,
        index: Index,
        chunker: Chunker,
        embed: EmbedPool,
        progress: Progress | None = None,
        batch_papers: int = BATCH_PAPERS,
        writer: StoreWriter | None = None,
    ) -> None:
        self.index = index
        self.chunker = chunker
        self.embed = embed
        self.progress = progress or Progress("ingest", enabled=False)
        self.batch_papers = batch_papers
        self.store_writer: StoreWriter = writer or InlineWriter(index.store)
        self._pending = False  # a batch applied to the catalogue, its Chroma writes not yet acknowledged
        self._uncommitted = 0  # batches acknowledged by Chroma whose catalogue changes are not committed
        self.writer = uuid.uuid4().hex[:10]
        self.report = IngestReport()
        self._seen: dict[str, set[str]] = {}
        self._keyword = SegmentBuilder()
        self._keyword_done: list[int] = []
        self._keyword_removed: list[int] = []
        self._merged_away: set[str] = set()
        self._unchanged: set[str] = set()
        self._batch_papers, self._advanced = 0, 0.0

    # -- the run ------------------------------------------------------------------------------
    def run(self, reading: Reading) -> IngestReport:
        index = self.index
        with index.lock.held(on_wait=self.progress.say):
            index.store.open(create=True)
            index.sync()
            index.remove_old_caches()
            try:
                for batch in batched(reading, self.batch_papers):
                    self._batch_papers, self._advanced = len(batch), 0.0
                    self._ingest_batch(batch)
                    self.progress.advance(len(batch) - self._advanced)
                self.report.skipped, self.report.notes = list(reading.errors), list(reading.notes)
                self.report.files, self.report.ignored = reading.files, reading.ignored
                for file in reading.files:
                    if file.complete:
                        self._forget_missing(file.file)
                self._settle(commit=True)
                self._persist_vectors()
            except BaseException:
                index.catalog.rollback()  # the batch Chroma has not acknowledged: the log is the truth
                raise
            self._flush_keyword(force=True)
            index.catch_up_keyword()
            self.report.snapshot = index.publish_snapshot_if_due()
            self._settle_report()
        self.progress.close()
        changed = {*self.report.added, *self.report.updated, *self.report.repaired}
        self.report.unchanged = len(self._unchanged - changed)
        return self.report

    def remove(self, paper_ids: list[str] | None = None, source: str | None = None) -> IngestReport:
        """Remove papers by id (every copy), or a source file's copies (papers listed only there
        disappear; papers also listed elsewhere lose that file's contribution)."""
        index = self.index
        with index.lock.held(on_wait=self.progress.say):
            index.store.open()
            index.sync()
            index.remove_old_caches()
            catalog = index.catalog
            staged: dict[str, Staged] = {}
            if paper_ids:
                for pid, copies in catalog.copies_of(paper_ids).items():
                    for skey, _, paper in copies:
                        staged[skey] = Staged(skey, pid, None, "", paper.source, pid)
            if source:
                for pid, skeys in catalog.source_pids(source).items():
                    for skey in skeys:
                        staged[skey] = Staged(skey, pid, None, "", source, pid)
            try:
                if staged:
                    self._commit(staged, set())
                self._settle(commit=True)
                self._persist_vectors()
            except BaseException:
                catalog.rollback()
                raise
            self._flush_keyword(force=True)
            index.catch_up_keyword()
            self._settle_report()
        return self.report

    def _persist_vectors(self) -> None:
        """Once everything is written, have Chroma put its whole vector graph on disk, so every
        reader searches the same graph (`ChromaStore.persist_index`)."""
        if self.report.segments_written:
            self.index.store.persist_index()

    def _settle_report(self) -> None:
        report, catalog = self.report, self.index.catalog
        touched = [*report.added, *report.updated, *report.removed, *report.repaired]
        report.settle(set(catalog.states(touched)), catalog.totals())

    # -- one batch ----------------------------------------------------------------------------
    def _ingest_batch(self, batch: list[Paper]) -> None:
        """Read what the catalogue knows of the batch, let `plan_batch` decide, commit the plan."""
        catalog = self.index.catalog
        skeys = [copy_key(p) for p in batch]
        existing = catalog.copies(skeys)
        fresh_ids = ids_to_list(batch, existing)
        listed = catalog.titles_and_sources(fresh_ids) if fresh_ids else {}
        known = Known(existing, listed, self._seen)
        plan = plan_batch(batch, known, catalog)
        for paper, skey in zip(batch, skeys):
            self._seen.setdefault(paper.source, set()).add(skey)
        self.report.papers_read += len(batch)
        self.report.title_only_read += sum(1 for p in batch if not p.abstract)
        self.report.merges += plan.merges
        self._merged_away |= plan.merged_away
        self._commit(plan.by_key(), set(plan.unchanged))

    # -- committing staged changes ------------------------------------------------------------
    def _commit(self, staged: dict[str, Staged], unchanged: set[str], reconciled: bool = False) -> None:
        """Write the staged copies (vectors, log segment, catalogue), then, unless this is itself
        a reconciliation, decide again the id-less copies whose evidence the change touched."""
        index, catalog = self.index, self.index.catalog
        affected = {s.pid for s in staged.values()} | {s.prev_pid for s in staged.values() if s.prev_pid}
        idless_skeys = [s.skey for s in staged.values() if looks_idless(s.skey) or (s.paper and not s.paper.own_id)]
        keys_before = None
        if not reconciled and (idless_skeys or catalog.has_idless()):
            keys_before = catalog.identity_keys(affected, idless_skeys)
        copies = {
            pid: {skey: (digest, paper) for skey, digest, paper in items}
            for pid, items in catalog.copies_of(sorted(affected)).items()
        }
        for s in staged.values():
            if s.prev_pid and s.prev_pid in copies:
                copies[s.prev_pid].pop(s.skey, None)
            if s.paper is not None:
                copies.setdefault(s.pid, {})[s.skey] = (s.digest, s.paper)
        states = catalog.states(sorted(affected | unchanged))
        live = catalog.live_vectors(sorted(affected | unchanged))
        merged: dict[str, Paper] = {}
        chunks: dict[str, list[Chunk]] = {}
        digest_of: dict[str, str] = {}
        for pid in sorted(affected):
            parts = list(copies.get(pid, {}).values())
            if parts:
                merged[pid] = merge_papers([p for _, p in parts], pid)
                chunks[pid] = self.chunker.chunk(merged[pid])
                digest_of[pid] = copies_digest([d for d, _ in parts])
        # Unchanged papers are checked against Chroma: their vectors must be there.
        expected = {pid: state for pid, state in states.items() if pid in unchanged and pid not in affected}
        check_ids = [str(ChunkId(pid, st.version, n)) for pid, st in expected.items() for n in range(st.n_chunks)]
        check_ids += [str(c.id) for pid, cs in chunks.items() if (pid, cs[0].id.version) in live for c in cs]
        if check_ids:
            self._settle()  # the check must see the previous batch's writes
        present = index.store.existing_chunks(check_ids) if check_ids else set()
        for pid, state in expected.items():
            ids = [str(ChunkId(pid, state.version, n)) for n in range(state.n_chunks)]
            if (pid, state.version) not in live or not all(i in present for i in ids):
                held = catalog.copies_of([pid]).get(pid, [])
                if not held:
                    continue
                merged[pid] = merge_papers([p for _, _, p in held], pid)
                digest_of[pid] = copies_digest([d for _, d, _ in held])
                chunks[pid] = self.chunker.chunk(merged[pid])
                live.pop((pid, state.version), None)
                self.report.repaired.append(pid)
            else:
                self._unchanged.add(pid)
        # Embed what has no vectors yet.
        to_embed = [
            c
            for pid, cs in chunks.items()
            for c in cs
            if (pid, cs[0].id.version) not in live or not all(str(x.id) in present for x in cs)
        ]
        vector_changes: list[VectorChange] = []
        upsert_ids: list[str] = []
        vectors = None
        metadatas: list[dict[str, Any]] = []
        if to_embed:
            vectors = self._embed_with_progress([c.text for c in to_embed])
            now = int(time.time())  # upsert time: `compact` tells a stalled writer's orphans from fresh ones
            upsert_ids = [str(c.id) for c in to_embed]
            metadatas = [{"paper_id": c.id.paper_id, "n": c.id.n, "ts": now} for c in to_embed]
            self.report.chunks_embedded += len(to_embed)
            for pid in dict.fromkeys(c.id.paper_id for c in to_embed):
                vector_changes.append(VectorChange(pid, chunks[pid][0].id.version, len(chunks[pid])))
        # Tombstones: every live version that is not the paper's version now.
        garbage: list[str] = []
        for (pid, version), n in sorted(live.items()):
            if pid in chunks:
                current: str | None = chunks[pid][0].id.version
            elif pid in expected:  # unchanged, but a concurrent writer's version of it may be live too
                current = expected[pid].version
            elif pid in affected:
                current = None  # removed
            else:
                continue
            if version != current:
                vector_changes.append(VectorChange(pid, version, 0))
                garbage += [str(ChunkId(pid, version, i)) for i in range(n)]
        segment = Segment.new(self.writer)
        segment.copies = [
            CopyChange(s.skey, s.pid, s.source, s.digest, None if s.paper is None else s.paper.to_dict())
            for s in staged.values()
        ]
        segment.vectors = vector_changes
        segment.hints = [
            PaperHint(pid, digest_of[pid], merged[pid].label, cs[0].id.version, len(cs))
            for pid, cs in chunks.items()
            if pid in digest_of
        ]
        if not len(segment):
            return
        self._settle()
        self.store_writer.submit(Writes(upsert_ids, vectors, metadatas, segment, garbage))
        self.report.segments_written += 1
        self.report.chunks_deleted += len(garbage)
        copy_rows, vector_rows = segment.versioned()
        known = {pid: (merged[pid], c[0].id.version, len(c)) for pid, c in chunks.items()}
        if not self._uncommitted:
            catalog.begin()
        self._pending = True
        changed = catalog.apply(segment.id, copy_rows, vector_rows, self.chunker.version_of, known)
        for pid in sorted(changed):
            if pid in merged and pid in states:
                self.report.updated.append(pid)
            elif pid in merged:
                self.report.added.append(pid)
            elif pid not in merged and pid in states and pid not in self._merged_away:
                self.report.removed.append(pid)
        self._feed_keyword(merged, chunks, changed, states)
        if keys_before is not None:
            self._reconcile(keys_before, catalog.identity_keys(affected, idless_skeys))

    def _reconcile(self, before: tuple[set[str], set[str]], after: tuple[set[str], set[str]]) -> None:
        """Move the id-less copies that the last commit made belong elsewhere (`reconcile`), so
        the collection ends the same whatever order its files came in. Moving changes no claim,
        so the moves need no reconciliation of their own."""
        plan = reconcile(before[0] | after[0], before[1] | after[1], self.index.catalog)
        if plan.staged:
            self.report.merges += plan.merges
            self._merged_away |= plan.merged_away
            self._commit(plan.by_key(), set(), reconciled=True)

    def _embed_with_progress(self, texts: list[str]) -> Any:
        """Embed in slices, moving the progress line as it goes: with the local model a batch
        takes minutes, and a log without a terminal must still hear from us every few seconds."""
        import numpy as np

        step = 256
        parts = []
        share = self._batch_papers / max(len(texts), 1)
        for start in range(0, len(texts), step):
            part = texts[start : start + step]
            parts.append(self.embed(part))
            self._advanced += len(part) * share
            self.progress.advance(len(part) * share)
        return np.vstack(parts)

    # -- keyword index, fed as we go --------------------------------------------------------
    def _feed_keyword(
        self, merged: dict[str, Paper], chunks: dict[str, list[Chunk]], changed: set[str], states: dict[str, Any]
    ) -> None:
        catalog = self.index.catalog
        numbers = catalog.pnos(sorted(p for p in changed if p in merged))
        for pid, pno in numbers.items():
            self._keyword.drop(pno)
            for chunk in chunks[pid]:
                self._keyword.add(pno, chunk.id.n, keyword_text(merged[pid], chunk.text))
            self._keyword_done.append(pno)
        for pid in changed:
            if pid not in merged and pid in states:
                self._keyword.drop(states[pid].pno)
                self._keyword_removed.append(states[pid].pno)

    def _settle(self, commit: bool = False) -> None:
        """Wait until Chroma has the pending batch; commit the catalogue changes of the batches
        Chroma has every COMMIT_BATCHES of them (or now, with `commit`), and then write the keyword
        segment once enough documents wait for it. A commit writes every page the transaction
        dirtied, and new papers dirty pages all over the catalogue's indexes of random keys:
        applying a million papers took 710 s committing every batch, 504 s every ten
        (`eval.bench.catalog_load`). A killed run loses at most the uncommitted batches from the
        catalogue, never from the log: the re-run's sync applies their segments."""
        if self._pending:
            self.store_writer.wait()
            self._pending = False
            self._uncommitted += 1
        if self._uncommitted and (commit or self._uncommitted >= COMMIT_BATCHES):
            self.index.catalog.commit()
            self._uncommitted = 0
            self._flush_keyword()

    def _flush_keyword(self, force: bool = False) -> None:
        if not self._keyword_done and not self._keyword_removed:
            return
        if not force and len(self._keyword) < FLUSH_DOCS:
            return
        import numpy as np

        removed = np.asarray(self._keyword_done + self._keyword_removed, dtype=np.int64)
        self.index.keyword.update(removed, [self._keyword])
        self.index.catalog.mark_indexed(self._keyword_done, self._keyword_removed)
        self._keyword, self._keyword_done, self._keyword_removed = SegmentBuilder(), [], []

    # -- a file read whole is the authority on its copies ---------------------------------
    def _forget_missing(self, source: str) -> None:
        seen = self._seen.get(source, set())
        staged: dict[str, Staged] = {}
        for pid, skeys in self.index.catalog.source_pids(source).items():
            for skey in skeys:
                if skey not in seen:
                    staged[skey] = Staged(skey, pid, None, "", source, pid)
        if staged:
            log.info("%s no longer holds %d copies: removing them", source, len(staged))
            for start in range(0, len(staged), self.batch_papers):
                part = dict(islice(staged.items(), start, start + self.batch_papers))
                self._commit(part, set())
