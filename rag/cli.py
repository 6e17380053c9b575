"""The `rag` command. Thin: parse, call rag.app, print. A RagError becomes one line on stderr and
its exit code; anything printed as a result has a --json form."""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from rag.app import App
from rag.catalog import Filters
from rag.errors import InputError, RagError
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
        for line_no, line in enumerate(queries.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                qid, text = item["id"], str(item["query"])
            except (ValueError, KeyError, TypeError) as err:
                click.echo(f"error: {InputError(str(queries), f'bad query record ({err})', line_no)}", err=True)
                continue
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


def main() -> None:
    cli(prog_name="rag")


if __name__ == "__main__":
    main()
