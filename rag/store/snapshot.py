"""Snapshots of a machine's derived cache (catalogue and keyword index), kept in Chroma.

Why: every machine derives its catalogue and keyword index from the change log, and at a million
papers that derivation is what a new machine waits for (563 s against a server at 1M, most of it
SQLite inserts and Python row derivation that the second core cannot share). A machine that has
the cache already publishes a copy; a new machine downloads it and applies only the segments
written after it. The log stays the truth: applying a segment is idempotent and commutative, and
the snapshot's catalogue lists the segments it holds, so whatever other writers added meanwhile is
applied as usual, in any order.

Layout (`snap_<fp>` in Chroma): the files (a consistent copy of `catalog.sqlite` made with
SQLite's backup API, and the files the keyword manifest names) cut into parts of PART_BYTES, each
zlib-compressed (level 1: 66 MB/s and a third of the size on a 1M catalogue) and base64-encoded in
one record's metadata; then one manifest record naming every part with its length and CRC32. The
manifest is written last, so a snapshot without one is incomplete and never read. A new snapshot
deletes the older ones; a snapshot whose parts vanish mid-download (deleted by a newer one) or
fail their check is abandoned, and the machine derives from the log as before.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import shutil
import time
import uuid
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag.store.catalog import SCHEMA_VERSION, Catalog
from rag.store.chroma import ChromaStore
from rag.store.keyword import KeywordIndex

log = logging.getLogger(__name__)

FORMAT = 1
PART_BYTES = 4 << 20  # raw bytes per part: about 1.9 MB stored, like a log segment
PAGE_PARTS = 4  # parts per Chroma request: at most 22 MB of base64 (the server refuses about 42 MB)
ORPHAN_GRACE_NS = 3600 * 10**9  # parts of a snapshot still being written elsewhere are kept this long
_NAME = re.compile(r"(catalog\.sqlite|keyword/[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)?)")
_ID = re.compile(r"^snap-(\d{20})-[0-9a-f]{6}")


class SnapshotError(Exception):
    """A snapshot that cannot be used (incomplete, damaged, of another version)."""


@dataclass
class Manifest:
    id: str
    segments: int  # log segments the snapshot's catalogue holds
    files: list[dict[str, Any]]  # {"name", "size", "parts": [[part id, length, crc32], ...]}

    @property
    def size(self) -> int:
        return sum(int(f["size"]) for f in self.files)


def newest(store: ChromaStore) -> Manifest | None:
    """The newest complete snapshot this code can read, of the log open now."""
    for sid, text in reversed(store.snapshot_manifests()):
        try:
            body = json.loads(text)
            if body["format"] == FORMAT and body["schema"] == SCHEMA_VERSION and body["log"] == store.log_id:
                return Manifest(sid, int(body["segments"]), [dict(f) for f in body["files"]])
        except (ValueError, KeyError, TypeError) as err:
            log.warning("snapshot %s has an unreadable manifest (%s): skipped", sid, err)
    return None


def publish(store: ChromaStore, catalog: Catalog, keyword: KeywordIndex, scratch: Path) -> dict[str, Any]:
    """Publish this machine's cache. Call with the write lock held, after the catalogue is committed
    and the keyword index has caught up with it, so the two match."""
    started = time.perf_counter()
    snapshot = f"snap-{time.time_ns():020d}-{uuid.uuid4().hex[:6]}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    try:
        copy = scratch / "catalog.sqlite"
        catalog.copy_to(copy)
        files = [("catalog.sqlite", copy)] + [(f"keyword/{rel}", keyword.folder / rel) for rel in keyword.files()]
        entries: list[dict[str, Any]] = []
        stored = 0
        with ThreadPoolExecutor(2) as pool:  # zlib lets go of the GIL: both cores compress
            for number, (name, path) in enumerate(files):
                parts: list[list[Any]] = []
                for blocks in _blocks(path):
                    packed = list(pool.map(_pack, blocks))
                    records = []
                    for raw, (blob, crc) in zip(blocks, packed):
                        part = f"{snapshot}-f{number:05d}-{len(parts):07d}"
                        parts.append([part, len(raw), crc])
                        records.append((part, blob))
                        stored += len(blob)
                    store.write_snapshot_parts(snapshot, records)
                entries.append({"name": name, "size": sum(p[1] for p in parts), "parts": parts})
        segments = len(catalog.applied_segments())
        body = {"format": FORMAT, "schema": SCHEMA_VERSION, "log": store.log_id, "segments": segments, "files": entries}
        store.write_snapshot_manifest(snapshot, json.dumps(body))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    deleted = _delete_older(store, snapshot)
    return {
        "snapshot": snapshot,
        "segments": segments,
        "files": len(entries),
        "bytes": sum(e["size"] for e in entries),
        "stored_bytes": stored,
        "older_snapshots_deleted": deleted,
        "seconds": round(time.perf_counter() - started, 1),
    }


def restore(store: ChromaStore, catalog: Catalog, keyword: KeywordIndex, scratch: Path) -> dict[str, Any] | None:
    """Make this machine's (empty) cache the newest snapshot; None when there is none. Raises
    SnapshotError, StoreError or OSError when it cannot be used: the cache is then left empty, or,
    if only the keyword segments failed, with the restored catalogue marked for keyword indexing
    again. Call with the write lock held."""
    manifest = newest(store)
    if manifest is None:
        return None
    for entry in manifest.files:
        name = str(entry.get("name"))
        if not _NAME.fullmatch(name):
            raise SnapshotError(f"snapshot {manifest.id} names a file {name!r} outside the cache")
        parts = entry.get("parts")
        if not isinstance(parts, list) or not all(isinstance(p, list) and len(p) == 3 for p in parts):
            raise SnapshotError(f"snapshot {manifest.id} lists the parts of {name} in an unknown form")
    started = time.perf_counter()
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    try:
        for entry in manifest.files:
            _download(store, manifest.id, entry, scratch / str(entry["name"]))
        downloaded = time.perf_counter() - started
        catalog.replace_with(scratch / "catalog.sqlite")
        try:
            keyword.adopt(scratch / "keyword")
        except BaseException:
            keyword.clear()  # the catalogue says its papers are indexed: index them again
            catalog.reset_indexed()
            raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "snapshot": manifest.id,
        "segments": manifest.segments,
        "bytes": manifest.size,
        "download_seconds": round(downloaded, 1),
        "seconds": round(time.perf_counter() - started, 1),
    }


def _download(store: ChromaStore, snapshot: str, entry: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = entry["parts"]
    with path.open("wb") as out, ThreadPoolExecutor(2) as pool:
        for start in range(0, len(parts), PAGE_PARTS):
            page = parts[start : start + PAGE_PARTS]
            blobs = store.read_snapshot_parts([p[0] for p in page])
            if any(b is None for b in blobs):
                raise SnapshotError(f"snapshot {snapshot} lost parts of {entry['name']} (a newer one replaced it)")
            for (part, length, crc), raw in zip(page, pool.map(_unpack, blobs)):
                if len(raw) != length or zlib.crc32(raw) != crc:
                    raise SnapshotError(f"snapshot {snapshot}: part {part} of {entry['name']} is damaged")
                out.write(raw)


def _delete_older(store: ChromaStore, snapshot: str) -> int:
    """Delete every snapshot older than this one, and parts of unfinished ones once they are old
    enough that no writer is still at them. Returns how many snapshots went."""
    cutoff = time.time_ns() - ORPHAN_GRACE_NS
    complete = {sid for sid, _ in store.snapshot_manifests()}
    manifests: list[str] = []
    parts: list[str] = []
    for rid in store.snapshot_record_ids():
        found = _ID.match(rid)
        if found is None or found.group(0) == snapshot:
            continue
        owner = found.group(0)
        if (owner < snapshot and owner in complete) or int(found.group(1)) < cutoff:
            (manifests if rid == owner else parts).append(rid)
    store.delete_snapshot_records(manifests)  # first, so no reader starts on a snapshot losing its parts
    store.delete_snapshot_records(parts)
    return len(manifests)


def _blocks(path: Path) -> Iterator[list[bytes]]:
    """The file in pages of up to PAGE_PARTS blocks of PART_BYTES (an empty file: one empty block)."""
    with path.open("rb") as f:
        page: list[bytes] = []
        while block := f.read(PART_BYTES):
            page.append(block)
            if len(page) == PAGE_PARTS:
                yield page
                page = []
        if page or f.tell() == 0:
            yield page or [b""]


def _pack(raw: bytes) -> tuple[str, int]:
    return base64.b64encode(zlib.compress(raw, 1)).decode("ascii"), zlib.crc32(raw)


def _unpack(blob: str) -> bytes:
    try:
        return zlib.decompress(base64.b64decode(blob))
    except (ValueError, zlib.error) as err:
        raise SnapshotError(f"a snapshot part does not decode ({err})") from err
