"""The offline default: extractive answers on the bundled sample, abstention, follow-ups, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.app import App
from rag.errors import QuestionError
from tests.conftest import run_rag

CITATION_FIELDS = {
    "n",
    "paper_id",
    "title",
    "label",
    "authors",
    "venue",
    "year",
    "url",
    "abstract",
    "quote",
    "support",
    "supported",
}


@pytest.mark.parametrize(
    ("question", "fact", "label"),
    [
        ("What STL-10 accuracy does PLNL reach?", "55.25", "PLNL"),
        ("How often does GPT-4o lose to the best human persuader?", "36%", "PersuasionBench"),
        ("How many text samples are in the Outlandish dataset?", "1320", None),
        ("Which paper introduced PersuasionBench?", "PersuasionBench", "PersuasionBench"),
        ("By how much does BrainOOD improve generalization to OOD subjects?", "8.5%", "BrainOOD"),
    ],
)
def test_factoids_lead_with_the_paper_and_quote_the_fact(
    sample_app: App, question: str, fact: str, label: str | None
) -> None:
    answer = sample_app.pipeline.answer(question)
    assert not answer.abstained and answer.mode == "extractive"
    assert answer.text.startswith("Extractive answer") and answer.citations[0].n == 1
    lead = [c for c in answer.claims if c.cites == [1]]
    assert any(fact in c.text for c in lead) and all(c.supported for c in lead)
    if label:
        assert answer.citations[0].paper.label == label


def test_catalogue_questions_on_the_sample(sample_app: App) -> None:
    count = sample_app.pipeline.answer("How many ICML 2025 papers are there?")
    assert count.mode == "catalogue" and "**20**" in count.text and not count.abstained
    position = sample_app.pipeline.answer("Which position papers are there?")
    assert len(position.citations) == 3 and all("Position" in c.paper.track for c in position.citations)
    assert all(c.supported for c in position.claims)
    by = sample_app.pipeline.answer("Which papers did Aaron Mueller write?")
    assert by.kind == "list" and by.citations[0].paper.label == "MIB" and "MIB" in by.text
    track = sample_app.pipeline.answer("What track is MIB in?")
    assert track.kind == "field-of" and "Accountability, Transparency, and Interpretability" in track.text
    assert track.claims[0].supported
    session = sample_app.chat()
    session.ask("What is SAeUron?")
    authors = session.ask("Who are its authors?")
    assert authors.kind == "authors-of" and "Bartosz Cywiński" in authors.text
    assert authors.citations[0].paper.label == "SAeUron" and authors.claims[0].supported


def test_lists_rank_papers_and_keep_the_rest_as_also_relevant(sample_app: App) -> None:
    answer = sample_app.pipeline.answer("Which papers use sparse autoencoders?")
    assert len(answer.citations) >= 3
    assert all("autoencoder" in f"{c.paper.title} {c.paper.abstract}".lower() for c in answer.citations)
    assert [c.n for c in answer.citations] == list(range(1, len(answer.citations) + 1))
    assert {p.id for p in answer.related}.isdisjoint({c.paper.id for c in answer.citations})
    if answer.related:
        assert "Also relevant" in answer.text


@pytest.mark.parametrize(
    "question",
    [
        "Which of these papers reports BLEU on WMT14?",
        "What is the capital of Australia?",
        "Who won the 2018 FIFA World Cup?",
        "What is a good recipe for pancakes?",
    ],
)
def test_off_topic_questions_abstain(sample_app: App, question: str) -> None:
    answer = sample_app.pipeline.answer(question)
    assert answer.abstained and answer.citations == [] and "does not say" in answer.text


def test_a_follow_up_that_refers_back_carries_the_subject_and_a_new_question_does_not(sample_app: App) -> None:
    session = sample_app.chat()
    first = session.ask("Which paper introduced PersuasionBench?")
    second = session.ask("How often does it lose to the best human persuader?")
    assert "PersuasionBench" in second.query and second.citations[0].paper.label == "PersuasionBench"
    assert any("36%" in c.text for c in second.claims)
    third = session.ask("Which papers use sparse autoencoders?")  # self-contained: searched as asked
    assert third.query == "Which papers use sparse autoencoders?" and not third.abstained
    assert "PersuasionBench" not in {c.paper.label for c in third.citations}
    assert first.citations[0].paper.label == "PersuasionBench"  # earlier turns keep their citations


def test_a_question_that_finds_nothing_alone_is_read_once_more_as_a_follow_up(sample_app: App) -> None:
    """No cue says "How large was the improvement over the baselines?" points back, and alone it
    finds nothing that answers it; it brings little the conversation's paper lacks, and read with
    that subject it is answered. An off-topic question stays abstained (it brings its own topic),
    and the user sees one answer, not the abstention before it."""
    question = "How large was the improvement over the baselines?"
    assert not sample_app.pipeline.read(question).refers_back
    assert sample_app.pipeline.answer(question).abstained
    session = sample_app.chat()
    session.ask("What STL-10 accuracy does PLNL reach?")
    shown: list[str] = []
    answer = session.ask(question, on_token=shown.append)
    assert not answer.abstained and answer.citations[0].paper.label == "PLNL" and "PLNL" in answer.query
    assert "".join(shown) == answer.text and "does not say" not in "".join(shown)
    off_topic = session.ask("What club does Lionel Messi play for?", on_token=shown.append)
    assert off_topic.abstained and off_topic.citations == []


def test_bad_questions(sample_app: App) -> None:
    with pytest.raises(QuestionError, match="empty"):
        sample_app.pipeline.answer("   ")
    with pytest.raises(QuestionError, match="limit is 2000"):
        sample_app.pipeline.answer("why " * 1000)


def test_ask_json_contract_and_bibtex(sample_home: Path, tmp_path: Path) -> None:
    env = {"RAG_HOME": str(sample_home)}
    out = run_rag("ask", "What STL-10 accuracy does PLNL reach?", "--json", "--bibtex", env=env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {
        "question",
        "answer",
        "abstained",
        "mode",
        "citations",
        "removed_citations",
        "timings_ms",
        "usage",
        "kind",
        "related",
        "filters",
        "reason",
        "confidence",
    } <= set(data)
    assert data["kind"] == "content" and data["citations"][0]["n"] == 1 and 0 < data["confidence"] <= 1
    assert data["mode"] == "extractive" and data["abstained"] is False
    assert set(data["citations"][0]) >= CITATION_FIELDS and data["citations"][0]["label"] == "PLNL"
    assert "@inproceedings" in data["bibtex"]
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": 1, "question": "What is the capital of Australia?"}\n{"id": 2, "question": ""}\n')
    out = run_rag("ask", "--questions", str(questions), env=env)
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [line["id"] for line in lines] == [1] and lines[0]["abstained"] is True
    assert "q.jsonl:2" in out.stderr


def test_bibtex_marks_cut_author_lists(sample_home: Path) -> None:
    env = {"RAG_HOME": str(sample_home)}
    mib = json.loads(run_rag("papers", "MIB", "--json", env=env).stdout)[0]
    out = run_rag("bibtex", mib["paper_id"], env=env)
    assert out.returncode == 0
    assert "Aaron Mueller and Atticus Geiger" in out.stdout and "and others}" in out.stdout
    assert "title = {MIB}" in out.stdout and "year = {2025}" in out.stdout
    bad = run_rag("bibtex", "no-such-id", env=env)
    assert bad.returncode != 0 and "no-such-id" in bad.stderr


def test_numbers_with_thousands_separators_are_found_in_their_source(sample_app: App) -> None:
    answer = sample_app.pipeline.answer("How many models does the KBG knowledge graph contain?")
    assert any("26,206" in c.text for c in answer.claims)
    assert all(c.supported for c in answer.claims), [c.reason for c in answer.claims]


def test_how_well_a_named_method_works_is_answered_also_as_a_follow_up(sample_app: App) -> None:
    answer = sample_app.pipeline.answer("How well does SAeUron work?")
    assert not answer.abstained and answer.citations[0].paper.label == "SAeUron"
    assert any("outperforms" in c.text for c in answer.claims)
    session = sample_app.chat()
    session.ask("What is SAeUron?")
    follow_up = session.ask("How well does it work?")
    assert not follow_up.abstained and follow_up.citations[0].paper.label == "SAeUron"


def test_what_is_and_how_it_works_quote_the_paper_that_introduces_it(sample_app: App) -> None:
    uni = sample_app.pipeline.answer("What is UNI?")
    assert not uni.abstained and uni.citations[0].paper.label == "UNI"
    assert any("we propose" in c.text for c in uni.claims if c.cites == [1])
    how = sample_app.pipeline.answer("How does SAeUron work?")
    assert how.citations[0].paper.label == "SAeUron" and len([c for c in how.claims if c.cites == [1]]) >= 2


def test_orals_asked_of_a_collection_without_decisions_are_not_pretended(sample_app: App) -> None:
    answer = sample_app.pipeline.answer("Which orals are about interpretability?")
    assert "records no decisions" in answer.text
    count = sample_app.pipeline.answer("How many orals are there?")
    assert count.abstained and "records no decisions" in count.text


def test_a_paper_that_analyses_a_cited_name_is_not_labelled_with_it(sample_app: App) -> None:
    catalog = sample_app.index.load().catalog
    analysis = [p for _, p in catalog.iter_papers() if "recently proposed in Liu et al." in p.abstract]
    assert len(analysis) == 1 and analysis[0].label != "KAN"
    assert "KANs" in {p.label for _, p in catalog.iter_papers()}
