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
def test_factoids_put_the_answering_sentence_first(
    sample_app: App, question: str, fact: str, label: str | None
) -> None:
    answer = sample_app.pipeline.answer(question)
    assert not answer.abstained and answer.mode == "extractive"
    assert answer.text.startswith("Extractive answer")
    first = answer.claims[0]
    assert fact in first.text and first.supported and first.cites == [1] and answer.citations[0].n == 1
    if label:
        cited = next(c for c in answer.citations if c.n == first.cites[0])
        assert cited.paper.label == label and cited.quote == first.text


def test_numbers_asked_for_are_in_bold(sample_app: App) -> None:
    answer = sample_app.pipeline.answer("By how much does BrainOOD improve generalization to OOD subjects?")
    assert answer.kind == "numeric" and "**8.5%**" in answer.text


def test_mention_only_abstains_and_lists_the_papers_that_use_it(sample_app: App) -> None:
    answer = sample_app.pipeline.answer("Which paper introduced the Frank-Wolfe algorithm?")
    assert answer.abstained and answer.citations == [] and "does not say" in answer.text
    assert answer.related and all("Frank-Wolfe" in p.abstract for p in answer.related)
    assert answer.public()["abstained"] is True and {r["paper_id"] for r in answer.public()["related"]} == {
        p.id for p in answer.related
    }


def test_catalogue_questions_on_the_sample(sample_app: App) -> None:
    count = sample_app.pipeline.answer("How many ICML 2025 papers are there?")
    assert count.mode == "catalogue" and "**20**" in count.text and not count.abstained
    position = sample_app.pipeline.answer("Which position papers are there?")
    assert len(position.citations) == 3 and all("Position" in c.paper.track for c in position.citations)
    assert all(c.supported for c in position.claims)
    by = sample_app.pipeline.answer("What did Aaron Mueller propose?")
    assert by.kind == "by-author" and by.citations[0].paper.label == "MIB" and "MIB" in by.text
    track = sample_app.pipeline.answer("What track is MIB in?")
    assert "Accountability, Transparency, and Interpretability" in track.text and track.claims[0].supported
    session = sample_app.chat()
    session.ask("What is SAeUron?")
    authors = session.ask("Who are its authors?")
    assert authors.kind == "authors-of" and "Bartosz Cywiński" in authors.text
    assert authors.citations[0].paper.label == "SAeUron" and authors.claims[0].supported


def test_lists_rank_papers_and_keep_the_rest_as_also_relevant(sample_app: App) -> None:
    answer = sample_app.pipeline.answer("Which papers use sparse autoencoders?")
    assert answer.kind == "list" and len(answer.citations) >= 3
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


def test_follow_up_carries_the_subject(sample_app: App) -> None:
    session = sample_app.chat()
    first = session.ask("Which paper introduced PersuasionBench?")
    second = session.ask("How often does GPT-4o lose to the best human persuader?")
    assert "PersuasionBench" in second.query
    assert "36%" in second.claims[0].text and second.citations[0].paper.label == "PersuasionBench"
    third = session.ask("What is Celcomen?")  # names another paper: not rewritten
    assert third.query == "What is Celcomen?" and third.citations[0].paper.label == "Celcomen"
    assert first.citations[0].paper.label == "PersuasionBench"  # earlier turns keep their citations


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
    } <= set(data)
    assert data["kind"] == "numeric" and data["citations"][0]["n"] == 1
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
    assert "26,206" in answer.claims[0].text
    assert all(c.supported for c in answer.claims), [c.reason for c in answer.claims]


def test_how_well_a_named_method_works_is_answered_also_as_a_follow_up(sample_app: App) -> None:
    answer = sample_app.pipeline.answer("How well does SAeUron work?")
    assert not answer.abstained and answer.citations[0].paper.label == "SAeUron"
    assert any("outperforms" in c.text for c in answer.claims)
    session = sample_app.chat()
    session.ask("What is SAeUron?")
    follow_up = session.ask("How well does it work?")
    assert not follow_up.abstained and follow_up.citations[0].paper.label == "SAeUron"


def test_what_is_and_how_it_works_give_the_definition_then_the_mechanism(sample_app: App) -> None:
    uni = sample_app.pipeline.answer("What is UNI?")
    texts = [c.text for c in uni.claims]
    assert "we propose" in texts[0] and len(texts) >= 2
    assert not any(t.startswith(("Gradient-based interpretations", "This leads to")) for t in texts)
    how = sample_app.pipeline.answer("How does SAeUron work?")
    texts = [c.text for c in how.claims]
    assert "we introduce SAeUron" in texts[0] and len(texts) >= 2
    assert not any("outperforms" in t or "Code and checkpoints" in t for t in texts)


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
