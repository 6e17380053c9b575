"""HTML for the chat, the sources panel, the paper view, the lookup table and the map's data.
Pure functions of library objects, tested without a browser. Every piece of text that came from
a paper or a model goes through ui/safe.py; the structure around it is ours."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from rag.answer import bibtex_entry, describe, name_of
from rag.text import format_authors, normalise, plain, split_sentences
from rag.types import Answer, Citation, Filters, Paper
from ui.safe import escape, inline_html, markdown_export, markdown_html, one_block, safe_url

NO_SOURCES = one_block(
    "<div class='sources-empty'>The sources of the selected answer appear here, "
    "with the sentence that supports each claim highlighted.</div>"
)
NO_PAPER = one_block("<div class='sources-empty'>Click a paper to read it here.</div>")
NO_ABSTRACT = "<div class='source-abstract no-abstract'>No abstract in the collection (title only).</div>"

# Abstracts longer than this many characters collapse to the supporting sentence and its neighbours.
COLLAPSE_CHARS = 520

# 16 colours that stay apart on white (after Trubetskoy's "20 distinct colours", without the palest;
# the closest pair differs by 28 in CIELAB ΔE), one per cluster, the lighter ones last (used only
# by maps of 13 or more clusters). `cluster_colours` gives alike ones to clusters far apart.
PALETTE = [
    "#e6194b",
    "#3cb44b",
    "#4363d8",
    "#f58231",
    "#911eb4",
    "#42d4f4",
    "#f032e6",
    "#9a6324",
    "#469990",
    "#800000",
    "#808000",
    "#000075",
    "#7f7f7f",
    "#f9a8c8",
    "#ffe119",
    "#bfef45",
]


def _lab(colours: Sequence[str]) -> Any:
    """sRGB hex colours as CIELAB (D65), where distance follows how different they look."""
    import numpy as np

    rgb = np.array([[int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)] for c in colours])
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    to_xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = linear @ to_xyz.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def cluster_colours(centres: Any) -> list[str]:
    """See `_cluster_colours`; cached, since the map is redrawn with the same clusters on every
    filter change."""
    import numpy as np

    rows = np.asarray(centres, dtype=float).reshape(-1, 2)
    return list(_cluster_colours(tuple(map(tuple, rows.round(6).tolist()))))


@functools.lru_cache(maxsize=8)
def _cluster_colours(centres: tuple[tuple[float, ...], ...]) -> tuple[str, ...]:
    """A colour per cluster (rows of `centres`, their places on the map) such that clusters side by
    side get colours that look far apart: each cluster's three nearest clusters are its neighbours,
    and starting from the palette in order, swapping two clusters' colours is kept while it makes
    the most alike neighbouring pair less alike (then the sum over all pairs). Only the first k
    colours are used for k clusters (the palette puts the pale ones last). Deterministic."""
    import numpy as np

    where = np.asarray(centres, dtype=float).reshape(-1, 2)
    k = len(where)
    if k == 0:
        return ()
    lab = _lab(PALETTE)
    gaps = np.linalg.norm(lab[:, None, :] - lab[None, :, :], axis=-1)
    dist = ((where[:, None, :] - where[None, :, :]) ** 2).sum(-1) + np.eye(k) * 1e18
    pairs = sorted({(min(i, int(j)), max(i, int(j))) for i in range(k) for j in np.argsort(dist[i])[: min(3, k - 1)]})
    colour = [j % len(PALETTE) for j in range(k)]

    def cost(assign: list[int]) -> tuple[float, float]:
        alike = [gaps[assign[a], assign[b]] for a, b in pairs]
        return (-min(alike), -sum(alike)) if alike else (0.0, 0.0)

    best = cost(colour)
    improved = True
    while improved:
        improved = False
        for a in range(k):
            for b in range(a + 1, k):
                colour[a], colour[b] = colour[b], colour[a]
                trial = cost(colour)
                if trial < best:
                    best, improved = trial, True
                else:
                    colour[a], colour[b] = colour[b], colour[a]
    return tuple(PALETTE[c] for c in colour)


# -- small pieces --------------------------------------------------------------------------


def filters_line(filters: Filters, total: int | None = None) -> str:
    """What an answer or a lookup searched, in the words the catalogue's answers use
    (rag.catalog_answers.describe: one wording of the filters for every reader)."""
    scope = describe(filters)
    if scope:
        return f"papers {scope}"
    return "all papers" if total is None else f"all {total:,} papers"


def meta_line(paper: Paper) -> str:
    return " · ".join(escape(x) for x in (paper.venue, paper.year, paper.track, paper.decision) if x)


def link_html(paper: Paper, text: str = "paper page") -> str:
    url = safe_url(paper.url)
    return f' <a href="{url}" target="_blank" rel="noopener noreferrer">{text}</a>' if url else ""


def _sentence_of(sentences: Sequence[str], quote: str) -> int:
    """Index of the sentence holding the supporting quote, or -1."""
    if not quote:
        return -1
    want = normalise(quote)
    for i, sentence in enumerate(sentences):
        have = normalise(sentence)
        if want and (want in have or have in want) and len(have) > 10:
            return i
    return -1


def abstract_html(paper: Paper, quote: str = "", collapse: bool = True) -> str:
    """The abstract with the supporting sentence marked. A long one shows only that sentence and
    its neighbours, with the full text one click away (a `<details>`, so no script is involved)."""
    if not paper.abstract.strip():
        return NO_ABSTRACT
    sentences = split_sentences(paper.abstract)
    hit = _sentence_of(sentences, quote)
    shown = [inline_html(s) for s in sentences]
    if hit >= 0:
        shown[hit] = f"<mark>{shown[hit]}</mark>"
    full = " ".join(shown)
    if not collapse or len(paper.abstract) <= COLLAPSE_CHARS or len(sentences) <= 3:
        return f"<div class='source-abstract'>{full}</div>"
    centre = hit if hit >= 0 else 0
    low, high = max(0, centre - 1), min(len(sentences), centre + 2)
    context = ("… " if low > 0 else "") + " ".join(shown[low:high]) + (" …" if high < len(sentences) else "")
    return (
        f"<details class='source-abstract'><summary><span class='ctx'>{context}</span>"
        f"<span class='more'> · show the full abstract ({len(sentences)} sentences)</span>"
        f"<span class='less'>show less</span></summary>"
        f"<div class='full'>{full}</div></details>"
    )


# -- the chat --------------------------------------------------------------------------------


def _tight(fragment: str) -> str:
    """No newlines next to tags: the chat shows messages with `white-space: pre-wrap`, where the
    renderer's newlines between blocks would become blank lines."""
    return re.sub(r"\n+(?=<)|(?<=>)\n+", "", fragment)


def question_html(question: str) -> str:
    return f"<div class='question'>{escape(question)}</div>"


def streaming_html(text: str) -> str:
    """A partial answer, through the same renderer as the final one."""
    return f"<div class='answer streaming'>{_tight(markdown_html(text))}</div>"


def _related(answer: Answer) -> str:
    """The relevant papers the answer did not cite and its text does not already name. The
    pipeline ends an answer with "Also relevant: **A**; **B**." (or "Related, not answering"),
    so listing those papers again here showed every one of them twice."""
    named = plain(answer.text)
    unnamed = [p for p in answer.related if plain(name_of(p)) not in named]
    items = [f"<li>{inline_html(p.display_title)}{link_html(p, 'link')}</li>" for p in unnamed[:5]]
    return f"<div class='related'>Related papers:<ul>{''.join(items)}</ul></div>" if items else ""


def answer_html(answer: Answer, turn: int, filters: Filters = Filters(), total: int | None = None) -> str:
    valid = {c.n for c in answer.citations}
    body = _tight(markdown_html(answer.text, turn=turn, valid=valid))
    flagged = [c for c in answer.claims if not c.supported]
    notes = "".join(
        f"<div class='unsupported'>⚠ unsupported: {inline_html(c.text[:160])} ({escape(c.reason)})</div>"
        for c in flagged
    )
    if answer.removed_citations:
        notes += (
            "<div class='removed'>Removed citations to sources that were not retrieved: "
            f"{escape(', '.join(map(str, answer.removed_citations)))}</div>"
        )
    seconds = sum(answer.timings_ms.values()) / 1000 if answer.timings_ms else 0
    meta = [f"searched {escape(filters_line(filters, total))}", escape(answer.mode)]
    if answer.kind:
        meta.append(escape(answer.kind))
    if seconds:
        meta.append(f"{seconds:.1f} s")
    return (
        f"<div class='answer' data-turn='{turn}'>{body}{notes}{_related(answer)}"
        f"<div class='answer-meta'>{' · '.join(meta)}</div></div>"
    )


def source_card(citation: Citation, turn: int) -> str:
    p = citation.paper
    badge = (
        f"<span class='badge ok'>support {citation.support:.2f}</span>"
        if citation.supported
        else f"<span class='badge bad'>unsupported (support {citation.support:.2f})</span>"
    )
    authors = format_authors(p.authors, p.authors_truncated, limit=6, alphabetical=p.alphabetical)
    return (
        f"<div class='source-card' id='src-{turn}-{citation.n}' data-n='{citation.n}'>"
        f"<div class='source-title'><span class='n'>[{citation.n}]</span> {inline_html(p.display_title)}</div>"
        f"<div class='source-meta'>{escape(authors)}</div>"
        f"<div class='source-meta'>{meta_line(p)}{link_html(p)} {badge}</div>"
        f"{abstract_html(p, citation.quote)}</div>"
    )


def sources_html(answer: Answer | None, turn: int) -> str:
    if answer is None:
        return NO_SOURCES
    if not answer.citations:
        if not answer.sources:
            return one_block(
                "<div class='sources-empty'>Nothing found: no paper matches this question and these filters.</div>"
            )
        return one_block(
            "<div class='sources-empty'>No source cited: the retrieved abstracts do not answer this question.</div>"
        )
    cards = "".join(source_card(c, turn) for c in answer.citations)
    head = f"<div class='panel-head'>Sources of answer {turn + 1}</div>"
    return one_block(f"<div class='sources' data-turn='{turn}'>{head}{cards}</div>")


# -- papers ----------------------------------------------------------------------------------


def paper_html(paper: Paper | None) -> str:
    """One paper in full: the lookup's and the map's reading pane."""
    if paper is None:
        return NO_PAPER
    authors = escape(format_authors(paper.authors, paper.authors_truncated, alphabetical=paper.alphabetical))
    bib = escape(bibtex_entry(paper)).replace("\n", "&#10;")
    return one_block(
        "<div class='paper'>"
        f"<div class='paper-title'>{inline_html(paper.display_title)}</div>"
        f"<div class='source-meta'>{authors}</div>"
        f"<div class='source-meta'>{meta_line(paper)}{link_html(paper)}</div>"
        f"{abstract_html(paper, collapse=False)}"
        f"<details class='bibtex'><summary>BibTeX</summary><pre>{bib}</pre></details></div>"
    )


LOOKUP_HEAD = ["#", "Title", "Authors", "Venue", "Year", "Track", "Decision"]


def lookup_html(papers: Sequence[Paper], query: str, filters: Filters, total: int | None = None) -> str:
    """The lookup's results in the order given (relevance), one clickable row per paper, under
    how many papers really match (`total`; more than the rows when the list is cut)."""
    if not papers:
        what = f"“{escape(query)}”" if query.strip() else "these filters"
        return f"<div class='sources-empty'>No paper matches {what}.</div>"
    rows = []
    for i, p in enumerate(papers, 1):
        cells = [
            str(i),
            escape(plain(p.display_title)),
            escape(format_authors(p.authors, p.authors_truncated, limit=3, alphabetical=p.alphabetical)),
            escape(p.venue),
            escape(p.year or ""),
            escape(p.track),
            escape(p.decision),
        ]
        marker = (
            ""
            if p.abstract.strip()
            else " <span class='title-only' title='no abstract in the collection'>title only</span>"
        )
        cells[1] += marker
        rows.append(f"<tr data-id='{escape(p.id)}' tabindex='0'>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in LOOKUP_HEAD)
    total = max(total or 0, len(papers))
    count = f"{total:,} paper{'s' if total != 1 else ''} match"
    if total > len(papers):
        count += f", the first {len(papers):,} shown"
    count += ", best match first"
    if filters.active():
        count += f" · {escape(filters_line(filters))}"
    return (
        f"<div class='lookup-count'>{count}</div><table class='lookup'><colgroup><col class='c-n'><col class='c-title'>"
        f"<col class='c-authors'><col class='c-venue'><col class='c-year'><col class='c-track'><col class='c-decision'>"
        f"</colgroup><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


# -- exports ---------------------------------------------------------------------------------


def _reference(n: int, paper: Paper) -> str:
    parts = [
        format_authors(paper.authors, paper.authors_truncated, limit=8, alphabetical=paper.alphabetical),
        plain(paper.display_title),
        " ".join(str(x) for x in (paper.venue, paper.year) if x),
    ]
    line = ". ".join(x.strip().rstrip(".") for x in parts if x and x.strip()) + "."
    return markdown_export(f"{n}. {line}" + (f" {paper.url.strip()}" if safe_url(paper.url) else ""))


def conversation_markdown(turns: Iterable[tuple[str, Answer, Filters]]) -> str:
    """The conversation as Markdown: each question, the filters it used and its answer with the
    citation numbers renumbered across the conversation, then one numbered reference list. What
    came from papers, the model or the user goes through `markdown_export`: the file is opened
    in terminals, editors and Markdown viewers, outside the page's protections."""
    from rag.answer import MARKER, parse_numbers

    numbers: dict[str, int] = {}
    papers: list[Paper] = []
    out = ["# Conversation", ""]
    for question, answer, filters in turns:
        local = {}
        for c in answer.citations:
            if c.paper.id not in numbers:
                numbers[c.paper.id] = len(numbers) + 1
                papers.append(c.paper)
            local[c.n] = numbers[c.paper.id]

        def renumber(match: Any, local: dict[int, int] = local) -> str:
            got = [str(local.get(n, n)) for n in parse_numbers(match.group(1))]
            return "[" + ", ".join(got) + "]"

        out += [
            f"## {markdown_export(' '.join(question.split()))}",
            "",
            f"*Searched {markdown_export(filters_line(filters))}; {answer.mode}.*",
            "",
            MARKER.sub(renumber, markdown_export(answer.text.strip())),
            "",
        ]
    if papers:
        out += ["## References", ""] + [_reference(numbers[p.id], p) for p in papers] + [""]
    return "\n".join(out)


def bibtex_text(papers: Iterable[Paper]) -> str:
    unique = {p.id: p for p in papers}
    return "\n\n".join(bibtex_entry(p) for p in unique.values()) + ("\n" if unique else "")


# -- the map ---------------------------------------------------------------------------------


def map_payload(
    xy: Any,
    cluster: Any,
    names: Sequence[str],
    embedded: Any,
    generation: str,
    shown: Sequence[bool] | None,
    highlight: Sequence[tuple[int, str, str]],
    caption: str,
) -> dict[str, Any]:
    """What the browser draws, kept small because the time to the drawn map is mostly the time to
    move this through Gradio (7,000 papers: about 130 kB): columns of integers (positions in
    1/10,000ths), no ids (a click sends the point's index) and no titles (the page fetches them
    once per map generation, for the hover, with `map_titles`). Highlights carry their index,
    label and title. Text is put into the page with textContent, never as HTML."""
    import numpy as np

    clusters = np.asarray(cluster)
    centres = np.array(
        [np.median(xy[clusters == j], axis=0) if (clusters == j).any() else (0.5, 0.5) for j in range(len(names))]
    ).reshape(-1, 2)
    colours = cluster_colours(centres)
    labels = []
    for j, name in enumerate(names):
        mask = clusters == j
        if mask.any():
            labels.append(
                {
                    "text": name,
                    "x": float(centres[j, 0]),
                    "y": float(centres[j, 1]),
                    "size": int(mask.sum()),
                    "color": colours[j],
                }
            )
    grid = np.rint(np.asarray(xy, dtype=np.float64) * 10000).astype(int) if len(clusters) else np.zeros((0, 2), int)
    on = [1] * len(clusters) if shown is None else [1 if v else 0 for v in shown]
    return {
        "gen": generation,
        "x": grid[:, 0].tolist(),
        "y": grid[:, 1].tolist(),
        "c": clusters.astype(int).tolist(),
        "e": np.asarray(embedded).astype(int).tolist(),
        "on": on,
        "colors": colours,
        "labels": labels,
        "hl": [[i, label, title] for i, label, title in highlight],
        "caption": caption,
        "shown": sum(on),
    }
