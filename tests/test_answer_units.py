"""Fast unit tests of the answer side, no model files: citations (parsing, stripping, renumbering,
streaming), catalogue-field checks, catalogue answers, and the pipeline end to end with an
in-process chat model and a keyword retriever (tests/fakes.py)."""

from __future__ import annotations

import random
import re
import time
from collections import deque

import numpy as np
import pytest

from eval.fit_relevance import choose_share
from rag.answer.chat import ChatSession
from rag.answer.cite import StreamRenumberer, SupportChecker, parse_claims, renumber, strip_invalid
from rag.answer.logistic import LogisticModel
from rag.answer.pipeline import ABSTAIN_SENTINEL, LLMAnswerer
from rag.answer.query import read
from rag.answer.relevance import kept_papers, spelled_out
from rag.embed import HashEmbedder
from rag.errors import LLMError, QuestionError
from rag.text import without_markup
from rag.types import Claim, Hit, Paper
from tests.fakes import FakeChatModel, corpus, paper, pipeline


def hits(n: int) -> list[Hit]:
    return [Hit(Paper(id=f"p{i}", title=f"Paper {i}", abstract=f"Text {i}."), 1.0) for i in range(1, n + 1)]


# -- citations ------------------------------------------------------------------------------


def test_claims_take_their_markers_and_leading_markers_belong_to_the_sentence_before() -> None:
    claims = parse_claims("GradSurg projects gradients [1]. It is fast [2, 3]. [4] Loss weighting wins [2-4].")
    assert [c.cites for c in claims] == [[1], [2, 3, 4], [2, 3, 4]]
    assert claims[0].text == "GradSurg projects gradients." and "[" not in claims[2].text


def test_invalid_numbers_are_stripped_and_reported() -> None:
    text, removed = strip_invalid(
        "GradSurg helps a lot [1, 9]. Loss weighting is strong [12]. Projection fails [2].", {1, 2, 3}
    )
    assert removed == [9, 12] and "9" not in text and "[12]" not in text
    assert [c.cites for c in parse_claims(text)] == [[1], [], [2]]


def test_stripping_is_linear_on_hostile_text() -> None:
    hostile = "x" + " " * 200_000 + "[" + " " * 100_000 + "[1]" * 20_000
    start = time.perf_counter()
    text, removed = strip_invalid(hostile, {2})
    assert time.perf_counter() - start < 2.0
    assert len(removed) == 20_000 and "[1]" not in text


def test_renumbering_follows_the_order_of_appearance() -> None:
    sources = hits(5)
    claims = [Claim("a", [3]), Claim("b", [1]), Claim("c", [3, 5])]
    text, ordered, mapping = renumber("First claim [3]. Second claim [1]. Third claim [3, 5].", claims, sources)
    assert text == "First claim [1]. Second claim [2]. Third claim [1, 3]."
    assert mapping == {3: 1, 1: 2, 5: 3}
    assert [c.cites for c in claims] == [[1], [2], [1, 3]]
    assert [h.paper.id for h in ordered[:3]] == ["p3", "p1", "p5"]  # citation n is sources[n - 1]
    assert {h.paper.id for h in ordered} == {h.paper.id for h in sources}


@pytest.mark.parametrize("seed", range(20))
def test_streamed_renumbering_equals_renumbering_the_whole_text(seed: int) -> None:
    raw = "GradSurg [3] helps [2, 9]. It fails on 12 of 20 [4]. Again [3][4]. A bracket [stays]. [7] End [2]."
    valid = {1, 2, 3, 4, 5}
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(raw)), 12))
    pieces = [raw[i:j] for i, j in zip([0, *cuts], [*cuts, len(raw)])]
    live = StreamRenumberer(valid)
    streamed = "".join(live.feed(p) for p in pieces) + live.flush()
    stripped, removed = strip_invalid(raw, valid)
    expected, _, _ = renumber(stripped, parse_claims(stripped), hits(5))
    assert streamed == expected
    assert sorted(live.removed) == sorted(removed) == [7, 9]


def test_catalogue_field_claims_are_checked_against_the_field() -> None:
    paper = corpus()[0]
    checker = SupportChecker(HashEmbedder())
    good = checker.check(Claim("Authors: Ada Lovelace, Alan Turing.", [1], field="authors"), {1: paper})
    bad = checker.check(Claim("Authors: Ada Lovelace, Grace Hopper.", [1], field="authors"), {1: paper})
    track = checker.check(Claim("Track: main.", [1], field="track"), {1: paper})
    assert good.supported and not bad.supported and track.supported


def test_number_and_name_checks_use_the_cited_source() -> None:
    paper = corpus()[0]
    checker = SupportChecker(HashEmbedder(), threshold=0.0)
    assert checker.check(Claim("GradSurg improves average accuracy by 4.2% on NYUv2.", [1]), {1: paper}).supported
    wrong = checker.check(Claim("GradSurg improves average accuracy by 9.9% on NYUv2.", [1]), {1: paper})
    assert not wrong.supported and "9.9" in wrong.reason


# -- text rules -----------------------------------------------------------------------------


def test_citation_numbers_run_in_order_of_appearance() -> None:
    pipe, _ = pipeline(abstain_threshold=0.0)  # numbering, not abstention, on a four-paper corpus
    answer = pipe.answer("Which papers are about multi-task learning?", k=3)
    assert answer.citations
    shown = [int(n) for n in re.findall(r"\[(\d+)\]", answer.text)]
    assert shown[: len(answer.citations)] == list(range(1, len(answer.citations) + 1))
    assert all(answer.sources[c.n - 1].paper.id == c.paper.id for c in answer.citations)


def test_catalogue_questions() -> None:
    pipe, _ = pipeline()
    count = pipe.answer("How many ICML 2025 papers are there?")
    assert (
        count.mode == "catalogue"
        and count.kind == "count"
        and "**2**" in count.text
        and count.filters == {"venue": "ICML", "year": 2025}
    )
    listed = pipe.answer("Which position papers are there?")
    assert [c.paper.id for c in listed.citations] == ["p3"] and all(c.supported for c in listed.claims)
    by = pipe.answer("Which papers by Alan Turing are in the collection?")
    assert {c.paper.id for c in by.citations} == {"p1", "p3"}
    track = pipe.answer("What track is GradSurg in?")
    assert track.citations[0].paper.id == "p1" and track.claims[0].field == "track" and track.claims[0].supported
    missing = pipe.answer("Who wrote TabNet2?")  # the catalogue has no authors for it
    assert missing.abstained and missing.citations == []


def test_who_wrote_a_paper_gets_every_author_the_catalogue_holds() -> None:
    """Asked for the authors, the answer names all of them (13 here), never "et al." for names it
    has; "et al." stays for a list the source itself cut."""
    names = [f"Author Number{i:02d}" for i in range(13)]
    whole = Paper(id="t1", title="TorchLoom: one stack for training", authors=names, abstract="We build TorchLoom.")
    cut = Paper(
        id="t2", title="CutList: a cut author list", authors=names[:3], authors_truncated=True, abstract="We cut."
    )
    pipe, _ = pipeline([whole, cut, *corpus()])
    answer = pipe.answer("Who are the authors of TorchLoom?")
    assert answer.mode == "catalogue" and answer.citations[0].paper.id == "t1"
    assert ", ".join(names) in answer.text and "et al." not in answer.text
    assert answer.claims[0].supported
    shortened = pipe.answer("Who wrote CutList?")
    assert ", ".join(names[:3]) + " et al." in shortened.text


def test_a_common_word_names_no_paper_whose_title_capitalises_one_of_its_letters() -> None:
    """A title's acronym trick ("Generative AttentioN based …") gives the coined-looking name
    AttentioN; "attention", held by many papers, must not name that paper in a question about
    attention, while a rare coined name still names its paper in lower case."""
    odd = Paper(
        id="g1",
        title="GANDALF: Generative AttentioN based Data Augmentation",
        authors=["Ann Odd"],
        abstract="We augment tabular data for cancer treatment with a generative model.",
    )
    common = [
        Paper(
            id=f"c{i}",
            title=f"Study {i} of sequence models",
            authors=[f"Bo Common{i}"],
            abstract=f"Linear attention replaces softmax attention by compressing the sequence, variant {i}.",
        )
        for i in range(5)
    ]
    pipe, _ = pipeline([odd, *common, *corpus()], abstain_threshold=0.0)
    described = pipe.answer("Who wrote the paper on linear attention that compresses the sequence?")
    assert described.kind == "authors-of" and described.citations
    assert described.citations[0].paper.id != "g1" and "Ann Odd" not in described.text
    coined = pipe.answer("Who wrote gradsurg?")
    assert coined.citations[0].paper.id == "p1" and "Ada Lovelace" in coined.text


def test_the_words_that_named_a_filter_name_no_paper() -> None:
    """ "that ICLR 2025 paper on …" reads a venue and a year; a paper whose title is "ICLR: …"
    is not named by them (a writer's train question got that paper's decision). A whole title
    holding a filter's word still names its paper: "Oral Cancer …" is a poster, not a filter."""
    namesake = paper(
        "n1",
        "ICLR: In-Context Learning of Representations",
        "Eve Namesake",
        "Language models reorganise their representations in context when given enough exemplars.",
        venue="ICLR",
        year=2025,
    )
    oral = paper(
        "o1",
        "Oral Cancer Screening from Photographs",
        "Olga Oral",
        "We screen for oral cancer from smartphone photographs with a small vision model.",
        venue="ICML",
        year=2025,
        decision="Accept (Poster)",
    )
    # "In-Context" then names none of them: the whole title must name the namesake
    others = [paper(f"i{i}", f"In-Context Study {i}", f"Ivy In{i}", f"In-context study {i}.") for i in range(4)]
    pipe, _ = pipeline([namesake, oral, *others, *corpus()], abstain_threshold=0.0)
    answer = pipe.answer("Who wrote that ICLR 2025 paper that projects conflicting gradients between tasks?")
    assert answer.kind == "authors-of" and answer.citations[0].paper.id == "p1"
    assert "Ada Lovelace" in answer.text and "Eve Namesake" not in answer.text
    named = pipe.answer("Who wrote ICLR: In-Context Learning of Representations?")
    assert named.citations[0].paper.id == "n1" and "Eve Namesake" in named.text
    titled = pipe.answer("Who wrote Oral Cancer Screening from Photographs?")
    assert titled.citations[0].paper.id == "o1" and "Olga Oral" in titled.text


def test_a_described_paper_is_the_first_kept_one_in_the_searchs_order() -> None:
    """The catalogue finds a described paper as an answer quotes papers: of those the relevance
    model keeps, the first in the search's order, not the most probable (session 32: validation's
    described-paper field questions answered right 144 -> 146 of 190)."""
    papers = [
        paper(
            "a1",
            "Sparse Mixtures for Long Documents",
            "Amy A",
            "We route tokens of long documents to sparse experts. Sparse routing cuts memory for long "
            "documents by half.",
        ),
        paper(
            "a2",
            "Routing Tokens to Experts",
            "Bob B",
            "Mixture of experts models route each token to a few experts. We propose balanced routing of tokens to "
            "experts for long documents and show it cuts memory.",
        ),
        paper(
            "a3",
            "Memory of Long Documents",
            "Cy C",
            "Long documents strain memory. We compress the memory of long documents with sparse experts routing.",
        ),
    ]
    pipe, retriever = pipeline([*papers, *corpus()], abstain_threshold=0.0)
    question = "Who wrote the paper on routing half memory compress?"
    assessed = pipe.relevance.assess(question, retriever.search(question, 5).hits)
    probabilities = [p.probability for p in assessed.papers]
    kept = pipe.relevance.kept(probabilities)
    first, likeliest = kept[0], max(kept, key=lambda i: probabilities[i])
    assert first != likeliest  # the case this test is about: the search and the model disagree
    answer = pipe.answer(question)
    assert answer.kind == "authors-of"
    assert answer.citations[0].paper.id == assessed.papers[first].hit.paper.id


def test_the_value_a_field_question_asks_about_does_not_filter_its_paper() -> None:
    """ "Was the paper on X an oral?" asks for X's decision: searched among orals only, a poster
    was never found, or another paper's decision was given."""
    pipe, _ = pipeline(abstain_threshold=0.0)
    answer = pipe.answer("Was the paper showing that gradient projection fails on 12 of 20 benchmarks an oral?")
    assert answer.kind == "field-of" and answer.citations[0].paper.id == "p2"
    assert "Poster" in answer.text and answer.claims[0].field == "decision" and answer.claims[0].supported


def test_a_question_pasted_with_html_is_read_as_its_words() -> None:
    """Tags are no words: a question pasted with them gets the answer its words get; a script's
    content is dropped; text that only looks like a tag ("x<y and y>z") is kept."""
    pipe, _ = pipeline()
    for question in ("How much does GradSurg improve accuracy on NYUv2?", "What track is GradSurg in?"):
        plain = pipe.answer(question)
        words = question.split(" ", 3)
        pasted = f"<script>alert(1)</script><p>{' '.join(words[:3])} <b>{words[3]}</b></p>"
        marked = pipe.answer(pasted)
        assert marked.question == plain.question and marked.text == plain.text and not marked.abstained
    with pytest.raises(QuestionError, match="empty"):
        pipe.answer("<script>alert(1)</script><br>")
    assert without_markup("Is x<y and y>z for <i>all</i> x?") == "Is x<y and y>z for all x?"


def test_a_question_pasted_with_terminal_colours_is_read_as_its_words() -> None:
    """A colour code copied from a terminal is no word: "\x1b[31mGradSurg\x1b[0m" is GradSurg.
    Left in, its "[31m" stuck to the next word and made an unknown name the question was
    abstained on; a question of codes alone is empty."""
    pipe, _ = pipeline()
    question = "How much does GradSurg improve accuracy on NYUv2?"
    plain = pipe.answer(question)
    coloured = pipe.answer(question.replace("GradSurg", "\x1b[31mGradSurg\x1b[0m").replace("NYUv2", "\x9b1mNYUv2"))
    assert coloured.question == plain.question and coloured.text == plain.text and not coloured.abstained
    with pytest.raises(QuestionError, match="empty"):
        pipe.answer("\x1b[2J\x1b]52;c;aGk=\x07 ")


def test_catalogue_list_says_how_many_more() -> None:
    papers = [
        Paper(
            id=f"x{i}",
            title=f"Position: Claim {i:02d}",
            abstract="We argue a point.",
            venue="ICML",
            year=2025,
            track="position",
        )
        for i in range(25)
    ]
    pipe, _ = pipeline(papers)
    answer = pipe.answer("Which position papers are there?")
    assert len(answer.citations) == 10 and "15 more" in answer.text and "25 papers" in answer.text


def test_follow_up_about_its_authors_uses_the_previous_answer() -> None:
    pipe, retriever = pipeline(abstain_threshold=0.0)  # follow-ups, not abstention, on four papers
    session = ChatSession(pipe, retriever.catalog)
    first = session.ask("Which paper introduced TabNet2?")
    assert first.citations[0].paper.id == "p4"
    second = session.ask("Who are its authors?")  # TabNet2 has none in the catalogue
    assert second.abstained and second.kind == "authors-of"
    session.ask("Which paper introduced GradSurg?")
    third = session.ask("Who are its authors?")
    assert not third.abstained and "Ada Lovelace" in third.text and third.citations[0].paper.id == "p1"


def test_a_new_question_in_a_conversation_is_searched_as_asked() -> None:
    """A request for papers, or a question whose pronoun has a subject of its own, is not turned
    into a search for the previous turn's paper."""
    pipe, retriever = pipeline(abstain_threshold=0.0)
    session = ChatSession(pipe, retriever.catalog)
    session.ask("Which paper introduced GradSurg?")

    def readings(question: str) -> tuple[bool, bool]:
        return session.readings(question, pipe.read(question))

    assert readings("Who are its authors?") == (True, False)  # a follow-up
    assert readings("Which papers propose new optimizers for training neural networks?") == (False, False)
    assert readings("Which model does ZetaBench use as its evaluator?") == (False, True)  # both ways
    new = "Which papers propose new optimizers for training neural networks?"
    assert session.ask(new).query == new  # searched as asked, without GradSurg's title


# -- the pipeline, with a chat model ----------------------------------------------------------


def test_llm_answer_is_stripped_renumbered_and_streamed_as_shown() -> None:
    model = FakeChatModel(
        deque(
            [
                (
                    "GradSurg improves average accuracy by 4.2% on NYUv2 [3]. It is cited twice [3, 9]. "
                    "Projection fails on 12 of 20 benchmarks [2]."
                )
            ]
        )
    )
    pipe, _ = pipeline(llm=LLMAnswerer(model, context_tokens=2000))
    streamed: list[str] = []
    answer = pipe.answer(
        "Summarise the findings on gradient projection in multi-task learning", k=3, on_token=streamed.append
    )
    assert answer.mode == "llm" and 9 in answer.removed_citations
    assert "".join(streamed) == answer.text  # what streamed is what the answer shows
    numbers = [c.n for c in answer.citations]
    assert numbers == list(range(1, len(numbers) + 1)) and re.search(r"\[(\d+)", answer.text).group(1) == "1"
    assert all(answer.sources[c.n - 1].paper.id == c.paper.id for c in answer.citations)
    assert "[3]" in answer.raw_text  # the model's own numbering is kept apart


def test_llm_sentinel_abstains_without_showing_the_sentinel() -> None:
    model = FakeChatModel(deque([ABSTAIN_SENTINEL]))
    pipe, _ = pipeline(llm=LLMAnswerer(model, context_tokens=2000))
    streamed: list[str] = []
    answer = pipe.answer(
        "Summarise the findings on gradient projection in multi-task learning", on_token=streamed.append
    )
    assert answer.abstained and answer.citations == [] and ABSTAIN_SENTINEL not in "".join(streamed)


def test_llm_empty_reply_is_an_error_not_an_empty_answer() -> None:
    model = FakeChatModel(deque(["   "]))
    pipe, _ = pipeline(llm=LLMAnswerer(model, context_tokens=2000))
    with pytest.raises(LLMError, match="empty"):
        pipe.answer("Summarise the findings on gradient projection in multi-task learning")


def test_llm_condenses_follow_ups() -> None:
    model = FakeChatModel(
        deque(
            [
                "GradSurg improves average accuracy by 4.2% on NYUv2 [1].",
                "How much does GradSurg reduce training time?",
                "GradSurg reduces training time by 1.5x [1].",
            ]
        )
    )
    pipe, retriever = pipeline(llm=LLMAnswerer(model, context_tokens=2000))
    session = ChatSession(pipe, retriever.catalog, model)
    session.ask("By how much does GradSurg improve average accuracy?")
    second = session.ask("How much does it reduce training time?")
    assert second.query == "How much does GradSurg reduce training time?"
    assert "By how much does GradSurg improve average accuracy?" in model.requests[1][0]["content"]
    assert second.citations and second.citations[0].paper.id == "p1"


def test_sources_share_the_token_budget_fairly() -> None:
    huge = Paper(id="big", title="Huge", abstract="GradSurg " + "word " * 400_000)
    small = corpus()[0]
    answerer = LLMAnswerer(FakeChatModel(), context_tokens=1200)
    start = time.perf_counter()
    block = answerer.sources_block([Hit(huge, 1.0), Hit(small, 1.0)])
    assert time.perf_counter() - start < 2.0
    from rag.tokens import count_tokens

    assert count_tokens(block) <= 1200 and small.abstract in block and '<source id="2">' in block


def test_the_follow_up_reading_is_kept_only_when_it_clears_its_threshold_by_more() -> None:
    """The two readings may be decided by different models (the follow-up by the fallback), so
    each confidence is compared as its margin over its own model's threshold."""
    from rag.answer.chat import _more_confident
    from rag.types import Answer

    def answer(abstained: bool, confidence: float | None, own: float = 0.3) -> Answer:
        margin = None if confidence is None else confidence - own
        return Answer(
            question="q",
            query="q",
            text="",
            mode="extractive",
            abstained=abstained,
            confidence=confidence,
            margin=margin,
        )

    assert _more_confident(answer(False, 0.5), answer(True, 0.1))
    assert not _more_confident(answer(True, 0.9), answer(True, 0.1))
    assert _more_confident(answer(False, 0.8), answer(False, 0.6))
    assert not _more_confident(answer(False, 0.6), answer(False, 0.8))
    # higher probability, smaller margin over a stricter model's threshold: the reading as asked stands
    assert not _more_confident(answer(False, 0.7, own=0.6), answer(False, 0.5, own=0.25))
    assert _more_confident(answer(False, 0.5, own=0.25), answer(False, 0.7, own=0.6))
    assert not _more_confident(answer(False, 0.9), answer(False, None))  # a catalogue answer stands


def test_a_users_threshold_decides_but_the_margin_is_over_the_models_own() -> None:
    """`RAG_ABSTAIN_THRESHOLD` decides whether to answer, for every model; the margin two readings
    are compared by stays over the deciding model's own threshold, since one user threshold over
    two models' scales would compare their raw probabilities."""
    pipe, _ = pipeline(abstain_threshold=0.01)
    answer = pipe.answer("How does GradSurg handle conflicting gradients in multi-task learning?")
    own = pipe.relevance.own_floor()
    assert own != 0.01 and answer.threshold == 0.01 and answer.confidence is not None
    assert answer.margin == pytest.approx(answer.confidence - own, abs=1e-4)


# -- names the collection never mentions ----------------------------------------------------


def test_a_coined_name_no_paper_mentions_is_abstained_on_and_named() -> None:
    pipe, _ = pipeline(abstain_threshold=0.0)  # the model would answer anything: only the rule abstains
    answer = pipe.answer("How does LoomAttention reach linear complexity in multi-task learning?")
    assert answer.abstained and answer.citations == []
    assert "“LoomAttention”" in answer.text and "LoomAttention" in answer.reason
    known = pipe.answer("How does GradSurg handle conflicting gradients in multi-task learning?")
    assert not known.abstained and known.citations


def test_a_detail_the_named_paper_does_not_state_is_abstained_on_and_named() -> None:
    """A question that names its paper and asks for a detail none of whose words that paper's
    title or abstract holds, nor another paper's naming it, is not answered, and the answer says
    what is missing; a detail the abstract states, a thing it names by an instance, a measure or
    catalogue word alone, a comparative and a question naming a filter are left to the model."""
    pipe, _ = pipeline(abstain_threshold=0.0)  # the model would answer anything: only the rule abstains
    missing = pipe.answer("How many GPU hours does GradSurg need for training?")
    assert missing.abstained and missing.citations == []
    assert "GradSurg" in missing.text and "GPU hours" in missing.text and "GPU hours" in missing.reason
    unreported = pipe.answer("What mean error does GradSurg reach on NYUv2?")  # a value: its measure must be named
    assert unreported.abstained and "mean error" in unreported.text
    for answered in (
        "Which dataset is GradSurg evaluated on?",  # a thing, named in the abstract only as "NYUv2"
        "How much faster does GradSurg train?",  # a comparative: any number may answer it
        "What accuracy does GradSurg reach on NYUv2?",
        "What kind of method is GradSurg?",
        "How many authors does GradSurg have?",
        "Which papers by Ada Lovelace does GradSurg build on?",
    ):
        assert not pipe.answer(answered).abstained, answered


def test_a_number_the_named_paper_does_not_state_is_abstained_on_and_named() -> None:
    """A question that names its paper and asks it for a number is not answered when no sentence of
    that paper's abstract (nor of another paper naming it) that shares a word with the question
    states one, and the answer says which number; a number stated beside any of the question's
    words, or anywhere when it has no word but the name, a comparative and a "which" question
    asking for a thing are left to the model."""
    pipe, _ = pipeline(abstain_threshold=0.0)  # the model would answer anything: only the rules abstain
    tasks = pipe.answer("How many tasks does GradSurg handle?")  # "tasks" is held, with no number beside it
    assert tasks.abstained and tasks.citations == []
    assert "GradSurg" in tasks.text and "how many tasks" in tasks.text and "how many tasks" in tasks.reason
    plane = pipe.answer("What fraction of the normal plane does GradSurg keep?")  # "what" and a measure
    assert plane.abstained and "the fraction of the normal plane" in plane.text
    for answered in (
        "How many tasks does GradSurg handle on NYUv2?",  # "NYUv2" holds a number: the question's words find it
        "What accuracy does GradSurg reach on NYUv2?",
        "How much does GradSurg get?",  # no word but the name: any number of the abstract
        "How much faster does GradSurg train?",  # a comparative
        "Which error rate does GradSurg lower?",  # "which": a thing, not a number
        "How many tasks does GradSurg handle at ICLR 2025?",  # a filter named: left to the model
    ):
        assert not pipe.answer(answered).abstained, answered


def test_a_score_the_named_paper_never_measures_on_the_asked_benchmark_is_abstained_on() -> None:
    """A question that asks a named paper for a score on a benchmark, model or robot is not answered
    when its abstract writes that name only where it counts things ("two benchmarks, ScanNet200 and
    Replica") and measures only elsewhere; a name held where it measures (any of the question's names
    will do), a count asked for ("how many") and an abstract that measures nothing are left to the
    model."""
    papers = [
        paper(
            "s",
            "ScoreNet: Fast 3D Segmentation",
            "A",
            "We propose ScoreNet for 3D segmentation. We validate ScoreNet on two benchmarks, ScanNet200 and "
            "Replica, and on four tasks with a Franka arm. On ScanNet200, ScoreNet reaches 24.7% mAP while "
            "running 2.5x faster than prior work.",
        ),
        paper(
            "m",
            "MeshNet: Indoor Scenes",
            "B",
            "We propose MeshNet for indoor scenes, tested on Matterport and two Gibson scenes. On Matterport, "
            "MeshNet reaches 31.2% accuracy.",
        ),
        paper("r", "RateNet: Fast Convergence", "C", "RateNet converges at rate O(1/T) on two Atari games."),
    ]
    # a collection large enough that "Replica", "Franka", "Gibson" and "Atari" are rare proper names
    papers += [paper(f"x{i}", f"Filler Study {i}", "Z", f"We study topic {i} with data.") for i in range(300)]
    pipe, _ = pipeline(papers, abstain_threshold=0.0)  # the model would answer anything: only rules abstain
    replica = pipe.answer("What mAP does ScoreNet reach on Replica?")
    assert replica.abstained and replica.citations == []
    assert "ScoreNet" in replica.text and "mAP" in replica.text and "Replica" in replica.text
    assert pipe.answer("What success rate does ScoreNet reach with the Franka arm?").abstained
    for answered in (
        "What accuracy does MeshNet reach on Matterport?",  # held where it measures
        "What accuracy does MeshNet reach on Matterport and Gibson?",  # one of its names held there
        "How many benchmarks does ScoreNet use besides Replica?",  # a count: any number may answer it
        "What convergence rate does RateNet reach on Atari?",  # no measurement at all: left to the model
    ):
        assert not pipe.answer(answered).abstained, answered


def test_a_paper_described_by_its_title_is_named_for_the_detail_check() -> None:
    """A question may name its paper by most of its title's topic words instead of a coined name
    ("the paper on the limits of gradient projection"): the detail check then reads that paper. A
    question for papers in the plural, or one holding a single title word, names no paper."""
    pipe, _ = pipeline(abstain_threshold=0.0)  # the model would answer anything: only the rules abstain
    described = pipe.answer("How many GPU hours did the paper on the limits of gradient projection need?")
    assert described.abstained and "GPU hours" in described.reason
    assert "Limits of Gradient Projection" in described.text
    for answered in (
        "Which papers on the limits of gradient projection need GPU hours?",  # plural: a topic, not one paper
        "How many GPU hours does projection need?",  # one title word describes no paper
        "How many benchmarks did the paper on the limits of gradient projection test?",  # stated: 12 of 20
    ):
        assert not pipe.answer(answered).abstained, answered


def test_which_paper_a_question_names_and_which_words_it_holds() -> None:
    """A paper is named by a coined name of its title or abstract, or by its title's name before
    a colon as the title writes it ("Kinetix:", not "Position:"): a compound of ordinary words
    ("Test-Time", "Chain-of-Thought") names nothing; an all-capitals name, one that reads as a
    function word ("DiD") or one in lower case counts only in its own case, and a part of a
    hyphenated word is not the name. A detail is held in the keyword index's stems, whatever the
    plural, hyphen or unit ("GPUs" ~ "GPU", "speed-up" ~ "speedup", "80GB" ~ "GB")."""
    from rag.answer.relevance import _held_terms, _names_used
    from rag.store.keyword import TOKENIZE

    plain = Paper(id="a", title="Test-Time Adaptation for Multi-Modal Data", abstract="We use Chain-of-Thought.")
    assert not _names_used("How does test-time adaptation use chain-of-thought prompts?", plain)
    gold = Paper(id="d", title="GOLD: Graph Out-of-Distribution Detection")
    assert not _names_used("Which metrics do detectors use as gold standard?", gold)
    assert _names_used("What AUROC does GOLD reach?", gold) == {"gold"}
    symbolic = Paper(id="c", title="GSM-Symbolic: Limits of Reasoning")
    assert _names_used("which models did gsm-symbolic test?", symbolic) == {"gsm-symbolic"}
    assert not _names_used("How many GPU hours did it take?", Paper(id="h", title="DiD: Estimating Effects"))
    assert not _names_used("How much did SWE-Lancer pay?", Paper(id="g", title="SWE: Software Agents"))
    reknos = Paper(id="f", title="Reasoning over Knowledge Graphs", abstract="We propose ReKnoS, tested on WebQSP.")
    assert _names_used("What accuracy does reknos reach?", reknos) == {"reknos"}
    # a title's name before its colon names the paper, though no coined name, as the title writes it
    kinetix = Paper(id="k", title="Kinetix: Investigating the Training of General Agents", abstract="Open-ended tasks.")
    assert _names_used("How many parameters does the general Kinetix agent have?", kinetix) == {"kinetix"}
    assert not _names_used("Which kinetix tasks are open-ended?", kinetix)  # not as the title writes it
    flow = Paper(id="w", title="Flow: A Modular Approach to Automated Agentic Workflow Generation")
    assert not _names_used("Flow matching models: which datasets do they use?", flow)  # the first word
    assert _names_used("Which tasks does Flow automate?", flow) == {"flow"}
    instant = Paper(id="i", title="Instant Policy: In-Context Imitation Learning via Graph Diffusion")
    assert _names_used("Which real robot arm was Instant Policy tested on?", instant) == {"instant policy"}
    position = Paper(id="p", title="Position: Agents Need Memory")
    assert not _names_used("Which Position papers argue for memory?", position)  # a sort of paper, not a name
    for asked, stated in (("GPUs", "a single GPU"), ("speed-up", "a 2x speedup"), ("GB", "one 80GB card")):
        assert _held_terms(TOKENIZE, asked) & _held_terms(TOKENIZE, stated), (asked, stated)
    assert not _held_terms(TOKENIZE, "GPU hours") & _held_terms(TOKENIZE, "accuracy on NYUv2")


@pytest.mark.parametrize(
    ("question", "unknown"),
    [
        ("What do GradSurg-style projections do?", []),  # a compound: its name-like part is known
        ("Which papers use lazy-GradSurg updates?", []),  # a lowercase part is never asked for
        ("What does TabNet2-XL reach on the Adult dataset?", ["TabNet2-XL"]),  # "XL" is in no paper
        ("What accuracy does TabNet3 reach?", ["TabNet3"]),
        ("What do GradSurg2 updates change?", []),  # a known name with a number added
        ("Do LLMs or GPT-4o beat TabNet2 on tables?", []),  # common acronyms are not asked for
        ("Which ICML papers study gradient projection?", []),
    ],
)
def test_unknown_names_reads_compounds_and_skips_common_acronyms(question: str, unknown: list[str]) -> None:
    pipe, _ = pipeline()
    assert pipe.relevance.unknown_names(question) == unknown


def test_an_acronym_a_found_paper_spells_out_or_a_piece_of_a_formula_is_not_an_unknown_name() -> None:
    pipe, _ = pipeline()
    games = Paper(id="g", title="Playing Games from Pixels", abstract="Agents play Red Dead Redemption 2 from screens.")
    tokens = Paper(id="t", title="Language Models over Canonical Byte-Pair Encodings", abstract="Tokenizers.")
    asked = "Which agent plays RDR2 from screen captures?"
    assert pipe.relevance.unknown_names(asked) == ["RDR2"]  # nothing found spells it: no paper mentions it
    assert pipe.relevance.unknown_names(asked, [Hit(games, 1.0)]) == []
    assert pipe.relevance.unknown_names("How are BPE tokens scored?", [Hit(tokens, 1.0)]) == []
    assert pipe.relevance.unknown_names("How does XQZ3 play?", [Hit(games, 1.0)]) == ["XQZ3"]
    # the topic drops the mark; the question as typed shows "2GNN" is a piece of "X^2GNN"
    assert pipe.relevance.unknown_names("close X 2GNN solutions", typed="How close are X^2GNN solutions?") == []
    assert pipe.relevance.unknown_names_read(read("How close are X^2GNN solutions?")) == []  # as the pipeline asks
    assert pipe.relevance.unknown_names_read(read("How close are XQZ3 solutions?")) == ["XQZ3"]
    assert pipe.relevance.unknown_names("Does X^2GNN beat 2GNN?") == ["2GNN"]  # also written alone
    assert pipe.relevance.unknown_names("How good is {QZX9}?") == ["QZX9"]  # a brace alone is no formula
    hyphenated = "Which agents play RDR2-style open worlds?"
    assert pipe.relevance.unknown_names(hyphenated, [Hit(games, 1.0)]) == []  # its part is spelled out


@pytest.mark.parametrize(
    ("name", "text", "spelt"),
    [
        ("BERT", "Bidirectional Encoder Representations from Transformers", True),  # "from" left out
        ("RDR2", "games such as Red Dead Redemption 2.", True),
        ("BPE", "byte-pair encoding", True),
        ("ICV", "in-context vectors", True),  # a short word may open it
        ("TOM", "Theory of Mind", True),  # a short word may be used, not only skipped
        ("TAT", "Transformer and Attention Training", True),  # ... or skipped where using it fails
        ("LMO", "the language model's output", True),  # a possessive is one word, not an "s"
        ("LMSO", "the language model's output", False),
        ("RDR2", "Red Dead Redemption", False),  # the number is part of the name
        ("Bpe", "byte-pair encoding", False),  # not an acronym: mixed case
        ("MO", "mixture of", False),  # too short to tell from chance
        ("ZQX", "Zebra quick runs", False),
    ],
)
def test_spelled_out_reads_initials_of_consecutive_words(name: str, text: str, spelt: bool) -> None:
    assert spelled_out(name, text) is spelt


def test_unknown_names_can_be_turned_off_and_never_stand_before_the_llm() -> None:
    pipe, _ = pipeline()
    pipe.relevance.check_names = False
    assert pipe.relevance.unknown_names("What accuracy does TabNet3 reach?") == []
    model = FakeChatModel(deque([ABSTAIN_SENTINEL]))
    llm_pipe, _ = pipeline(llm=LLMAnswerer(model, context_tokens=2000))
    answer = llm_pipe.answer("How does LoomAttention reach linear complexity in multi-task learning?")
    assert len(model.requests) == 1 and "LoomAttention" in str(model.requests[0])  # the model decided
    assert answer.abstained and "mentions" not in answer.reason


# -- which papers an answer quotes ----------------------------------------------------------


@pytest.mark.parametrize(
    ("probabilities", "share", "places"),
    [
        ([0.9, 0.8, 0.1], 1.0, [0, 1]),  # both reach `keep`
        ([0.2, 0.5, 0.1], 1.0, [1]),  # none does: the most probable alone, wherever the search put it
        ([0.2, 0.3, 0.1], 0.65, [0, 1]),  # a close second is quoted beside it, in the search's order
        ([0.1, 0.3, 0.25], 0.65, [1, 2]),
        ([0.05, 0.3, 0.1], 0.65, [1]),  # a far one is not
        ([0.99, 0.7, 0.6], 0.65, [0, 1]),  # `keep` alone admits 0.7; the share admits down to 0.64
        ([], 0.65, []),
    ],
)
def test_kept_papers_are_the_confident_ones_and_those_close_to_the_best(
    probabilities: list[float], share: float, places: list[int]
) -> None:
    assert kept_papers(probabilities, keep=0.75, share=share) == places


def test_the_share_is_chosen_by_recall_weighted_f_when_the_right_paper_is_often_second() -> None:
    def row(gold_at: int, probabilities: list[float]) -> dict:
        papers = [f"p{i}" for i in range(len(probabilities))]
        return {"answerable": True, "gold": [papers[gold_at]], "papers": papers, "features": probabilities}

    identity = LogisticModel(("p",), (1.0,), 0.0, (0.0,), (1.0,))  # the features are the logits
    logit = lambda p: float(np.log(p / (1 - p)))  # noqa: E731
    first = [row(0, [[logit(0.3)], [logit(0.25)], [logit(0.05)]]) for _ in range(6)]
    second = [row(1, [[logit(0.3)], [logit(0.25)], [logit(0.05)]]) for _ in range(4)]
    share, figures = choose_share(first + second, identity, keep=0.75)
    assert 0.25 / 0.3 >= share > 0.05 / 0.3  # the second paper joins, the third does not
    assert figures["recall"] == 1.0 and figures["precision"] == 0.5
    alone, _ = choose_share(first, identity, keep=0.75)  # the right paper is always the first
    assert alone == 1.0


def test_a_detail_asked_by_kind_that_the_named_paper_never_names_is_abstained_on() -> None:
    """A question that names its paper and asks which pretrained model it uses, or a training
    setting, is not answered when that paper's abstract names no model the question does not
    (a family or a name with a digit) or never writes the setting; an abstract that names one,
    a model asked as a measure ("model size"), a category ("what kind of model") or a sort often
    answered by a type ("generative model", "encoder"), and a count ("how many models") are left
    to the other checks."""
    papers = [
        paper(
            "c",
            "ChartFuse: Mixture Connectors for Charts",
            "A",
            "We propose ChartFuse, a multimodal LLM with a "
            "mixture-of-experts connector, trained in three stages. ChartFuse reaches 84.6% on ChartQA.",
        ),
        paper(
            "t",
            "TuneKit: Cheap Instruction Tuning",
            "B",
            "We present TuneKit. We fine-tune Llama-3-8B with a learning rate of 1e-4 and gain 7 points on MT-Bench.",
        ),
        paper(
            "f",
            "PyFam: Quantised Fine-Tuning",
            "C",
            "We propose PyFam. Experiments on Pythia, Qwen and Llama models of different sizes show gains of 3 points.",
        ),
        paper(
            "s",
            "ScoreSel: Speculative Coreset Selection",
            "D",
            "We propose ScoreSel, which scores data with a "
            "small model for a target LLM such as Llama-2-13B, saving 60% of the selection time.",
        ),
        paper(
            "m",
            "MaskPre: Masked Pretraining at Scale",
            "E",
            "We propose MaskPre: we mask 75% of the patches and pretrain for 800 epochs, reaching 86.1% on ImageNet.",
        ),
    ]
    pipe, retriever = pipeline(papers, abstain_threshold=0.0)  # the model would answer anything: only rules abstain
    unnamed = pipe.answer("Which base LLM does ChartFuse build its connector on?")
    assert unnamed.abstained and unnamed.citations == []
    assert "ChartFuse" in unnamed.text and "which base LLM" in unnamed.text
    said = pipe.answer("Which base LLM does ScoreSel use to score data when the target LLM is Llama-2-13B?")
    assert said.abstained and "which base LLM" in said.text  # the network the question names is not the answer
    setting = pipe.answer(
        "What batch size and learning rate were used to train the ChartFuse connector in three stages?"
    )
    assert setting.abstained and "the batch size or the learning rate" in setting.text

    def kind(question: str) -> object:
        return pipe.relevance.unnamed_kind(question, retriever.search(question, 5).hits)

    for left in (
        "Which base LLM does TuneKit fine-tune?",  # "Llama-3-8B": a name with a digit
        "Which LLM families did the PyFam authors run experiments with?",  # families without a digit
        "What learning rate does TuneKit use?",
        "What masking ratio does MaskPre use?",  # "we mask 75% of the patches" gives it
        "How many epochs is MaskPre pretrained for?",
        "What kind of model is ChartFuse?",  # a category, not an instance
        "What model size does ChartFuse train?",  # a measure of the model
        "How many models does ChartFuse combine?",  # a count
        "Which model does ChartFuse use?",  # "model" alone may be any model, not a network
        "Which parts of the base LLM does ChartFuse tune?",  # the parts are asked, not the LLM
        "Which generative model does ChartFuse train?",  # a model of a sort often answered by its type
        "Which chart backbone encoder does ChartFuse use?",  # a backbone or encoder may be a type too
        "What LLM size does ChartFuse use?",  # the head is the size
    ):
        assert kind(left) is None, left


def test_a_second_name_the_named_paper_never_writes_is_abstained_on() -> None:
    """A question that names its paper by a coined name and also a benchmark, model, machine or
    place is not answered when that paper's abstract writes the second name in no form; one it
    writes in another case, hyphenation, as its first part, spelled out or as an acronym, the
    name of another paper found, a paper only described, and a common word are left to the
    model."""
    papers = [
        paper(
            "e",
            "EditNet: Locate-then-Edit for Language Models",
            "A",
            "We propose EditNet, a knowledge editor: editing with EditNet works well. On GPT-J and LLaMA3 "
            "(8B), EditNet edits 3,000 facts with 36.7% higher efficacy, tested on the StarCraft "
            "Multi-Agent Challenge and ImageNet-1K.",
        ),
        paper(
            "g",
            "GuardNet: Reasoning Guardrails",
            "B",
            "We propose GuardNet, which beats LlamaGuard by 30% on jailbreak prompts; it runs on an H100 GPU "
            "or a 3090 card, and guards agents on SMAC, Faster R-CNN detectors and Markov games. Its GEMM "
            "kernels match FlashAttention-3, its solver reaches a KKT-stationary point, it builds on "
            "Retentive Networks and it was tested on single-cell RNA data. It gains 3% AUROC on COCO and "
            "the Stanford Car set and adapts QwenCoder-2.5.",
        ),
        paper("h", "HelperKV: Cache Eviction", "C", "HelperKV evicts KV cache entries on an A100."),
        paper("m", "Solvers Compared", "D", "We compare Gurobi with SCIP."),
        paper("k", "Image Editing", "E", "Editing images is hard work."),
        paper("w", "Video Editing", "F", "Editing videos is hard work."),
    ]
    # a collection large enough that a name in one paper is rare, and "Data" in every one is not
    papers += [
        paper(f"x{i}", f"Filler Study {i}", "Z", f"We study topic {i} with Data from the Web.") for i in range(300)
    ]
    papers += [paper(f"l{i}", f"Prompt Study {i}", "Y", f"We prompt Mistral-7B on task {i}.") for i in range(10)]
    pipe, retriever = pipeline(papers, abstain_threshold=0.0)  # the model would answer anything: only rules abstain
    missing = pipe.answer("How well does EditNet work when editing Mistral-7B?")
    assert missing.abstained and missing.citations == []
    assert "EditNet" in missing.text and "Mistral-7B" in missing.text
    rare = pipe.answer("How much faster is GuardNet than Gurobi?")  # "Gurobi" is rare: a proper name
    assert rare.abstained and "Gurobi" in rare.text

    def name(question: str) -> object:
        return pipe.relevance.unheld_name(question, retriever.search(question, 5).hits)

    # a name the next papers use too is their topic, not the first paper's name
    gui = [Paper(id=f"g{i}", title=f"Agent {i}", abstract=f"Our GUI agent {i} grounds GUI elements.") for i in range(3)]
    shared = "How many samples does WebPile have, and does it help GUI grounding?"
    assert pipe.relevance.unheld_name(shared, [Hit(p, 1.0) for p in gui]) is None
    alone = [Hit(gui[0], 1.0), Hit(papers[2], 0.5), Hit(papers[3], 0.4)]
    assert pipe.relevance.unheld_name(shared, alone) is not None  # "WebPile", as the question gives the GUI paper

    machine = pipe.answer("Is GuardNet faster on an A100?")  # a machine, not a value like "7B"; it says H100
    assert machine.abstained and "A100" in machine.text
    # a next paper that mentions the second name does not name another paper: the first is still read
    beside = [Hit(papers[0], 1.0), Hit(papers[-1], 0.5), Hit(papers[10], 0.4)]
    assert "Mistral-7B" in str(
        pipe.relevance.unheld_name("How well does EditNet work when editing Mistral-7B?", beside)
    )

    for left in (
        "How well does EditNet work when editing GPT-J?",  # as written
        "How does EditNet do on Llama 3?",  # other spacing and case: "LLaMA3"
        "What does EditNet reach on SMAC?",  # the acronym of a name spelled out
        "What accuracy does EditNet get on ImageNet?",  # the first part of "ImageNet-1K"
        "What accuracy does EditNet get on imagenet1k?",  # squashed, lower case
        "How much better is GuardNet than LlamaGuard-style guards?",  # a compound's name part
        "Is GuardNet faster on an H100?",
        "Is GuardNet fast on an RTX 3090?",  # the model number the text writes
        "Was GuardNet tested on the StarCraft Multi-Agent Challenge?",  # spelled out, the text's acronym
        "Does GuardNet protect Faster RCNN detectors?",  # "R-CNN" joined
        "Does GuardNet handle Markovian games?",  # a word of the family of "Markov"
        "How fast are GuardNet's GEMMs?",  # an acronym's plural
        "Is GuardNet faster than FA3?",  # the capitals and digits of "FlashAttention-3"
        "Does GuardNet reach a Karush-Kuhn-Tucker point?",  # its acronym joined to another word
        "Does GuardNet build on RetNet?",  # a blend of "Retentive Networks"
        "Was GuardNet tested on scRNA data?",  # a lower-case prefix varying "RNA"
        "Is GuardNet fast on H100s?",  # a machine's plural
        "Was GuardNet tested on Stanford Cars?",  # a plain word's plural
        "What ROC gain does GuardNet get?",  # an acronym within a longer one: "AUROC"
        "Was GuardNet tested on MS-COCO?",  # a hyphen part of four capitals
        "Does GuardNet adapt Qwen2.5-Coder?",  # its pieces in another order
        "How does GuardNet compare with HelperKV?",  # another paper found, named beside the first
        "How do reasoning guardrails fare on Mistral-7B?",  # the paper described by its title, not named
        "How does EditNet handle Data from the Web?",  # common capitalised words, no proper name
    ):
        assert name(left) is None, left
