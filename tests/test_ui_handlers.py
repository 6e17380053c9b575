"""The UI's handlers called directly, without a browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from rag.app import App
from rag.settings import Settings
from tests.openai_server import FakeOpenAI
from ui.app import ANY, Handlers

NO_FILTER = (ANY, ANY, "", ANY, "")


def run(handlers: Handlers, question: str, history: Any = None, session: Any = None,
        filters: tuple[str, str, str, str, str] = NO_FILTER) -> list[tuple[Any, ...]]:
    return list(handlers.respond(question, history, session, *filters))


def test_answer_streams_and_fills_sources_and_bibtex(sample_app: App) -> None:
    handlers = Handlers(sample_app)
    updates = run(handlers, "What STL-10 accuracy does PLNL reach?")
    history, sources, session, box, bib = updates[-1]
    assert history[-2] == {"role": "user", "content": "What STL-10 accuracy does PLNL reach?"}
    assert "class='cite'" in history[-1]["content"] and "href='#src-0-1'" in history[-1]["content"]
    assert "id='src-0-1'" in sources and "PLNL" in sources and "<mark>" in sources and "55.25" in sources
    assert box == "" and session is not None and len(session.turns) == 1
    assert "@inproceedings" in Path(bib).read_text()


def test_follow_up_and_selecting_an_earlier_answer(sample_app: App) -> None:
    handlers = Handlers(sample_app)
    history, _, session, _, _ = run(handlers, "Which paper introduced PersuasionBench?")[-1]
    history, sources, session, _, _ = run(handlers, "How often does GPT-4o lose to the best human persuader?",
                                          history, session)[-1]
    assert "36%" in sources and len(history) == 4
    first = handlers.select_answer(session, gr.SelectData(None, {"index": 1, "value": ""}))
    assert "id='src-0-1'" in first and "PersuasionBench" in first


def test_filter_that_excludes_everything(sample_app: App) -> None:
    handlers = Handlers(sample_app)
    history, sources, _, _, bib = run(handlers, "Which paper introduced PersuasionBench?",
                                      filters=(ANY, ANY, "", ANY, "Nobody Atall"))[-1]
    assert history[-1]["content"].startswith("Nothing found") and "Nothing found" in sources and bib is None


def test_each_tab_has_its_own_conversation(sample_app: App) -> None:
    handlers = Handlers(sample_app)
    a = run(handlers, "What is Celcomen?")[-1][2]
    b = run(handlers, "What STL-10 accuracy does PLNL reach?")[-1][2]
    assert a is not b and len(a.turns) == len(b.turns) == 1


def test_errors_become_gradio_errors_with_the_cli_text(sample_app: App, tmp_path: Path) -> None:
    handlers = Handlers(sample_app)
    with pytest.raises(gr.Error, match="Type a question"):
        run(handlers, "  ")
    with FakeOpenAI() as server:
        server.replies.extend([{"status": 500}] * 3)
        app = App(Settings(home=sample_app.settings.home, openai_api_key="test-key", openai_base_url=server.base_url,
                           llm_model="test-model", llm_max_retries=1, llm_backoff_s=0.01))
        with pytest.raises(gr.Error, match=r"failed \(500\) after 1 retries"):
            run(Handlers(app), "What STL-10 accuracy does PLNL reach?")
    empty = Handlers(App(Settings(home=tmp_path / "none")))
    with pytest.raises(gr.Error, match="rag ingest"):
        run(empty, "anything")


def test_lookup_and_show_paper(sample_app: App) -> None:
    handlers = Handlers(sample_app)
    rows, _ = handlers.lookup("", "Mueller")
    assert [r[1] for r in rows] == ["MIB"]
    view = handlers.show_paper(gr.SelectData(None, {"index": [0, 1], "value": "MIB", "row_value": rows[0]}))
    assert view.startswith("### MIB") and "Aaron Mueller" in view and "Mechanistic Interpretability Benchmark" in view
    header = handlers.header()
    assert "96 papers indexed" in header and "extractive" in header


def test_two_tabs_answer_at_the_same_time(sample_app: App) -> None:
    import threading

    handlers = Handlers(sample_app)
    results: dict[str, Any] = {}

    def tab(name: str, question: str) -> None:
        results[name] = run(handlers, question)[-1]

    threads = [threading.Thread(target=tab, args=("a", "What STL-10 accuracy does PLNL reach?")),
               threading.Thread(target=tab, args=("b", "How often does GPT-4o lose to the best human persuader?"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert "55.25" in results["a"][1] and "36%" in results["b"][1]
    assert results["a"][2] is not results["b"][2]
