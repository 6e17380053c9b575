"""The change log: how writers tell every machine what the collection holds.

Each write batch becomes one segment, stored as one record of the `log_<fingerprint>` collection in
Chroma (a compressed JSON blob in its metadata, beside a one-number dummy vector). A segment lists
copy changes (a source's record of a paper, or its removal) and vector changes (the chunks of a
paper's text version are in Chroma, or were deleted). Any machine rebuilds its catalogue and
keyword index by applying the segments it has not seen yet (`Catalog.apply`).

Why a log and not a papers collection: one record per batch instead of one (with text) per paper
halves what Chroma must store and index per paper; the catalogue on each machine updates in
place from small segments; and concurrent writers never overwrite each other's work: every entry
is its own last-writer-wins register, so two writers' segments apply in either order to the same
result. Segment ids sort by time: `seg-<time ns>-<writer>-<n>`.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
import zlib
from dataclasses import dataclass, field
from typing import Any

Versioned = tuple[int, str, int]  # (time ns, writer, position in its segment): last writer wins

# A copy entry of the log: version, copy key, paper id, source, digest, the copy as read (None: removed).
CopyEntry = tuple[Versioned, str, str, str, str, dict[str, Any] | None]

VectorEntry = tuple[Versioned, str, str, int]  # version, paper id, text version, chunks (0: deleted)


@dataclass
class CopyChange:
    """A source's copy of a paper (`data`, the copy as read) or its removal (`data` None)."""

    skey: str
    pid: str
    source: str
    digest: str
    data: dict[str, Any] | None


@dataclass
class VectorChange:
    """The chunks of one text version of a paper are in Chroma (`n` > 0) or were deleted (0)."""

    pid: str
    version: str
    n: int


@dataclass
class PaperHint:
    """What the writer computed for a paper from a set of copies (their `copies` digest): its
    label and its text version and chunk count. A reader holding the same copies uses them
    instead of computing them again, which is most of the cost of applying the log."""

    pid: str
    copies: str
    label: str
    version: str
    n: int


@dataclass
class Segment:
    id: str
    ts: int
    writer: str
    copies: list[CopyChange] = field(default_factory=list)
    vectors: list[VectorChange] = field(default_factory=list)
    hints: list[PaperHint] = field(default_factory=list)

    @classmethod
    def new(cls, writer: str) -> Segment:
        ts = time.time_ns()
        return cls(f"seg-{ts:020d}-{writer}-{uuid.uuid4().hex[:6]}", ts, writer)

    def __len__(self) -> int:
        return len(self.copies) + len(self.vectors)

    def encode(self) -> str:
        body = {
            "copies": [[c.skey, c.pid, c.source, c.digest, c.data] for c in self.copies],
            "vectors": [[v.pid, v.version, v.n] for v in self.vectors],
            "hints": [[h.pid, h.copies, h.label, h.version, h.n] for h in self.hints],
        }
        raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        return base64.b64encode(zlib.compress(raw, 6)).decode("ascii")

    @classmethod
    def decode(cls, segment_id: str, ts: int, writer: str, blob: str) -> Segment:
        body = json.loads(zlib.decompress(base64.b64decode(blob)).decode("utf-8", "surrogatepass"))
        return cls(
            segment_id,
            ts,
            writer,
            [CopyChange(*row) for row in body["copies"]],
            [VectorChange(*row) for row in body["vectors"]],
            [PaperHint(*row) for row in body.get("hints", [])],
        )

    def hint_map(self) -> dict[str, tuple[str, str, str, int]]:
        return {h.pid: (h.copies, h.label, h.version, h.n) for h in self.hints}

    def versioned(self) -> tuple[list[CopyEntry], list[VectorEntry]]:
        """Entries with their versions (time, writer, position), as `Catalog.apply` takes them."""
        copies: list[CopyEntry] = [
            ((self.ts, self.writer, i), c.skey, c.pid, c.source, c.digest, c.data) for i, c in enumerate(self.copies)
        ]
        base = len(self.copies)
        vectors = [((self.ts, self.writer, base + i), v.pid, v.version, v.n) for i, v in enumerate(self.vectors)]
        return copies, vectors
