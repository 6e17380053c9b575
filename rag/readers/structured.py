"""JSON Lines, JSON arrays, CSV with a header row, and BibTeX: each record through
`paper_from_record`, each broken record reported with its line and skipped."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from typing import Any

from rag.errors import InputError
from rag.readers.records import RecordError, paper_from_record
from rag.types import Paper

Result = Iterator[Paper | InputError]


def _one(record: Any, source: str, line: int) -> Paper | InputError:
    try:
        return paper_from_record(record, source, line)
    except RecordError as err:
        return InputError(source, str(err), line)


def read_jsonl(text: str, source: str) -> Result:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            yield InputError(source, f"invalid JSON ({err.msg}, column {err.colno})", number)
            continue
        yield _one(record, source, number)


def read_json(text: str, source: str) -> Result:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        yield InputError(source, f"invalid JSON ({err.msg}, column {err.colno})", err.lineno)
        return
    if isinstance(data, dict):
        for key in ("papers", "records", "data", "items"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
        else:
            data = [data]
    if not isinstance(data, list):
        yield InputError(source, f"expected a JSON array of papers, got {type(data).__name__}")
        return
    # Map each element to the line where it starts, so errors point into the file.
    starts = _element_lines(text, len(data))
    for index, record in enumerate(data):
        yield _one(record, source, starts[index] if index < len(starts) else index + 1)


def _element_lines(text: str, count: int) -> list[int]:
    decoder = json.JSONDecoder()
    lines: list[int] = []
    pos = text.index("[") + 1 if "[" in text else 0
    try:
        while len(lines) < count:
            while pos < len(text) and text[pos] in " \t\r\n,":
                pos += 1
            lines.append(text.count("\n", 0, pos) + 1)
            _, pos = decoder.raw_decode(text, pos)
    except (json.JSONDecodeError, ValueError):
        pass
    return lines


def read_csv(text: str, source: str) -> Result:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if not reader.fieldnames:
        yield InputError(source, "CSV has no header row")
        return
    width = len(reader.fieldnames)
    try:
        for row in reader:
            line = reader.line_num
            if None in row or len(row) != width or any(v is None for v in row.values()):
                yield InputError(source, f"row has a different number of fields than the header ({width})", line)
                continue
            yield _one({k.strip(): v for k, v in row.items() if k}, source, line)
    except csv.Error as err:
        yield InputError(source, f"CSV syntax error: {err}", reader.line_num)


def read_bibtex(text: str, source: str) -> Result:
    import bibtexparser

    library = bibtexparser.parse_string(text)
    for block in library.failed_blocks:
        yield InputError(source, f"unparseable BibTeX entry: {(block.raw or '').strip()[:60]!r}", _line(block.start_line))
    for entry in library.entries:
        record: dict[str, Any] = {k.lower(): v for k, v in entry.fields_dict.items()}
        record = {k: f.value if hasattr(f, "value") else f for k, f in record.items()}
        record.setdefault("id", entry.key)
        record["bibtex_type"] = entry.entry_type
        if isinstance(record.get("author"), str):  # BibTeX separates names with "and" only
            record["author"] = [a.strip() for a in re.split(r"\s+and\s+", record["author"]) if a.strip()]
        record = {k: _strip_braces(v) if isinstance(v, str) else v for k, v in record.items()}
        yield _one(record, source, _line(entry.start_line))


def _line(start: int | None) -> int:
    """bibtexparser counts lines from 0."""
    return (start or 0) + 1


def _strip_braces(value: str) -> str:
    return value.replace("{", "").replace("}", "") if value.count("{") == value.count("}") else value
