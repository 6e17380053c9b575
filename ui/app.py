"""The Gradio app. Handlers call `rag.app.App` and nothing lower; each browser tab keeps its own
ChatSession in gr.State; answering is queued with a concurrency limit, because each answer
holds a CPU core for about a second.

Errors the user can act on (RagError) become gr.Error with the same text as the command line; the
app keeps running."""

from __future__ import annotations

import logging
import queue
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from rag.app import App
from rag.catalog import Filters
from rag.chat import ChatSession
from rag.cite import bibtex_entry
from rag.errors import RagError
from rag.types import Answer
from ui.render import NO_SOURCES, answer_markdown, sources_html

log = logging.getLogger(__name__)

EXAMPLES = [
    "Which paper introduced PersuasionBench?",
    "What STL-10 accuracy does PLNL reach?",
    "What is Celcomen?",
    "Which papers use sparse autoencoders for interpretability?",
]
ANY = "(any)"
# System fonts only: the default theme would fetch web fonts, and these machines are offline.
THEME = gr.themes.Default(font=["ui-sans-serif", "system-ui", "sans-serif"], font_mono=["ui-monospace", "monospace"])

CSS = """
.source-card { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 8px 10px; margin-bottom: 8px; }
.source-card.selected, .source-card:target { outline: 3px solid #f59e0b; }
.source-title { font-weight: 600; }
.source-meta { font-size: 0.85em; opacity: 0.8; }
.source-abstract { font-size: 0.9em; margin-top: 6px; }
.source-abstract mark { background: #fde68a; color: inherit; }
.badge.ok { color: #15803d; font-weight: 600; } .badge.bad { color: #b91c1c; font-weight: 700; }
.unsupported { color: #b91c1c; } .removed { color: #92400e; }
a.cite { font-weight: 600; text-decoration: none; padding: 0 2px; }
"""

# A click on a citation marker selects its card in the sources panel (the panel already shows
# the clicked answer's sources: the chatbot's select event switches it).
JS = """
() => {
  window.__ragCite = true;
  document.addEventListener('click', (event) => {
    const link = event.target.closest && event.target.closest('a.cite');
    if (!link) return;
    event.preventDefault();
    const id = (link.getAttribute('href') || '').replace(/^#/, '');
    const pick = () => {
      const card = document.getElementById(id);
      if (!card) return false;
      document.querySelectorAll('.source-card.selected').forEach((c) => c.classList.remove('selected'));
      card.classList.add('selected');
      card.scrollIntoView({block: 'nearest'});
      return true;
    };
    if (!pick()) setTimeout(pick, 400);
  }, true);
}
"""


def _filters(venue: str, year: str, track: str, decision: str, author: str) -> Filters:
    return Filters(
        venue=None if venue in ("", ANY, None) else venue,
        year=int(year) if year not in ("", ANY, None) else None,
        track=track or None,
        decision=None if decision in ("", ANY, None) else decision,
        author=author or None,
    )


class Handlers:
    """The UI's event handlers, callable without a browser (tests call them directly)."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.files = Path(tempfile.mkdtemp(prefix="rag-ui-"))

    def header(self) -> str:
        status = self.app.index.status()
        return f"**Answers:** {self.app.mode_line} · **{status['papers']} papers indexed** ({status['embedding_model']})"

    def filter_choices(self) -> dict[str, list[str]]:
        facets = self.app.facets()
        return {name: [ANY] + sorted(facets[name]) for name in ("venue", "year", "decision")}

    def respond(self, message: str, history: list[dict[str, Any]] | None, session: ChatSession | None,
                venue: str, year: str, track: str, decision: str, author: str
                ) -> Iterator[tuple[Any, Any, Any, Any, Any]]:
        """Stream one answer: yields (chat history, sources panel, session, textbox, bibtex file)."""
        history = list(history or [])
        if not (message or "").strip():
            raise gr.Error("Type a question first.")
        try:
            session = session or self.app.chat()
        except RagError as err:
            raise gr.Error(str(err)) from err
        filters = _filters(venue, year, track, decision, author)
        pieces: queue.Queue[str | None] = queue.Queue()
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                outcome["answer"] = session.ask(message, filters=filters, on_token=pieces.put)
            except RagError as err:
                outcome["error"] = str(err)
            except Exception as err:  # a bug, not a user error: log it, keep the app alive
                log.exception("answering failed")
                outcome["error"] = f"internal error ({type(err).__name__}); see the server log"
            finally:
                pieces.put(None)

        threading.Thread(target=work, daemon=True).start()
        history += [{"role": "user", "content": message}, {"role": "assistant", "content": ""}]
        text = ""
        while (piece := pieces.get()) is not None:
            text += piece
            history[-1]["content"] = text
            yield history, gr.skip(), session, "", gr.skip()
        if "error" in outcome:
            history.pop()
            yield history, gr.skip(), session, message, gr.skip()
            raise gr.Error(outcome["error"])
        answer: Answer = outcome["answer"]
        turn = len(session.turns) - 1
        history[-1]["content"] = answer_markdown(answer, turn)
        yield history, sources_html(answer, turn), session, "", self.bibtex_file(session)

    def select_answer(self, session: ChatSession | None, evt: gr.SelectData) -> str:
        """Clicking a message shows that turn's sources (message index // 2 is the turn)."""
        if session is None or not session.turns:
            return NO_SOURCES
        index = evt.index if isinstance(evt.index, int) else evt.index[0]
        turn = min(index // 2, len(session.turns) - 1)
        return sources_html(session.turns[turn].answer, turn)

    def bibtex_file(self, session: ChatSession | None) -> str | None:
        if session is None:
            return None
        papers = {c.paper.id: c.paper for turn in session.turns for c in turn.answer.citations}
        if not papers:
            return None
        folder = self.files / str(id(session))  # one folder per conversation, a readable file name
        folder.mkdir(exist_ok=True)
        path = folder / "cited-papers.bib"
        path.write_text("\n\n".join(bibtex_entry(p) for p in papers.values()) + "\n", encoding="utf-8")
        return str(path)

    def clear(self) -> tuple[list[Any], str, None, None]:
        return [], NO_SOURCES, None, None

    def lookup(self, query: str, author: str) -> tuple[list[list[Any]], str]:
        try:
            found = self.app.lookup(query or "", Filters(author=author or None), limit=200)
        except RagError as err:
            raise gr.Error(str(err)) from err
        if not found:
            gr.Warning("No paper matches.")
        rows = [[p.id, p.display_title, ", ".join(p.authors[:4]) + (" et al." if len(p.authors) > 4 or p.authors_truncated else ""),
                 p.venue, p.year or "", p.track, p.decision] for p in found]
        return rows, ""

    def show_paper(self, evt: gr.SelectData) -> str:
        row = evt.row_value if evt.row_value else []
        paper = self.app.paper(str(row[0])) if row else None
        if paper is None:
            return ""
        authors = ", ".join(paper.authors) + (" et al." if paper.authors_truncated else "")
        meta = " · ".join(str(x) for x in (paper.venue, paper.year, paper.track, paper.decision) if x)
        link = f"\n\n[{paper.url}]({paper.url})" if paper.url else ""
        return f"### {paper.display_title}\n\n*{authors}*\n\n{meta}\n\n{paper.abstract or '(no abstract)'}{link}"


def build(app: App) -> gr.Blocks:
    handlers = Handlers(app)
    choices = handlers.filter_choices()
    with gr.Blocks(title="Paper QA") as demo:
        gr.Markdown("## Ask the papers")
        gr.Markdown(handlers.header(), elem_id="status-line")
        with gr.Tab("Ask"):
            with gr.Row():
                with gr.Column(scale=3):
                    chatbot = gr.Chatbot(label="Conversation", height=520, elem_id="chat",
                                         placeholder="Ask about the papers in the collection. Try an example below.")
                    question = gr.Textbox(label="Question", placeholder="e.g. Which paper introduced PersuasionBench?",
                                          elem_id="question", lines=1, max_lines=4)
                    with gr.Row():
                        ask_button = gr.Button("Ask", variant="primary", elem_id="ask")
                        clear_button = gr.Button("New conversation", elem_id="clear")
                    gr.Examples(EXAMPLES, inputs=[question], label="Examples")
                with gr.Column(scale=2):
                    sources = gr.HTML(NO_SOURCES, label="Sources", elem_id="sources")
                    with gr.Accordion("Filters", open=False, elem_id="filters"):
                        venue = gr.Dropdown(choices["venue"], value=ANY, label="Venue", elem_id="f-venue")
                        year = gr.Dropdown(choices["year"], value=ANY, label="Year", elem_id="f-year")
                        track = gr.Textbox(label="Track or area contains", elem_id="f-track")
                        decision = gr.Dropdown(choices["decision"], value=ANY, label="Decision", elem_id="f-decision")
                        author = gr.Textbox(label="Author name contains", elem_id="f-author")
                    bib = gr.File(label="BibTeX of cited papers", elem_id="bibtex", interactive=False)
        with gr.Tab("Paper lookup"):
            with gr.Row():
                lookup_query = gr.Textbox(label="Title, label or method name", elem_id="lookup-query")
                lookup_author = gr.Textbox(label="Author", elem_id="lookup-author")
                lookup_button = gr.Button("Search", elem_id="lookup")
            table = gr.Dataframe(headers=["paper_id", "title", "authors", "venue", "year", "track", "decision"],
                                 interactive=False, wrap=True, elem_id="lookup-table")
            paper_view = gr.Markdown(elem_id="paper-view")
        session = gr.State(None)
        inputs = [question, chatbot, session, venue, year, track, decision, author]
        outputs = [chatbot, sources, session, question, bib]
        for trigger in (question.submit, ask_button.click):
            trigger(handlers.respond, inputs, outputs, concurrency_limit=2, concurrency_id="answer")
        chatbot.select(handlers.select_answer, [session], [sources], queue=False)
        clear_button.click(handlers.clear, None, [chatbot, sources, session, bib], queue=False)
        lookup_button.click(handlers.lookup, [lookup_query, lookup_author], [table, paper_view])
        lookup_query.submit(handlers.lookup, [lookup_query, lookup_author], [table, paper_view])
        table.select(handlers.show_paper, None, [paper_view])
    demo.queue(default_concurrency_limit=4, max_size=64)
    return demo


def launch(app: App, host: str = "127.0.0.1", port: int = 7860, share: bool = False,
           block: bool = True, mcp: bool = False) -> tuple[gr.Blocks, str]:
    demo = build(app)
    if mcp:  # the agent tools of rag.tools, served by Gradio's MCP server (ui/mcp_tools.py)
        from ui.mcp_tools import add_tools, check_started

        add_tools(demo, app)
    _, url, _ = demo.launch(server_name=host, server_port=port, share=share, prevent_thread_lock=True,
                            quiet=True, css=CSS, js=JS, footer_links=[], theme=THEME, mcp_server=mcp)
    local = f"http://{host}:{port}/"
    if mcp:  # Gradio itself prints the MCP URL
        check_started(demo)
    if block:
        print(f"Paper QA is running at {local}  (Ctrl-C to stop)", flush=True)
        try:
            demo.block_thread()
        except KeyboardInterrupt:
            demo.close()
    return demo, local
