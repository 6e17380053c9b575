"""The Gradio app. Handlers call the `rag.app.App` facade and nothing lower; each browser tab
keeps its own Conversation in gr.State; answering is queued with a concurrency limit, because
each answer holds a CPU core for about a second.

Layout, for a tool kept open all day: a sidebar with the filters (which apply to answers, the
lookup and the map) and the exports, always visible; tabs for asking, looking papers up and the
map of the collection. Every text from a paper or a model is rendered by ui/safe.py; the app's
responses carry a Content-Security-Policy and uploads are refused (ui/security.py).

Errors the user can act on (RagError) become gr.Error with the same text as the command line; the
app keeps running. An empty question is ignored without a word."""

from __future__ import annotations

import atexit
import logging
import os
import queue
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr
from starlette.middleware import Middleware

from rag.answer import ChatSession
from rag.app import App
from rag.errors import RagError
from rag.text import plain
from rag.types import Answer, Filters
from ui import scripts
from ui.access import Access, check_exposure, guarded, outermost_lifespan, password_check
from ui.render import (
    NO_PAPER,
    NO_SOURCES,
    answer_html,
    bibtex_text,
    conversation_markdown,
    filters_line,
    lookup_html,
    map_payload,
    paper_html,
    question_html,
    sources_html,
    streaming_html,
)
from ui.safe import LATEX_DELIMITERS, escape
from ui.security import SecurityHeaders, private_folder

log = logging.getLogger(__name__)

ANY = "(any)"
# System fonts only: the default theme would fetch web fonts, and these machines are offline.
THEME = gr.themes.Default(
    primary_hue="blue",
    neutral_hue="slate",
    radius_size="sm",
    spacing_size="sm",
    text_size="md",
    font=["ui-sans-serif", "system-ui", "sans-serif"],
    font_mono=["ui-monospace", "monospace"],
)

CSS = """
.gradio-container { max-width: 100% !important; }
#title-row { align-items: baseline; gap: 12px; margin-bottom: 2px; }
#title-row h2 { margin: 0; font-size: 1.15em; }
#status-line { font-size: 0.85em; opacity: 0.8; }
#status-line p { margin: 0; }
.rendered, .sources { font-size: 0.92em; line-height: 1.45; }
#chat .message { font-size: 0.95em; line-height: 1.5; }
#chat .answer p, #chat .answer ul, #chat .answer ol { margin: 0.25em 0; }
#chat .answer li { margin: 0.2em 0; }
.panel-head { font-size: 0.8em; text-transform: uppercase; letter-spacing: 0.04em; opacity: 0.6; margin: 2px 0 6px; }
.source-card { border: 1px solid var(--border-color-primary); border-radius: 6px; padding: 7px 10px; margin-bottom: 7px; background: var(--background-fill-primary); }
.source-card.selected, .source-card:target { outline: 2px solid #f59e0b; }
.source-title, .paper-title { font-weight: 600; }
.paper-title { font-size: 1.1em; margin-bottom: 4px; }
.source-title .n { color: #2563eb; }
.source-meta { font-size: 0.85em; opacity: 0.78; }
.source-abstract { font-size: 0.93em; margin-top: 5px; }
.source-abstract mark { background: #fde68a; color: inherit; padding: 0 1px; }
.no-abstract { font-style: italic; opacity: 0.7; }
details.source-abstract > summary { list-style: none; cursor: pointer; }
details.source-abstract > summary::-webkit-details-marker { display: none; }
details.source-abstract .more, details.source-abstract .less { color: #2563eb; font-size: 0.9em; white-space: nowrap; }
details.source-abstract .less, details.source-abstract[open] .ctx, details.source-abstract[open] .more { display: none; }
details.source-abstract[open] .less { display: inline; }
details.bibtex { margin-top: 8px; font-size: 0.85em; } details.bibtex pre { white-space: pre-wrap; }
.badge.ok { color: #15803d; font-weight: 600; font-size: 0.9em; } .badge.bad { color: #b91c1c; font-weight: 700; }
.unsupported { color: #b91c1c; font-size: 0.9em; } .removed { color: #92400e; font-size: 0.9em; }
.answer-meta { font-size: 0.78em; opacity: 0.65; margin-top: 6px; }
.related { font-size: 0.88em; margin-top: 6px; }
a.cite { font-weight: 600; text-decoration: none; padding: 0 1px; }
.img-alt { font-style: italic; }
.sources-empty { opacity: 0.7; font-size: 0.92em; padding: 6px 2px; }
#sources, #paper-view, #map-paper { max-height: 640px; overflow-y: auto; }
#sidebar .block { margin-bottom: 2px; }
#active-filters { font-size: 0.85em; opacity: 0.85; }
table.lookup { width: 100%; border-collapse: collapse; table-layout: fixed; font-size: 0.88em; line-height: 1.35; }
table.lookup th { text-align: left; font-weight: 600; padding: 5px 6px; border-bottom: 2px solid var(--border-color-primary); white-space: nowrap; position: sticky; top: 0; background: var(--background-fill-primary); }
table.lookup td { padding: 4px 6px; border-bottom: 1px solid var(--border-color-primary); vertical-align: top; overflow-wrap: break-word; }
table.lookup tbody tr { cursor: pointer; } table.lookup tbody tr:hover { background: var(--background-fill-secondary); }
table.lookup tr.picked { background: #fef3c7 !important; }
table.lookup col.c-n { width: 2.4em; } table.lookup col.c-title { width: 38%; } table.lookup col.c-authors { width: 22%; }
table.lookup col.c-venue { width: 5em; } table.lookup col.c-year { width: 4.4em; } table.lookup col.c-track { width: 20%; } table.lookup col.c-decision { width: 6.5em; }
.title-only { font-size: 0.8em; opacity: 0.7; border: 1px solid var(--border-color-primary); border-radius: 4px; padding: 0 3px; margin-left: 4px; }
.lookup-count { font-size: 0.85em; opacity: 0.75; margin: 4px 0; }
#lookup-results { max-height: 560px; overflow-y: auto; }
.map-wrap { position: relative; }
.map-caption { font-size: 0.85em; opacity: 0.8; min-height: 1.2em; margin-bottom: 4px; }
canvas.map { width: 100%; height: 620px; display: block; border: 1px solid var(--border-color-primary); border-radius: 6px; background: #fcfcfd; }
.map-legend { display: flex; flex-wrap: wrap; gap: 2px 12px; font-size: 0.8em; margin-top: 6px; }
.map-legend span.dot { display: inline-block; width: 9px; height: 9px; border-radius: 50%; margin-right: 4px; vertical-align: baseline; }
.map-tip { position: absolute; max-width: 250px; background: #111827; color: #f9fafb; font-size: 12px; padding: 4px 7px; border-radius: 4px; pointer-events: none; z-index: 5; }
footer { display: none !important; }
"""


@dataclass
class Conversation:
    """One browser tab's conversation: the library's ChatSession plus, per turn, the filters the
    answer used (the UI shows and exports them)."""

    session: ChatSession
    filters: list[Filters] = field(default_factory=list)

    def turns(self) -> list[tuple[str, Answer, Filters]]:
        return [(t.question, t.answer, f) for t, f in zip(self.session.turns, self.filters)]


def _filters(
    venue: str | None, year: str | None, track: str | None, decision: str | None, author: str | None
) -> Filters:
    def chosen(value: str | None) -> str | None:
        return None if value in ("", ANY, None) else value

    year_value = chosen(year)
    return Filters(
        venue=chosen(venue),
        year=int(year_value) if year_value and year_value.isdigit() else None,
        track=(track or "").strip() or None,
        decision=chosen(decision),
        author=(author or "").strip() or None,
    )


def _answer_markdown(question: str, answer: Answer, filters: Filters) -> str:
    """One answer as Markdown with its own reference list (what "Copy answer" copies)."""
    return conversation_markdown([(question, answer, filters)]).replace("# Conversation\n\n", "", 1)


class Handlers:
    """The UI's event handlers, callable without a browser (tests call them directly)."""

    def __init__(self, app: App, files: Path | None = None) -> None:
        self.app = app
        # Exports hold the user's questions: a folder only this user can enter (mkdtemp: 0700),
        # removed at exit when it is this object's own.
        if files is None:
            files = Path(tempfile.mkdtemp(prefix="rag-ui-"))
            atexit.register(shutil.rmtree, files, True)
        self.files = files
        self._titles: tuple[str, dict[str, str]] | None = None

    # -- header and menus ----------------------------------------------------------------------
    def header(self) -> str:
        status = self.app.status()
        return (
            f"{int(str(status['papers'])):,} papers indexed · {escape(status['embedding_model'])} · "
            f"{escape(self.app.mode_line)}"
        )

    def filter_choices(self) -> dict[str, list[str]]:
        facets = self.app.facets()
        return {name: [ANY] + values for name, values in facets.items()}

    def examples(self) -> list[str]:
        """Asked once at start-up, before the app serves anyone (checking them runs answers,
        which must not overlap a user's; the result is cached per index generation)."""
        try:
            return self.app.example_questions(4)
        except RagError:
            return []

    def total(self) -> int:
        return int(str(self.app.status()["papers"]))

    # -- asking ----------------------------------------------------------------------------------
    def respond(
        self,
        message: str,
        history: list[dict[str, Any]] | None,
        conv: Conversation | None,
        venue: str,
        year: str,
        track: str,
        decision: str,
        author: str,
    ) -> Iterator[tuple[Any, ...]]:
        """Stream one answer. Yields (chat, sources, conversation, question box, Markdown export,
        BibTeX export, copy text, map focus)."""
        skip = gr.skip()
        if not (message or "").strip():
            yield (skip,) * 8  # an empty question: nothing happens, and nothing turns red
            return
        history = list(history or [])
        try:
            conv = conv or Conversation(self.app.chat())
        except RagError as err:
            raise gr.Error(str(err)) from err
        filters = _filters(venue, year, track, decision, author)
        pieces: queue.Queue[str | None] = queue.Queue()
        outcome: dict[str, Any] = {}
        session = conv.session

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
        history.append({"role": "user", "content": question_html(message)})
        text = ""
        while (piece := pieces.get()) is not None:
            text += piece
            yield (
                [*history, {"role": "assistant", "content": streaming_html(text)}],
                skip,
                conv,
                "",
                skip,
                skip,
                skip,
                skip,
            )
        if "error" in outcome:
            yield history[:-1], skip, conv, message, skip, skip, skip, skip
            raise gr.Error(outcome["error"])
        answer: Answer = outcome["answer"]
        conv.filters.append(filters)
        turn = len(session.turns) - 1
        history.append({"role": "assistant", "content": answer_html(answer, turn, filters, self.total())})
        focus = self.answer_focus(answer, message)
        md, bib = self.export_files(conv)
        yield (
            history,
            sources_html(answer, turn),
            conv,
            "",
            md,
            bib,
            _answer_markdown(message, answer, filters),
            focus,
        )

    @staticmethod
    def answer_focus(answer: Answer, question: str) -> dict[str, Any]:
        """What the map highlights after an answer: the cited papers (labelled by their number),
        then the other retrieved ones."""
        marks = {c.paper.id: str(c.n) for c in answer.citations}
        for hit in answer.sources:
            marks.setdefault(hit.paper.id, "")
        short = question if len(question) <= 70 else question[:67] + "…"
        return {
            "ids": marks,
            "caption": f"Highlighted: the {len(answer.citations)} cited and "
            f"{len(marks) - len(answer.citations)} other retrieved papers for “{short}”",
        }

    def select_answer(self, conv: Conversation | None, evt: gr.SelectData) -> str:
        """Clicking a message shows that turn's sources (message index // 2 is the turn)."""
        if conv is None or not conv.session.turns:
            return NO_SOURCES
        index = evt.index if isinstance(evt.index, int) else evt.index[0]
        turn = min(index // 2, len(conv.session.turns) - 1)
        return sources_html(conv.session.turns[turn].answer, turn)

    def export_files(self, conv: Conversation | None) -> tuple[Any, Any]:
        """The conversation as Markdown and the cited papers as BibTeX, one folder per conversation."""
        if conv is None or not conv.session.turns:
            return gr.DownloadButton(value=None, interactive=False), gr.DownloadButton(value=None, interactive=False)
        folder = self.files / str(id(conv))
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        md = folder / "conversation.md"
        write_private(md, conversation_markdown(conv.turns()))
        papers = [c.paper for t in conv.session.turns for c in t.answer.citations]
        bib_update: Any = gr.DownloadButton(value=None, interactive=False)
        if papers:
            bib = folder / "cited-papers.bib"
            write_private(bib, bibtex_text(papers))
            bib_update = gr.DownloadButton(value=str(bib), interactive=True)
        return gr.DownloadButton(value=str(md), interactive=True), bib_update

    def clear(self) -> tuple[Any, ...]:
        none = gr.DownloadButton(value=None, interactive=False)
        return [], NO_SOURCES, None, none, none, "", {"ids": {}, "caption": ""}

    # -- papers ----------------------------------------------------------------------------------
    def lookup(
        self, query: str, venue: str, year: str, track: str, decision: str, author: str
    ) -> tuple[str, dict[str, Any]]:
        """Catalogue matches in the library's relevance order (not re-sorted here)."""
        filters = _filters(venue, year, track, decision, author)
        if not (query or "").strip() and not filters.active():
            return "<div class='sources-empty'>Type a title, a method name or an author.</div>", gr.skip()
        try:
            found = self.app.lookup(query or "", filters, limit=200)
            total = self.app.lookup_total(query or "", filters)
        except RagError as err:
            raise gr.Error(str(err)) from err
        marks = {p.id: str(i) for i, p in enumerate(found[:20], 1)}
        caption = f"Highlighted: the first {len(marks)} lookup results for “{query.strip() or filters_line(filters)}”"
        return lookup_html(found, query or "", filters, total), {"ids": marks, "caption": caption}

    def open_paper(self, evt: gr.EventData) -> str:
        data = evt._data if isinstance(evt._data, dict) else {}
        paper_id = str(data.get("paper_id", ""))
        try:
            return paper_html(self.app.paper(paper_id)) if paper_id else NO_PAPER
        except RagError as err:
            raise gr.Error(str(err)) from err

    # -- the map ---------------------------------------------------------------------------------
    def map_titles(self, generation: str) -> dict[str, Any]:
        """Titles in map order, as plain text, for the map's hover (fetched once per generation)."""
        paper_map = self.app.paper_map()
        if self._titles is None or self._titles[0] != paper_map.generation:
            papers = {p.id: p for p in self.app.lookup("", Filters(), limit=10**9)}
            self._titles = (paper_map.generation, {pid: plain(p.display_title) for pid, p in papers.items()})
        titles = self._titles[1]
        return {"gen": paper_map.generation, "t": [titles.get(pid, pid)[:160] for pid in paper_map.ids]}

    def map_view(
        self, focus: dict[str, Any] | None, venue: str, year: str, track: str, decision: str, author: str
    ) -> dict[str, Any]:
        """The map's data: every paper, the filtered-out ones greyed, the focus highlighted."""
        try:
            paper_map = self.app.paper_map()
        except RagError as err:
            raise gr.Error(str(err)) from err
        filters = _filters(venue, year, track, decision, author)
        shown = None
        if filters.active():
            allowed = {p.id for p in self.app.lookup("", filters, limit=10**9)}
            shown = [pid in allowed for pid in paper_map.ids]
        focus = focus or {}
        caption = focus.get("caption") or "Ask a question or look papers up: their papers are highlighted here."
        if shown is not None:
            caption += f" · showing {filters_line(filters)} ({sum(shown):,} of {len(paper_map):,})"
        index = {pid: i for i, pid in enumerate(paper_map.ids)}
        highlight = []
        for pid, label in dict(focus.get("ids") or {}).items():
            paper = self.app.paper(pid) if pid in index else None
            if paper is not None:
                highlight.append((index[pid], str(label), plain(paper.display_title)[:160]))
        return map_payload(
            paper_map.xy,
            paper_map.cluster,
            paper_map.names,
            paper_map.embedded,
            paper_map.generation,
            shown,
            highlight,
            caption,
        )

    def open_map_paper(self, evt: gr.EventData) -> str:
        """A click on the map sends the point's index in the map it was drawn from."""
        data = evt._data if isinstance(evt._data, dict) else {}
        paper_map = self.app.paper_map()
        index = data.get("index")
        if data.get("gen") != paper_map.generation or not isinstance(index, int) or not 0 <= index < len(paper_map):
            return NO_PAPER  # drawn from an older index: the next refresh redraws it
        return paper_html(self.app.paper(paper_map.ids[index]))


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read (0600, whatever the umask): Gradio serves a copy of
    it with the same mode, and the export holds the user's conversation."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


def build(app: App, files: Path | None = None) -> gr.Blocks:
    handlers = Handlers(app, files)
    choices = handlers.filter_choices()
    example_questions = handlers.examples()

    def map_titles(generation: str) -> dict[str, Any]:  # a plain function: Gradio marks it as callable
        return handlers.map_titles(generation)

    with gr.Blocks(title="Paper QA", fill_width=True) as demo:
        with gr.Row(elem_id="title-row"):
            gr.Markdown("## Paper QA", elem_id="title")
            gr.Markdown(handlers.header(), elem_id="status-line")
        conv = gr.State(None)
        focus = gr.State({"ids": {}, "caption": ""})
        with gr.Sidebar(label="Filters and exports", open=True, width=290, elem_id="sidebar"):
            gr.Markdown("**Filters** (answers, lookup and map)")
            venue = gr.Dropdown(choices["venue"], value=ANY, label="Venue", elem_id="f-venue")
            year = gr.Dropdown(choices["year"], value=ANY, label="Year", elem_id="f-year")
            decision = gr.Dropdown(choices["decision"], value=ANY, label="Decision", elem_id="f-decision")
            track = gr.Textbox(label="Track or area contains", elem_id="f-track", max_lines=1)
            author = gr.Textbox(label="Author name contains", elem_id="f-author", max_lines=1)
            gr.Markdown("**This conversation**")
            clear_button = gr.Button("New conversation", size="sm", elem_id="clear")
            copy_button = gr.Button("Copy answer", size="sm", elem_id="copy-answer")
            md_button = gr.DownloadButton(
                "Export conversation (.md)", value=None, interactive=False, size="sm", elem_id="export-md"
            )
            bib_button = gr.DownloadButton(
                "BibTeX of cited papers (.bib)", value=None, interactive=False, size="sm", elem_id="export-bib"
            )
            copy_text = gr.Textbox(visible="hidden", elem_id="copy-text")
        with gr.Tabs():
            with gr.Tab("Ask", id="ask-tab"):
                with gr.Row(equal_height=False):
                    with gr.Column(scale=3):
                        chatbot = gr.Chatbot(
                            label="Conversation",
                            height=600,
                            elem_id="chat",
                            render_markdown=False,
                            sanitize_html=True,
                            allow_tags=False,
                            latex_delimiters=LATEX_DELIMITERS,
                            feedback_options=None,
                            buttons=[],
                            placeholder="Ask about the papers in the collection. Each claim is cited; "
                            "click a number to see its source.",
                        )
                        with gr.Row(equal_height=True):
                            question = gr.Textbox(
                                label="Question",
                                show_label=False,
                                placeholder="Ask a question about the papers…",
                                elem_id="question",
                                lines=1,
                                max_lines=4,
                                scale=8,
                                submit_btn=False,
                            )
                            ask_button = gr.Button("Ask", variant="primary", elem_id="ask", scale=1, min_width=90)
                        examples = gr.Dataset(
                            components=[question],
                            samples=[[q] for q in example_questions],
                            label="Examples from this collection",
                            elem_id="examples",
                            type="values",
                        )
                    with gr.Column(scale=2):
                        sources = gr.Markdown(
                            NO_SOURCES,
                            label="Sources",
                            elem_id="sources",
                            latex_delimiters=LATEX_DELIMITERS,
                            sanitize_html=True,
                        )
            with gr.Tab("Paper lookup", id="lookup-tab"):
                with gr.Row():
                    lookup_query = gr.Textbox(
                        label="Look up papers",
                        show_label=False,
                        placeholder="Title, method name or author…",
                        elem_id="lookup-query",
                        max_lines=1,
                        scale=6,
                    )
                    lookup_button = gr.Button("Look up", variant="primary", elem_id="lookup", scale=1, min_width=90)
                with gr.Row(equal_height=False):
                    with gr.Column(scale=5):
                        table = gr.HTML(
                            "<div class='sources-empty'>Type a title, a method name or an author.</div>",
                            elem_id="lookup-results",
                            js_on_load=scripts.LOOKUP,
                            apply_default_css=False,
                        )
                    with gr.Column(scale=3):
                        paper_view = gr.Markdown(
                            NO_PAPER, elem_id="paper-view", latex_delimiters=LATEX_DELIMITERS, sanitize_html=True
                        )
            with gr.Tab("Map", id="map-tab") as map_tab:
                with gr.Row(equal_height=False):
                    with gr.Column(scale=3):
                        paper_map = gr.HTML(
                            {},
                            html_template=scripts.MAP_TEMPLATE,
                            js_on_load=scripts.MAP,
                            elem_id="paper-map",
                            server_functions=[map_titles],
                        )
                    with gr.Column(scale=1, min_width=260):
                        map_paper = gr.Markdown(
                            NO_PAPER, elem_id="map-paper", latex_delimiters=LATEX_DELIMITERS, sanitize_html=True
                        )
        map_opened = gr.State(False)
        filter_inputs = [venue, year, track, decision, author]
        inputs = [question, chatbot, conv, *filter_inputs]
        outputs = [chatbot, sources, conv, question, md_button, bib_button, copy_text, focus]
        for trigger in (question.submit, ask_button.click):
            trigger(
                handlers.respond, inputs, outputs, concurrency_limit=2, concurrency_id="answer", show_progress="minimal"
            )
        chatbot.select(handlers.select_answer, [conv], [sources], queue=False)
        for trigger in (clear_button.click, chatbot.clear):  # the chat's own bin icon starts over too
            trigger(
                handlers.clear, None, [chatbot, sources, conv, md_button, bib_button, copy_text, focus], queue=False
            )
        copy_button.click(None, [copy_text], None, js=scripts.COPY)
        examples.click(lambda value: value[0] if value else gr.skip(), [examples], [question], queue=False)
        for trigger in (lookup_button.click, lookup_query.submit):
            trigger(handlers.lookup, [lookup_query, *filter_inputs], [table, focus])
        table.select(handlers.open_paper, None, [paper_view])
        paper_map.select(handlers.open_map_paper, None, [map_paper])

        def refresh_map(opened: bool, focus_value: dict[str, Any], *filter_values: str) -> Any:
            return handlers.map_view(focus_value, *filter_values) if opened else gr.skip()

        def open_map(focus_value: dict[str, Any], *filter_values: str) -> tuple[Any, bool]:
            return handlers.map_view(focus_value, *filter_values), True

        map_tab.select(open_map, [focus, *filter_inputs], [paper_map, map_opened])
        for component in (venue, year, decision):
            component.change(refresh_map, [map_opened, focus, *filter_inputs], [paper_map])
        for box in (track, author):
            box.submit(refresh_map, [map_opened, focus, *filter_inputs], [paper_map])
        focus.change(refresh_map, [map_opened, focus, *filter_inputs], [paper_map])
    demo.queue(default_concurrency_limit=4, max_size=64)
    return demo


def launch(
    app: App,
    host: str = "127.0.0.1",
    port: int = 7860,
    share: bool = False,
    block: bool = True,
    mcp: bool = False,
    allow_hosts: tuple[str, ...] = (),
    no_auth: bool = False,
    folder: Path | None = None,
) -> tuple[gr.Blocks, str]:
    """Serve the UI. Requests must name this server (ui/access.py); beyond 127.0.0.1 it needs the
    password of RAG_UI_AUTH, or `no_auth` to serve it open on purpose. Its files go to `folder`
    (`ui.security.private_folder`, made before Gradio is imported), removed when it stops."""
    secret = app.settings.ui_auth.get_secret_value() if app.settings.ui_auth else None
    check_exposure(host, share, secret, no_auth)
    folder = folder or private_folder()
    demo = build(app, folder / "exports")
    if mcp:  # the agent tools of rag.tools, served by Gradio's MCP server (ui/mcp_tools.py)
        from ui.mcp_tools import add_tools, check_started

        add_tools(demo, app)
    access = Access.for_server(host, port, allow_hosts, secret)
    _, url, share_url = demo.launch(
        server_name=host,
        server_port=port,
        share=share,
        prevent_thread_lock=True,
        quiet=True,
        css=CSS,
        js=scripts.PAGE,
        footer_links=[],
        theme=THEME,
        mcp_server=mcp,
        auth=password_check(secret) if secret else None,
        auth_message="Paper QA: the password is the one set in RAG_UI_AUTH.",
        max_file_size="1kb",  # the app takes no uploads; the middleware refuses them, this caps them too
        app_kwargs={"middleware": [Middleware(SecurityHeaders)], "lifespan": outermost_lifespan(access)},
    )
    if not guarded(demo.server_app):  # never serve without the Host check
        demo.close()
        raise RuntimeError("the UI's Host and Origin check is not in place; refusing to serve")
    if share_url:
        access.allow(share_url)
    local = f"http://{host}:{port}/"
    if mcp:  # Gradio itself prints the MCP URL
        check_started(demo)
    if block:
        print(f"Paper QA is running at {local}  (Ctrl-C to stop)", flush=True)
        # SIGTERM (a service manager, `kill`) stops the server like Ctrl-C, so the private folder
        # and everything in it are removed; by default it would end the process on the spot.
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        try:
            demo.block_thread()
        except KeyboardInterrupt:
            pass
        finally:
            demo.close()
            shutil.rmtree(folder, ignore_errors=True)
    return demo, local
