"""The `rag` command. Thin: parse, call rag.app, print. A RagError becomes one line on stderr and
its exit code; anything printed as a result has a --json form."""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from rag.app import App
from rag.catalog import Filters
from rag.cite import bibtex_entry
from rag.errors import InputError, QuestionError, RagError
from rag.types import Answer
from rag.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])


def _app() -> App:
    return App(Settings())


def handle_errors(func: F) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except RagError as err:
            click.echo(f"error: {err}", err=True)
            sys.exit(err.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)

    return wrapper  # type: ignore[return-value]


def filter_options(func: F) -> F:
    for option in reversed(
        [
            click.option("--venue", help="Only papers of this venue (e.g. ICLR)."),
            click.option("--year", type=int, help="Only papers of this year."),
            click.option("--track", help="Only papers whose track or area contains this text."),
            click.option("--decision", help="Only papers whose decision contains this (e.g. Oral)."),
            click.option("--author", help="Only papers with an author whose name contains this."),
        ]
    ):
        func = option(func)
    return func


def _filters(venue: str | None, year: int | None, track: str | None, decision: str | None,
             author: str | None) -> Filters:
    return Filters(venue=venue, year=year, track=track, decision=decision, author=author)


def _batch(path: Path, field: str) -> Iterator[tuple[int, Any, str]]:
    """(line, id, text) for each valid `{"id": ..., FIELD: ...}` line; bad lines are reported on
    stderr with their location and skipped, so one broken line does not stop a batch."""
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            yield line_no, item["id"], str(item[field])
        except (ValueError, KeyError, TypeError) as err:
            click.echo(f"error: {InputError(str(path), f'bad {field} record ({err})', line_no)}", err=True)


def _dump(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=None))


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log progress details to stderr.")
def cli(verbose: bool) -> None:
    """Question answering over research-paper abstracts, with checked citations."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--venue", default="", help="Venue for records whose file does not name one.")
@click.option("--year", type=int, help="Year for records whose file does not name one.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@handle_errors
def ingest(paths: tuple[Path, ...], venue: str, year: int | None, as_json: bool) -> None:
    """Read paper lists (files or folders) into the index. Without PATHS: the bundled sample."""
    app = _app()
    report = app.ingest_sample() if not paths else app.ingest(list(paths), venue=venue, year=year)
    if as_json:
        _dump(report.public())
    else:
        for err in report.skipped:
            click.echo(f"skipped {err}", err=True)
        click.echo(
            f"added {len(report.added)}, updated {len(report.updated)}, unchanged {len(report.unchanged)}, "
            f"skipped {len(report.skipped)}"
            + (f", merged away {len(report.removed)}" if report.removed else "")
            + f" ({report.chunks_embedded} chunks embedded from {len(report.files)} files)"
        )


def _print_hits(hits: list[dict[str, Any]]) -> None:
    if not hits:
        click.echo("no papers found")
    for rank, hit in enumerate(hits, start=1):
        title = hit["title"] or hit["label"]
        authors = ", ".join(hit["authors"][:4]) + (" et al." if len(hit["authors"]) > 4 or hit["authors_truncated"] else "")
        where = " ".join(str(x) for x in (hit["venue"], hit["year"]) if x)
        score = f"  [{hit['score']:.4f}]" if "score" in hit else ""
        click.echo(f"{rank}. {title}{score}")
        meta = " · ".join(x for x in (authors, where, hit["track"], hit["decision"]) if x)
        if meta:
            click.echo(f"   {meta}")
        click.echo(f"   {hit['paper_id']}  {hit['abstract'][:160]}…")


@cli.command()
@click.argument("query", required=False)
@click.option("--k", type=click.IntRange(1, 100), help="Number of papers.")
@filter_options
@click.option("--mode", type=click.Choice(["hybrid", "dense", "keyword"]), help="Retriever (default hybrid).")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help='JSONL of {"id": ..., "query": ...}; prints one JSON line per query.')
@click.option("--json", "as_json", is_flag=True, help="Print hits as JSON.")
@handle_errors
def search(query: str | None, k: int | None, venue: str | None, year: int | None, track: str | None,
           decision: str | None, author: str | None, mode: str | None, queries: Path | None, as_json: bool) -> None:
    """Find the papers that best match QUERY (dense + BM25, fused)."""
    app = _app()
    filters = _filters(venue, year, track, decision, author)
    if queries is not None:
        for _line, qid, text in _batch(queries, "query"):
            result = app.search(text, k, filters, mode)  # type: ignore[arg-type]
            _dump({"id": qid, "hits": [h.public() for h in result.hits]})
        return
    if not query or not query.strip():
        raise click.UsageError("give a QUERY or --queries FILE")
    result = app.search(query, k, filters, mode)  # type: ignore[arg-type]
    hits = [h.public() for h in result.hits]
    _dump(hits) if as_json else _print_hits(hits)


@cli.command()
@click.argument("query", required=False, default="")
@filter_options
@click.option("--limit", type=click.IntRange(1, 10000), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print entries as JSON.")
@handle_errors
def papers(query: str, venue: str | None, year: int | None, track: str | None, decision: str | None,
           author: str | None, limit: int, as_json: bool) -> None:
    """List catalogue entries whose title, label, authors or text match QUERY."""
    index = _app().index.load()
    assert index.catalog is not None
    found = index.catalog.lookup(query, _filters(venue, year, track, decision, author), limit)
    entries = [p.public() for p in found]
    _dump(entries) if as_json else _print_hits(entries)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@handle_errors
def status(as_json: bool) -> None:
    """Counts, embedding model, collection and where the data lives."""
    info = _app().index.status()
    if as_json:
        _dump(info)
    else:
        for key, value in info.items():
            click.echo(f"{key:>22}: {value}")


def _print_answer(answer: Answer, streamed: bool) -> None:
    if not streamed:
        click.echo(answer.text)
    elif answer.text != answer.raw_text and not answer.abstained:
        click.echo("\n(checked answer)\n" + answer.text)
    else:
        click.echo()
    if answer.removed_citations:
        click.echo(f"removed citations to sources that were not retrieved: {answer.removed_citations}", err=True)
    for claim in answer.claims:
        if not claim.supported:
            click.secho(f"⚠ unsupported: {claim.text[:100]} ({claim.reason})", fg="yellow")
    if answer.citations:
        click.echo("\nSources:")
        for c in answer.citations:
            p = c.paper
            authors = ", ".join(p.authors[:3]) + (" et al." if len(p.authors) > 3 or p.authors_truncated else "")
            where = " ".join(str(x) for x in (p.venue, p.year) if x)
            click.echo(f"[{c.n}] {p.display_title}. {authors}. {where}. {p.url}".replace(". .", ".").rstrip(". ") )
            click.echo(f"    support {c.support:.2f}{'' if c.supported else ' (UNSUPPORTED)'}: \"{c.quote[:160]}\"")
    t = answer.timings_ms
    click.echo(f"\n[{answer.mode}; retrieve {t.get('retrieve', 0):.0f} ms, generate {t.get('generate', 0):.0f} ms, "
               f"check {t.get('check', 0):.0f} ms; tokens {answer.usage.get('prompt_tokens', 0)}+"
               f"{answer.usage.get('completion_tokens', 0)}]", err=True)


def _bibtex_for(answer: Answer) -> str:
    return "\n\n".join(bibtex_entry(c.paper) for c in answer.citations)


@cli.command()
@click.argument("question", required=False)
@click.option("--k", type=click.IntRange(1, 50), help="Papers to retrieve as sources.")
@filter_options
@click.option("--questions", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help='JSONL of {"id": ..., "question": ...}; one JSON answer per line.')
@click.option("--bibtex", "with_bibtex", is_flag=True, help="Also print BibTeX of the cited papers.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer object as JSON.")
@handle_errors
def ask(question: str | None, k: int | None, venue: str | None, year: int | None, track: str | None,
        decision: str | None, author: str | None, questions: Path | None, with_bibtex: bool, as_json: bool) -> None:
    """Answer QUESTION from the abstracts, citing the ones that support each sentence."""
    app = _app()
    app.index.load()
    filters = _filters(venue, year, track, decision, author)
    if questions is not None:
        for line_no, qid, text in _batch(questions, "question"):
            try:
                answer = app.pipeline.answer(text, filters=filters, k=k)
            except QuestionError as err:
                click.echo(f"error: {questions}:{line_no}: {err}", err=True)
                continue
            _dump({"id": qid, **answer.public()})
        return
    if question is None:
        raise click.UsageError("give a QUESTION or --questions FILE")
    stream = not as_json and sys.stdout.isatty()
    answer = app.pipeline.answer(question, filters=filters, k=k,
                                 on_token=(lambda t: click.echo(t, nl=False)) if stream else None)
    if as_json:
        data = answer.public()
        if with_bibtex:
            data["bibtex"] = _bibtex_for(answer)
        _dump(data)
        return
    _print_answer(answer, streamed=stream)
    if with_bibtex and answer.citations:
        click.echo("\n" + _bibtex_for(answer))


@cli.command()
@click.option("--k", type=click.IntRange(1, 50), help="Papers to retrieve per question.")
@filter_options
@handle_errors
def chat(k: int | None, venue: str | None, year: int | None, track: str | None, decision: str | None,
         author: str | None) -> None:
    """Ask questions in a conversation; follow-ups keep their context. Empty line or Ctrl-D ends."""
    app = _app()
    session = app.chat()
    filters = _filters(venue, year, track, decision, author)
    click.echo(f"{app.mode_line}; {len(session.catalog)} papers. Ask a question (empty line to quit).")
    while True:
        try:
            question = input("\n> ").strip()
        except EOFError:
            break
        if not question:
            break
        try:
            answer = session.ask(question, filters=filters, k=k, on_token=lambda t: click.echo(t, nl=False))
        except QuestionError as err:
            click.echo(f"error: {err}", err=True)
            continue
        if answer.query != question:
            click.echo(f"\n(searched for: {answer.query})", err=True)
        _print_answer(answer, streamed=True)


@cli.command()
@click.argument("paper_ids", nargs=-1, required=True)
@handle_errors
def bibtex(paper_ids: tuple[str, ...]) -> None:
    """Print BibTeX entries for papers by id (as shown by search, papers or ask --json)."""
    index = _app().index.load()
    assert index.catalog is not None
    unknown = [pid for pid in paper_ids if index.catalog.get(pid) is None]
    if unknown:
        raise InputError("paper ids", f"not in the catalogue: {', '.join(unknown)} (see `rag papers`)")
    click.echo("\n\n".join(bibtex_entry(index.catalog.papers[pid]) for pid in paper_ids))


@cli.command(name="eval")
@click.argument("dataset", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--config", "config_specs", multiple=True,
              help="hybrid|dense|keyword|extractive|llm, a .json file, or NAME:key=value,...; repeatable.")
@click.option("--repeat", type=click.IntRange(1, 20), default=1, show_default=True, help="Runs per configuration.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Report folder (default eval/runs/TIME).")
@click.option("--retrieval-only", is_flag=True, help="Score retrieval only (large labeled sets such as SciFact).")
@click.option("--judge", is_flag=True, help="Add an LLM-judge correctness score (needs OPENAI_API_KEY).")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON.")
@handle_errors
def evaluate(dataset: Path, config_specs: tuple[str, ...], repeat: int, out: Path | None, retrieval_only: bool,
             judge: bool, as_json: bool) -> None:
    """Score retrieval, answers, citations and abstention on DATASET for each configuration."""
    import datetime

    from tqdm import tqdm

    from eval import report, runner
    from eval.dataset import load_items

    app = _app()
    catalog = app.index.load().catalog
    assert catalog is not None
    items, errors = load_items(dataset, catalog)
    for err in errors:
        click.echo(f"skipped {err}", err=True)
    if not items:
        raise InputError(str(dataset), "no valid items")
    configs = [runner.parse_config(s) for s in config_specs] or [runner.Config("current")]
    with tqdm(total=len(items) * len(configs) * repeat, unit="item", desc="evaluating", file=sys.stderr,
              disable=not sys.stderr.isatty()) as bar:
        results = runner.run(configs, items, app.settings, repeat, retrieval_only, judge, bar.update)
    folder = out or Path("eval/runs") / datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    paths = report.write(dataset, results, [str(e) for e in errors], repeat, folder)
    if as_json:
        _dump(report.public(dataset, results))
        return
    click.echo(paths["report"].read_text(encoding="utf-8"))
    click.echo(f"written: {', '.join(str(p) for p in paths.values())}", err=True)


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", default=7860, show_default=True, type=int)
@click.option("--share", is_flag=True, help="Ask Gradio for a public share link (off by default).")
@click.option("--mcp", is_flag=True, help="Also serve the MCP tools (as `rag mcp`) at /gradio_api/mcp/.")
@handle_errors
def ui(host: str, port: int, share: bool, mcp: bool) -> None:
    """Start the chat UI. Ingests the bundled sample first if the index is empty."""
    app = _app()
    if not app.index.exists():
        click.echo("No index yet: ingesting the bundled sample (about 15 s)…", err=True)
        app.ingest_sample()
    from ui.app import launch

    launch(app, host=host, port=port, share=share, mcp=mcp)


@cli.command(name="mcp")
@handle_errors
def mcp_command() -> None:
    """Serve search_papers, ask, lookup_paper and bibtex to an agent over MCP on stdin/stdout."""
    from rag.mcp_server import run_stdio

    run_stdio(_app())


def main() -> None:
    cli(prog_name="rag")


if __name__ == "__main__":
    main()
