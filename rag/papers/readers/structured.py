"""JSON Lines (streamed), the arXiv metadata snapshot (streamed), JSON arrays, CSV with a header
row, and BibTeX: each record through `paper_from_record`, each broken record reported with its
line and skipped, so one bad record never costs the others."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from datetime import date
from typing import Any

from rag.errors import InputError
from rag.papers.readers.records import ALIASES, RecordError, paper_from_record, split_authors
from rag.types import Paper

Result = Iterator[Paper | InputError]
# How deep a record may nest (a paper's fields are strings, lists of names, and a few small
# objects). Deeper records are refused before anything walks them: Python's JSON parser gives up
# at about 1,000 levels with a RecursionError, and so would every later step that walks a
# record (scrubbing, hashing, storing) well before that on a deep stack.
MAX_NESTING = 32
TOO_DEEP = f"record nested more than {MAX_NESTING} levels deep (no paper's fields nest so); skipped"


def nesting(value: Any) -> int:
    """How deep lists and objects nest in a parsed JSON value (a string is 0, `[1]` is 1),
    counted without recursion and stopping once past MAX_NESTING."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_NESTING:
                return deepest
            stack.extend((v, depth) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def json_problem(err: json.JSONDecodeError) -> str:
    """What is wrong with a record that is not JSON, in words: a record that stops before it
    ends (the line runs out inside a string, or right after a comma) is "cut short", the usual
    result of a truncated file or a record broken over lines; Python's own messages alone
    ("Invalid control character at, column 897") do not say that."""
    line_start = err.doc.rfind("\n", 0, err.pos) + 1
    line_end = err.doc.find("\n", err.pos)
    line_end = len(err.doc) if line_end < 0 else line_end
    rest = err.doc[err.pos : line_end].strip()
    ends_inside = err.msg.startswith("Unterminated string") or not rest
    if ends_inside and err.msg != "Extra data":
        column = len(err.doc[line_start:line_end].rstrip("\r")) + 1
        return (
            f"the record is cut short at column {column} (a truncated file, or a record split over lines? "
            "each line must hold one whole JSON record)"
        )
    if err.msg.startswith("Invalid control character"):
        return f"invalid JSON: a raw control character {err.doc[err.pos]!r} inside a string at column {err.colno}"
    return f"invalid JSON: {err.msg} at column {err.colno}"


def _one(record: Any, source: str, line: int, ordinal: int, scrub: bool = True) -> Paper | InputError:
    if nesting(record) > MAX_NESTING:
        return InputError(source, TOO_DEEP, line)
    notes: list[str] = []
    try:
        paper = paper_from_record(record, source, line, ordinal, notes, scrub)
    except RecordError as err:
        return InputError(source, str(err), line)
    if notes:
        paper.extra["_notes"] = notes
    return paper


class Utf8Lines:
    """UTF-8 decoding, one line at a time: a line with bytes that are not UTF-8 (a Latin-1 "é")
    keeps its other characters, U+FFFD stands in for the bad bytes, and its number is kept in
    `replaced`, so the reader reports file and line and one bad byte never costs a whole file."""

    def __init__(self) -> None:
        self.replaced: list[int] = []

    def line(self, number: int, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self.replaced.append(number)
            return raw.decode("utf-8", "replace")

    def text(self, data: bytes) -> str:
        """A whole file (a byte-order mark dropped)."""
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return "\n".join(self.line(n, raw) for n, raw in enumerate(data.split(b"\n"), start=1))

    def notes(self, source: str) -> list[InputError]:
        """What was replaced: each line, or the first three and a count when there are more."""
        reason = "bytes that are not UTF-8 replaced with U+FFFD"
        if len(self.replaced) <= 3:
            return [InputError(source, reason, n) for n in self.replaced]
        first = ", ".join(map(str, self.replaced[:3]))
        return [InputError(source, f"{reason} on {len(self.replaced)} lines ({first}, …); is the file Latin-1?")]


def _json_lines(
    lines: Iterable[bytes], source: str, decoder: Utf8Lines
) -> Iterator[tuple[int, Any, bool] | InputError]:
    """(line number, parsed value, whether the line has a JSON escape) for each non-empty line of
    a JSON Lines file; a line that is not JSON is an error for that line only."""
    for number, raw in enumerate(lines, start=1):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        line = decoder.line(number, raw)
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            yield InputError(source, json_problem(err), number)
            continue
        except RecursionError:
            yield InputError(source, TOO_DEEP, number)
            continue
        # Only a JSON escape can produce a lone surrogate; the scrub is skipped when there is none.
        yield number, value, "\\u" in line


def read_jsonl(lines: Iterable[bytes], source: str, decoder: Utf8Lines) -> Result:
    ordinal = 0
    for item in _json_lines(lines, source, decoder):
        if isinstance(item, InputError):
            yield item
            continue
        number, record, escaped = item
        ordinal += 1
        yield _one(record, source, number, ordinal, escaped)


# -- arXiv metadata snapshot --------------------------------------------------------------------
ARXIV_FIELDS = ("categories", "update_date")


def looks_like_arxiv(first_record: Any) -> bool:
    return isinstance(first_record, dict) and all(f in first_record for f in ARXIV_FIELDS) and "id" in first_record


def _arxiv_year(arxiv_id: str, versions: Any, update_date: str) -> int | None:
    """The year of the first version: from `versions`, else the id (`2401.00001` -> 2024,
    `hep-th/9901001` -> 1999), else the update date."""
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        match = re.search(r"\b(19|20)\d\d\b", str(versions[0].get("created", "")))
        if match:
            return int(match.group(0))
    match = re.match(r"(?:[a-z-]+(?:\.[A-Z]{2})?/)?(\d\d)(\d\d)", arxiv_id)
    if match:
        yy = int(match.group(1))
        return 2000 + yy if yy < 91 else 1900 + yy
    match = re.match(r"(\d{4})", update_date or "")
    return int(match.group(1)) if match else None


def arxiv_record(record: dict[str, Any]) -> dict[str, Any]:
    """An arXiv snapshot record in the common record shape. The arXiv id is the identity; the URL
    is its abs page; `journal-ref` is the venue when given, else "arXiv"."""
    arxiv_id = str(record.get("id", "")).strip()
    authors, _ = split_authors(re.sub(r"\s+", " ", str(record.get("authors") or "")))
    categories = str(record.get("categories") or "").split()
    return {
        "id": arxiv_id,
        "title": re.sub(r"\s+", " ", str(record.get("title") or "")).strip(),
        "abstract": re.sub(r"\s+", " ", str(record.get("abstract") or "")).strip(),
        "authors": authors,
        "venue": str(record.get("journal-ref") or "").strip() or "arXiv",
        "year": _arxiv_year(arxiv_id, record.get("versions"), str(record.get("update_date") or "")),
        "track": categories[0] if categories else "",
        "url": f"https://arxiv.org/abs/{arxiv_id}",
        "categories": categories,
        "update_date": str(record.get("update_date") or ""),
        **({"doi_ref": record["doi"]} if record.get("doi") else {}),
    }


def read_arxiv(
    lines: Iterable[bytes],
    source: str,
    decoder: Utf8Lines,
    categories: tuple[str, ...] = (),
    since: date | None = None,
) -> Result:
    """Streams the arXiv metadata snapshot. `categories`: keep papers with any category starting
    with one of them (`cs.CL`, `cs`); `since`: keep papers updated on or after that day."""
    ordinal = 0
    for item in _json_lines(lines, source, decoder):
        if isinstance(item, InputError):
            yield item
            continue
        number, raw, escaped = item
        if not isinstance(raw, dict) or not raw.get("id"):
            yield InputError(source, "arXiv record without an 'id'", number)
            continue
        record = arxiv_record(raw)
        if categories and not any(c.startswith(p) for c in record["categories"] for p in categories):
            continue
        if since is not None and record["update_date"][:10] < since.isoformat():
            continue
        ordinal += 1
        yield _one(record, source, number, ordinal, escaped)


# -- whole-file formats ------------------------------------------------------------------------
def read_json(text: str, source: str) -> Result:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        yield InputError(source, json_problem(err), err.lineno)
        return
    except RecursionError:  # one element nested too deep for the parser: the others still count
        yield from _read_json_elements(text, source)
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
        yield _one(record, source, starts[index] if index < len(starts) else index + 1, index + 1)


def _read_json_elements(text: str, source: str) -> Result:
    """A JSON array read element by element, for a file that does not parse whole because an
    element nests deeper than the parser allows: that element is one error at its line (skipped by
    matching its brackets), the others are read."""
    decoder = json.JSONDecoder()
    start = text.find("[")
    if start < 0 or text[:start].strip():
        yield InputError(source, "JSON nested too deeply to read, and not an array of papers", 1)
        return
    pos, ordinal = start + 1, 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            return
        line = text.count("\n", 0, pos) + 1
        ordinal += 1
        try:
            record, pos = decoder.raw_decode(text, pos)
        except RecursionError:
            yield InputError(source, TOO_DEEP, line)
            pos = _value_end(text, pos)
            continue
        except json.JSONDecodeError as err:
            yield InputError(source, json_problem(err), err.lineno)
            return
        yield _one(record, source, line, ordinal)


def _value_end(text: str, pos: int) -> int:
    """Where the JSON value starting at `pos` ends, by counting brackets outside strings."""
    depth, in_string, escaped = 0, False, False
    for i in range(pos, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


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


CSV_DELIMITERS = (",", ";", "\t", "|")
CSV_COLUMNS = ("title", "abstract", "summary", "name", "authors", "author", "id")


def csv_delimiter(header: str) -> str | None:
    """The delimiter that splits the header into known column names (a semicolon CSV is common
    where the comma is the decimal mark); None when no delimiter yields a title or abstract."""
    best, best_hits = None, 0
    for delimiter in CSV_DELIMITERS:
        try:
            columns = next(csv.reader([header], delimiter=delimiter))
        except (csv.Error, StopIteration):
            continue
        names = {c.strip().strip('"').lower() for c in columns}
        hits = len(names & set(CSV_COLUMNS))
        if hits > best_hits and names & {"title", "abstract", "summary", "name"}:
            best, best_hits = delimiter, hits
    return best


def _fields(line: str, delimiter: str) -> list[str] | None:
    try:
        return next(csv.reader([line], delimiter=delimiter))
    except (csv.Error, StopIteration):
        return None


def read_csv(text: str, source: str) -> Result:
    """CSV with a header row, any common delimiter. A quoted field may span lines; but a quote
    left open that would swallow whole following rows is reported at its line and that row
    skipped, and reading goes on with the next line, so no row is silently lost."""
    lines = text.splitlines()
    if not lines:
        yield InputError(source, "CSV has no header row")
        return
    delimiter = csv_delimiter(lines[0])
    if delimiter is None:
        found = ", ".join(c.strip() for c in (_fields(lines[0], ",") or [])[:12] if c.strip())
        read = "; ".join(f"{name}: {', '.join(aliases)}" for name, aliases in ALIASES.items())
        yield InputError(
            source,
            f"CSV header ({found}) has no title or abstract column; the columns read are (any case) {read}",
            1,
        )
        return
    header = [c.strip() for c in _fields(lines[0], delimiter) or []]
    width = len(header)
    ordinal = 0
    i = 1
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        start, buf, j = i, lines[i], i
        while buf.count('"') % 2 == 1 and j + 1 < len(lines):
            j += 1
            buf += "\n" + lines[j]
        swallowed = j > start and any(
            (f := _fields(lines[k], delimiter)) is not None and len(f) == width and lines[k].count('"') % 2 == 0
            for k in range(start + 1, j + 1)
        )
        if buf.count('"') % 2 == 1 or swallowed:
            yield InputError(source, "a quote opened in this row is never closed; row skipped", start + 1)
            i = start + 1
            continue
        i = j + 1
        row = _fields(buf, delimiter)
        if row is None:
            yield InputError(source, "CSV syntax error", start + 1)
            continue
        if len(row) != width:
            yield InputError(source, f"row has {len(row)} fields, the header {width}", start + 1)
            continue
        ordinal += 1
        yield _one({k: v for k, v in zip(header, row) if k}, source, start + 1, ordinal)


def read_bibtex(text: str, source: str) -> Result:
    import bibtexparser

    library = bibtexparser.parse_string(text)
    for block in library.failed_blocks:
        yield InputError(
            source, f"unparseable BibTeX entry: {(block.raw or '').strip()[:60]!r}", _line(block.start_line)
        )
    for ordinal, entry in enumerate(library.entries, start=1):
        record: dict[str, Any] = {k.lower(): v for k, v in entry.fields_dict.items()}
        record = {k: f.value if hasattr(f, "value") else f for k, f in record.items()}
        record.setdefault("id", entry.key)
        record["bibtex_type"] = entry.entry_type
        if isinstance(record.get("author"), str):  # BibTeX separates names with "and" only
            record["author"] = [a.strip() for a in re.split(r"\s+and\s+", record["author"]) if a.strip()]
        record = {k: _strip_braces(v) if isinstance(v, str) else v for k, v in record.items()}
        yield _one(record, source, _line(entry.start_line), ordinal)


def _line(start: int | None) -> int:
    """bibtexparser counts lines from 0."""
    return (start or 0) + 1


def _strip_braces(value: str) -> str:
    return value.replace("{", "").replace("}", "") if value.count("{") == value.count("}") else value


def first_json_record(head: bytes) -> Any:
    """The first JSON Lines record of a file's head, or None."""
    for raw in io.BytesIO(head):
        if raw.strip():
            try:
                return json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                return None
    return None
