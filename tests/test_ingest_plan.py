"""The ingest plan (`rag.store.plan`) with plain values: no Chroma, no SQLite, no subprocess.

The catalogue is a dict of copies (`Held`); every lookup the planner makes is derived from it the
way `rag.store.catalog` derives it (the merged view of each paper's copies, the claims of its own
copies), and the inputs are gathered the way `Ingester._ingest_batch` gathers them (`plan`);
`commit` applies a plan the way the catalogue does, and `settle` then runs `reconcile` over the
keys the commit touched, as `Ingester._commit` does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from rag.papers.identity import copy_digest, copy_key, derived_id, idless_keys, title_key
from rag.papers.merge import listed_claims, merge_papers
from rag.store.catalog import CopyRow
from rag.store.plan import (
    SAME_ABSTRACT,
    SAME_RECORD_AGAIN,
    BatchPlan,
    Known,
    Staged,
    ids_to_list,
    plan_batch,
    reconcile,
)
from rag.types import Paper

ABSTRACT = (
    "We study how sparse attention halves the memory of long-context transformers while keeping "
    "their accuracy on retrieval benchmarks, and explain when it fails."
)
COINED = (
    "We propose Zorblax, a sparse attention method that halves the memory of long-context "
    "transformers while keeping their accuracy on retrieval benchmarks."
)


def own(pid: str, title: str = "", abstract: str = "", source: str = "list.jsonl", n: int = 0) -> Paper:
    return Paper(id=pid, title=title, abstract=abstract, source=source, position=n + 1, ordinal=n)


def idless(abstract: str, title: str = "", source: str = "pasted.txt", n: int = 0) -> Paper:
    paper = Paper(id="", title=title, abstract=abstract, source=source, position=n + 1, ordinal=n, own_id=False)
    paper.id = derived_id(paper)
    return paper


class Held:
    """A catalogue as plain values: live copies by copy key, each with the paper it belongs to.
    Implements `CatalogReads` and the reads `_ingest_batch` makes before planning."""

    def __init__(self, *copies: Paper | tuple[Paper, str]) -> None:
        self.copies: dict[str, tuple[str, str, Paper]] = {}
        for item in copies:
            paper, pid = item if isinstance(item, tuple) else (item, item.id)
            self.copies[copy_key(paper)] = (pid, copy_digest(paper), Paper.from_dict({**paper.to_dict(), "id": pid}))

    def parts(self) -> dict[str, list[Paper]]:
        by_pid: dict[str, list[Paper]] = {}
        for pid, _, paper in self.copies.values():
            by_pid.setdefault(pid, []).append(paper)
        return by_pid

    def papers(self) -> dict[str, Paper]:
        return {pid: merge_papers(parts, pid) for pid, parts in self.parts().items()}

    def claims(self) -> dict[str, tuple[str, str]]:
        parts = self.parts()
        return {pid: listed_claims(paper, parts[pid]) for pid, paper in self.papers().items()}

    # read before planning
    def rows(self, skeys: Sequence[str]) -> dict[str, CopyRow]:
        return {k: CopyRow(k, self.copies[k][0], self.copies[k][1], True) for k in skeys if k in self.copies}

    def titles_and_sources(self, ids: Sequence[str]) -> dict[str, tuple[str, list[str]]]:
        papers = self.papers()
        return {i: (title_key(papers[i].title), papers[i].extra["sources"]) for i in ids if i in papers}

    # CatalogReads
    def claimants_of_abstract(self, key: str) -> list[str]:
        return sorted(pid for pid, (claim, _) in self.claims().items() if claim == key)

    def claimants_of_head(self, heads: Iterable[str]) -> list[str]:
        wanted = set(heads)
        return sorted(pid for pid, (_, head) in self.claims().items() if head in wanted)

    def _keys(self, skey: str, paper: Paper) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {"a": set(), "n": set()}
        for kind, key in idless_keys(paper):
            found[kind].add(key)
        return found

    def namers(self, names: Iterable[str]) -> set[str]:
        wanted = set(names)
        out = set()
        for skey, (_, _, paper) in self.copies.items():
            keys = self._keys(skey, paper)
            if keys["n"] & wanted:
                out.add(next(iter(keys["a"]), skey))
        return out

    def idless_copies(self, abstracts: Iterable[str], names: Iterable[str]) -> list[tuple[str, str, bool, Paper]]:
        a, n = set(abstracts), set(names)
        papers = self.papers()
        return [
            (skey, pid, papers[pid].own_id, Paper.from_dict(paper.to_dict()))
            for skey, (pid, _, paper) in sorted(self.copies.items())
            if (keys := self._keys(skey, paper))["a"] & a or keys["n"] & n
        ]

    def copies_of(self, paper_ids: Sequence[str]) -> dict[str, list[tuple[str, str, Paper]]]:
        out: dict[str, list[tuple[str, str, Paper]]] = {}
        for skey, (pid, digest, paper) in sorted(self.copies.items()):
            if pid in paper_ids:
                out.setdefault(pid, []).append((skey, digest, Paper.from_dict(paper.to_dict())))
        return out

    # what the catalogue and `Ingester._commit` do with a plan
    def keys(self, pids: Iterable[str], skeys: Iterable[str]) -> tuple[set[str], set[str]]:
        claims, abstracts, names = self.claims(), set(), set()
        for pid in pids:
            key, head = claims.get(pid, ("", ""))
            abstracts.add(key)
            names.add(head)
        for skey in skeys:
            if skey in self.copies:
                keys = self._keys(skey, self.copies[skey][2])
                abstracts |= keys["a"]
                names |= keys["n"]
        return abstracts - {""}, names - {""}

    def commit(self, result: BatchPlan) -> None:
        for s in result.staged:
            if s.paper is None:
                self.copies.pop(s.skey, None)
            else:
                self.copies[s.skey] = (s.pid, s.digest, s.paper)


def plan(held: Held, *batch: Paper, seen: Mapping[str, AbstractSet[str]] | None = None) -> BatchPlan:
    """The plan for `batch`, from inputs gathered as `Ingester._ingest_batch` gathers them."""
    rows = held.rows([copy_key(p) for p in batch])
    known = Known(rows, held.titles_and_sources(ids_to_list(batch, rows)), seen or {})
    return plan_batch(list(batch), known, held)


def settle(held: Held, result: BatchPlan) -> BatchPlan:
    """Commit a plan to `held`, then reconcile what it touched (as `Ingester._commit` does), commit
    that too, and return the reconciliation."""
    pids = {s.pid for s in result.staged} | {s.prev_pid for s in result.staged if s.prev_pid}
    skeys = [s.skey for s in result.staged]
    before = held.keys(pids, skeys)
    held.commit(result)
    after = held.keys(pids, skeys)
    moves = reconcile(before[0] | after[0], before[1] | after[1], held)
    held.commit(moves)
    return moves


def targets(result: BatchPlan) -> dict[str, str]:
    return {s.skey: s.pid for s in result.staged}


# -- copies with their own id -------------------------------------------------------------------
def test_a_new_copy_is_staged_for_the_paper_of_its_id() -> None:
    paper = own("X1", "Sparse attention", ABSTRACT)
    result = plan(Held(), paper)
    (staged,) = result.staged
    assert (staged.skey, staged.pid, staged.prev_pid) == ("list.jsonl|id:X1", "X1", None)
    assert staged.paper is not None and staged.paper.abstract == ABSTRACT and staged.digest == copy_digest(paper)
    assert not result.unchanged and not result.merges and not result.merged_away


def test_the_same_copy_again_is_unchanged_and_not_staged() -> None:
    paper = own("X1", "Sparse attention", ABSTRACT)
    result = plan(Held(paper), own("X1", "Sparse attention", ABSTRACT))
    assert result.staged == () and result.unchanged == {"X1"} and not result.merges


def test_an_edited_copy_is_staged_as_an_update_of_the_same_paper() -> None:
    held = Held(own("X1", "Sparse attention", ABSTRACT))
    edited = own("X1", "Sparse attention", ABSTRACT + " A new sentence.")
    result = plan(held, edited)
    (staged,) = result.staged
    assert (staged.pid, staged.prev_pid) == ("X1", "X1") and staged.digest != held.copies[staged.skey][1]
    assert not result.unchanged and not result.merges


def test_the_same_id_from_another_source_joins_it_and_the_merge_is_reported() -> None:
    result = plan(
        Held(own("X1", "Sparse attention", source="a.jsonl")), own("X1", "Sparse attention", source="b.jsonl")
    )
    assert targets(result) == {"b.jsonl|id:X1": "X1"}
    (merge,) = result.merges
    assert merge.into == "X1" and merge.records == ["b.jsonl:1"] and merge.reason == "the same id 'X1' as in a.jsonl"


def test_the_same_id_from_two_sources_in_one_batch_is_one_paper_reported_once() -> None:
    result = plan(Held(), own("X1", "Sparse attention", source="a.jsonl"), own("X1", "Other", source="b.jsonl"))
    assert targets(result) == {"a.jsonl|id:X1": "X1", "b.jsonl|id:X1": "X1"}  # not a weak id: titles may differ
    assert [(m.into, m.records) for m in result.merges] == [("X1", ["b.jsonl:1"])]


def test_an_edit_of_a_joined_copy_is_not_reported_again() -> None:
    held = Held(own("X1", "Sparse attention", source="a.jsonl"), own("X1", "Sparse attention", source="b.jsonl"))
    edited = own("X1", "Sparse attention", ABSTRACT, source="b.jsonl")
    rows = held.rows([copy_key(edited)])
    everything = held.titles_and_sources(["X1"])  # more than `ids_to_list` asks for: ignored
    result = plan_batch([edited], Known(rows, everything), held)
    assert targets(result) == {"b.jsonl|id:X1": "X1"} and not result.merges


def test_a_bare_number_naming_another_title_in_another_file_is_kept_apart_and_reported() -> None:
    held = Held(own("1", "Deep graphs for molecules", source="data/x1.csv"))
    result = plan(held, own("1", "Robots that learn to walk", source="data/x2.csv"))
    (staged,) = result.staged
    assert staged.pid == "1@x2.csv" and staged.paper is not None and staged.paper.id == "1@x2.csv"
    (merge,) = result.merges
    assert merge.into == "1@x2.csv" and merge.reason.startswith("not merged: the bare id '1' names another title")
    assert "x1.csv" in merge.reason
    # Kept apart for good: read again, the copy is unchanged, not re-decided.
    robots = own("1", "Robots that learn to walk", source="data/x2.csv")
    again = plan(Held(own("1", "Deep graphs for molecules", source="data/x1.csv"), (robots, staged.pid)), robots)
    assert again.staged == () and again.unchanged == {"1@x2.csv"} and not again.merges


def test_a_bare_number_with_the_same_title_joins_and_a_strong_id_joins_whatever_the_title() -> None:
    same = plan(Held(own("1", "Shared title", source="x1.csv")), own("1", "Shared title", source="x2.csv"))
    assert targets(same) == {"x2.csv|id:1": "1"} and "the same id '1'" in same.merges[0].reason
    strong = plan(Held(own("X1", "Deep graphs", source="x1.csv")), own("X1", "Robots", source="x2.csv"))
    assert targets(strong) == {"x2.csv|id:X1": "X1"} and "the same id 'X1'" in strong.merges[0].reason


def test_the_same_record_twice_in_one_file_keeps_the_later_one_and_says_so() -> None:
    first, later = own("X1", "Sparse attention", "First version."), own("X1", "Sparse attention", "Later.", n=5)
    result = plan(Held(), first, later)
    (staged,) = result.staged
    assert staged.paper is not None and staged.paper.abstract == "Later." and staged.digest == copy_digest(later)
    (merge,) = result.merges
    assert merge.into == "X1" and merge.records == ["list.jsonl:6"] and merge.reason == SAME_RECORD_AGAIN


def test_a_record_read_in_an_earlier_batch_is_a_duplicate_even_when_unchanged() -> None:
    paper = own("X1", "Sparse attention", ABSTRACT)
    result = plan(Held(paper), own("X1", "Sparse attention", ABSTRACT), seen={"list.jsonl": {copy_key(paper)}})
    assert targets(result) == {"list.jsonl|id:X1": "X1"} and not result.unchanged
    assert [m.reason for m in result.merges] == [SAME_RECORD_AGAIN]


def test_the_batch_papers_are_not_changed() -> None:
    paper = own("1", "Robots that learn to walk", source="x2.csv")
    result = plan(Held(own("1", "Deep graphs", source="x1.csv")), paper)
    assert result.staged[0].pid == "1@x2.csv" and paper.id == "1"


# -- id-less copies: merged only when exactly one candidate matches ------------------------------
def test_an_idless_abstract_equal_to_one_listed_paper_joins_it() -> None:
    pasted = idless(ABSTRACT.replace(",", " ,"))
    result = plan(Held(own("L1", "Sparse attention", ABSTRACT)), pasted)
    assert targets(result) == {"pasted.txt|#0": "L1"} and result.staged[0].prev_pid is None
    (merge,) = result.merges
    assert merge.into == "L1" and merge.records == [f"pasted.txt:1 ({pasted.id})"] and merge.reason == SAME_ABSTRACT
    assert result.merged_away == {pasted.id}


def test_an_idless_abstract_equal_to_two_listed_papers_is_not_merged_and_says_so() -> None:
    pasted = idless(ABSTRACT)
    held = Held(own("L1", "Sparse attention", ABSTRACT), own("L2", "Sparse attention again", ABSTRACT, n=1))
    result = plan(held, pasted)
    assert targets(result) == {"pasted.txt|#0": pasted.id} and pasted.id.startswith("a-")
    (merge,) = result.merges
    assert merge.into == pasted.id and merge.reason == "not merged: the abstract equals 2 listed papers (L1, L2)"
    assert not result.merged_away


def test_an_idless_abstract_equal_to_two_papers_of_the_same_batch_is_not_merged() -> None:
    listed = [own("L1", "Sparse attention", ABSTRACT), own("L2", "Again", ABSTRACT, n=1)]
    pasted = idless(ABSTRACT)
    result = plan(Held(), *listed, pasted)
    assert targets(result)["pasted.txt|#0"] == pasted.id and "equals 2 listed papers" in result.merges[-1].reason


def test_a_coined_name_opening_one_title_only_title_joins_it() -> None:
    held = Held(own("T1", "Zorblax: Sparse Attention for Long Contexts"), own("T2", "Other Things", n=1))
    pasted = idless(COINED)
    result = plan(held, pasted)
    assert targets(result) == {"pasted.txt|#0": "T1"}
    (merge,) = result.merges
    assert merge.into == "T1" and "coined name 'Zorblax'" in merge.reason and result.merged_away == {pasted.id}


def test_a_coined_name_opening_two_title_only_titles_is_not_merged() -> None:
    held = Held(own("T1", "Zorblax: Sparse Attention for Long Contexts"), own("T2", "Zorblax for Retrieval", n=1))
    pasted = idless(COINED)
    result = plan(held, pasted)
    assert targets(result) == {"pasted.txt|#0": pasted.id}
    assert not result.merges and not result.merged_away  # this rule does not report a refusal


def test_an_idless_copy_matching_two_listed_abstracts_and_two_titles_merges_with_none() -> None:
    """Neither rule has exactly one candidate: the abstract equals two listed papers', and the
    name it coins opens two title-only titles."""
    held = Held(
        own("L1", "Zorblax one", COINED),
        own("L2", "Zorblax two", COINED, n=1),
        own("T1", "Zorblax: Sparse Attention", n=2),
        own("T2", "Zorblax for Retrieval", n=3),
    )
    pasted = idless(COINED)
    result = plan(held, pasted)
    assert targets(result) == {"pasted.txt|#0": pasted.id} and not result.merged_away
    assert [m.reason for m in result.merges] == ["not merged: the abstract equals 2 listed papers (L1, L2)"]


def test_a_listed_paper_absorbs_the_one_idless_paper_with_its_abstract() -> None:
    pasted = idless(ABSTRACT)
    held = Held(pasted)
    first = plan(held, own("L1", "Sparse attention", ABSTRACT))
    assert targets(first) == {"list.jsonl|id:L1": "L1"}
    moves = settle(held, first)
    assert targets(moves) == {"pasted.txt|#0": "L1"}
    (moved,) = moves.staged
    assert moved.prev_pid == pasted.id and moved.paper is not None and moved.paper.id == "L1"
    assert [(m.into, m.records, m.reason) for m in moves.merges] == [
        ("L1", [f"pasted.txt:1 ({pasted.id})"], SAME_ABSTRACT)
    ]
    assert moves.merged_away == {pasted.id}


def test_a_listed_paper_does_not_absorb_an_abstract_another_listed_paper_has() -> None:
    held = Held(idless(ABSTRACT), own("L2", "Sparse attention", ABSTRACT, source="other.jsonl"))
    result = plan(held, own("L1", "Sparse attention", ABSTRACT))
    assert targets(result) == {"list.jsonl|id:L1": "L1"} and not result.merges and not result.merged_away
    assert settle(held, result) == BatchPlan()


def test_a_title_only_paper_absorbs_the_idless_paper_naming_it_only_when_its_title_is_the_only_one() -> None:
    pasted = idless(COINED)
    held = Held(pasted)
    moves = settle(held, plan(held, own("T1", "Zorblax: Sparse Attention")))
    assert targets(moves) == {"pasted.txt|#0": "T1"}
    assert "coined name 'Zorblax'" in moves.merges[0].reason and moves.merged_away == {pasted.id}
    held = Held(pasted, own("T2", "Zorblax for Retrieval", source="other.jsonl"))
    two = plan(held, own("T1", "Zorblax: Sparse"))
    assert targets(two) == {"list.jsonl|id:T1": "T1"} and settle(held, two) == BatchPlan()


def test_an_idless_copy_before_its_listed_paper_in_one_batch_joins_it() -> None:
    """Within a batch the order of records does not matter: the id-less copies are decided against
    all of the batch's listed copies."""
    pasted, coined = idless(ABSTRACT), idless(COINED, n=1)
    result = plan(Held(), pasted, coined, own("L1", "Sparse attention", ABSTRACT), own("T1", "Zorblax: Sparse", n=1))
    assert targets(result) == {
        "list.jsonl|id:L1": "L1",
        "list.jsonl|id:T1": "T1",
        "pasted.txt|#0": "L1",
        "pasted.txt|#1": "T1",
    }


def test_a_second_claimant_arriving_later_takes_the_copy_back_out() -> None:
    """An id-less abstract joined the one listed paper with that abstract; a second listed paper
    with the same abstract makes the evidence name two, so the copy leaves (as it would have
    stayed apart had both come first), and the report says so."""
    pasted = idless(ABSTRACT)
    held = Held(own("L1", "Sparse attention", ABSTRACT), (pasted, "L1"))
    moves = settle(held, plan(held, own("L2", "Sparse attention again", ABSTRACT, source="other.jsonl")))
    assert targets(moves) == {"pasted.txt|#0": pasted.id}
    (note,) = moves.merges
    assert note.records == ["pasted.txt:1 (was in L1)"] and "equals 2 listed papers (L1, L2)" in note.reason
    assert {pid for pid, _, _ in held.copies.values()} == {"L1", "L2", pasted.id}


def test_a_second_abstract_naming_the_same_title_takes_the_first_back_out() -> None:
    other = COINED.replace("halves the memory", "quarters the memory")
    held = Held(own("T1", "Zorblax: Sparse Attention"), (idless(COINED), "T1"))
    moves = settle(held, plan(held, idless(other, source="more.txt")))
    assert set(targets(moves).values()) == {idless(COINED).id}
    assert {pid for pid, _, _ in held.copies.values()} == {"T1", idless(COINED).id, idless(other, source="more.txt").id}


def test_removing_the_listed_paper_gives_the_idless_copy_its_own_id_back() -> None:
    pasted = idless(ABSTRACT)
    listed = own("L1", "Sparse attention", ABSTRACT)
    held = Held(listed, (pasted, "L1"))
    removal = BatchPlan(tuple(Staged(copy_key(listed), "L1", None, "", listed.source, "L1") for _ in [0]))
    moves = settle(held, removal)
    assert targets(moves) == {"pasted.txt|#0": pasted.id} and "taken back out of 'L1'" in moves.merges[0].reason
    assert not moves.merged_away  # L1 itself was removed, and the summary says so


def test_an_idless_record_edited_in_place_keeps_its_id() -> None:
    before = idless(ABSTRACT)
    after = idless(ABSTRACT + " We also release the code.")
    result = plan(Held(before), after)
    (staged,) = result.staged
    assert after.id != before.id and (staged.pid, staged.prev_pid) == (before.id, before.id) and not result.merges


def test_an_idless_copy_already_joined_is_unchanged_and_not_reported_again() -> None:
    pasted = idless(ABSTRACT)
    result = plan(Held(own("L1", "Sparse attention", ABSTRACT), (pasted, "L1")), idless(ABSTRACT))
    assert result.staged == () and result.unchanged == {"L1"} and not result.merges and not result.merged_away


def test_two_listed_papers_of_one_batch_with_an_idless_papers_abstract_absorb_it_neither() -> None:
    """The mirror of the rule above, with the id-less paper catalogued first: both listed papers
    arrive in one batch, so there are two candidates, and the id-less paper stays apart."""
    pasted = idless(ABSTRACT)
    held = Held(pasted)
    result = plan(held, own("L1", "Sparse attention", ABSTRACT), own("L2", "Again", ABSTRACT, n=1))
    assert "pasted.txt|#0" not in targets(result) and not result.merges
    assert settle(held, result) == BatchPlan() and held.copies["pasted.txt|#0"][0] == pasted.id
