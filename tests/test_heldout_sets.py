"""The hand-written held-out sets are sound: every file parses, ids are unique, every item has a
split and a kind, answerable items name gold papers and a verbatim quote, unanswerable ones none;
over the bundled sample (its index is built here) every quote is a piece of its gold paper.
A broken set would silently move the figures every choice is made on."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from eval.heldout import HELDOUT, SOURCES, Row, render, table
from rag.app import App
from rag.evaluation import SPLITS, ItemResult, load_items
from tests.fakes import pipeline

KINDS = {
    "paraphrase",
    "factoid",
    "how",
    "synthesis",
    "list-qualified",
    "catalogue",
    "near-miss",
    "off-topic",
    "follow-up",
    "topic-switch",
    "title-only",
    "catalogue-clause",  # conf_clauses.jsonl: counts whose clause leaves a value out or adds one back
    "catalogue-plain",  # and its plain controls
}
FILES = sorted(HELDOUT.glob("*.jsonl"))


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_every_written_set_is_a_source_of_the_heldout_runner() -> None:
    assert len(FILES) >= 13
    assert {p.name for p in FILES} <= {s.path.name for s in SOURCES}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_items_are_well_formed(path: Path) -> None:
    rows = records(path)
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), f"{path.name}: duplicate ids"
    for r in rows:
        where = f"{path.name}: {r['id']}"
        assert r["split"] in SPLITS and r["kind"] in KINDS and r["question"].strip(), where
        gold = r.get("gold_ids") or r.get("gold_quotes") or r.get("gold_pattern")
        if r["answerable"]:
            assert gold or r.get("answer_contains"), where
        else:
            assert not gold and not r.get("evidence") and not r.get("answer_contains"), where


@pytest.mark.parametrize("path", sorted(HELDOUT.glob("sample_*.jsonl")), ids=lambda p: p.name)
def test_sample_quotes_are_pieces_of_their_gold_abstracts(sample_app: App, path: Path) -> None:
    catalog = sample_app.index.load().catalog
    items, errors = load_items(path, catalog)
    assert errors == [] and len(items) == len(records(path))
    quotes = {r["id"]: r.get("evidence", []) + r.get("answer_contains", []) for r in records(path)}
    for item in items:
        if not item.answerable or item.kind == "catalogue":  # a catalogue fact is a count or a field
            continue
        papers = catalog.get_many(item.gold_ids).values()
        texts = [f"{p.title}\n{p.abstract}\n{', '.join(p.authors)}" for p in papers]
        assert texts, f"{path.name}: {item.id} has no gold paper in the sample"
        for quote in quotes[item.id]:
            assert any(quote.strip("*") in t for t in texts), f"{path.name}: {item.id}: {quote!r}"


def test_the_report_counts_wrong_abstention_decisions_per_family_and_over_every_family() -> None:
    """Answerable abstained plus unanswerable answered, as counts that add up across families: the
    figure a change of the answerable model is judged on."""

    def row(source: str, answerable: bool, abstained: bool, split: str = "validation") -> Row:
        result = ItemResult(
            "q", "factoid", "?", answerable, ["p"] if answerable else [], answer="", abstained=abstained
        )
        return Row(source, split, "factoid", result, None)

    rows = [
        row("conf-written-w8", True, True),  # wrong: answerable, abstained
        row("conf-written-w9", True, False),
        row("conf-written-w8", False, False),  # wrong: unanswerable, answered
        row("scifact-removed", False, True),
        row("scifact-removed", False, False),  # wrong
        row("scifact-removed", False, False, "train"),  # another split
    ]
    entries = table(rows, ["train", "validation"])
    wrong = {(e["family"], e["kind"]): (e["train"]["wrong"], e["validation"]["wrong"]) for e in entries}
    assert wrong[("conf-written", "ALL")][1] == 2
    assert wrong[("scifact-removed", "ALL")] == (1, 1)
    assert wrong[("every family", "ALL")] == (1, 3)
    assert entries[-1]["family"] == "every family"
    assert "| every family | ALL |" in render(entries, ["train", "validation"])


def test_topic_pairs_take_as_gold_the_papers_that_name_both_topics_in_any_form() -> None:
    """A pair is asked when few papers name both topics and each alone fills a list: then a list
    led by one topic's papers shows up as papers cited that are not gold."""
    from eval.build_topic_pairs import build

    gnn = [(f"g{i}", f"A graph neural network for task {i}.") for i in range(9)]
    llm = [(f"l{i}", f"Large language models solve task {i}.") for i in range(9)]
    both = [("b1", "GNNs meet LLMs."), ("b2", "Graph Neural Networks as tokens for a large language model.")]
    rare = [("r1", "Federated learning with GNNs.")]  # one paper names both: too few to ask
    items = {i["id"]: i for i in build(gnn + llm + both + rare)[0]}
    pair = items["pair:graph neural networks|large language models"]
    assert pair["gold_ids"] == ["b1", "b2"]
    assert pair["split"] in SPLITS and pair["kind"] == "topic-pair"
    question = pair["question"]
    assert any(n in question for n in ("graph neural networks", "GNNs"))
    assert any(n in question for n in ("large language models", "LLMs"))
    assert "pair:graph neural networks|federated learning" not in items
    # a pair's wording and split do not depend on which other pairs are kept
    speech = [(f"s{i}", f"Speech recognition {i}.") for i in range(9)]
    robots = [(f"r{i}", f"A robot learns {i}.") for i in range(9)]
    joined = [("x1", "Speech for robots."), ("x2", "Robots hear speech.")]
    alone = build(speech + robots + joined)[0]
    with_gnn_llm = build(gnn + llm + both + speech + robots + joined)[0]  # a pair kept before it
    assert [i["id"] for i in alone] == ["pair:robotics|speech"]
    assert next(i for i in with_gnn_llm if i["id"] == "pair:robotics|speech") == alone[0]


def test_topic_absent_pairs_are_the_frequent_topics_no_paper_names_together() -> None:
    """The unanswerable twin: two topics each named by many papers and never by the same one. A
    pair that one paper joins, or whose topic is rare, is not asked; there are never more of them
    than answerable pairs."""
    from eval.build_topic_pairs import ABSENT_ALONE, build

    many = ABSENT_ALONE + 1
    speech = [(f"s{i}", f"Speech recognition {i}.") for i in range(many)]
    robots = [(f"r{i}", f"A robot learns {i}.") for i in range(many)]
    joined = [("x1", "Speech for robots."), ("x2", "Robots hear speech.")]
    proteins = [(f"p{i}", f"Protein folding {i}.") for i in range(many)]
    quantized = [(f"q{i}", f"A quantized network {i}.") for i in range(ABSENT_ALONE - 1)]  # too rare to ask
    items, absent = build(speech + robots + joined + proteins + quantized)
    assert [i["id"] for i in items] == ["pair:robotics|speech"]
    assert len(absent) == 1  # two candidates (proteins with speech, with robotics), one answerable pair
    (twin,) = absent
    assert twin["id"] in ("pair:proteins|robotics", "pair:proteins|speech")
    assert twin["answerable"] is False and "gold_ids" not in twin and twin["kind"] == "topic-absent"
    assert "protein" in twin["question"] and twin["split"] in SPLITS


def test_fitting_scripts_never_see_a_measured_only_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`split_items` is the one loop every fitting script and the fusion bench read: a source with
    `fitted=False` (conf-topic-pairs) is only measured, never chosen on."""
    import eval.heldout as heldout
    from rag.store import Catalog
    from rag.types import Paper

    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"id": "q1", "question": "What is T?", "gold_ids": ["p1"], "split": "train"}) + "\n")
    monkeypatch.setattr(
        heldout,
        "SOURCES",
        (heldout.Source("kept", "x", path), heldout.Source("measured", "x", path, fitted=False)),
    )
    catalog = Catalog.of([Paper(id="p1", title="T", abstract="T is a thing.")])
    assert [(s.name, i.id, split) for s, i, _, split in heldout.split_items("x", catalog)] == [("kept", "q1", "train")]


def test_the_relevance_fit_leaves_out_the_measured_rows_its_cache_holds() -> None:
    """`eval.fit_relevance` caches the measured-only sources too (for `answerable_features
    --train-on`), marked; the fit reads only the fitted ones, and a cache written before the mark
    existed counts as fitted. Catalogue-routed questions are never the relevance model's."""
    from eval.fit_relevance import fitted_rows

    rows = [
        {"id": "a", "features": [[0.1]], "route": "content", "fitted": True},
        {"id": "b", "features": [[0.1]], "route": "list", "fitted": False},
        {"id": "c", "features": [[0.1]], "route": "content"},
        {"id": "d", "features": [[0.1]], "route": "catalogue", "fitted": True},
        {"id": "e", "features": [], "route": "content", "fitted": True},
    ]
    assert [r["id"] for r in fitted_rows(rows)] == ["a", "c"]
    assert [r["id"] for r in fitted_rows(rows, measured=True)] == ["a", "b", "c"]


def test_author_topic_questions_take_as_gold_the_authors_papers_on_the_topic() -> None:
    """An author with enough papers, a topic that some but at most half of them name: gold is those
    papers, whatever else the author wrote. An author whose name is part of another's ("Bo Li" in
    "Bo Lin") is never asked, since the catalogue's author filter would take both."""
    from eval.build_author_topics import MIN_PAPERS, build

    ada = [(f"a{i}", ["Ada Lovelace"], f"Engines of kind {i}.") for i in range(MIN_PAPERS)]
    ada_gnn = [("g1", ["Ada Lovelace", "Alan Turing"], "A graph neural network for engines.")]
    bo = [(f"b{i}", ["Bo Li"], f"Engines {i}.") for i in range(MIN_PAPERS)] + [("b9", ["Bo Li"], "GNNs.")]
    bo_lin = [("c1", ["Bo Lin"], "Nothing here.")]
    few = [(f"t{i}", ["Alan Turing"], "GNNs everywhere.") for i in range(2)]
    common = [(f"n{i}", ["Grace Hopper"], "Another graph neural network.") for i in range(15)]
    babbage = [(f"e{i}", ["Charles Babbage"], f"Difference engines {i}.") for i in range(MIN_PAPERS)]
    items, absent = build(ada + ada_gnn + bo + bo_lin + few + common + babbage, n=100)
    by_id = {i["id"]: i for i in items}
    pair = by_id["author-topic:Ada Lovelace|graph neural networks"]
    assert pair["gold_ids"] == ["g1"] and pair["split"] in SPLITS
    assert "Ada Lovelace" in pair["question"]
    assert not any("Bo Li" in key or "Alan Turing" in key for key in by_id)  # a part of a name; too few papers
    # the twin: an author none of whose papers names a topic that many papers of the collection name
    twins = {i["id"]: i for i in absent}
    assert "author-absent:Grace Hopper|graph neural networks" not in twins  # her papers are on it
    assert all(i["answerable"] is False and "gold_ids" not in i for i in absent)
    # the one topic 15+ papers name, asked of the one author with none on it
    assert list(twins) == ["author-absent:Charles Babbage|graph neural networks"]


def test_the_filtered_threshold_is_the_lowest_that_best_separates_the_train_pairs() -> None:
    """Youden's J over the grid: no author-topic question abstained, two of three twins abstained,
    and of the thresholds that do so the lowest."""
    from eval.fit_filtered import choose, rates

    rows = [{"answerable": True, "confidence": c} for c in (0.5, 0.6, 0.7)]
    rows += [{"answerable": False, "confidence": c} for c in (0.1, 0.2, 0.55)]
    assert choose(rows) == 0.21
    assert rates(rows, 0.21) == {"false_abstention": 0.0, "twins_abstained": round(2 / 3, 4), "questions": 6}


def test_the_filtered_model_is_fitted_and_thresholded_on_train_rows_alone() -> None:
    """An answerable question's topic is held by a sentence close to it (`address`), a twin's is
    not: the fitted model rates every answerable train row above every twin, its threshold lies
    between them, and it reads its features by name from a topical assessment."""
    import numpy as np

    from eval.fit_filtered import FEATURES, fitted
    from rag.answer import QUESTION_FEATURES
    from rag.answer.relevance import Assessment

    def row(answerable: bool, address: float, best: float) -> dict:
        return {"answerable": answerable, "split": "train", "features": {"paper_best": best, "address": address}}

    train = [row(True, a, b) for a, b in ((0.5, 0.6), (0.6, 0.5), (0.7, 0.8), (0.45, 0.7))]
    train += [row(False, a, b) for a, b in ((0.1, 0.4), (0.2, 0.3), (0.15, 0.5), (0.25, 0.2))]
    model = fitted(train)
    assert model.features == FEATURES
    scores = model.probabilities(np.array([[r["features"][f] for f in FEATURES] for r in train]))
    assert min(scores[:4]) > max(scores[4:])
    assert max(scores[4:]) < model.thresholds["abstain"] <= min(scores[:4])
    pipe, _ = pipeline()
    relevance = pipe.relevance
    relevance.filtered = model

    def assessment(address: float) -> Assessment:
        features = np.zeros(len(QUESTION_FEATURES))
        features[QUESTION_FEATURES.index("address")] = address
        features[QUESTION_FEATURES.index("paper_best")] = 0.5
        return Assessment([], np.zeros(3), features, confidence=0.99)

    assert relevance.filtered_confidence(assessment(0.1)) < relevance.abstain_filtered_below
    assert relevance.filtered_confidence(assessment(0.7)) >= relevance.abstain_filtered_below


def test_a_named_paper_is_asked_about_a_topic_it_names_and_its_twin_about_one_it_does_not() -> None:
    """A paper whose title opens with a coined name no other paper holds is asked about a topic its
    abstract names (gold: that paper) and, in the same split, about a topic 15+ papers name and it
    does not (answerable: false). A name another paper mentions, a title without a coined name and
    a title-only paper are never asked."""
    from eval.build_named_details import MIN_TOPIC_PAPERS, build, coined_name

    assert coined_name("BrainOOD: Out-of-distribution brain networks") == "BrainOOD"
    assert coined_name("Learning to rank: a survey") is None and coined_name("No colon here") is None
    gnn = [(f"n{i}", [], f"A study {i}\nAnother graph neural network.") for i in range(MIN_TOPIC_PAPERS)]
    named = [("p1", [], "BrainOOD: brain graphs\nWe use diffusion models for brains.")]
    shared = [("p2", [], "SharedNet: a net\nDiffusion models again."), ("p3", [], "Beats\nBetter than SharedNet.")]
    bare = [("p4", [], "TitleOnly: nothing\n")]
    items, absent = build(gnn + named + shared + bare, n=10)
    assert [i["id"] for i in items] == ["named-detail:p1|diffusion models"]
    assert items[0]["gold_ids"] == ["p1"] and "BrainOOD" in items[0]["question"]
    assert [i["id"] for i in absent] == ["named-absent:p1|graph neural networks"]
    assert absent[0]["answerable"] is False and "gold_ids" not in absent[0]
    assert absent[0]["split"] == items[0]["split"] in SPLITS


def test_a_named_paper_is_asked_about_with_its_name_as_the_only_subject() -> None:
    """One question per paper whose title opens with a coined name no other paper holds, in one of
    the forms with the name the only subject; gold that paper, split keyed by it. A shared name, a
    title without a coined name and a title-only paper are never asked."""
    from eval.build_named_subject import FORMS, build
    from rag.evaluation import split_of

    named = [("p1", [], "BrainOOD: brain graphs\nWe use diffusion models for brains.")]
    shared = [("p2", [], "SharedNet: a net\nDiffusion models again."), ("p3", [], "Beats\nBetter than SharedNet.")]
    bare = [("p4", [], "TitleOnly: nothing\n"), ("p5", [], "Plain title\nAn abstract.")]
    items = build(named + shared + bare, n=10)
    assert [i["id"] for i in items] == ["named-subject:p1"]
    question = items[0]["question"]
    assert question in {form.format(name="BrainOOD") for form in FORMS}
    assert items[0]["gold_ids"] == ["p1"] and items[0]["split"] == split_of("p1")


def test_a_family_joined_to_teach_the_model_sets_the_threshold_only_when_named() -> None:
    """`--threshold-on`: the false-abstention rate the answerable threshold keeps is stated on the
    fitted sources and the families named; a family joined to train alone (topic pairs, hard to
    answer) would otherwise pull the threshold down for everyone."""
    from eval.fit_relevance import pooled_threshold

    fitted = [{"source": "conf-written", "answerable": True, "fitted": True} for _ in range(40)]
    joined = [{"source": "conf-topic-pairs", "answerable": True, "fitted": False} for _ in range(40)]
    scores = np.asarray([0.9] * 40 + [0.1] * 40)  # the joined family's answerable rows score low
    alone = pooled_threshold(fitted + joined, scores, {"conf-named-subject"}, 0.03)
    named = pooled_threshold(fitted + joined, scores, {"conf-topic-pairs"}, 0.03)
    assert alone > 0.1 >= named  # counted, its rows would abstain; so the threshold falls below them
    assert pooled_threshold(fitted + joined, scores, None, 0.03) == named


def test_a_writer_drawn_for_one_split_gets_only_that_splits_unused_papers() -> None:
    """`eval.draw_papers --split train`: a train writer's papers are train papers for every family
    (the split is the paper id's), and never a paper another writer already wrote about."""
    from eval.draw_papers import drawable
    from rag.evaluation import split_of
    from rag.types import Paper

    papers = [Paper(id=f"p{i}", title=f"Paper {i}", abstract="words " * (60 if i % 5 else 0)) for i in range(200)]
    used = {"p1", "p2", "p3"}
    with_abstract, title_only = drawable(papers, used, "train")
    drawn = with_abstract + title_only
    assert drawn and not {p.id for p in drawn} & used
    assert {split_of(p.id) for p in drawn} == {"train"}
    assert all(p.abstract.strip() for p in with_abstract) and not any(p.abstract.strip() for p in title_only)
    every = drawable(papers, used)
    assert len(every[0]) + len(every[1]) == 197 > len(drawn)


def test_a_missing_source_file_is_reported_not_silently_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run whose generated sets were never built (a fresh clone, a worktree) must say so: the
    figures it prints cover fewer families than the README's, and nothing else would tell."""
    import eval.heldout as heldout

    absent = tmp_path / "absent.jsonl"
    monkeypatch.setattr(heldout, "SOURCES", (heldout.Source("conf-absent", "conf", absent),))
    heldout.main(["--home", f"conf={tmp_path}", "--out", str(tmp_path / "out"), "--quiet"])
    assert f"{absent} is missing" in capsys.readouterr().err
    assert "conf-absent" in json.loads((tmp_path / "out" / "results.json").read_text())["missing"]
