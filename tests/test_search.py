from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.app import App
from rag.settings import Settings
from rag.types import Filters
from tests.conftest import run_rag

CONTRACT = {"paper_id", "title", "label", "authors", "venue", "year", "track", "decision", "url", "abstract"}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["PLNL", "Celcomen", "PersuasionBench", "NUCFL", "SAeUron", "TGB-Seq"])
def test_exact_method_names_come_first(sample_app: App, name: str) -> None:
    hits = sample_app.search(name).hits
    assert hits[0].paper.label == name


@pytest.mark.parametrize(
    ("query", "label"),
    [
        # Paraphrases that share no content word with the abstract they should find.
        ("can chatbots talk people into changing their minds", "PersuasionBench"),
        ("cell-cell communication modelled as a causal generative network", "Celcomen"),
        ("well-calibrated probabilities when training across many clients without sharing data", "NUCFL"),
    ],
)
def test_paraphrases_find_the_paper(sample_app: App, query: str, label: str) -> None:
    assert label in [h.paper.label for h in sample_app.search(query, k=3).hits]


def test_each_mode_alone_and_hybrid_one_entry_per_paper(sample_app: App) -> None:
    for mode in ("dense", "keyword", "hybrid"):
        hits = sample_app.search("sparse autoencoders interpretability", k=10, mode=mode).hits
        ids = [h.paper.id for h in hits]
        assert len(ids) == len(set(ids)) and hits
    keyword = sample_app.search("PLNL", k=10, mode="keyword").hits
    assert [h.paper.label for h in keyword] == ["PLNL"]  # only papers that contain the term


def test_filters_apply_inside_retrieval(sample_app: App) -> None:
    icml = sample_app.search("language models", k=10, filters=Filters(venue="ICML")).hits
    assert len(icml) == 10 and all(h.paper.venue == "ICML" for h in icml)
    mueller = sample_app.search("benchmark", k=5, filters=Filters(author="mueller")).hits
    assert [h.paper.label for h in mueller] == ["MIB"]
    track = sample_app.search("interpretability", k=20, filters=Filters(track="Accountability")).hits
    assert track and all("Accountability" in h.paper.track for h in track)
    assert sample_app.search("anything", filters=Filters(decision="Oral")).hits == []
    assert sample_app.search("anything", filters=Filters(year=2019)).hits == []


def test_search_json_contract(sample_home: Path) -> None:
    out = run_rag("search", "PersuasionBench", "--k", "3", "--json", env={"RAG_HOME": str(sample_home)})
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)
    assert len(hits) == 3
    for hit in hits:
        assert CONTRACT | {"score"} <= set(hit)
        assert isinstance(hit["authors"], list) and isinstance(hit["score"], float)
    assert hits[0]["label"] == "PersuasionBench" and len(hits[0]["abstract"]) > 300


def test_papers_and_status_json(sample_home: Path) -> None:
    env = {"RAG_HOME": str(sample_home)}
    out = run_rag("papers", "--author", "Mueller", "--json", env=env)
    entries = json.loads(out.stdout)
    assert [e["label"] for e in entries] == ["MIB"] and set(entries[0]) >= CONTRACT and "score" not in entries[0]
    assert [e["label"] for e in json.loads(run_rag("papers", "Celcomen", "--json", env=env).stdout)][0] == "Celcomen"
    status = json.loads(run_rag("status", "--json", env=env).stdout)
    assert status["papers"] == 96 and status["chunks_in_chroma"] == 96 and status["cache"] == "in sync"
    assert status["embedding_model"] == "all-MiniLM-L6-v2-int8" and status["collection"].startswith("chunks_")


def test_batch_queries_one_line_each(sample_home: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "a", "query": "PLNL"}\n{"id": "b", "query": "Celcomen"}\nnot json\n')
    out = run_rag("search", "--queries", str(queries), "--k", "2", env={"RAG_HOME": str(sample_home)})
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [line["id"] for line in lines] == ["a", "b"]
    assert lines[0]["hits"][0]["label"] == "PLNL" and len(lines[1]["hits"]) == 2
    assert "q.jsonl:3" in out.stderr


@pytest.mark.slow
def test_user_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    env = {"RAG_HOME": str(tmp_path / "empty-home")}
    out = run_rag("search", "anything", env=env)
    assert out.returncode != 0 and "rag ingest" in out.stderr and "Traceback" not in out.stderr
    out = run_rag("ingest", str(tmp_path / "missing.jsonl"), env=env)
    assert out.returncode != 0 and "missing.jsonl" in out.stderr and "no such file" in out.stderr
    assert "Traceback" not in out.stderr


def _corpus(path: Path, n: int) -> Path:
    """`n` papers of words drawn by a seeded generator with Zipf's frequencies, as in real text: a
    few words in every abstract, most in few, so the nearest neighbours past the first few are
    close calls."""
    import random

    rng = random.Random(21)
    words = [f"w{i}" for i in range(3000)]
    weights = [1 / (i + 1) for i in range(len(words))]
    records = [
        {
            "id": f"D{i}",
            "title": " ".join(rng.choices(words, weights, k=8)),
            "abstract": " ".join(rng.choices(words, weights, k=120)) + ".",
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.slow
def test_the_same_search_gives_the_same_bytes_every_time(tmp_path: Path) -> None:
    """20 processes searching an unchanged index of 300 papers in a real persistent Chroma print
    the same bytes. A local Chroma keeps the last records (up to its `sync_threshold`, 1,000) in
    its write-ahead log and replays them into the HNSW graph whenever a process opens the folder,
    in an order of its own: each process searched a different graph, and the approximate
    neighbours past the first few changed (5 different top-10s in 20 runs, issue 21). The writer
    now has Chroma persist the whole graph when it finishes (`ChromaStore.persist_index`)."""
    from concurrent.futures import ThreadPoolExecutor

    env = {"RAG_EMBEDDER": "hash", "RAG_HOME": str(tmp_path / "home")}
    out = run_rag("ingest", str(_corpus(tmp_path / "papers.jsonl", 300)), env=env)
    assert out.returncode == 0, out.stderr
    store = App(Settings(home=tmp_path / "home", embedder="hash")).store.open()
    assert store.unapplied_records() == 0  # the graph on disk holds every vector: nothing to replay
    searches = [
        ("search", "w1 w5 w17 w40 w77 w300", "--k", "10", "--json"),
        ("search", "w1 w5 w17 w40 w77 w300", "--k", "50", "--mode", "dense", "--json"),
    ]
    with ThreadPoolExecutor(2) as pool:
        outputs = list(pool.map(lambda args: run_rag(*args, env=env), [a for a in searches for _ in range(10)]))
    assert all(o.returncode == 0 for o in outputs), outputs[0].stderr
    hybrid = {o.stdout for o in outputs[:10]}
    dense = {o.stdout for o in outputs[10:]}
    assert len(hybrid) == 1 and len(dense) == 1, (len(hybrid), len(dense))
    assert len(json.loads(hybrid.pop())) == 10


def test_hybrid_search_reorders_only_its_first_papers_by_best_sentence(sample_app: App, tmp_path: Path) -> None:
    query = "which work checks whether language models can persuade people"
    reordered = sample_app.search(query, k=10).hits
    plain = App(Settings(home=sample_app.settings.home, rerank_depth=0)).search(query, k=10).hits
    depth = sample_app.settings.rerank_depth
    # the same papers come first, in an order that may differ; below the reordered ones nothing moves
    assert {h.paper.id for h in reordered[:depth]} == {h.paper.id for h in plain[:depth]}
    assert [h.paper.id for h in reordered[depth:]] == [h.paper.id for h in plain[depth:]]
    assert all("sentence" in h.signals for h in reordered[:depth])
    assert not any("sentence" in h.signals for h in reordered[depth:] + plain)
    scores = [h.score for h in reordered]
    assert scores == sorted(scores, reverse=True)
    # keyword and dense search are left as their ranker orders them
    assert not any("sentence" in h.signals for h in sample_app.search(query, k=5, mode="keyword").hits)


def test_a_paper_whose_one_sentence_answers_moves_above_a_slightly_better_fused_one(sample_app: App) -> None:
    from rag.answer import source_sentences
    from rag.search import Rerank, SentenceReranker
    from rag.types import Paper

    on_topic = Paper(
        "a",
        title="Training large models on many devices",
        abstract="We study distributed optimisation at scale. "
        "Our method compresses gradients to one bit per coordinate before sending them between workers. "
        "Experiments cover image classification.",
    )
    off_topic = Paper(
        "b",
        title="Gradient methods for distributed training",
        abstract="We study gradient methods for distributed training of large models. "
        "We prove convergence rates for non-convex objectives under bounded variance.",
    )
    reranker = SentenceReranker(sample_app.checker.embed, source_sentences, Rerank(weight=0.8, depth=5))
    query = "compressing gradients to a single bit to cut communication between workers"
    cosines = reranker.best_cosines(query, [on_topic, off_topic])
    assert cosines[0] > cosines[1] + 0.1
    order = reranker.reorder(query, [(off_topic, 0.62), (on_topic, 0.60)])
    assert [p.id for p, _, _ in order] == ["a", "b"]
    # with no weight the fused order stands; ties fall to the paper id
    flat = SentenceReranker(sample_app.checker.embed, source_sentences, Rerank(weight=0.0, depth=5))
    assert [p.id for p, _, _ in flat.reorder(query, [(off_topic, 0.62), (on_topic, 0.60)])] == ["b", "a"]
    assert [p.id for p, _, _ in flat.reorder(query, [(off_topic, 0.6), (on_topic, 0.6)])] == ["a", "b"]


TITLE_ONLY_PAPERS = [
    {"id": "wash", "title": "Large Scale Knowledge Washing", "abstract": ""},
    {
        "id": "vision",
        "title": "Scaling vision models",
        "abstract": "We train a vision model at large scale on a large amount of images. The model scales with data.",
    },
    {
        "id": "protein",
        "title": "Protein models at scale",
        "abstract": "A network for proteins that scales to a large amount of sequences, trained with a large amount "
        "of compute. Knowledge of structure helps.",
    },
    {
        "id": "weather",
        "title": "Weather forecasting at scale",
        "abstract": "A large model forecasts weather at scale from a large amount of observations.",
    },
]


@pytest.mark.slow
def test_a_paper_the_collection_has_only_the_title_of_is_lifted_when_asked(tmp_path: Path) -> None:
    """A title holds few of a question's words, so BM25, which holds most of the fusion, ranks
    abstracts that repeat the question's common words ("a large amount", "at scale") above it,
    while the dense ranker, reading meaning, puts the title first. `RAG_TITLE_ONLY_LIFT` lifts such
    a paper (off by default: docs/benchmarks.md, session 29); a hit keeps its fused place before
    the lift, which the relevance models read."""
    data = tmp_path / "papers.jsonl"
    data.write_text("".join(json.dumps({**p, "venue": "ICML", "year": 2025}) + "\n" for p in TITLE_ONLY_PAPERS))
    app = App(Settings(home=tmp_path / "home"))
    app.ingest([data], progress=False)
    question = "Is there a paper on wiping a large amount of knowledge out of a model at scale?"
    plain = app.search(question, k=3).hits
    assert [h.paper.id for h in plain][:2] == ["protein", "wash"] and plain[1].ranks["dense"] == 1
    lifted = App(Settings(home=tmp_path / "home", title_only_lift=0.25)).search(question, k=3).hits
    assert [h.paper.id for h in lifted][:2] == ["wash", "protein"]
    assert lifted[0].ranks["fused"] == 2 and lifted[1].ranks["fused"] == 1
