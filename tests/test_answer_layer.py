"""The parts of the answer layer one by one: reading a question, routing it, the relevance
features, the sentence cues, the catalogue's counts and the logistic model's file."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from rag.answer.catalogue import count_text
from rag.answer.cues import (
    APPLIED_TO,
    ASKED_FOR,
    ASKS,
    BACK_REFERENCE,
    COMPARATIVE,
    EXCLUDED,
    MANY,
    NEW_SEARCH,
    QUANTITY,
    REPORTED_VALUE,
    ROLES,
    SETTING_LAST,
    WHICH,
    WIDENED,
)
from rag.answer.pipeline import merge_filters
from rag.answer.query import read, recognise_filters
from rag.answer.relevance import FEATURES, QUESTION_FEATURES, LogisticModel, part_weakest, topic_parts
from rag.answer.route import Intent, Router, asked_field
from rag.app import App
from rag.search.retrieve import SearchResult
from rag.store.keyword import TOKENIZE
from rag.tools import PaperTools
from rag.types import Filters, Hit, Paper
from tests.fakes import corpus, pipeline


def test_every_cue_matches_the_examples_it_is_written_for() -> None:
    """The answer layer's hand rules are data: each cue carries the sentences it is written for."""
    rules = (ASKED_FOR, QUANTITY, REPORTED_VALUE, COMPARATIVE, APPLIED_TO, SETTING_LAST, WHICH)
    for cue in (*ROLES, *ASKS, MANY, BACK_REFERENCE, NEW_SEARCH, *rules, *EXCLUDED, *WIDENED):
        assert cue.examples, cue.name
        for example in cue.examples:
            assert cue.pattern.search(example), (cue.name, example)
    # a comparison with the papers just discussed, and a follow-up's data, are no request for papers
    assert not NEW_SEARCH.pattern.search("Which other papers study this?")
    assert not NEW_SEARCH.pattern.search("Which datasets were used for evaluation?")


@pytest.mark.parametrize(
    "question",
    [
        "Which benchmarks did SimBa get evaluated on?",  # a passive: the thing it was evaluated on
        "Which dataset does AutoBencher use to get its questions?",  # the verb of a clause after "to"
        "Which benchmark does CoRe use when it reports accuracy?",  # the verb of a "when" clause
        "Which datasets did SimBa get fine-tuned on?",  # a hyphenated participle
    ],
)
def test_a_reported_value_is_the_main_clauses_verb(question: str) -> None:
    assert ASKED_FOR.pattern.match(question) and not REPORTED_VALUE.pattern.search(question)


def test_the_cues_tell_roles_apart() -> None:
    background = next(c for c in ROLES if c.name == "background")
    proposal = next(c for c in ROLES if c.name == "proposal")
    problem = "Hallucination remains a challenge for vision-language models."
    idea = "We propose a decoding method that contrasts the image with a blurred copy."
    assert background.pattern.search(problem) and not background.pattern.search(idea)
    assert proposal.pattern.search(idea) and not proposal.pattern.search(problem)


def test_a_question_is_read_once_with_its_filters_authors_and_topic(sample_app: App) -> None:
    catalog = sample_app.index.load().catalog
    q = read("How many ICML 2025 papers did Aaron Mueller write about interpretability?", catalog)
    assert q.filters.venue == "ICML" and q.filters.year == 2025
    assert q.authors == ["Aaron Mueller"] and q.topic == "interpretability"
    assert q.placeholders() == "How many <venue> <year> papers did <author> write about interpretability?"
    possessive = read("List Aaron Mueller's ICML papers on interpretability.", catalog)
    assert (
        possessive.authors == ["Aaron Mueller"]
        and possessive.placeholders() == "List <author> <venue> papers on interpretability."
    )
    unmet = read("Which orals are about interpretability?", catalog)
    assert unmet.unmet and "records no decisions" in unmet.unmet_note and unmet.topic == "interpretability"
    # "non-oral" names a topic here, not a decision the sample lacks
    assert not read("Which papers study speech recognition for non-oral languages?", catalog).unmet
    assert read("How many non-oral papers are there?", catalog).unmet


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which ICLR'25 papers are about diffusion?", Filters(venue="ICLR", year=2025)),
        ("Which ICLR-2025 papers are about diffusion?", Filters(venue="ICLR", year=2025)),
        ("papers at icml25 on diffusion", Filters(venue="ICML", year=2025)),
        ("Which ICLR'24 papers are about diffusion?", Filters(venue="ICLR")),  # no such year: the venue alone
        ("Which position papers are about safety?", Filters(track="position")),
        ("How many ICML position orals are there?", Filters(venue="ICML", track="position", decision="Oral")),
        ("How does PINE remove position bias in language models?", Filters()),
        ("a relevance score that ignores position, then attention with positions", Filters()),
    ],
)
def test_venue_year_and_track_are_read_as_users_write_them(question: str, expected: Filters) -> None:
    facets = {"venue": ["ICLR", "ICML"], "year": ["2025"], "decision": ["Accept (Oral)"], "track": ["Position", "Main"]}
    assert recognise_filters(question, facets)[0] == expected


CONFERENCE_FACETS = {
    "venue": ["ICLR", "ICML"],
    "year": ["2025"],
    "decision": ["Accept (Oral)", "Accept (Poster)", "Accept (Spotlight)"],
    "track": ["main", "position"],
}


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (  # read as a filter, the value left out was counted in its stead
            "How many ICML 2025 orals, not counting position papers?",
            Filters(venue="ICML", year=2025, decision="Oral", excluded=(("track", "position"),)),
        ),
        (
            "how many main-track posters at ICML 2025 (not counting position papers)?",
            Filters(venue="ICML", year=2025, track="main", decision="Poster", excluded=(("track", "position"),)),
        ),
        (
            "How many 2025 spotlights, ICLR excluded?",
            Filters(year=2025, decision="Spotlight", excluded=(("venue", "ICLR"),)),
        ),
        (
            "How many non-poster papers at ICLR 2025?",
            Filters(venue="ICLR", year=2025, excluded=(("decision", "Poster"),)),
        ),
        (  # a value joined to a left-out one is left out too
            "ICLR 2025 papers excluding orals and spotlights: how many?",
            Filters(venue="ICLR", year=2025, excluded=(("decision", "Oral"), ("decision", "Spotlight"))),
        ),
        (  # added back: the orals of every track
            "how many ICML 2025 papers got an oral, counting the position track too?",
            Filters(venue="ICML", year=2025, decision="Oral"),
        ),
        ("How many orals at ICLR 2025, ICML included?", Filters(year=2025, decision="Oral")),
        (  # two decisions are their union, not no filter at all
            "How many ICLR 2025 papers were orals or spotlights?",
            Filters(venue="ICLR", year=2025, excluded=(("decision", "Poster"),)),
        ),
        (
            "How many ICML 2025 spotlights plus orals?",
            Filters(venue="ICML", year=2025, excluded=(("decision", "Poster"),)),
        ),
        ("How many position-track orals were there at ICML 2025?", Filters("ICML", 2025, "position", "Oral")),
        ("Which methods remove position bias without retraining?", Filters()),
        (
            "How many ICML 2025 non-position orals?",
            Filters("ICML", 2025, decision="Oral", excluded=(("track", "position"),)),
        ),
        # ordinary English around a filter is no clause (a helper's attack on the first version)
        ("Which oral papers also study layer pruning of LLMs?", Filters(decision="Oral")),
        ("How many ICML 2025 spotlights are position papers too?", Filters("ICML", 2025, "position", "Spotlight")),
        ("Which spotlight papers, aside from SVBench, benchmark streaming video?", Filters(decision="Spotlight")),
        ("Which ICLR papers dropped the KL term?", Filters(venue="ICLR")),
        ("Didn't an ICLR paper propose LLM-Streamline?", Filters(venue="ICLR")),
        ("Why don't ICML 2025 position papers discuss compute?", Filters("ICML", 2025, "position")),
        ("Which papers study speech recognition for non-oral languages?", Filters()),
    ],
)
def test_a_clause_that_leaves_a_value_out_or_adds_it_back_is_read_as_such(question: str, expected: Filters) -> None:
    assert recognise_filters(question, CONFERENCE_FACETS)[0] == expected


def test_a_count_of_values_named_as_one_list_says_how_many_of_each(sample_app: App) -> None:
    """ "ICLR vs ICML", "orals and how many posters": the union's total alone answers neither reading."""
    reading = recognise_filters("How many ICML 2025 orals vs posters?", CONFERENCE_FACETS)
    assert reading.listed == {"decision": ["Oral", "Poster"]}
    assert recognise_filters("How many orals and how many posters at ICLR?", CONFERENCE_FACETS).listed
    assert not recognise_filters("Which ICLR papers build on ICML work?", CONFERENCE_FACETS).listed
    catalog = sample_app.index.load().catalog
    iclr, icml = catalog.count(Filters(venue="ICLR")), catalog.count(Filters(venue="ICML"))
    answer = sample_app.pipeline.answer("How many papers are there at ICLR versus ICML?")
    assert answer.mode == "catalogue" and f"**{iclr + icml}**" in answer.text
    assert f"By venue: ICLR **{iclr}**, ICML **{icml}**." in answer.text


def test_a_count_leaves_out_what_its_clause_excludes(sample_app: App) -> None:
    """Over the sample's 20 ICML 2025 papers, 3 of them position papers: "not counting position
    papers" counts the other 17 (read as a filter, it counted the 3), and "position papers
    included" all 20; the count tool leaves out the same papers."""
    catalog = sample_app.index.load().catalog
    icml = catalog.count(Filters(venue="ICML", year=2025))
    position = catalog.count(Filters(venue="ICML", year=2025, track="position"))
    assert 0 < position < icml
    left_out = sample_app.pipeline.answer("How many ICML 2025 papers are there, not counting position papers?")
    assert left_out.mode == "catalogue" and f"**{icml - position}**" in left_out.text
    assert 'not in track/area "position"' in left_out.text
    added = sample_app.pipeline.answer("How many ICML 2025 papers are there, position papers included?")
    assert f"**{icml}**" in added.text
    counted = PaperTools(sample_app).count_papers(venue="ICML", year=2025, not_track="position")
    assert counted["count"] == icml - position and counted["filters"]["excluded"] == {"track": ["position"]}


def test_the_search_is_given_the_question_without_the_words_that_named_an_applied_filter(sample_app: App) -> None:
    """The keyword index reads authors, venue and year, so among papers the filter already chose
    those words only favour the shortest texts; a filter the collection cannot apply keeps its
    words, and a question without filters is searched as asked."""
    catalog = sample_app.index.load().catalog
    q = read("How many ICML 2025 papers did Aaron Mueller write about interpretability?", catalog)
    applied = Filters(venue="ICML", year=2025, author="Aaron Mueller")
    assert q.searched(applied) == "How many papers did write about interpretability?"
    # a caller's venue in place of the question's: the question's venue words stay
    assert q.searched(replace(applied, venue="ICLR")) == "How many ICML papers did write about interpretability?"
    orals = read("Which orals are about interpretability?", catalog)
    assert orals.searched(orals.filters) == orals.text
    plain = read("Which papers use sparse autoencoders?", catalog)
    assert plain.searched(plain.filters) == plain.text


def test_an_answer_lists_an_authors_papers_found_by_the_topic_alone() -> None:
    """End to end over a fake retriever that records its queries: the author becomes the filter,
    the papers listed come from a search of the rest, and the answer cites the author's paper on
    the topic first. (Whether to answer is the whole question's decision, not tested here: the
    threshold is lowered so that the fake's hashing embedder answers.)"""
    pipe, retriever = pipeline(abstain_threshold=0.0)
    asked: list[tuple[str, Filters]] = []
    search = retriever.search

    def recording(query: str, k: int = 5, filters: Filters = Filters(), mode: object = None) -> SearchResult:
        asked.append((query, filters))
        return search(query, k, filters, mode)

    retriever.search = recording  # type: ignore[method-assign]
    answer = pipe.answer("Which papers by Grace Hopper are about gradient projection?")
    assert asked and all(filters.author == "Grace Hopper" for _, filters in asked)
    topical = [query for query, _ in asked if "Grace" not in query and "Hopper" not in query]
    assert topical == ["Which papers by are about gradient projection?"]
    assert [c.paper.id for c in answer.citations][:1] == ["p2"]
    # two authors named: neither is a filter, so neither name leaves the query
    both = read("Which papers by Alan Turing and Grace Hopper report variance?", retriever.catalog)
    assert len(both.authors) == 2 and both.searched(merge_filters(Filters(), both)) == both.text


def test_a_filtered_question_with_a_topic_is_decided_on_that_topic_among_the_filtered_papers() -> None:
    """Every paper of a filtered search holds the filter, so whether to answer "Which papers by
    Grace Hopper are about gradient projection?" is the topic's decision among her papers, against
    the shipped model fitted for it (`filtered`); a question naming no filter keeps the whole
    question's. Thresholds are set here to 0 or 1 so that each decision shows which one it read."""
    pipe, _ = pipeline()
    relevance = pipe.relevance
    assert relevance.filtered is not None and relevance.filtered.features
    filtered, plain = (
        "Which papers by Grace Hopper are about gradient projection?",
        "Which papers are about gradient projection?",
    )
    relevance.answerable = replace(relevance.answerable, thresholds={"abstain": 0.0})
    relevance.filtered = replace(relevance.filtered, thresholds={"abstain": 1.0})
    assert pipe.answer(filtered).abstained and not pipe.answer(plain).abstained
    relevance.answerable = replace(relevance.answerable, thresholds={"abstain": 1.0})
    relevance.filtered = replace(relevance.filtered, thresholds={"abstain": 0.0})
    assert not pipe.answer(filtered).abstained and pipe.answer(plain).abstained
    # a user's own threshold decides both
    relevance.abstain_threshold = 1.0
    assert pipe.answer(filtered).abstained


@pytest.mark.parametrize(
    ("question", "back"),
    [
        ("Who are its authors?", True),
        ("How much better is it?", True),
        ("What data did they test that method on?", True),
        ("And on ImageNet?", True),
        ("Which papers use graph neural networks?", False),
        ("Who wrote the paper on cryptic crosswords?", False),
        ("What is the capital of Australia?", False),
    ],
)
def test_a_question_refers_back_only_when_it_points_back_or_has_no_subject(question: str, back: bool) -> None:
    assert read(question).refers_back is back


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("How many <venue> <year> papers are there?", Intent.COUNT),
        ("papers by <author>", Intent.LIST),
        ("Who wrote the paper on cryptic crosswords?", Intent.AUTHORS_OF),
        ("Was the REGENT paper an <decision>?", Intent.FIELD_OF),
        ("Which paper introduced PersuasionBench?", Intent.CONTENT),
        ("How many layers does the proposed transformer use?", Intent.CONTENT),
        ("What did the authors of the sunk cost paper find?", Intent.CONTENT),
        # a topic that holds a field word is a topic, not a field asked for
        ("Has the Decision Transformer been applied to robotics?", Intent.CONTENT),
        ("Has decision space been applied to robotics?", Intent.CONTENT),
        ("What decision did the Decision Transformer paper get?", Intent.FIELD_OF),
        # the reader folds "papers" into a decision or track ("Which orals are there?")
        ("Which <decision> are there?", Intent.LIST),
        ("Which <track> are about safety?", Intent.LIST),
    ],
)
def test_the_router_sends_catalogue_questions_to_the_catalogue_only(question: str, intent: Intent) -> None:
    assert Router.load().intent(question) is intent


def test_the_field_a_field_question_asks_for() -> None:
    assert asked_field("What area is the Hessian paper filed under?") == "track"
    assert asked_field("Was it a spotlight or a poster?") == "decision"


def test_the_model_file_round_trips(tmp_path: Path) -> None:
    model = LogisticModel(("a", "b"), (1.5, -2.0), 0.25, (0.1, 0.2), (1.0, 2.0), {"abstain": 0.4}, {"auc": 0.9})
    model.save(tmp_path / "m.json")
    again = LogisticModel.load(tmp_path / "m.json")
    rows = np.array([[0.3, 0.9], [1.0, -1.0]])
    assert np.allclose(again.probabilities(rows), model.probabilities(rows)) and again.thresholds == {"abstain": 0.4}


def test_relevance_features_see_a_missing_rare_word_and_a_missing_name(sample_app: App) -> None:
    relevance = sample_app.pipeline.relevance
    hits = sample_app.search("PersuasionBench persuasion benchmark", k=2).hits
    present = relevance.assess("Which paper introduced PersuasionBench?", hits[:1]).papers[0].features
    absent = relevance.assess("Which paper introduced PersuasionZork?", hits[:1]).papers[0].features
    at = {name: i for i, name in enumerate(FEATURES)}
    assert present[at["names_missing"]] == 0.0 and absent[at["names_missing"]] == 1.0
    assert present[at["missing_rarity"]] < absent[at["missing_rarity"]]
    assert present[at["rare_coverage"]] == 1.0 and absent[at["rare_coverage"]] < 1.0


def test_the_words_of_an_applied_filter_count_as_held_by_every_paper(sample_app: App) -> None:
    """Every paper a filtered search returns holds its filter, whatever its abstract says: the
    author's name a question names is not a word the sources lack, while an author no filter
    applied still is."""
    catalog = sample_app.index.load().catalog
    paper = next(p for p in catalog.select(Filters(), 200) if p.authors and p.abstract)
    author = paper.authors[0]
    q = read(f"Which papers by {author} are about {paper.title}?", catalog)
    applied = merge_filters(Filters(), q)
    assert applied.author == author and q.applied_words(applied) == author
    assert q.applied_words(replace(applied, author=None)) == ""
    relevance = sample_app.pipeline.relevance
    hits = [Hit(paper, 1.0, ranks={"fused": 1})]
    unfiltered = relevance.assess(q.text, hits)
    filtered = relevance.assess(q.text, hits, held=q.applied_words(applied))
    at = {name: i for i, name in enumerate(FEATURES)}
    assert filtered.papers[0].features[at["coverage"]] > unfiltered.papers[0].features[at["coverage"]]
    key_absent = QUESTION_FEATURES.index("key_absent")
    assert unfiltered.question_features[key_absent] > filtered.question_features[key_absent]


def test_a_count_with_a_topic_counts_the_papers_that_mention_it(sample_app: App) -> None:
    catalog = sample_app.index.load().catalog
    answer = sample_app.pipeline.answer("How many ICML 2025 papers are about interpretability?")
    icml = catalog.select(Filters(venue="ICML", year=2025), 100)
    expected = [p for p in icml if set(TOKENIZE("interpretability")) <= set(TOKENIZE(f"{p.title} {p.abstract}"))]
    assert answer.mode == "catalogue" and f"**{len(expected)}** of the 20 papers" in answer.text
    assert {c.paper.id for c in answer.citations} == {p.id for p in expected[:10]}


def test_a_count_with_alternative_topics_counts_the_papers_that_mention_either(sample_app: App) -> None:
    catalog = sample_app.index.load().catalog
    answer = sample_app.pipeline.answer("How many ICML 2025 papers are about interpretability or benchmarks?")
    icml = catalog.select(Filters(venue="ICML", year=2025), 100)
    texts = {p.id: set(TOKENIZE(f"{p.title} {p.abstract}")) for p in icml}
    either = [p for p in icml if any(set(TOKENIZE(w)) <= texts[p.id] for w in ("interpretability", "benchmarks"))]
    both = [p for p in icml if set(TOKENIZE("interpretability benchmarks")) <= texts[p.id]]
    assert len(either) > len(both)  # the sample tells the two readings apart
    assert answer.mode == "catalogue" and f"**{len(either)}** of the 20 papers" in answer.text
    assert '"interpretability" or "benchmarks"' in answer.text
    assert read("Which papers study either safety or privacy?").alternatives == ["safety", "privacy"]
    assert read("Which papers study safety?").alternatives == []


def test_a_count_names_only_the_topic_words_a_paper_must_hold(sample_app: App) -> None:
    """Function words left over from the phrasing ("accepted as orals" leaves "as") filter
    nothing: the count is the filters' own, and the answer never claims that every paper
    "mentions 'as'"; beside a real topic they are left out of what the answer says was counted."""
    plain = sample_app.pipeline.answer("How many ICML 2025 papers are there?")
    leftover = sample_app.pipeline.answer("How many ICML 2025 papers are listed as such?")
    assert plain.mode == leftover.mode == "catalogue" and "**20**" in plain.text
    assert leftover.text == plain.text and "mention" not in leftover.text
    mixed = sample_app.pipeline.answer("How many ICML 2025 papers are about interpretability, as such?")
    alone = sample_app.pipeline.answer("How many ICML 2025 papers are about interpretability?")
    assert '"interpretability"' in mixed.text and mixed.text == alone.text


def test_relevance_reads_the_fusions_rank_not_the_reordered_one(sample_app: App) -> None:
    """The search reorders its first papers by best sentence; the relevance models read each
    paper's place in the fusion's order, the signal they were fitted on, so listing the same
    papers in another order changes no probability and no confidence."""
    question = "Which benchmark measures how persuasive language models are?"
    hits = sample_app.search(question, k=5).hits
    assert all("fused" in h.ranks for h in hits)
    relevance = sample_app.pipeline.relevance
    as_searched = relevance.assess(question, hits)
    reversed_ = relevance.assess(question, list(reversed(hits)))
    by_id = {p.hit.paper.id: p.probability for p in reversed_.papers}
    # (to float noise: the model embeds a batch in another order)
    assert all(abs(by_id[p.hit.paper.id] - p.probability) < 1e-6 for p in as_searched.papers)
    assert abs(as_searched.confidence - reversed_.confidence) < 1e-6
    rank = FEATURES.index("rank")
    assert sorted(p.features[rank] for p in as_searched.papers) == [1 / 5, 1 / 4, 1 / 3, 1 / 2, 1.0]


@pytest.mark.slow
def test_a_title_only_paper_is_said_to_be_one(tmp_path: Path) -> None:
    from tests.conftest import hash_app

    data = tmp_path / "t.jsonl"
    data.write_text('{"id": "t1", "title": "Sparse Autoencoders for Protein Language Models", "abstract": ""}\n')
    app = hash_app(tmp_path / "home")
    app.ingest([data], progress=False)
    hits = app.search("sparse autoencoders protein language models", k=1).hits
    assessment = app.pipeline.relevance.assess("sparse autoencoders for protein language models", hits)
    draft = app.pipeline.extractive.compose("sparse autoencoders for protein models", [(1, assessment.papers[0])], {})
    assert "title only: the collection has no abstract for this paper" in draft.text
    assert "support 1.00" not in draft.text


def test_a_count_that_mixes_listed_and_idless_papers_says_which_is_which() -> None:
    """An id-less copy joins a listed paper only on proof, so a count over both kinds gives the
    listed figure apart and names the files of the others, which may repeat listed papers."""
    pasted = Paper(
        id="a-1",
        own_id=False,
        source="/data/pasted/page-004.txt",
        venue="ICML",
        year=2025,
        abstract="We show that pasted abstracts can be counted twice when their listed copy has none.",
    )
    pipe, _ = pipeline([*corpus(), pasted])
    mixed = pipe.answer("How many ICML 2025 papers are there?")
    assert mixed.mode == "catalogue" and "**3**" in mixed.text
    assert "**2** with their own id" in mixed.text and "1 without one (from page-004.txt)" in mixed.text
    assert "may repeat a paper counted among the 2" in mixed.text
    only_listed = pipeline()[0].answer("How many ICML 2025 papers are there?")
    assert "**2**" in only_listed.text and "without" not in only_listed.text
    assert count_text(1, 1, ["a/x.txt", "b/x.txt"], "") == (
        "The collection has **2** papers (catalogue count): **1** with its own id (such as an OpenReview id or DOI) "
        "and 1 without one (from x.txt). That paper could not be matched to a paper with an id (no shared abstract "
        "or coined title), so it may repeat a paper counted among the 1."
    )
    assert count_text(1, 0, [], "") == "The collection has **1** paper (catalogue count)."


def test_a_paper_kept_alone_is_quoted_at_more_length_than_one_of_several(sample_app: App) -> None:
    """One kept paper gets `alone` sentences, or `alone_method` when the question asks how (its
    mechanism is often the scorer's fourth sentence); with several kept the lead gets `lead` and the
    others `per_paper`. Quotes stay verbatim sentences of their own abstract."""
    question = "How do sparse autoencoders find features in protein language models?"
    hits = sample_app.search(question, k=3).hits
    papers = sample_app.pipeline.relevance.assess(question, hits).papers
    extractive = sample_app.pipeline.extractive
    weights = sample_app.pipeline.relevance.weights(question)

    def quotes(text: str) -> list[str]:
        return [line[3:-1] for line in text.splitlines() if line.startswith('- "')]

    alone = quotes(extractive.compose(question, [(1, papers[0])], weights).text)
    assert len(alone) == extractive.alone_method == 4
    assert all(q in papers[0].sentences for q in alone)
    which = "Which paper finds features in protein language models with sparse autoencoders?"
    assert len(quotes(extractive.compose(which, [(1, papers[0])], weights).text)) == extractive.alone == 3
    several = extractive.compose(question, [(1, papers[0]), (2, papers[1])], weights).text
    lead, other = several.split("\n\n**")[1:3]
    assert len(quotes(lead)) == extractive.lead == 2 and len(quotes(other)) == extractive.per_paper
    assert set(quotes(lead)) <= set(alone)  # the best two of the three, not other sentences


def test_a_setting_the_leading_paper_does_not_name_is_not_answered(sample_app: App) -> None:
    """A yes/no question whether a method was carried to a setting: the setting is read after the
    participle, and it must be named by the paper the answer leads with, in its words or close in
    meaning; a question that is no such yes/no question is not read at all."""
    relevance = sample_app.pipeline.relevance

    def unheld(question: str, *cited: Paper) -> str | None:  # the phrase not named by the lead
        found = relevance.unheld_setting(question, cited)
        return found and found[1]

    paper = next(p for p in sample_app.index.load().catalog.select(Filters(), 100) if p.label == "SAeUron")
    method = "Has concept unlearning with sparse autoencoders been"
    assert unheld(f"{method} applied to power grid networks?", paper) == "power grid networks"
    assert unheld(f"{method} applied to text-to-image diffusion models?", paper) is None
    assert unheld(f"{method} evaluated on image generators?", paper) is None  # close in meaning
    # "diffusion models" held, "audio" not: the rarer word weighs more, so less than 0.60 of the setting is held
    assert unheld(f"{method} applied to audio diffusion models?", paper) == "audio diffusion models"
    assert unheld("Which papers apply unlearning to power grid networks?", paper) is None
    short = "Is there work on concept unlearning with sparse autoencoders for power grid networks?"
    assert unheld(short, paper) == "power grid networks"
    long = (
        "Is there work that removes unwanted concepts from a generator by steering the features a sparse "
        "autoencoder learned, for power grid networks?"
    )
    assert unheld(long, paper) is None  # the last phrase of a long question: one detail of many
    # a setting the abstract writes in the other form is named: an acronym it spells out, or words it abbreviates
    spelled = replace(paper, abstract=f"{paper.abstract} It is tested on large language models.")
    abbreviated = replace(paper, abstract=f"{paper.abstract} It is tested on VLMs.")
    assert unheld(f"{method} applied to LLMs?", spelled) is None
    assert unheld(f"{method} applied to vision-language models?", abbreviated) is None
    assert unheld(f"{method} applied to GNNs?", abbreviated) == "GNNs"
    titled = replace(paper, abstract="")
    assert unheld(f"{method} applied to power grid networks?", titled) is None  # a title alone says too little
    # a paper without an abstract cited first does not lead: the first with one does, unless that title names both
    grid = f"{method} applied to power grid networks?"
    other = Paper(id="t", title="Reflective Gaussian Splatting")
    assert relevance.unheld_setting(grid, [other, paper]) == (paper, "power grid networks")
    both_titled = Paper(id="b", title="Concept Unlearning with Sparse Autoencoders in Power Grid Networks")
    assert unheld(grid, both_titled, paper) is None
    answer = sample_app.pipeline.answer(f"{method} applied to power grid networks?")
    assert answer.abstained and "power grid networks" in answer.text and "SAeUron" in answer.text
    answered = sample_app.pipeline.answer(f"{method} applied to text-to-image diffusion models?")
    assert not answered.abstained and answered.citations[0].paper.label == "SAeUron"
    chat = sample_app.chat()  # the paper the abstention names is what a follow-up refers to
    assert chat.ask(f"{method} applied to power grid networks?").abstained
    follow_up = chat.ask("What were the main results?")
    assert not follow_up.abstained and follow_up.citations[0].paper.label == "SAeUron"
    assert unheld(f"{method} tried on small models and then on big ones?", paper) is None
    filtered = sample_app.pipeline.answer(
        f"Is there work on concept unlearning with sparse autoencoders at {paper.venue}?"
    )
    assert "does not mention" not in filtered.text  # a filter the question names is no setting
    # the method must be named too, in its words or close in meaning: the paper found may hold only the setting
    setting = "applied to text-to-image diffusion models?"
    assert unheld(f"Has Dirichlet process clustering been {setting}", paper) == ("Dirichlet process clustering")
    assert unheld("Has anyone used quantum annealing for image generators?", paper) == (
        "quantum annealing"  # shown without the asking words
    )
    both = replace(paper, id="both", abstract=f"{paper.abstract} We cluster with a Dirichlet process.")
    dirichlet = f"Has Dirichlet process clustering been {setting}"
    assert unheld(dirichlet, paper, both) is None  # another cited paper names both
    assert unheld(dirichlet, paper, replace(paper, id="one")) == "Dirichlet process clustering"
    assert unheld(f"Has removing concepts with sparse autoencoder features been {setting}", paper) is None
    assert unheld(f"Are there sparse-autoencoder methods {setting}", paper) is None  # by its parts
    # the method is named only when most of its words are held: "autoencoder" alone is another method
    assert unheld(f"Has autoencoder compression been {setting}", paper) == "autoencoder compression"
    assert unheld(f"Has concept bottleneck models been {setting}", paper) == "concept bottleneck models"


def test_unheld_counts_only_what_the_papers_lack_weighted_by_rarity(sample_app: App) -> None:
    relevance = sample_app.pipeline.relevance
    paper = next(p for p in sample_app.index.load().catalog.select(Filters(), 100) if p.label == "PLNL")
    own_words = " ".join(paper.abstract.split()[:12])
    assert relevance.unheld(own_words, [paper]) == 0.0
    absent = relevance.unheld("zygomorphic", [paper])
    assert 0.9 < absent < 1.3  # a word in no text counts about one (1 + log 2 / log texts)
    assert relevance.unheld(f"{own_words} zygomorphic", [paper]) == absent
    assert 0 < relevance.unheld("model", []) < absent  # a common word counts little


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        ("Which papers combine GNNs with LLMs?", ["combine GNNs", "LLMs"]),
        ("How do papers reduce object hallucination in VLMs?", ["reduce object hallucination", "VLMs"]),
        ("Which papers use sparse autoencoders, in vision?", ["sparse autoencoders", "vision"]),
        ("What are the main approaches to detecting hallucinations?", ["detecting hallucinations"]),
        ("Which papers are there?", []),
    ],
)
def test_topic_parts_are_the_runs_of_words_that_name_a_topic(question: str, parts: list[str]) -> None:
    assert topic_parts(question) == parts


def test_the_weakest_part_is_absolute_or_relative_to_the_best_paper() -> None:
    cosines = np.array([[0.8, 0.3], [0.5, 0.35], [0.9, 0.1]])  # papers x parts
    assert part_weakest(cosines).tolist() == pytest.approx([0.3, 0.35, 0.1])
    # relative: the second part's best is 0.35, so its gap weighs as much as the first part's
    assert part_weakest(cosines, relative=True).tolist() == pytest.approx([-0.1, -0.4, -0.25])


def _papers_on_two_topics() -> list[Paper]:
    return [
        Paper(
            id="both",
            title="Graph neural networks meet language models",
            abstract="We combine a graph neural network encoder with a large language model to answer "
            "questions over knowledge graphs.",
        ),
        Paper(
            id="graphs",
            title="Message passing for molecules",
            abstract="We propose a message-passing graph neural network for molecular property prediction.",
        ),
        Paper(
            id="language",
            title="Instruction tuning at scale",
            abstract="We fine-tune large language models on instructions so that they follow user requests.",
        ),
    ]


def test_a_plural_question_lists_only_papers_that_hold_every_topic(sample_app: App) -> None:
    relevance = sample_app.pipeline.relevance
    question = "Which papers combine graph neural networks with language models?"
    papers = relevance.assess(question, [Hit(p, 1.0) for p in _papers_on_two_topics()]).papers
    cosines = relevance.part_cosines(question, papers)
    assert cosines is not None and cosines.shape == (3, len(topic_parts(question)))
    weakest = part_weakest(cosines, relative=True)
    assert weakest[0] > max(weakest[1], weakest[2])  # the one paper about both topics holds its weakest best
    everything = {"keep": 0.0, "keep_many": 0.0, "keep_share": 0.0}
    relevance.paper = replace(relevance.paper, thresholds=everything)
    assert relevance.listed(question, papers, many=True) == [0, 1, 2]  # no floor: every kept paper
    relevance.paper = replace(relevance.paper, thresholds={**everything, "part_floor": 1.0, "part_relative": 0.0})
    best = max(range(3), key=lambda i: papers[i].probability)
    assert relevance.listed(question, papers, many=True) == [best]  # never the most probable paper left out
    assert relevance.listed(question, papers, many=False) == [0, 1, 2]  # a singular question is not listed
    assert relevance.listed("Which papers use graph neural networks?", papers, many=True) == [0, 1, 2]  # one topic


def test_a_question_model_reads_its_features_by_name() -> None:
    """The answerable model reads every question feature and the filtered model two of them, each
    by name from the same summary: a one-feature model moves with its own column only."""
    from rag.answer.relevance import question_probability

    one = LogisticModel(("address",), (2.0,), 0.0, (0.0,), (1.0,))
    summary = np.zeros(len(QUESTION_FEATURES))
    summary[QUESTION_FEATURES.index("paper_best")] = 5.0
    assert question_probability(one, summary) == pytest.approx(0.5)
    summary[QUESTION_FEATURES.index("address")] = 1.0
    assert question_probability(one, summary) == pytest.approx(1 / (1 + np.exp(-2.0)))


def test_trees_walked_with_numpy_give_scikit_learns_probabilities_and_round_trip(tmp_path: Path) -> None:
    """The answerable trees are fitted with scikit-learn and walked with numpy at run time: the
    export must give the fitted model's own probabilities, missing values included, and survive
    the model file."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    from rag.answer.trees import TreeModel, from_sklearn, load_model

    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 3))
    y = ((x[:, 0] > 0) & (x[:, 1] < 0.5) | (x[:, 2] > 1.2)).astype(float)
    fitted = HistGradientBoostingClassifier(max_depth=2, max_iter=50, random_state=0).fit(x, y)
    model = from_sklearn(fitted, ("a", "b", "c"))
    rows = rng.normal(size=(60, 3))
    rows[::7, 1] = np.nan
    assert np.allclose(model.probabilities(rows), fitted.predict_proba(rows)[:, 1], atol=1e-9)
    tree = TreeModel(model.features, model.baseline, model.trees, {"abstain": 0.3})
    tree.save(tmp_path / "m.json", "answerable")
    LogisticModel(("a",), (1.0,), 0.0, (0.0,), (1.0,)).save(tmp_path / "m.json", "paper")
    again = load_model(tmp_path / "m.json", "answerable")
    assert isinstance(again, TreeModel) and again.thresholds == {"abstain": 0.3}
    assert np.allclose(again.probabilities(rows), model.probabilities(rows))
    assert isinstance(load_model(tmp_path / "m.json", "paper"), LogisticModel)
    with pytest.raises(ValueError, match="reads 3 features"):
        model.probabilities(rows[:, :2])


def test_the_answerable_row_holds_the_runner_up_and_the_most_probable_papers_signals() -> None:
    from rag.answer.relevance import ANSWERABLE_FEATURES, answerable_row

    question = np.arange(len(QUESTION_FEATURES), dtype=float)
    papers = np.vstack([np.full(len(FEATURES), 1.0), np.full(len(FEATURES), 2.0), np.full(len(FEATURES), 3.0)])
    row = answerable_row(question, papers, np.array([0.2, 0.7, 0.5]))
    assert len(row) == len(ANSWERABLE_FEATURES)
    assert row[ANSWERABLE_FEATURES.index("paper_second")] == 0.5
    assert row[ANSWERABLE_FEATURES.index("top_cos_best")] == 2.0  # the most probable paper's, not the first's
    assert list(row[: len(QUESTION_FEATURES)]) == list(question)
    assert len(answerable_row(question, np.zeros((0, len(FEATURES))), np.zeros(0))) == len(ANSWERABLE_FEATURES)


def test_a_question_without_a_subject_reads_as_less_specific(sample_app: App) -> None:
    """The specificity features: a question with no subject of its own ("How well does it work?")
    holds only common words, a named one a rare word; each word a question adds adds to its rarity."""
    relevance = sample_app.pipeline.relevance
    hits = sample_app.search("PersuasionBench persuasion benchmark", k=2).hits
    vague = relevance.assess("How well does it work?", hits).question_features
    named = relevance.assess("Which paper introduced PersuasionBench?", hits).question_features
    longer = relevance.assess("Which paper introduced PersuasionBench for persuasion?", hits).question_features
    rarest, rarity = QUESTION_FEATURES.index("q_rarest"), QUESTION_FEATURES.index("q_rarity")
    assert vague[rarest] < named[rarest] == longer[rarest]
    assert named[rarity] < longer[rarity]


def test_a_follow_up_reading_is_decided_by_the_fallback_model_and_a_new_question_by_the_trees(sample_app: App) -> None:
    """A model file holding trees holds a logistic `fallback` beside them, which decides a chat's
    turn read as a follow-up (with its history: the trees were fitted on questions asked first);
    a later turn that is a new question, searched as asked, is decided like a first question."""
    relevance = sample_app.pipeline.relevance
    never = LogisticModel(("paper_best",), (0.0,), -12.0, (0.0,), (1.0,), {"abstain": 0.5})
    relevance.fallback = never
    session = sample_app.chat()
    first = session.ask("Which paper introduced PersuasionBench?")
    follow_up = session.ask("How was it evaluated?")
    new_question = session.ask("Which papers use sparse autoencoders?")
    assert not first.abstained and first.confidence is not None and first.confidence > 0.5
    assert follow_up.abstained and follow_up.confidence is not None and follow_up.confidence < 1e-4
    assert follow_up.threshold == 0.5 and first.threshold == pytest.approx(relevance.floor(), abs=1e-4)
    assert not new_question.abstained and new_question.threshold == pytest.approx(relevance.floor(), abs=1e-4)


def test_a_topic_decided_without_a_filtered_model_keeps_the_answerable_models_threshold(
    sample_app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filtered question's topic is assessed as a question asked first, so without a `filtered`
    model its threshold is the answerable trees', even on a follow-up reading (whose own decision
    is the fallback's)."""
    relevance = sample_app.pipeline.relevance
    monkeypatch.setattr(relevance, "filtered", None)
    assert relevance.fallback is not None
    trees, fallback = relevance.answerable.thresholds["abstain"], relevance.fallback.thresholds["abstain"]
    assert trees != fallback
    assert relevance.own_floor(later_turn=True, filtered=True) == trees
    assert relevance.own_floor(later_turn=True) == fallback


def test_trees_decide_only_with_the_embedder_they_were_fitted_on(tmp_path: Path) -> None:
    """With another embedder than the local MiniLM (OpenAI's, the tests' hash), the cosines sit on
    another scale: the file's logistic fallback decides everything; a file without a fallback
    (a logistic answerable model) is read as it is."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    from rag.answer.trees import TreeModel, from_sklearn, question_models

    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, 2))
    trees = from_sklearn(HistGradientBoostingClassifier(max_iter=5).fit(x, x[:, 0] > 0), ("a", "b"))
    logistic = LogisticModel(("a",), (1.0,), 0.0, (0.0,), (1.0,), {"abstain": 0.4})
    path = tmp_path / "m.json"
    logistic.save(path, "answerable")
    assert question_models(path, "local") == (logistic, None) == question_models(path, "hash")
    TreeModel(trees.features, trees.baseline, trees.trees, {"abstain": 0.3}).save(path, "answerable")
    logistic.save(path, "fallback")
    answerable, fallback = question_models(path, "local")
    assert isinstance(answerable, TreeModel) and fallback == logistic
    assert question_models(path, "openai") == (logistic, None) == question_models(path, "hash")
