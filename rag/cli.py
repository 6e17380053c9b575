"""The `rag` command. Thin: parse, call rag.app, print. A RagError becomes one line on stderr and
its exit code; anything printed as a result has a --json form."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import logging
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from rag import __version__
from rag.answer import bibtex_entry
from rag.app import App
from rag.errors import InputError, QuestionError, RagError
from rag.papers import FORMATS_HELP, ReadOptions
from rag.settings import Settings
from rag.store import IngestReport
from rag.text import TerminalStream, for_terminal, format_authors, join_sentences, plain, printable, printable_data
from rag.types import ALPHABETICAL, Answer, Filters, Mode, Paper

F = TypeVar("F", bound=Callable[..., Any])


def _app() -> App:
    """The app from the environment; a bad or unknown setting is a SettingsError (one line, exit 2)."""
    return App(Settings())


def handle_errors(func: F) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except RagError as err:
            click.echo(f"error: {printable(str(err))}", err=True)
            sys.exit(err.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)

    return wrapper  # type: ignore[return-value]


def filter_options(func: F) -> F:
    """The five filter options, given to the command as one `filters: Filters` argument."""
    options = [
        click.option("--venue", help="Only papers of this venue (e.g. ICLR)."),
        click.option("--year", type=int, help="Only papers of this year."),
        click.option("--track", help="Only papers whose track or area contains this text."),
        click.option("--decision", help="Only papers whose decision contains this (e.g. Oral)."),
        click.option("--author", help="Only papers with an author whose name contains this."),
    ]

    @functools.wraps(func)
    def wrapper(
        *args: Any,
        venue: str | None,
        year: int | None,
        track: str | None,
        decision: str | None,
        author: str | None,
        **kwargs: Any,
    ) -> Any:
        return func(
            *args, filters=Filters(venue=venue, year=year, track=track, decision=decision, author=author), **kwargs
        )

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper  # type: ignore[return-value]


class BatchErrors:
    """Bad lines of a batch file: reported as they come, and a non-zero exit after the others
    were written."""

    def __init__(self) -> None:
        self.count = 0

    def report(self, message: str) -> None:
        self.count += 1
        click.echo(f"error: {message}", err=True)

    def exit(self) -> None:
        if self.count:
            click.echo(f"{self.count} line(s) failed; the others were written", err=True)
            sys.exit(1)


def _batch(path: Path, field: str, errors: BatchErrors) -> Iterator[tuple[int, Any, str]]:
    """(line, id, text) for each valid `{"id": ..., FIELD: ...}` line; bad lines are reported on
    stderr with their location and skipped, so one broken line does not stop a batch."""
    for line_no, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            yield line_no, item["id"], str(item[field])
        except (ValueError, KeyError, TypeError) as err:
            errors.report(str(InputError(str(path), f"bad {field} record ({err})", line_no)))


def _dump(data: Any) -> None:
    click.echo(json.dumps(printable_data(data), ensure_ascii=False, indent=None))


def _shard(value: str | None) -> tuple[int, int] | None:
    if not value:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise click.BadParameter(f"{value!r}: write I/N with 1 <= I <= N, e.g. 1/2", param_hint="--shard")
    return int(match.group(1)) - 1, int(match.group(2))


@click.group()
@click.version_option(__version__, "--version", prog_name="rag")
@click.option("-v", "--verbose", is_flag=True, help="Log progress details to stderr.")
def cli(verbose: bool) -> None:
    """Question answering over research-paper abstracts, with checked citations."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )


def _print_ingest(report: IngestReport) -> None:
    for err in report.skipped:
        click.echo(f"skipped {printable(str(err))}", err=True)
    for note in report.notes:
        click.echo(f"note: {printable(str(note))}", err=True)
    for merge in report.merges:
        click.echo(f"merged {printable(str(merge))}", err=True)
    if report.ignored:
        shown = ", ".join(printable(Path(f).name) for f in report.ignored[:5])
        more = f" and {len(report.ignored) - 5:,} more" if len(report.ignored) > 5 else ""
        click.echo(
            f"ignored {len(report.ignored):,} file(s) that are not paper lists ({shown}{more}); the formats read: "
            f"{FORMATS_HELP}",
            err=True,
        )
    parts = [f"added {len(report.added)}", f"updated {len(report.updated)}", f"unchanged {report.unchanged}"]
    if report.removed:
        parts.append(f"removed {len(report.removed)}")
    if report.repaired:
        parts.append(f"repaired {len(report.repaired)} (vectors were missing)")
    if report.merges:
        parts.append(f"{len(report.merges)} merge notes")
    parts.append(f"skipped {len(report.skipped)}")
    click.echo(
        ", ".join(parts) + f" ({report.chunks_embedded} chunks embedded; {report.papers_read} papers read from "
        f"{len(report.files)} files)"
    )
    click.echo(
        f"the index holds {report.papers:,} papers; {report.title_only:,} without abstract: searchable by title, "
        "authors and venue only"
    )


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--venue", default="", help="Venue for records whose file does not name one.")
@click.option("--year", type=int, help="Year for records whose file does not name one.")
@click.option("--workers", type=click.IntRange(1, 64), help="Embedding processes (default RAG_WORKERS or 1).")
@click.option("--shard", help="Take every N-th paper starting at I (I/N, e.g. 1/2), to split a file across machines.")
@click.option(
    "--category", "categories", multiple=True, help="arXiv snapshot: keep categories starting with this (repeatable)."
)
@click.option(
    "--since", type=click.DateTime(formats=["%Y-%m-%d"]), help="arXiv snapshot: keep papers updated on or after."
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@handle_errors
def ingest(
    paths: tuple[Path, ...],
    venue: str,
    year: int | None,
    workers: int | None,
    shard: str | None,
    categories: tuple[str, ...],
    since: Any,
    as_json: bool,
) -> None:
    """Read paper lists (files or folders) into the index. Without PATHS: the bundled sample.
    Exits 1 when some records were skipped (after ingesting the others)."""
    app = _app()
    options = ReadOptions(
        venue=venue, year=year, categories=categories, since=since.date() if since else None, shard=_shard(shard)
    )
    if not paths:
        report = app.ingest_sample()
    else:
        report = app.ingest(list(paths), options, workers=workers)
    if as_json:
        _dump(report.public())
    else:
        _print_ingest(report)
    if report.skipped:
        sys.exit(1)


@cli.command()
@click.argument("paper_ids", nargs=-1)
@click.option("--source", type=click.Path(path_type=Path), help="Remove what this file contributed.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@handle_errors
def remove(paper_ids: tuple[str, ...], source: Path | None, as_json: bool) -> None:
    """Take papers out by id, or everything one source file contributed (papers listed only
    there disappear; papers also listed elsewhere keep the other sources' data)."""
    if not paper_ids and source is None:
        raise click.UsageError("give PAPER_IDs or --source FILE")
    app = _app()
    if paper_ids:
        known = app.index.load().catalog.get_many(paper_ids)
        unknown = [p for p in paper_ids if p not in known]
        if unknown:
            raise InputError("paper ids", f"not in the catalogue: {', '.join(unknown)} (see `rag papers`)")
    if source is not None:
        _require_source(app, source)
    report = app.remove(list(paper_ids) or None, source)
    if as_json:
        _dump({"removed": report.removed, "updated": report.updated, "chunks_deleted": report.chunks_deleted})
    else:
        click.echo(
            f"removed {len(report.removed)} papers, updated {len(report.updated)} "
            f"({report.chunks_deleted} chunks deleted)"
        )


def _require_source(app: App, source: Path) -> None:
    """A --source the index holds nothing from is an error naming the files it does hold that
    look most like it (a typo or a moved file would otherwise print "removed 0 papers")."""
    catalog = app.index.load().catalog
    wanted = str(source.resolve())
    if catalog.source_pids(wanted):
        return
    held = catalog.sources()
    by_stem: dict[str, list[str]] = {}
    for path in held:
        by_stem.setdefault(Path(path).stem, []).append(path)
    close = difflib.get_close_matches(source.stem, list(by_stem), n=3, cutoff=0.6)
    near = [path for stem in close for path in by_stem[stem]]
    if near:
        hint = "near matches: " + ", ".join(near[:5])
    elif held:
        hint = f"it holds papers from {len(held):,} files, e.g. {', '.join(held[:3])}"
    else:
        hint = "it holds no papers from any file"
    raise InputError(wanted, f"not a source of the index ({hint}); nothing removed")


@cli.command()
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@handle_errors
def reset(yes: bool, as_json: bool) -> None:
    """Delete the whole index (its Chroma collections and this machine's cache)."""
    app = _app()
    where = app.store.location
    question = f"Delete every paper of the index {app.store.fingerprint} at {where}?"
    if not yes and not click.confirm(question, err=True):  # on stderr: stdout is for the result (--json)
        raise click.Abort()
    app.reset()
    if as_json:
        _dump({"reset": True, "store": where})
    else:
        click.echo(f"deleted the index at {where}")


@cli.command()
@click.option(
    "--rebuild", is_flag=True, help="Derive this machine's cache (catalogue, keyword index) again from the log."
)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@handle_errors
def compact(rebuild: bool, as_json: bool) -> None:
    """Merge the keyword index's segments into one (ingest merges small ones by itself) and delete
    orphan chunks a killed writer left; --rebuild first derives the local cache again from the log."""
    app = _app()
    app.index.require()
    result = app.compact(rebuild)
    if as_json:
        _dump(result)
    else:
        click.echo(
            f"keyword index: {result['keyword_segments']} segment(s); "
            f"orphan chunks deleted: {result['orphan_chunks_deleted']}"
        )


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@handle_errors
def snapshot(as_json: bool) -> None:
    """Publish this machine's catalogue and keyword index to Chroma, so a new machine on the same
    server starts from them instead of deriving every paper from the log (ingest publishes one by
    itself every RAG_SNAPSHOT_EVERY log segments)."""
    result = _app().snapshot()
    if as_json:
        _dump(result)
    else:
        click.echo(
            f"snapshot {result['snapshot']}: {result['segments']} log segments, "
            f"{int(result['bytes']) / 2**20:.0f} MiB stored as {int(result['stored_bytes']) / 2**20:.0f} MiB "
            f"in {result['seconds']} s; older snapshots deleted: {result['older_snapshots_deleted']}"
        )


def _print_hits(hits: list[dict[str, Any]]) -> None:
    if not hits:
        click.echo("no papers found")
    for rank, hit in enumerate(hits, start=1):
        title = for_terminal(hit["title"] or hit["label"] or hit["paper_id"])
        authors = format_authors(hit["authors"], hit["authors_truncated"], 4)
        if authors and hit.get("authors_order") == ALPHABETICAL:
            authors = f"authors (alphabetical): {authors}"  # sorted by name: no first author is known
        where = " ".join(str(x) for x in (hit["venue"], hit["year"]) if x)
        score = f"  [{hit['score']:.4f}]" if "score" in hit else ""
        click.echo(f"{rank}. {title}{score}")
        meta = " · ".join(x for x in (authors, where, hit["track"], hit["decision"]) if x)
        if meta:
            click.echo(f"   {for_terminal(meta)}")
        text = for_terminal(hit["abstract"])
        body = (text[:160] + "…") if len(text) > 160 else text
        click.echo(f"   {printable(hit['paper_id'])}  {body or '(no abstract in the collection)'}")


@cli.command()
@click.argument("query", required=False)
@click.option("--k", type=click.IntRange(1, 100), help="Number of papers.")
@filter_options
@click.option(
    "--mode",
    type=click.Choice([m.value for m in Mode]),
    callback=lambda _ctx, _param, value: Mode(value) if value else None,
    help="Retriever (default: RAG_MODE, hybrid).",
)
@click.option(
    "--queries",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='JSONL of {"id": ..., "query": ...}; prints one JSON line per query.',
)
@click.option("--json", "as_json", is_flag=True, help="Print hits as JSON.")
@handle_errors
def search(
    query: str | None, k: int | None, filters: Filters, mode: Mode | None, queries: Path | None, as_json: bool
) -> None:
    """Find the papers that best match QUERY (dense + BM25, fused; the first five reordered by best sentence)."""
    app = _app()
    app.preload()
    if queries is not None:
        errors = BatchErrors()
        for _line, qid, text in _batch(queries, "query", errors):
            result = app.search(text, k, filters, mode)
            _dump({"id": qid, "hits": [h.public() for h in result.hits]})
        errors.exit()
        return
    if not query or not query.strip():
        raise click.UsageError("give a QUERY or --queries FILE")
    result = app.search(query, k, filters, mode)
    hits = [h.public() for h in result.hits]
    _dump(hits) if as_json else _print_hits(hits)


@cli.command()
@click.argument("query", required=False, default="")
@filter_options
@click.option("--limit", type=click.IntRange(1, 10000), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print entries as JSON.")
@handle_errors
def papers(query: str, filters: Filters, limit: int, as_json: bool) -> None:
    """List catalogue entries whose title, label, authors or abstract hold every word of QUERY,
    most relevant first; stderr says how many match in all."""
    app = _app()
    entries = [p.public() for p in app.lookup(query, filters, limit)]
    total = max(app.lookup_total(query, filters), len(entries))
    shown = f" (the first {len(entries):,} shown; --limit shows more)" if total > len(entries) else ""
    click.echo(f"{total:,} paper{'s' if total != 1 else ''} match{shown}", err=True)
    _dump(entries) if as_json else _print_hits(entries)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@handle_errors
def status(as_json: bool) -> None:
    """What the index holds (read from Chroma), where the data lives, and whether this machine's
    cache is in step."""
    app = _app()
    if not app.index.exists():
        info: dict[str, object] = {
            "papers": 0,
            "store": app.store.location,
            "data_folder": str(app.settings.home),
            "note": "no index yet: run `rag ingest PATH` (or `rag ingest` for the sample)",
        }
    else:
        info = app.status()
    if as_json:
        _dump(info)
    else:
        for key, value in info.items():
            click.echo(f"{key:>24}: {printable(str(value))}")


class _Stream:
    """An answer streamed to the terminal as it is written. Pieces go through one TerminalStream,
    so an escape sequence cut between two pieces is still removed whole; what was shown is kept,
    so the answer is printed once (it used to be printed again, as "(checked answer)", although
    the pipeline streams the checked numbering and the same closing lines)."""

    def __init__(self) -> None:
        self.cleaner = TerminalStream()
        self.shown: list[str] = []

    def __call__(self, piece: str) -> None:
        self.shown.append(piece)
        click.echo(plain(self.cleaner.feed(piece)), nl=False)

    def close(self) -> str:
        click.echo(plain(self.cleaner.flush()), nl=False)
        return "".join(self.shown)


def _print_answer(answer: Answer, streamed: str | None) -> None:
    """An answer as the terminal shows it: LaTeX and Markdown as plain text, nothing from the
    abstracts able to drive the terminal. `streamed`: the text already shown while it streamed;
    the answer is printed again only if the check changed it."""
    if streamed is None:
        click.echo(for_terminal(answer.text))
    elif " ".join(streamed.split()) != " ".join(answer.text.split()):
        click.echo("\n(the check changed the answer; as checked:)\n" + for_terminal(answer.text))
    else:
        click.echo()
    if answer.removed_citations:
        click.echo(f"removed citations to sources that were not retrieved: {answer.removed_citations}", err=True)
    for claim in answer.claims:
        if not claim.supported:
            click.secho(f"⚠ unsupported: {for_terminal(claim.text[:100])} ({for_terminal(claim.reason)})", fg="yellow")
    if answer.citations:
        click.echo("\nSources:")
        for c in answer.citations:
            p = c.paper
            line = join_sentences(
                [
                    p.display_title,
                    format_authors(p.authors, p.authors_truncated, 3, alphabetical=p.alphabetical),
                    " ".join(str(x) for x in (p.venue, p.year) if x),
                    p.url,
                ]
            )
            click.echo(f"[{c.n}] {for_terminal(line)}")
            quote = (
                for_terminal(c.quote[:160]) if c.quote else "(title and metadata only: no abstract in the collection)"
            )
            click.echo(f'    support {c.support:.2f}{"" if c.supported else " (UNSUPPORTED)"}: "{quote}"')
    t = answer.timings_ms
    click.echo(
        f"\n[{answer.mode}; retrieve {t.get('retrieve', 0):.0f} ms, generate {t.get('generate', 0):.0f} ms, "
        f"check {t.get('check', 0):.0f} ms; tokens {answer.usage.get('prompt_tokens', 0)}+"
        f"{answer.usage.get('completion_tokens', 0)}]",
        err=True,
    )


def _bibtex(paper: Paper) -> str:
    """BibTeX as written (its LaTeX kept), built from the paper with terminal control sequences
    removed from every field first, so none reaches the output or the key: a title
    "\\x1b[31mZorblax" gives the key `…zorblax`, not `…mzorblax`."""
    inert = dataclasses.replace(
        paper,
        id=printable(paper.id),
        title=printable(paper.title),
        label=printable(paper.label),
        authors=[printable(a) for a in paper.authors],
        venue=printable(paper.venue),
        url=printable(paper.url),
    )
    return printable(bibtex_entry(inert))


def _bibtex_for(answer: Answer) -> str:
    return "\n\n".join(_bibtex(c.paper) for c in answer.citations)


@cli.command()
@click.argument("question", required=False)
@click.option("--k", type=click.IntRange(1, 50), help="Papers to retrieve as sources.")
@filter_options
@click.option(
    "--questions",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='JSONL of {"id": ..., "question": ...}; one JSON answer per line.',
)
@click.option("--bibtex", "with_bibtex", is_flag=True, help="Also print BibTeX of the cited papers.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer object as JSON.")
@handle_errors
def ask(
    question: str | None, k: int | None, filters: Filters, questions: Path | None, with_bibtex: bool, as_json: bool
) -> None:
    """Answer QUESTION from the abstracts, citing the ones that support each sentence."""
    app = _app()
    app.preload()
    app.index.load()
    if questions is not None:
        errors = BatchErrors()
        for line_no, qid, text in _batch(questions, "question", errors):
            try:
                answer = app.pipeline.answer(text, filters=filters, k=k)
            except QuestionError as err:
                errors.report(f"{questions}:{line_no}: {err}")
                continue
            _dump({"id": qid, **answer.public()})
        errors.exit()
        return
    if question is None:
        raise click.UsageError("give a QUESTION or --questions FILE")
    stream = _Stream() if not as_json and sys.stdout.isatty() else None
    answer = app.pipeline.answer(question, filters=filters, k=k, on_token=stream)
    if as_json:
        data = answer.public()
        if with_bibtex:
            data["bibtex"] = _bibtex_for(answer)
        _dump(data)
        return
    _print_answer(answer, streamed=stream.close() if stream else None)
    if with_bibtex and answer.citations:
        click.echo("\n" + _bibtex_for(answer))


@cli.command()
@click.option("--k", type=click.IntRange(1, 50), help="Papers to retrieve per question.")
@filter_options
@handle_errors
def chat(k: int | None, filters: Filters) -> None:
    """Ask questions in a conversation; follow-ups keep their context. Empty line or Ctrl-D ends."""
    app = _app()
    app.preload()
    session = app.chat()
    click.echo(f"{app.mode_line}; {len(session.catalog)} papers. Ask a question (empty line to quit).")
    while True:
        try:
            question = input("\n> ").strip()
        except EOFError:
            break
        if not question:
            break
        stream = _Stream()
        try:
            answer = session.ask(question, filters=filters, k=k, on_token=stream)
        except QuestionError as err:
            stream.close()
            click.echo(f"error: {err}", err=True)
            continue
        shown = stream.close()
        if answer.query != question:
            click.echo(f"\n(searched for: {for_terminal(answer.query)})", err=True)
        _print_answer(answer, streamed=shown)


@cli.command()
@click.argument("paper_ids", nargs=-1, required=True)
@handle_errors
def bibtex(paper_ids: tuple[str, ...]) -> None:
    """Print BibTeX entries for papers by id (as shown by search, papers or ask --json)."""
    found = _app().index.load().catalog.get_many(paper_ids)
    unknown = [pid for pid in paper_ids if pid not in found]
    if unknown:
        raise InputError("paper ids", f"not in the catalogue: {', '.join(unknown)} (see `rag papers`)")
    click.echo("\n\n".join(_bibtex(found[pid]) for pid in paper_ids))


@cli.command(name="eval")
@click.argument("dataset", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--config",
    "config_specs",
    multiple=True,
    help="hybrid|dense|keyword|extractive|llm, a .json file, or NAME:key=value,...; repeatable.",
)
@click.option("--repeat", type=click.IntRange(1, 20), default=1, show_default=True, help="Runs per configuration.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Report folder (default eval/runs/TIME).")
@click.option("--retrieval-only", is_flag=True, help="Score retrieval only (large labeled sets such as SciFact).")
@click.option("--judge", is_flag=True, help="Add an LLM-judge correctness score (needs OPENAI_API_KEY).")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON.")
@handle_errors
def evaluate(
    dataset: Path,
    config_specs: tuple[str, ...],
    repeat: int,
    out: Path | None,
    retrieval_only: bool,
    judge: bool,
    as_json: bool,
) -> None:
    """Score retrieval, answers, citations and abstention on DATASET for each configuration."""
    import datetime

    from tqdm import tqdm

    from rag.evaluation import load_items, report, runner

    app = _app()
    configs = [runner.parse_config(s) for s in config_specs] or [runner.Config("current")]
    for config in configs:  # a misspelled key fails here, naming the valid keys, not after other runs
        config.settings(app.settings)
    catalog = app.index.load().catalog
    items, errors = load_items(dataset, catalog)
    for err in errors:
        click.echo(f"skipped {err}", err=True)
    if not items:
        raise InputError(str(dataset), "no valid items")
    with tqdm(
        total=len(items) * len(configs) * repeat,
        unit="item",
        desc="evaluating",
        file=sys.stderr,
        disable=not sys.stderr.isatty(),
    ) as bar:
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
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Also answer requests for this host name (a DNS name or a reverse proxy's); repeatable.",
)
@click.option("--no-auth", is_flag=True, help="Serve beyond 127.0.0.1 without RAG_UI_AUTH, to anyone who can reach it.")
@handle_errors
def ui(host: str, port: int, share: bool, mcp: bool, allow_hosts: tuple[str, ...], no_auth: bool) -> None:
    """Start the chat UI. Ingests the bundled sample first if the index is empty."""
    from ui.access import check_exposure
    from ui.security import private_folder

    app = _app()
    secret = app.settings.ui_auth.get_secret_value() if app.settings.ui_auth else None
    check_exposure(host, share, secret, no_auth)  # before spending time on an ingest
    folder = private_folder()  # before gradio is imported: it reads GRADIO_TEMP_DIR then
    if not app.index.exists():
        click.echo("No index yet: ingesting the bundled sample (about 15 s)…", err=True)
        app.ingest_sample()
    from ui.app import launch

    launch(app, host, port, share, mcp=mcp, allow_hosts=allow_hosts, no_auth=no_auth, folder=folder)


@cli.command(name="mcp")
@handle_errors
def mcp_command() -> None:
    """Serve the agent tools (search_papers, ask, lookup_paper, count_papers, list_papers, bibtex) over
    MCP on stdin/stdout."""
    from rag.mcp_server import run_stdio

    run_stdio(_app())


def main() -> None:
    cli(prog_name="rag")


if __name__ == "__main__":
    main()
