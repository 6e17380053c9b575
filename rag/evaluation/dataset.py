"""Evaluation datasets: JSONL items, validated and resolved against the catalogue.

An item names its gold papers by `gold_ids`, `gold_titles` (exact titles) or `gold_quotes` (a
verbatim piece of each gold abstract), so anyone can write questions for a corpus without
knowing internal ids. SciFact-style records (`query`, `gold_ids`) load unchanged. An invalid
item is reported with its line and skipped; the rest still run."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.errors import InputError
from rag.store import Catalog
from rag.types import Filters, Paper


@dataclass
class Item:
    id: str
    question: str
    line: int
    history: list[str] = field(default_factory=list)
    gold_ids: list[str] = field(default_factory=list)
    answer_contains: list[str] = field(default_factory=list)
    answerable: bool = True
    kind: str = ""


def _strings(record: dict[str, Any], name: str) -> list[str]:
    value = record.get(name, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) for v in value):
        raise ValueError(f"field '{name}' must be a list of strings")
    return [str(v) for v in value]


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def all_papers(catalog: Catalog, page: int = 1000) -> list[Paper]:
    """Every paper of the catalogue, read page by page (`Catalog.select`)."""
    papers: list[Paper] = []
    while True:
        batch = catalog.select(Filters(), page, len(papers))
        papers += batch
        if len(batch) < page:
            return papers


RULES = ("gold_pattern", "gold_authors", "gold_track")


def _by_rule(record: dict[str, Any], papers: list[Paper]) -> list[str]:
    """Gold papers named by a rule rather than one by one, for questions with many answers over a
    whole conference: `gold_pattern` (regular expressions that must all match the title or the
    abstract, case-insensitive), `gold_authors` (names that must all be on the paper, as
    written), `gold_track` (text in the track). Every copy of a paper that did not merge counts."""
    patterns = [re.compile(p, re.I) for p in _strings(record, "gold_pattern")]
    authors = _strings(record, "gold_authors")
    track = str(record.get("gold_track", "")).lower()
    found = []
    for paper in papers:
        text = f"{paper.title} {paper.abstract}"
        if patterns and not all(p.search(text) for p in patterns):
            continue
        if authors and not all(a in paper.authors for a in authors):
            continue
        if track and track not in paper.track.lower():
            continue
        found.append(paper.id)
    if not found:
        raise ValueError("the gold rule matches no paper")
    return found


def resolve_gold(record: dict[str, Any], catalog: Catalog, papers: list[Paper] | None = None) -> list[str]:
    gold = _strings(record, "gold_ids")
    for pid in gold:
        if catalog.get(pid) is None:
            raise ValueError(f"gold id {pid!r} is not in the catalogue")
    titles_wanted, quotes_wanted = _strings(record, "gold_titles"), _strings(record, "gold_quotes")
    ruled = any(record.get(rule) for rule in RULES)
    if (titles_wanted or quotes_wanted or ruled) and papers is None:
        papers = all_papers(catalog)
    if ruled:
        gold += _by_rule(record, papers or [])
    titles = {p.title.lower(): p.id for p in papers or [] if p.title}
    for title in titles_wanted:
        if title.lower() not in titles:
            raise ValueError(f"gold title {title!r} matches no paper")
        gold.append(titles[title.lower()])
    for quote in quotes_wanted:
        wanted = _squash(quote)
        found = [p.id for p in papers or [] if wanted in _squash(p.abstract)]
        if len(found) != 1:
            raise ValueError(f"gold quote {quote[:40]!r} matches {len(found)} abstracts, not exactly one")
        gold.append(found[0])
    return list(dict.fromkeys(gold))


def load_items(path: Path, catalog: Catalog) -> tuple[list[Item], list[InputError]]:
    items: list[Item] = []
    errors: list[InputError] = []
    seen: set[str] = set()
    papers: list[Paper] | None = None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(str(path), f"cannot read dataset ({err})") from err
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("each line must be a JSON object")
            question = record.get("question", record.get("query"))
            if not isinstance(question, str) or not question.strip():
                raise ValueError("missing 'question'")
            item_id = str(record.get("id", number))
            if item_id in seen:
                raise ValueError(f"duplicate id {item_id!r}")
            answerable = record.get("answerable", True)
            if not isinstance(answerable, bool):
                raise ValueError("field 'answerable' must be true or false")
            if papers is None and (
                record.get("gold_titles") or record.get("gold_quotes") or any(record.get(r) for r in RULES)
            ):
                papers = all_papers(catalog)
            gold = resolve_gold(record, catalog, papers)
            if answerable and not gold and not record.get("answer_contains"):
                raise ValueError("an answerable item needs gold papers or answer_contains")
            history = _strings(record, "history")
            items.append(
                Item(
                    item_id,
                    question.strip(),
                    number,
                    history,
                    gold,
                    _strings(record, "answer_contains"),
                    answerable,
                    str(record.get("kind", "")),
                )
            )
            seen.add(item_id)
        except json.JSONDecodeError as err:
            errors.append(InputError(str(path), f"invalid JSON ({err.msg})", number))
        except ValueError as err:
            errors.append(InputError(str(path), str(err), number))
    return items, errors
