"""Read paper lists in any supported format into Paper records.

The format is chosen by extension first and by content when the extension says nothing, so a
`.txt` that is really JSON Lines still reads. Every problem becomes an InputError that names the
file and line; the records that can be read are returned beside them."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rag.errors import InputError
from rag.readers.pagetext import looks_like_pagetext, read_pagetext
from rag.readers.structured import read_bibtex, read_csv, read_json, read_jsonl
from rag.types import Paper

log = logging.getLogger(__name__)

Reader = Callable[[str, str], Iterator[Paper | InputError]]
READERS: dict[str, Reader] = {
    "jsonl": read_jsonl,
    "json": read_json,
    "csv": read_csv,
    "bibtex": read_bibtex,
    "pagetext": read_pagetext,
}
_EXTENSIONS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".bib": "bibtex",
    ".bibtex": "bibtex",
}
SKIPPED_NAMES = {".DS_Store", "README.md", "LICENSE"}


@dataclass
class ReadResult:
    papers: list[Paper] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def sniff_format(path: Path, text: str) -> str:
    """Pick a reader by extension, else by the first characters of the content."""
    if path.suffix.lower() in _EXTENSIONS:
        fmt = _EXTENSIONS[path.suffix.lower()]
        if fmt == "json" and text.lstrip().startswith("{") and "\n{" in text.strip():
            return "jsonl"
        return fmt
    head = text.lstrip()[:2000]
    if head.startswith("["):
        return "json"
    if head.startswith("{"):
        return "jsonl" if "\n" in text.strip() else "json"
    if head.startswith("@"):
        return "bibtex"
    first = head.splitlines()[0] if head else ""
    if first.count(",") >= 1 and any(
        col.strip().strip('"').lower() in ("abstract", "title") for col in first.split(",")
    ):
        return "csv"
    if looks_like_pagetext(text):
        return "pagetext"
    return "pagetext"


def decode(path: Path) -> str:
    """The file's text, or an InputError naming what is wrong with it."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(str(path), f"cannot read file ({err.strerror})") from err
    if not data.strip():
        raise InputError(str(path), "file is empty")
    if b"\x00" in data[:8192]:
        raise InputError(str(path), "binary file, not a paper list")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputError(str(path), f"not valid UTF-8 (byte {err.start})", line) from err


def read_file(path: Path, fmt: str | None = None) -> ReadResult:
    result = ReadResult(files=[str(path)])
    try:
        text = decode(path)
    except InputError as err:
        result.errors.append(err)
        return result
    reader = READERS[fmt or sniff_format(path, text)]
    for item in reader(text, str(path)):
        if isinstance(item, InputError):
            result.errors.append(item)
        else:
            result.papers.append(item)
    if not result.papers and not result.errors:
        result.errors.append(InputError(str(path), "no papers found in file"))
    return result


def iter_files(path: Path) -> Iterator[Path]:
    if path.is_dir():
        for child in sorted(path.rglob("*")):
            if child.is_file() and not child.name.startswith(".") and child.name not in SKIPPED_NAMES:
                yield child
    else:
        yield path


def read_paths(
    paths: Iterable[Path], venue: str = "", year: int | None = None, fmt: str | None = None
) -> ReadResult:
    """Read files and folders. `venue` and `year` fill what a file does not say."""
    total = ReadResult()
    for path in paths:
        # Sources are recorded by absolute path, so `data/x` and `./data/x/` name one source.
        path = path.resolve()
        if not path.exists():
            total.errors.append(InputError(str(path), "no such file or folder"))
            continue
        for file in iter_files(path):
            part = read_file(file, fmt)
            total.files += part.files
            total.errors += part.errors
            for paper in part.papers:
                paper.venue = paper.venue or venue
                paper.year = paper.year or year
                total.papers.append(paper)
    log.info("read %d papers from %d files (%d errors)", len(total.papers), len(total.files), len(total.errors))
    return total
