"""The ingest plan: which paper each copy of a batch belongs to, decided without writing anything.

Identity (see `rag.identity`): a copy with its own id belongs to the paper of that id; two
different own ids are never merged. An id-less copy joins a listed paper only on strong evidence
(the whole abstract equal to exactly one listed paper's, or it introduces the coined name that
exactly one title-only listed paper's title opens with); otherwise it is a paper of its own, with
an id derived from its content. Every merge is reported, with the records and the reason.

This module only decides; `rag.ingest` reads the catalogue, calls `plan_batch` and commits the
plan (Chroma, the log, the catalogue). Kept apart so the rules can be tested with plain values:
what the catalogue already holds is given as `Known` (read before planning) and, for the id-less
rules whose lookups depend on keys found mid-batch, a read-only `CatalogReads` (the catalogue
itself in production, a dict in a test). Nothing here writes, and the batch's papers are not
changed: staged copies are new `Paper` values carrying their target id.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rag.catalog import CopyRow, PaperState
from rag.identity import abstract_key, coined_keys, copy_digest, copy_key, head_labels, title_head, title_key
from rag.text import introduced_name
from rag.types import Paper

# An id that only numbers records (a CSV row number): shared across files by chance, not by identity.
WEAK_ID = re.compile(r"\d{1,9}")
SAME_ABSTRACT = "the same abstract (whole text, normalised)"
SAME_RECORD_AGAIN = "the same record (same id) again in one file: the later one is kept"


@dataclass
class Merge:
    """Records that became one paper, and why."""

    into: str
    records: list[str]
    reason: str

    def public(self) -> dict[str, Any]:
        return {"into": self.into, "records": self.records, "reason": self.reason}

    def __str__(self) -> str:
        return f"{', '.join(self.records)} -> {self.into}: {self.reason}"


@dataclass(frozen=True)
class Staged:
    """A decided change to one copy: it now belongs to `pid` (with `paper` as its content), or it
    is removed (`paper` None). `prev_pid` is the paper it belonged to before, if any."""

    skey: str
    pid: str
    paper: Paper | None
    digest: str
    source: str
    prev_pid: str | None


class CatalogReads(Protocol):
    """The catalogue lookups the id-less rules make while planning. Their keys (an abstract key,
    a coined name, a paper a copy belonged to) are only known once a copy is looked at, so they
    are asked, not read in advance; `rag.catalog.Catalog` is one, a test's dict is another."""

    def with_abstract_key(self, key: str) -> list[PaperState]:
        """Catalogued papers whose whole normalised abstract has this key."""
        ...

    def title_only_with_head(self, head: str) -> list[str]:
        """Own-id papers without abstract whose title opens with `head`."""
        ...

    def idless_with_label(self, label: str) -> list[str]:
        """Id-less, untitled papers whose label (the name their abstract introduces) is `label`."""
        ...

    def copies_of(self, paper_ids: Sequence[str]) -> dict[str, list[tuple[str, str, Paper]]]:
        """Live copies (copy key, digest, copy) of each paper."""
        ...


@dataclass(frozen=True)
class Known:
    """What the catalogue holds about a batch, read before planning.

    `copies`: the catalogue's rows of the batch's copy keys (absent: never seen). `listed`: title
    key and source files of the catalogued papers among `ids_to_list(batch, copies)`; ids outside
    it are ignored (a copy already live was reported when first read). `has_idless`: whether any
    id-less paper is catalogued (if none, and the batch has none, nothing can be absorbed).
    `seen`: copy keys already read in this run, by source file (a key read again is a duplicate
    record, not an unchanged copy)."""

    copies: Mapping[str, CopyRow] = field(default_factory=dict)
    listed: Mapping[str, tuple[str, Sequence[str]]] = field(default_factory=dict)
    has_idless: bool = False
    seen: Mapping[str, AbstractSet[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class BatchPlan:
    """The decision for one batch. `staged`: copies to write, in order, each with its target
    paper id (a later copy of the same key replaces the earlier one in place). `unchanged`: papers
    one of whose copies was read again saying what the catalogue holds (whether their vectors
    really exist is checked at commit). `merges`: what to report. `merged_away`: paper ids now
    part of another paper, so that their disappearance is not reported as a removal."""

    staged: tuple[Staged, ...] = ()
    unchanged: frozenset[str] = frozenset()
    merges: tuple[Merge, ...] = ()
    merged_away: frozenset[str] = frozenset()

    def by_key(self) -> dict[str, Staged]:
        return {s.skey: s for s in self.staged}


def ids_to_list(batch: Sequence[Paper], copies: Mapping[str, CopyRow]) -> list[str]:
    """Own ids whose title and sources the plan needs (`Known.listed`): those of copies new to
    the catalogue (or removed from it); a live copy's paper was decided when it was first read."""
    out: list[str] = []
    for paper in batch:
        if paper.own_id:
            row = copies.get(copy_key(paper))
            if not (row is not None and row.live):
                out.append(paper.id)
    return out


def plan_batch(batch: Sequence[Paper], known: Known, reads: CatalogReads) -> BatchPlan:
    """Decide, for every copy of `batch`, the paper it belongs to and whether anything changed."""
    return _Planner(known, reads).plan(batch)


class _Planner:
    """One batch's decisions, copy after copy: a later copy sees what the earlier ones staged
    (a second source's copy of one id, a listed paper an id-less copy may join)."""

    def __init__(self, known: Known, reads: CatalogReads) -> None:
        self.known = known
        self.reads = reads
        self.staged: dict[str, Staged] = {}
        self.unchanged: set[str] = set()
        self.merges: list[Merge] = []
        self.merged_away: set[str] = set()
        self.own_staged: dict[str, list[Paper]] = {}  # copies with own ids staged in this batch, by paper
        # Own-id papers of the whole batch by abstract key and by title head: a listed paper may
        # absorb an id-less one only if no other listed paper, catalogued or later in this batch,
        # has the same claim to it.
        self.batch_abstracts: dict[str, set[str]] = {}
        self.batch_heads: dict[str, set[str]] = {}

    def plan(self, batch: Sequence[Paper]) -> BatchPlan:
        known = self.known
        skeys = [copy_key(p) for p in batch]
        fresh = set(ids_to_list(batch, known.copies))
        listed = {pid: known.listed[pid] for pid in fresh if pid in known.listed}
        idless = known.has_idless or any(not p.own_id for p in batch)
        if idless:  # only then can a listed paper absorb one, and need to know its rivals
            for paper in batch:
                head = "" if paper.abstract else title_head(paper.title)
                if paper.own_id and paper.abstract:
                    self.batch_abstracts.setdefault(abstract_key(paper.abstract), set()).add(paper.id)
                elif paper.own_id and head:
                    self.batch_heads.setdefault(head, set()).add(paper.id)
        read_here: set[str] = set()
        for paper, skey in zip(batch, skeys):
            again = skey in read_here or skey in known.seen.get(paper.source, ())
            read_here.add(skey)
            digest = copy_digest(paper)
            prev = self.staged.get(skey)
            old = known.copies.get(skey)
            prev_pid = prev.pid if prev else (old.pid if old and old.live else None)
            if paper.own_id:
                pid = self._target_own(paper, old, listed, self.own_staged.get(paper.id, []))
            else:
                pid = self._target_idless(paper, skey, prev_pid)
            if again:
                self.merges.append(Merge(pid, [f"{paper.source}:{paper.position}"], SAME_RECORD_AGAIN))
            elif old is not None and old.live and old.pid == pid and old.digest == digest:
                self.unchanged.add(pid)
                continue
            copy = dataclasses.replace(paper, id=pid)
            self.staged[skey] = Staged(skey, pid, copy, digest, copy.source, prev_pid)
            if copy.own_id:
                self.own_staged.setdefault(pid, []).append(copy)
            if idless and copy.own_id and (old is None or not old.live or old.digest != digest):
                self._absorb(copy)
        return BatchPlan(
            tuple(self.staged.values()), frozenset(self.unchanged), tuple(self.merges), frozenset(self.merged_away)
        )

    def _target_own(
        self,
        paper: Paper,
        old: CopyRow | None,
        listed: Mapping[str, tuple[str, Sequence[str]]],
        same_id: list[Paper],
    ) -> str:
        """The paper a copy with its own id belongs to: the paper of that id. Joining another
        source's copy of that id is reported. A weak id (a bare number, such as a CSV row number)
        that names a different title in another source is no evidence of one paper: the copy
        keeps an identity of its own, `<id>@<file name>`, and the summary says why."""
        if old is not None and old.live and old.pid.startswith(paper.id + "@"):
            return old.pid  # decided so when this copy was first read
        others = [p for p in same_id if p.source != paper.source]
        title, sources = listed.get(paper.id, ("", []))
        other_sources = sorted({*(s for s in sources if s != paper.source), *(p.source for p in others)})
        if not other_sources:
            return paper.id
        other_title = title or next((title_key(p.title) for p in others if p.title), "")
        mine = title_key(paper.title)
        names = ", ".join(Path(s).name for s in other_sources[:3])
        where = f"{paper.source}:{paper.position}"
        if WEAK_ID.fullmatch(paper.id) and mine and other_title and mine != other_title:
            qualified = f"{paper.id}@{Path(paper.source).name}"
            self.merges.append(
                Merge(
                    qualified,
                    [where],
                    f"not merged: the bare id '{paper.id}' names another title in {names}; kept apart as '{qualified}'",
                )
            )
            return qualified
        self.merges.append(Merge(paper.id, [where], f"the same id '{paper.id}' as in {names}"))
        return paper.id

    def _target_idless(self, paper: Paper, skey: str, prev_pid: str | None) -> str:
        """The paper an id-less copy belongs to (see the module docstring)."""
        key = abstract_key(paper.abstract)
        if key:
            listed = {s.pid for s in self.reads.with_abstract_key(key) if s.own_id}
            listed |= {
                s.pid
                for s in self.staged.values()
                if s.paper and s.paper.own_id and abstract_key(s.paper.abstract) == key
            }
            if len(listed) == 1:
                target = next(iter(listed))
                self._note_merge(target, paper, SAME_ABSTRACT, prev_pid)
                return target
            if len(listed) > 1:
                self.merges.append(
                    Merge(
                        paper.id,
                        [f"{paper.source}:{paper.position}"],
                        f"not merged: the abstract equals {len(listed)} listed papers "
                        f"({', '.join(sorted(listed)[:4])})",
                    )
                )
        if not paper.title and paper.abstract:
            coined = introduced_name(paper.abstract)
            keys = coined_keys(coined)
            if keys:
                heads = {pid for key in keys for pid in self.reads.title_only_with_head(key)}
                heads |= {
                    s.pid
                    for s in self.staged.values()
                    if s.paper and s.paper.own_id and not s.paper.abstract and title_head(s.paper.title) in keys
                }
                if len(heads) == 1:
                    target = next(iter(heads))
                    self._note_merge(
                        target,
                        paper,
                        f"its coined name '{coined}' opens the title of exactly one title-only listed paper",
                        prev_pid,
                    )
                    return target
        if prev_pid and prev_pid.startswith("a-") and prev_pid != paper.id:
            copies = self.reads.copies_of([prev_pid]).get(prev_pid, [])
            if [c[0] for c in copies] == [skey]:
                return prev_pid  # the same record, edited in place: it keeps its id
        return paper.id

    def _note_merge(self, target: str, paper: Paper, reason: str, prev_pid: str | None) -> None:
        if prev_pid != target:
            self.merged_away.update(p for p in (paper.id, prev_pid) if p)
            self.merges.append(Merge(target, [f"{paper.source}:{paper.position} ({paper.id})"], reason))

    def _absorb(self, listed: Paper) -> None:
        """A new or changed listed paper takes in id-less papers that are the same paper."""
        candidates: list[tuple[str, str]] = []
        key = abstract_key(listed.abstract)
        if key:
            same = self.reads.with_abstract_key(key)
            rivals = {s.pid for s in same if s.own_id} | self.batch_abstracts.get(key, set())
            if not rivals - {listed.id}:
                candidates += [(s.pid, SAME_ABSTRACT) for s in same if not s.own_id]
        head = title_head(listed.title)
        if head and not listed.abstract:
            others = {*self.reads.title_only_with_head(head), *self.batch_heads.get(head, set())} - {listed.id}
            labelled = sorted(
                {pid for label in head_labels(listed.title) for pid in self.reads.idless_with_label(label)}
            )
            if not others and len(labelled) == 1:
                candidates.append(
                    (labelled[0], f"the title opens with '{head}', the coined name its abstract introduces")
                )
        if not candidates:
            return
        moving = self.reads.copies_of([pid for pid, _ in candidates])
        for pid, reason in candidates:
            copies = moving.get(pid, [])
            self.merged_away.add(pid)
            for skey, _, paper in copies:
                if skey in self.staged:
                    continue
                copy = dataclasses.replace(paper, id=listed.id)
                self.staged[skey] = Staged(skey, listed.id, copy, copy_digest(copy), copy.source, pid)
            if copies:
                self.merges.append(Merge(listed.id, [pid], reason))
