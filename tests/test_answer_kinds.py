"""Answers by kind, fast and without model files (tests/fakes.py): how-it-works answers give the
mechanism, does-it-work questions about a named method are answered, lists are never empty, a
filter the collection cannot apply is said, one period after names and author lists, title-only
papers are checked against their title, and the gate's rules cost no embedding."""

from __future__ import annotations

from rag.catalog import Catalog
from rag.catalog_answers import count_text
from rag.chat import ChatSession
from rag.compose import ExtractiveAnswerer, also_relevant_line
from rag.evidence import Scored
from rag.gate import ABSTAIN_SENTINEL, Gate
from rag.question import Kind, parse, wanted_unit
from rag.types import Claim, Hit, Paper
from tests.fakes import corpus, pipeline

FOONET = Paper(
    id="f1",
    title="FooNet: Parts-Based Image Models",
    venue="ICLR",
    year=2025,
    authors=["Ada Lovelace"],
    abstract="Existing image models fail to generalise to unseen part layouts. "
    "We propose FooNet, a model that reasons over object parts. "
    "FooNet encodes each image by decomposing it into a set of part tokens. "
    "The part tokens are then trained with a contrastive loss against their captions. "
    "FooNet outperforms strong baselines by 5.2% on PartBench. "
    "Code is available online.",
)


def test_how_it_works_gives_the_defining_sentence_then_the_mechanism() -> None:
    pipe, _ = pipeline([FOONET, *corpus()])
    answer = pipe.answer("How does FooNet work?")
    assert answer.kind == "how-it-works" and not answer.abstained
    texts = [c.text for c in answer.claims]
    assert texts[0].startswith("We propose FooNet")
    assert any("decomposing" in t for t in texts) and any("contrastive loss" in t for t in texts)
    assert not any("outperforms" in t or "Existing" in t or "Code" in t for t in texts)
    assert {c.paper.id for c in answer.citations} == {"f1"}


def test_what_is_gives_the_mechanism_not_the_motivation() -> None:
    pipe, _ = pipeline([FOONET, *corpus()])
    answer = pipe.answer("What is FooNet?")
    texts = [c.text for c in answer.claims]
    assert texts[0].startswith("We propose FooNet") and any("decomposing" in t for t in texts)
    assert not any("fail to generalise" in t or "outperforms" in t for t in texts)


def test_how_well_a_named_method_works_asks_for_its_results() -> None:
    """(The answer itself is tested with the real model on the sample: the hashing embedder's
    cosines are too low for the gate's floor.)"""
    assert parse("How well does GradSurg work?").kind is Kind.FINDING
    assert parse("How does GradSurg perform on NYUv2?").kind is Kind.FINDING
    follow_up = parse("How well does it work?")
    assert follow_up.kind is Kind.FINDING and follow_up.subject == "" and follow_up.pronoun


def _rows(cosines: list[float]) -> tuple[list[Hit], list[Scored]]:
    papers = [Paper(id=f"s{i}", title=f"Paper {i}", abstract=f"Sentence {i} about nothing much.") for i in range(3)]
    hits = [Hit(p, 1.0) for p in papers]
    scored = [Scored(0.5 * c, c, n, f"Sentence {n - 1} about nothing much.") for n, c in enumerate(cosines, 1)]
    return hits, sorted(scored, key=lambda r: -r.score)


def test_a_list_is_never_empty_it_shows_the_nearest_or_abstains() -> None:
    question = parse("Which papers are about sparse autoencoders?")
    hits, scored = _rows([0.28, 0.25, 0.1])  # none reaches the list's closeness cut (cosine 0.3)
    draft = ExtractiveAnswerer().compose(question, hits, scored, Gate(True, "", 0.28))
    assert "nearest" in draft.text and [c.cites for c in draft.claims] == [[1], [2]]
    hits, scored = _rows([0.15, 0.1, 0.05])  # nothing is even near: abstain, never an empty list
    draft = ExtractiveAnswerer().compose(question, hits, scored, Gate(True, "", 0.15))
    assert ABSTAIN_SENTINEL in draft.text and not draft.claims


def test_a_filter_the_collection_cannot_apply_is_said_not_dropped() -> None:
    papers = [Paper(id=p.id, title=p.title, abstract=p.abstract, authors=p.authors, venue=p.venue) for p in corpus()]
    pipe, _ = pipeline(papers)  # no decisions, no tracks
    listed = pipe.answer("Which orals are about gradient projection?")
    assert not listed.abstained and "records no decisions" in listed.text and "not restricted to orals" in listed.text
    count = pipe.answer("How many orals are there?")
    assert count.abstained and "records no decisions" in count.text and "96" not in count.text
    position = pipe.answer("Which position papers are there?")
    assert position.abstained and "no position track" in position.text
    with_decisions, _ = pipeline()  # the corpus has orals and posters, no spotlights
    assert parse("Which orals are there?", with_decisions.catalog()).unmet == []
    assert "no spotlight" in parse("Which spotlights are there?", with_decisions.catalog()).unmet_note


def test_never_a_double_period_after_cut_author_lists_or_labels() -> None:
    papers = corpus()
    papers[0].authors_truncated = True
    pipe, _ = pipeline(papers)
    for question in ("Which papers by Alan Turing are in the collection?", "Who wrote GradSurg?"):
        answer = pipe.answer(question)
        assert "et al." in answer.text and "et al.." not in answer.text, answer.text
    cut = Paper(id="p5", label="Gradient projection conflicts in multi-task…")
    assert also_relevant_line([corpus()[1], cut]).endswith("multi-task…**")
    assert also_relevant_line([corpus()[1]]).endswith("Projection**.")


def test_a_title_only_paper_is_checked_against_its_title() -> None:
    pipe, _ = pipeline()
    swift = Paper(id="t1", title="SWIFT: On-the-Fly Self-Speculative Decoding for LLM Inference Acceleration")
    claim = pipe.checker.check(
        Claim("SWIFT is on-the-fly self-speculative decoding for LLM inference acceleration.", [1]), {1: swift}
    )
    assert claim.supported and claim.quote == swift.title and claim.support >= pipe.checker.threshold


def test_rules_decide_before_anything_is_embedded_and_quotes_support_themselves() -> None:
    pipe, _ = pipeline()
    vectors = pipe.checker.vectors
    before = vectors.embedded
    answer = pipe.answer("What does ZorbNet-9 do to gradients?")  # a name no source contains
    assert answer.abstained and vectors.embedded == before
    sentence = "We propose GradSurg, a method that projects conflicting gradients onto the normal plane of each other."
    papers = {1: corpus()[0]}
    before = vectors.embedded
    claim = pipe.checker.check(Claim(sentence, [1]), papers)
    assert claim.supported and claim.support == 1.0 and claim.quote == sentence and vectors.embedded == before


def test_scored_sentences_come_from_candidates_only_of_the_sources() -> None:
    pipe, retriever = pipeline()
    question = parse("Does projection help unrelated tasks?", retriever.catalog)
    hits = retriever.search(question.text, 4).hits
    scored, gate = pipe.relevance.assess(question, question.text, hits)
    assert gate.answerable and scored == sorted(scored, key=lambda r: -r.score)
    assert all(1 <= r.source <= len(hits) and r.sentence in hits[r.source - 1].paper.abstract for r in scored)


def test_catalog_fixture_has_decisions() -> None:
    catalog = Catalog.of(corpus())
    assert "Accept (Oral)" in catalog.facet_values("decision")


SKETCH = Paper(
    id="s1",
    label="SkeRO",
    abstract="Randomized algorithms solve large problems. In this paper, we introduce Sketching for Regularized "
    "Optimization (SkeRO), a fast sketching algorithm for least squares. SkeRO operates by first creating a sketch of "
    "the data matrix and then solving the sketched problem. Furthermore, we propose a novel Iterative SkeRO "
    "algorithm, which reduces the error geometrically. Experiments validate SkeRO.",
)


def test_the_introducing_sentence_is_the_first_that_introduces_the_name() -> None:
    pipe, _ = pipeline([SKETCH, *corpus()])
    for question in ("Which paper proposed SkeRO?", "What is SkeRO?", "How does SkeRO work?"):
        answer = pipe.answer(question)
        assert answer.claims[0].text.startswith("In this paper, we introduce Sketching"), (question, answer.text)
    how = pipe.answer("How does SkeRO work?")
    assert any("creating a sketch" in c.text for c in how.claims)


def test_a_pronoun_follow_up_takes_the_subject_of_the_conversation() -> None:
    pipe, retriever = pipeline([SKETCH, *corpus()])
    session = ChatSession(pipe, retriever.catalog)
    session.ask("What is SkeRO?")
    for question in ("How does it work?", "What does it stand for?"):
        answer = session.ask(question)
        assert not answer.abstained and answer.citations[0].paper.id == "s1", (question, answer.text)
        assert answer.claims[0].text.startswith("In this paper, we introduce Sketching")


def test_a_list_names_papers_whose_sentence_has_every_word_of_the_topic() -> None:
    question = parse("Which papers use Shapley values?")
    papers = [Paper(id="a", abstract="x"), Paper(id="b", abstract="y"), Paper(id="c", abstract="z")]
    hits = [Hit(p, 1.0) for p in papers]
    scored = [
        Scored(0.9, 0.6, 1, "Post-hoc methods like Shapley values are expensive."),
        Scored(0.4, 0.25, 2, "We then develop Shapley value to map message flow contributions."),
        Scored(0.4, 0.25, 3, "We study message flows in graphs."),
    ]
    draft = ExtractiveAnswerer().compose(question, hits, scored, Gate(True, "", 0.6))
    assert [c.cites for c in draft.claims] == [[1], [2]] and "develop Shapley value" in draft.text


def test_how_much_faster_wants_a_factor() -> None:
    unit = wanted_unit("How much faster is it?")
    assert unit is not None and unit.search("2-3x faster") and not unit.search("on 12 benchmarks")


def test_how_many_things_wants_a_count_of_those_things() -> None:
    """ "How many players …" is answered by "11 players", not by "players with ratings from 1000
    to 2600 Elo", where the numbers count no players."""
    unit = wanted_unit("How many players are on a chess team?")
    assert unit is not None and unit.search("A side fields 11 players.")
    assert not unit.search("We evaluate against players with ratings from 1000 to 2600 Elo.")
    tasks = wanted_unit("How many professional-level CTF tasks does Cybench include?")
    assert tasks is not None and tasks.search("We include 40 professional-level Capture the Flag (CTF) tasks.")
    for question, sentence in [
        ("How many parameters does it have?", "a model with 7B parameters"),
        ("How many layers does it have?", "a 12-layer Transformer"),
        ("How many tasks are included?", "1,000 diverse, real-world tasks"),
    ]:
        pattern = wanted_unit(question)
        assert pattern is not None and pattern.search(sentence), question
    layers = wanted_unit("How many layers are used?")
    assert layers is not None and not layers.search("In 2023, layers of the model were frozen.")
    assert wanted_unit("How many does GPT-3 have?") is None and wanted_unit("How many of them are there?") is None
    examples = wanted_unit("Up to how many examples do the datasets include?")
    assert examples is not None and examples.search("a large collection of examples (up to 10M in some cases)")
    assert not examples.search("a model of examples (see Fig. 2)")
    chess = Paper(
        id="ch",
        title="Human-Aligned Chess",
        abstract="We train a chess model on games of human players. Against players with ratings from 1000 to "
        "2600 Elo, our search leads to a skill gap of only 49 Elo.",
    )
    pipe, _ = pipeline([*corpus(), chess])
    answer = pipe.answer("How many players are on a chess team?")
    assert answer.abstained and answer.citations == []
    chess.abstract += " Each team fields four players."
    pipe, _ = pipeline([*corpus(), chess])
    answered = pipe.answer("How many players are on a chess team?")
    assert not answered.abstained and "four players" in answered.text


def test_questions_about_a_persons_life_abstain() -> None:
    assert parse("When was Albert Einstein born?").person and parse("Where did Marie Curie die?").person
    assert not parse("When was GradSurg published?").person
    papers = [*corpus(), Paper(id="al", title="ALBERT for puzzles", abstract="We solve Einstein's puzzle with ALBERT.")]
    papers[-1].authors = ["Maria Einstein"]  # an author's surname in the question does not make it answerable
    pipe, _ = pipeline(papers)
    for question in ("When was Albert Einstein born?", "When was Alan Turing born?"):
        answer = pipe.answer(question)
        assert answer.abstained and answer.citations == [], question


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


def test_which_paper_uses_a_named_thing_names_every_source_that_does() -> None:
    """ "Which paper trains on LibriSpeech?" asks about use, not invention: each retrieved paper
    whose quoted sentence names the corpus answers it, with that sentence."""
    speech = [
        Paper(
            id=f"s{i}",
            title=title,
            abstract=f"Speech models need data. {sentence} Results improve.",
        )
        for i, (title, sentence) in enumerate(
            [
                (
                    "CTC regularisation",
                    "We train our recogniser on the LibriSpeech corpus and report word error rates.",
                ),
                ("Spatial speech", "We build a spatial dataset from the LibriSpeech corpus recordings."),
                ("Long speech", "A model benchmark built from the LibriSpeech corpus audiobooks is released."),
            ]
        )
    ]
    pipe, _ = pipeline([*corpus(), *speech])
    answer = pipe.answer("Which paper trains a model on the LibriSpeech corpus?")
    assert answer.kind == "which-paper" and not answer.abstained
    assert {c.paper.id for c in answer.citations} == {"s0", "s1", "s2"}
    assert all("LibriSpeech" in c.text for c in answer.claims)
