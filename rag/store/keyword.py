"""Keyword search: BM25 over segments, the way Lucene does it.

Dense vectors blur exact method names and acronyms ("PLNL", "SAeUron"); BM25 keeps them, and it
finds papers by their title, authors and venue too, including papers with no abstract.

The index is a list of immutable segments plus, per segment, a bitmap of deleted documents. An
ingest adds a small segment instead of rebuilding everything; a changed or removed paper is marked
deleted where it was and indexed anew in the new segment; small segments are merged when there are
too many (`rag compact` merges all). Scores use statistics over all segments (document count,
average length, document frequency), so a term's weight does not depend on which segment holds a
document. Each segment is a set of NumPy arrays in term-major (CSC) order, memory-mapped, so a
search opens a million-document index in milliseconds and reads only the postings of its terms.

Written here rather than taken from bm25s (which tokenises and scores well) because bm25s builds
one monolithic index with its own statistics: it has no segments, no deletions and no merge. The
tokenisation follows bm25s: words of two or more characters, English stop words, Snowball stems.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Literal

import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN

from rag.npy import load_array
from rag.text import fold

log = logging.getLogger(__name__)

K1, B = 1.5, 0.75
MAX_SEGMENTS = 8
FLUSH_DOCS = 100_000
_ARRAYS = ("terms", "indptr", "docs", "tfs", "doclen", "pno", "chunk")
_STOP = frozenset(STOPWORDS_EN)
_WORD = re.compile(r"\w\w+")
STOP = -1  # the term id of every stopword: counted, then dropped


class Tokenizer:
    """Words -> stems -> 63-bit term ids (hashes of the stems, so segments built apart agree on
    ids). Each distinct word is stemmed and hashed once per process, then looked up."""

    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("english")
        self._ids: dict[str, int] = self._stopwords()  # word -> term id (STOP for stopwords)
        self._lock = threading.Lock()

    @staticmethod
    def _stopwords() -> dict[str, int]:
        return dict.fromkeys(_STOP, STOP)

    def _learn(self, words: list[str]) -> None:
        stems = self._stemmer.stemWords(words)
        ids = {
            w: int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), "little") >> 1
            for w, s in zip(words, stems)
        }
        with self._lock:
            if len(self._ids) > 2_000_000:
                self._ids = self._stopwords()
            self._ids.update(ids)

    def counts(self, text: str) -> tuple[dict[int, int], int]:
        """Term id -> frequency in the text, and the text's length in terms. The words are
        looked up with `map` over the dict (no Python-level loop per word); stopwords map to
        STOP and are dropped from the counts afterwards."""
        words = _WORD.findall(fold(text))
        while True:
            known = self._ids
            try:
                found = Counter(map(known.__getitem__, words))
                break
            except KeyError:
                self._learn(list({w for w in words if w not in known}))
        found.pop(STOP, None)
        return dict(found), found.total()

    def __call__(self, text: str) -> list[int]:
        return list(self.counts(text)[0])


TOKENIZE = Tokenizer()


@dataclass(frozen=True)
class KeywordMatch:
    pno: int
    chunk: int
    score: float


class Segment:
    """One immutable segment: postings in term-major order, per-document length, paper number
    and chunk number; plus the deleted-documents bitmap that goes with it in the manifest."""

    def __init__(self, folder: Path, deleted: np.ndarray | None = None, mmap: bool = True) -> None:
        self.folder = folder
        self.name = folder.name
        mode: Literal["r"] | None = "r" if mmap else None
        arrays = {name: load_array(folder / f"{name}.npy", mode) for name in _ARRAYS}
        self.terms, self.indptr, self.docs, self.tfs = arrays["terms"], arrays["indptr"], arrays["docs"], arrays["tfs"]
        self.doclen, self.pno, self.chunk = arrays["doclen"], arrays["pno"], arrays["chunk"]
        self.deleted = deleted if deleted is not None else np.zeros(len(self.pno), dtype=bool)

    def __len__(self) -> int:
        return len(self.pno)

    @property
    def live(self) -> int:
        return int(len(self.pno) - self.deleted.sum())

    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray] | None:
        i = int(np.searchsorted(self.terms, term))
        if i >= len(self.terms) or int(self.terms[i]) != term:
            return None
        lo, hi = int(self.indptr[i]), int(self.indptr[i + 1])
        return self.docs[lo:hi], self.tfs[lo:hi]

    @staticmethod
    def write(
        folder: Path,
        term_ids: np.ndarray,
        doc_ids: np.ndarray,
        tfs: np.ndarray,
        doclen: np.ndarray,
        pno: np.ndarray,
        chunk: np.ndarray,
    ) -> None:
        """Write postings given as (term, doc, tf) triples, in any order."""
        order = np.lexsort((doc_ids, term_ids))
        terms_sorted = term_ids[order]
        unique, starts = np.unique(terms_sorted, return_index=True)
        indptr = np.append(starts, len(terms_sorted)).astype(np.int64)
        tmp = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        data: dict[str, np.ndarray] = {
            "terms": unique.astype(np.int64),
            "indptr": indptr,
            "docs": doc_ids[order].astype(np.int32),
            "tfs": tfs[order].astype(np.uint16),
            "doclen": doclen.astype(np.int32),
            "pno": pno.astype(np.int64),
            "chunk": chunk.astype(np.int32),
        }
        for name, array in data.items():
            np.save(tmp / f"{name}.npy", array)
        tmp.rename(folder)


class SegmentBuilder:
    """Collects documents (paper number, chunk number, text) and writes them as a segment."""

    def __init__(self) -> None:
        self.terms: list[np.ndarray] = []
        self.tfs: list[np.ndarray] = []
        self.doclen: list[int] = []
        self.pno: list[int] = []
        self.chunk: list[int] = []
        self._rows: dict[int, list[int]] = {}
        self._dead: set[int] = set()

    def __len__(self) -> int:
        return len(self.pno) - len(self._dead)

    def drop(self, pno: int) -> None:
        """Forget documents of a paper added earlier (it changed again before the write)."""
        self._dead.update(self._rows.pop(pno, []))

    def add(self, pno: int, chunk: int, text: str) -> None:
        self._rows.setdefault(pno, []).append(len(self.pno))
        counts, length = TOKENIZE.counts(text)
        self.terms.append(np.fromiter(counts.keys(), dtype=np.int64, count=len(counts)))
        self.tfs.append(np.fromiter(counts.values(), dtype=np.int64, count=len(counts)))
        self.doclen.append(length)
        self.pno.append(pno)
        self.chunk.append(chunk)

    def write(self, folder: Path) -> None:
        keep = [d for d in range(len(self.pno)) if d not in self._dead]
        renumber = {old: new for new, old in enumerate(keep)}
        empty = np.zeros(0, dtype=np.int64)
        terms = [self.terms[d] for d in keep]
        tfs = [self.tfs[d] for d in keep]
        docs = [np.full(len(self.terms[d]), renumber[d], dtype=np.int32) for d in keep]
        Segment.write(
            folder,
            np.concatenate(terms) if terms else empty,
            np.concatenate(docs) if docs else empty.astype(np.int32),
            np.minimum(np.concatenate(tfs), 65535) if tfs else empty,
            np.asarray([self.doclen[d] for d in keep], dtype=np.int32),
            np.asarray([self.pno[d] for d in keep], dtype=np.int64),
            np.asarray([self.chunk[d] for d in keep], dtype=np.int32),
        )


def merge_segments(segments: list[Segment], folder: Path) -> None:
    """One segment with the live documents of several (deleted ones are dropped here)."""
    terms, docs, tfs, doclen, pno, chunk = [], [], [], [], [], []
    offset = 0
    for seg in segments:
        live = ~np.asarray(seg.deleted)
        new_index = np.cumsum(live) - 1 + offset
        posting_terms = np.repeat(np.asarray(seg.terms), np.diff(np.asarray(seg.indptr)))
        seg_docs = np.asarray(seg.docs)
        keep = live[seg_docs]
        terms.append(posting_terms[keep])
        docs.append(new_index[seg_docs[keep]].astype(np.int32))
        tfs.append(np.asarray(seg.tfs)[keep])
        doclen.append(np.asarray(seg.doclen)[live])
        pno.append(np.asarray(seg.pno)[live])
        chunk.append(np.asarray(seg.chunk)[live])
        offset += int(live.sum())
    Segment.write(
        folder,
        np.concatenate(terms),
        np.concatenate(docs),
        np.concatenate(tfs),
        np.concatenate(doclen),
        np.concatenate(pno),
        np.concatenate(chunk),
    )


def _inside(folder: Path, name: object) -> Path:
    """`folder / name` for a name a manifest gives, which must be an entry of the folder itself: a
    downloaded manifest must not move files in from anywhere else. Raises ValueError."""
    path = folder / str(name)
    if not isinstance(name, str) or "/" in name or name in ("", ".", "..") or not path.exists():
        raise ValueError(f"keyword manifest in {folder} names {name!r}, which is not one of its entries")
    return path


class KeywordIndex:
    """The segments named by `manifest.json` in a folder. Readers reopen when the manifest
    changes; writers (holding the index's write lock) add, delete, merge and rewrite it
    atomically, and never change a file a reader may have open."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.segments: list[Segment] = []
        self._stamp: int | None = None
        self._lock = threading.Lock()
        self.reload()

    # -- manifest ----------------------------------------------------------------------------
    @property
    def manifest(self) -> Path:
        return self.folder / "manifest.json"

    def reload(self) -> KeywordIndex:
        """Open the segments of the current manifest (cheap when it has not changed). A damaged
        index raises ValueError; the caller rebuilds it."""
        try:
            stamp = self.manifest.stat().st_mtime_ns
        except FileNotFoundError:
            stamp = 0
        if stamp == self._stamp:
            return self
        with self._lock:
            if stamp == 0:
                self.segments = []
            else:
                try:
                    entries = json.loads(self.manifest.read_text())["segments"]
                    segments = []
                    for entry in entries:
                        deleted = load_array(self.folder / entry["deleted"]) if entry.get("deleted") else None
                        segments.append(Segment(self.folder / entry["name"], deleted))
                except (OSError, ValueError, KeyError, TypeError) as err:
                    raise ValueError(f"keyword index in {self.folder} is damaged: {err}") from err
                self.segments = segments
            self._stamp = stamp
        return self

    def _save(self, segments: list[Segment], deleted_files: dict[str, str]) -> None:
        entries = [{"name": s.name, "deleted": deleted_files.get(s.name)} for s in segments]
        tmp = self.folder / "manifest.json.tmp"
        tmp.write_text(json.dumps({"segments": entries}))
        os.replace(tmp, self.manifest)
        self._stamp = None
        self.reload()
        self._clean(entries)

    def _clean(self, entries: list[dict[str, str | None]]) -> None:
        """Delete files no manifest names (a reader holding one open keeps it: POSIX semantics)."""
        keep = {e["name"] for e in entries} | {str(e["deleted"]).split("/")[0] for e in entries if e["deleted"]}
        keep_files = {str(e["deleted"]) for e in entries if e["deleted"]}
        for child in self.folder.iterdir():
            if child.name in ("manifest.json",):
                continue
            if child.is_dir() and child.name not in keep:
                shutil.rmtree(child, ignore_errors=True)
            elif child.is_file() and child.name.startswith("del-") and f"{child.name}" not in keep_files:
                child.unlink(missing_ok=True)

    def _deleted_files(self) -> dict[str, str]:
        try:
            entries = json.loads(self.manifest.read_text())["segments"]
        except (OSError, ValueError, KeyError):
            return {}
        return {e["name"]: e["deleted"] for e in entries if e.get("deleted")}

    # -- writing (under the index's write lock) --------------------------------------------
    def _new_name(self) -> str:
        existing = [int(p.name[1:]) for p in self.folder.glob("s*") if p.name[1:].isdigit()]
        return f"s{max(existing, default=0) + 1:06d}"

    def update(self, removed_pnos: np.ndarray, builders: list[SegmentBuilder], written: Sequence[str] = ()) -> None:
        """Mark the documents of `removed_pnos` deleted, add the built segments (and segments
        already `written` into the folder, by a SegmentWorker), merge if there are too many, and
        publish it all in one manifest write."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.reload()
        deleted_files = self._deleted_files()
        segments = list(self.segments)
        if len(removed_pnos):
            for seg in segments:
                hit = np.isin(np.asarray(seg.pno), removed_pnos) & ~seg.deleted
                if hit.any():
                    name = f"del-{seg.name}-{self._new_name()}.npy"
                    deleted = seg.deleted | hit
                    np.save(self.folder / name, deleted)
                    seg.deleted = deleted
                    deleted_files[seg.name] = name
        for builder in builders:
            if len(builder):
                folder = self.folder / self._new_name()
                builder.write(folder)
                segments.append(Segment(folder))
        segments += [Segment(self.folder / name) for name in written]
        segments = self._merge_policy(segments)
        self._save(
            segments, {s.name: deleted_files[s.name] for s in segments if s.name in deleted_files and s.deleted.any()}
        )

    def _merge_policy(self, segments: list[Segment], force: bool = False) -> list[Segment]:
        """Tiered merging: while there are more than MAX_SEGMENTS, merge the smallest four; a
        segment more than a third deleted is rewritten. `force`: everything into one."""
        segments = [s for s in segments if s.live > 0]
        if force and (len(segments) > 1 or any(s.deleted.any() for s in segments)):
            return [self._merge(segments)] if segments else []
        rewritten = []
        for seg in segments:
            rewritten.append(self._merge([seg]) if len(seg) and seg.deleted.sum() > len(seg) / 3 else seg)
        segments = rewritten
        while len(segments) > MAX_SEGMENTS:
            segments.sort(key=len)
            segments = [self._merge(segments[:4]), *segments[4:]]
        return segments

    def _merge(self, segments: list[Segment]) -> Segment:
        folder = self.folder / self._new_name()
        merge_segments(segments, folder)
        log.info("merged %d keyword segments into %s", len(segments), folder.name)
        return Segment(folder)

    def compact(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.reload()
        self._save(self._merge_policy(list(self.segments), force=True), {})

    def files(self) -> list[str]:
        """The files of the current manifest, relative to the folder, manifest first (what a
        snapshot copies). Under the write lock none of them changes."""
        entries = json.loads(self.manifest.read_text())["segments"] if self.manifest.exists() else []
        out = ["manifest.json"] if entries else []
        for entry in entries:
            out += sorted(f"{entry['name']}/{f.name}" for f in (self.folder / entry["name"]).iterdir() if f.is_file())
            if entry.get("deleted"):
                out.append(str(entry["deleted"]))
        return out

    def adopt(self, source: Path) -> None:
        """Replace this index by the one in `source` (a downloaded snapshot, on the same disk):
        its segments move in under new names, then one manifest write publishes them, so a reader
        sees the old index or the new one, never a mix."""
        self.folder.mkdir(parents=True, exist_ok=True)
        manifest = source / "manifest.json"
        entries = json.loads(manifest.read_text())["segments"] if manifest.exists() else []
        segments: list[Segment] = []
        deleted_files: dict[str, str] = {}
        for entry in entries:
            name = self._new_name()
            os.replace(_inside(source, entry["name"]), self.folder / name)
            deleted = None
            if entry.get("deleted"):
                deleted_files[name] = f"del-{name}-adopted.npy"
                os.replace(_inside(source, entry["deleted"]), self.folder / deleted_files[name])
                deleted = load_array(self.folder / deleted_files[name])
            segments.append(Segment(self.folder / name, deleted))
        self._save(segments, deleted_files)

    def clear(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._stamp = None
        self.reload()

    # -- searching --------------------------------------------------------------------------
    def __len__(self) -> int:
        return sum(s.live for s in self.segments)

    def frequencies(self, terms: Sequence[int]) -> tuple[list[int], int]:
        """How many indexed texts hold each term (deleted ones included: an estimate, as BM25's
        own), and how many texts there are: the inverse document frequencies that weigh a
        question's words by how rare they are."""
        segments = self.reload().segments
        df = [
            sum(len(found[0]) for segment in segments if (found := segment.postings(term)) is not None)
            for term in terms
        ]
        return df, sum(len(s) for s in segments)

    def search(
        self, query: str, n: int, allowed: np.ndarray | None = None, required: Sequence[str] = ()
    ) -> list[KeywordMatch]:
        """The n best (paper number, chunk) documents for the query with a positive score, best
        first; `allowed` is a mask over paper numbers; with `required` words, only documents that
        contain every one of them (Lucene's "must" clause: "LibriSpeech" in "Which paper trains on
        the LibriSpeech corpus?", which plain BM25 lets "corpus" outweigh)."""
        segments = self.reload().segments
        terms = list(dict.fromkeys(TOKENIZE(query)))
        must = list(dict.fromkeys(t for word in required for t in TOKENIZE(word)))
        if not terms or not segments or (required and not must):
            return []
        terms += [t for t in must if t not in terms]
        total_docs = sum(len(s) for s in segments)
        avgdl = max(sum(float(np.asarray(s.doclen).sum()) for s in segments) / max(total_docs, 1), 1.0)
        postings = [[s.postings(t) for t in terms] for s in segments]
        df = [sum(len(got[0]) for p in postings if (got := p[i]) is not None) for i in range(len(terms))]
        idf = [float(np.log(1 + (total_docs - d + 0.5) / (d + 0.5))) for d in df]
        found: list[KeywordMatch] = []
        for seg, seg_postings in zip(segments, postings):
            if all(p is None for p in seg_postings):
                continue
            doclen = np.asarray(seg.doclen)
            if must:
                # score only the documents holding every required term: binary search in the
                # (doc-sorted) postings instead of a pass over each common term's postings
                candidates = np.asarray(seg.docs[:0])
                for i, term in enumerate(must):
                    posting = seg_postings[terms.index(term)]
                    if posting is None:
                        candidates = candidates[:0]
                        break
                    docs = np.asarray(posting[0])
                    candidates = docs if i == 0 else np.intersect1d(candidates, docs, assume_unique=True)
                if not len(candidates):
                    continue
                scores = np.zeros(len(seg), dtype=np.float32)
                norm_len = K1 * (1 - B + B * doclen[candidates] / avgdl)
                for weight, posting in zip(idf, seg_postings):
                    if posting is None:
                        continue
                    docs = np.asarray(posting[0])
                    at = np.minimum(np.searchsorted(docs, candidates), len(docs) - 1)
                    tf = np.where(docs[at] == candidates, np.asarray(posting[1])[at], 0).astype(np.float32)
                    scores[candidates] += weight * tf * (K1 + 1) / (tf + norm_len)
            else:
                scores = np.zeros(len(seg), dtype=np.float32)
                for weight, posting in zip(idf, seg_postings):
                    if posting is None:
                        continue
                    docs, tfs = np.asarray(posting[0]), np.asarray(posting[1], dtype=np.float32)
                    norm = tfs + K1 * (1 - B + B * doclen[docs] / avgdl)
                    scores[docs] += weight * tfs * (K1 + 1) / norm
                candidates = np.flatnonzero(scores)
            candidates = candidates[~seg.deleted[candidates]]
            if allowed is not None and len(candidates):
                pnos = np.asarray(seg.pno)[candidates]
                inside = pnos < len(allowed)
                candidates = candidates[inside][allowed[pnos[inside]]]
            if len(candidates) > n:
                top = np.argpartition(-scores[candidates], n - 1)[:n]
                candidates = candidates[top]
            pno, chunk = np.asarray(seg.pno), np.asarray(seg.chunk)
            found += [KeywordMatch(int(pno[d]), int(chunk[d]), float(scores[d])) for d in candidates]
        found.sort(key=lambda m: -m.score)
        return found[:n]


def _build_segments(conn: Connection, folder: str, prefix: str) -> None:
    """The SegmentWorker's process: tokenise the documents it is sent into segments of up to
    FLUSH_DOCS documents, written into `folder`; answer with their names at the end."""
    builder = SegmentBuilder()
    names: list[str] = []
    while True:
        docs = conn.recv()
        if docs is not None:
            for pno, chunk, text in docs:
                builder.add(pno, chunk, text)
        if len(builder) and (docs is None or len(builder) >= FLUSH_DOCS):
            names.append(f"{prefix}{len(names):04d}")
            builder.write(Path(folder) / names[-1])
            builder = SegmentBuilder()
        if docs is None:
            conn.send(names)
            return


class SegmentWorker:
    """Builds keyword segments in a second process while this one does other work (a machine
    applying a long log: the catalogue here, tokenising there, on the other core). The segments
    it writes are invisible until `KeywordIndex.update(..., written=names)` publishes them."""

    def __init__(self, folder: Path) -> None:
        import multiprocessing
        import time

        folder.mkdir(parents=True, exist_ok=True)
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        prefix = f"w{os.getpid()}-{time.time_ns() % 10**9}-"
        self._proc = context.Process(target=_build_segments, args=(child, str(folder), prefix), daemon=True)
        self._proc.start()
        child.close()

    def add(self, docs: list[tuple[int, int, str]]) -> None:
        """Documents (paper number, chunk number, text) to index; blocks while the worker is
        behind (the pipe is the back-pressure)."""
        self._conn.send(docs)

    def finish(self) -> list[str]:
        """The names of the segments written, once all documents are in them."""
        self._conn.send(None)
        try:
            names: list[str] = self._conn.recv()
        except EOFError as err:
            raise ValueError(f"the keyword worker ended unexpectedly (exit code {self._proc.exitcode})") from err
        self._proc.join(timeout=60)
        return names

    def close(self) -> None:
        if self._proc.is_alive():
            self._proc.kill()
        self._conn.close()
