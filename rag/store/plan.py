"""The ingest plan: which paper each copy of a batch belongs to, decided without writing anything.

Identity (see `rag.papers.identity`): a copy with its own id belongs to the paper of that id; two
different own ids are never merged. An id-less copy joins a listed paper only on strong evidence
(the whole abstract equal to exactly one listed paper's, or it introduces the coined name that
exactly one title-only listed paper's title opens with, and no other id-less abstract introduces
it); otherwise it is a paper of its own, with an id derived from its content. Every merge is
reported, with the records and the reason.

Where an id-less copy belongs is a function of what the collection holds, never of the order it
came in: a listed paper's claims (`rag.papers.merge.listed_claims`) come from its own copies alone, and
`resolve` decides from those claims and from the id-less abstracts that introduce a name. A batch
decides its id-less copies against the catalogue and the batch's own listed copies (`plan_batch`);
once the batch is in the catalogue, `reconcile` decides again every id-less copy whose keys the
batch touched (a listed paper that came after its pasted abstract, a second paper claiming the
same abstract, a listed paper that was removed) and moves the ones that belong elsewhere. Moving
an id-less copy changes no claim, so one round reaches the state any other order reaches.

This module only decides; `rag.store.ingest` reads the catalogue, calls `plan_batch` and `reconcile`,
and commits the plans (Chroma, the log, the catalogue). Kept apart so the rules can be tested
with plain values: what the catalogue already holds is given as `Known` (read before planning)
and a read-only `CatalogReads` (the catalogue itself in production, a dict in a test). Nothing
here writes, and the batch's papers are not changed: staged copies are new `Paper` values
carrying their target id.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rag.papers import (
    abstract_key,
    coined_keys,
    copy_digest,
    copy_key,
    derived_id,
    introduced_name,
    title_head,
    title_key,
)
from rag.store.catalog import CopyRow
from rag.types import Paper

# An id that only numbers records (a CSV row number): shared across files by chance, not by identity.
WEAK_ID = re.compile(r"\d{1,9}")
SAME_ABSTRACT = "the same abstract (whole text, normalised)"
SAME_RECORD_AGAIN = "the same record (same id) again in one file: the later one is kept"
DERIVED_ID = re.compile(r"[atr]-[0-9a-f]{16}")  # `rag.papers.identity.derived_id`: a paper no source names


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
    """The catalogue lookups the id-less rules make. Their keys (an abstract key, a coined name, a
    paper a copy belonged to) are only known once a copy is looked at, so they are asked, not
    read in advance; `rag.store.catalog.Catalog` is one, a test's dict is another."""

    def claimants_of_abstract(self, key: str) -> list[str]:
        """Listed papers whose own copies' whole normalised abstract has this key."""
        ...

    def claimants_of_head(self, heads: Iterable[str]) -> list[str]:
        """Listed papers whose own copies have no abstract and whose title opens with one of `heads`."""
        ...

    def namers(self, names: Iterable[str]) -> set[str]:
        """The distinct id-less abstracts (abstract key, else copy key) introducing one of `names`."""
        ...

    def idless_copies(self, abstracts: Iterable[str], names: Iterable[str]) -> list[tuple[str, str, bool, Paper]]:
        """Live id-less copies with one of these abstract keys or introducing one of these names:
        (copy key, paper it belongs to, whether that paper is listed, the copy)."""
        ...

    def copies_of(self, paper_ids: Sequence[str]) -> dict[str, list[tuple[str, str, Paper]]]:
        """Live copies (copy key, digest, copy) of each paper."""
        ...


@dataclass(frozen=True)
class Resolution:
    """Where an id-less copy belongs: `target`, the listed paper it joins (None: a paper of its
    own), and `reason`, why it joins, or a refusal worth reporting ("" for none)."""

    target: str | None
    reason: str = ""


class Claims:
    """Who claims which id-less copies: the catalogue's listed papers and id-less abstracts, plus,
    while a batch is planned, the batch's own (`add_listed`, `add_idless`): so that within one
    batch the order of its records does not matter either."""

    def __init__(self, reads: CatalogReads) -> None:
        self.reads = reads
        self.abstracts: dict[str, set[str]] = {}
        self.heads: dict[str, set[str]] = {}
        self.names: dict[str, set[str]] = {}

    def add_listed(self, pid: str, paper: Paper) -> None:
        if paper.abstract:
            key = abstract_key(paper.abstract)
            if key:
                self.abstracts.setdefault(key, set()).add(pid)
        elif head := title_head(paper.title):
            self.heads.setdefault(head, set()).add(pid)

    def add_idless(self, skey: str, paper: Paper) -> None:
        if paper.abstract and not paper.title:
            identity = abstract_key(paper.abstract) or skey
            for name in coined_keys(introduced_name(paper.abstract)):
                self.names.setdefault(name, set()).add(identity)

    def of_abstract(self, key: str) -> set[str]:
        return {*self.reads.claimants_of_abstract(key), *self.abstracts.get(key, ())}

    def of_heads(self, heads: set[str]) -> set[str]:
        return {*self.reads.claimants_of_head(heads), *(p for h in heads for p in self.heads.get(h, ()))}

    def naming(self, names: set[str]) -> set[str]:
        return {*self.reads.namers(names), *(i for n in names for i in self.names.get(n, ()))}


def resolve(paper: Paper, claims: Claims) -> Resolution:
    """The listed paper an id-less copy joins: the one listed paper whose abstract is the copy's
    whole abstract; else, for an untitled abstract, the one title-only listed paper whose title
    opens with the name it introduces, when no other id-less abstract introduces that name.
    Otherwise none, with the reason when the abstract had more than one candidate."""
    refusal = ""
    key = abstract_key(paper.abstract)
    if key:
        listed = claims.of_abstract(key)
        if len(listed) == 1:
            return Resolution(next(iter(listed)), SAME_ABSTRACT)
        if len(listed) > 1:
            shown = ", ".join(sorted(listed)[:4])
            refusal = f"not merged: the abstract equals {len(listed)} listed papers ({shown})"
    if paper.abstract and not paper.title:
        coined = introduced_name(paper.abstract)
        keys = coined_keys(coined)
        if keys:
            heads = claims.of_heads(keys)
            if len(heads) == 1 and len(claims.naming(keys)) <= 1:
                reason = f"its coined name '{coined}' opens the title of exactly one title-only listed paper"
                return Resolution(next(iter(heads)), reason)
    return Resolution(None, refusal)


@dataclass(frozen=True)
class Known:
    """What the catalogue holds about a batch, read before planning.

    `copies`: the catalogue's rows of the batch's copy keys (absent: never seen). `listed`: title
    key and source files of the catalogued papers among `ids_to_list(batch, copies)`; ids outside
    it are ignored (a copy already live was reported when first read). `seen`: copy keys already
    read in this run, by source file (a key read again is a duplicate record, not an unchanged
    copy)."""

    copies: Mapping[str, CopyRow] = field(default_factory=dict)
    listed: Mapping[str, tuple[str, Sequence[str]]] = field(default_factory=dict)
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
    """One batch's decisions: first every copy with its own id (a later copy sees what the earlier
    ones staged: a second source's copy of one id), then every id-less copy, against the catalogue
    and all the batch's listed copies."""

    def __init__(self, known: Known, reads: CatalogReads) -> None:
        self.known = known
        self.reads = reads
        self.staged: dict[str, Staged] = {}
        self.unchanged: set[str] = set()
        self.merges: list[Merge] = []
        self.merged_away: set[str] = set()
        self.own_staged: dict[str, list[Paper]] = {}  # copies with own ids staged in this batch, by paper
        self.claims = Claims(reads)
        self.read_here: set[str] = set()

    def plan(self, batch: Sequence[Paper]) -> BatchPlan:
        fresh = set(ids_to_list(batch, self.known.copies))
        listed = {pid: self.known.listed[pid] for pid in fresh if pid in self.known.listed}
        for paper in batch:
            if paper.own_id:
                self._stage(paper, lambda p, old, prev: self._target_own(p, old, listed, self.own_staged.get(p.id, [])))
        idless = [(p, copy_key(p)) for p in batch if not p.own_id]
        if idless:
            for s in self.staged.values():
                if s.paper is not None:
                    self.claims.add_listed(s.pid, s.paper)
            for paper, skey in idless:
                self.claims.add_idless(skey, paper)
        for paper, _ in idless:
            self._stage(paper, self._target_idless)
        return BatchPlan(
            tuple(self.staged.values()), frozenset(self.unchanged), tuple(self.merges), frozenset(self.merged_away)
        )

    def _stage(self, paper: Paper, target: Any) -> None:
        """Decide one copy with `target(paper, catalogued row, previous paper id)` and stage it,
        unless the catalogue already holds it as it is."""
        known, skey = self.known, copy_key(paper)
        again = skey in self.read_here or skey in known.seen.get(paper.source, ())
        self.read_here.add(skey)
        digest = copy_digest(paper)
        prev = self.staged.get(skey)
        old = known.copies.get(skey)
        prev_pid = prev.pid if prev else (old.pid if old and old.live else None)
        pid = target(paper, old, prev_pid)
        if again:
            self.merges.append(Merge(pid, [f"{paper.source}:{paper.position}"], SAME_RECORD_AGAIN))
        elif old is not None and old.live and old.pid == pid and old.digest == digest:
            self.unchanged.add(pid)
            return
        copy = dataclasses.replace(paper, id=pid)
        self.staged[skey] = Staged(skey, pid, copy, digest, copy.source, prev_pid)
        if copy.own_id:
            self.own_staged.setdefault(pid, []).append(copy)

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

    def _target_idless(self, paper: Paper, old: CopyRow | None, prev_pid: str | None) -> str:
        """The paper an id-less copy belongs to (`resolve`); without a listed paper, its own:
        the id it had when it is the same record edited in place, else one derived from it."""
        found = resolve(paper, self.claims)
        if found.target is not None:
            if prev_pid != found.target:
                self.merged_away.update(p for p in (paper.id, prev_pid) if p)
                self.merges.append(Merge(found.target, [f"{paper.source}:{paper.position} ({paper.id})"], found.reason))
            return found.target
        if found.reason:
            self.merges.append(Merge(paper.id, [f"{paper.source}:{paper.position}"], found.reason))
        if prev_pid and DERIVED_ID.fullmatch(prev_pid) and prev_pid != paper.id:
            copies = self.reads.copies_of([prev_pid]).get(prev_pid, [])
            if [c[0] for c in copies] == [copy_key(paper)]:
                return prev_pid  # the same record, edited in place: it keeps its id
        return paper.id


def reconcile(abstracts: AbstractSet[str], names: AbstractSet[str], reads: CatalogReads) -> BatchPlan:
    """Decide again, against the catalogue as it is now, every id-less copy holding one of these
    whole-abstract keys or introducing one of these names (what a committed batch changed), and
    stage the moves: into the listed paper that now claims it alone, or back out of a listed
    paper that no longer does (to the copy's own derived id). Each move is reported."""
    staged: dict[str, Staged] = {}
    merges: list[Merge] = []
    merged_away: set[str] = set()
    if not abstracts and not names:
        return BatchPlan()
    claims = Claims(reads)
    for skey, pid, listed, copy in reads.idless_copies(abstracts, names):
        found = resolve(copy, claims)
        where = f"{copy.source}:{copy.position}"
        if found.target is not None:
            target, note = found.target, Merge(found.target, [f"{where} ({pid})"], found.reason)
        elif listed or not DERIVED_ID.fullmatch(pid):  # taken back: no listed paper claims it alone now
            target = derived_id(dataclasses.replace(copy, id=""))
            why = found.reason or "no listed paper has its abstract or the name it introduces any more"
            note = Merge(target, [f"{where} (was in {pid})"], f"taken back out of '{pid}': {why}")
        else:
            continue  # a paper of its own, and it stays one
        if target == pid:
            continue
        if found.target is not None and not listed:  # an id-less paper taken in: gone, but not removed
            merged_away.add(pid)
        moved = dataclasses.replace(copy, id=target)
        staged[skey] = Staged(skey, target, moved, copy_digest(moved), copy.source, pid)
        merges.append(note)
    return BatchPlan(tuple(staged.values()), frozenset(), tuple(merges), frozenset(merged_away))
