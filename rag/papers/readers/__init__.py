"""Read paper lists in any supported format, streamed, into Paper records.

The format is chosen by extension first and by content when the extension says nothing. Every
problem becomes an InputError naming the file and line, collected beside the papers, so one bad
record never costs the others. JSON Lines and the arXiv snapshot are streamed line by line, so a
file of a million papers needs no more memory than one batch.

A folder is walked without following symbolic links out of it (each link not followed is
reported); a file is read only in a format it has: by its extension, or, for extensions that name
no format (none, `.txt`, `.dat`), by its content; the page-text layout only in a `.txt` or `.md`
file. So source code, a README or a config file is never taken for a paper list."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import IO

from rag.errors import InputError
from rag.papers.readers.authors import SourceOrder
from rag.papers.readers.encoding import Encoding, decode_whole, sniff, utf8_head, utf8_lines
from rag.papers.readers.pagetext import PAGE_EXTENSIONS, looks_like_pagetext, read_pagetext
from rag.papers.readers.structured import (
    Utf8Lines,
    csv_delimiter,
    first_json_record,
    looks_like_arxiv,
    read_arxiv,
    read_bibtex,
    read_csv,
    read_json,
    read_jsonl,
)
from rag.types import Paper

log = logging.getLogger(__name__)

FORMATS_HELP = (
    "JSON Lines (.jsonl), the arXiv metadata snapshot (JSON Lines), JSON arrays (.json), CSV with a "
    "title or abstract column (.csv), BibTeX (.bib), or page text (.txt or .md: a header line such as "
    "'ICLR 2025 Papers', then one abstract per paragraph)"
)
# Extensions that say nothing about the format: only for these is the content sniffed.
SNIFFED_EXTENSIONS = ("", ".txt", ".dat", ".text")
_EXTENSIONS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "csv",
    ".bib": "bibtex",
    ".bibtex": "bibtex",
}
STREAMED = ("jsonl", "arxiv")
SKIPPED_NAMES = {".DS_Store", "README.md", "README", "LICENSE", "LICENSE.md", "NOTICE", "NOTICE.md"}
HEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class ReadOptions:
    """What to read. `venue`/`year` fill what a file does not say; `categories`, `since` and
    `shard` (index, count) read part of the input, so that reading does not stand for the whole
    file when ingest decides what a file no longer holds."""

    venue: str = ""
    year: int | None = None
    fmt: str | None = None
    categories: tuple[str, ...] = ()
    since: date | None = None
    shard: tuple[int, int] | None = None

    @property
    def partial(self) -> bool:
        return bool(self.categories or self.since or self.shard)


@dataclass
class FileReport:
    """Counts for one file: records read and skipped, and whether this read saw all of it."""

    file: str
    format: str = ""
    read: int = 0
    skipped: int = 0
    complete: bool = False

    def public(self) -> dict[str, object]:
        return {"file": self.file, "format": self.format, "read": self.read, "skipped": self.skipped}


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)


def not_regular(mode: int) -> str | None:
    """What a file that is not a regular file is ("a FIFO"), or None for a regular file. Only
    regular files are read: opening a FIFO waits for a writer that may never come, and ingest
    would wait holding the write lock, so every other writer would wait too."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(file: Path) -> IO[bytes]:
    """Open a regular file for reading without ever blocking: checked before opening, opened
    non-blocking (a FIFO swapped in meanwhile opens at once instead of waiting), and checked
    again on the open handle. Raises OSError; `ValueError` names what the file is instead."""
    kind = not_regular(os.stat(file).st_mode)
    if kind is None:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        kind = not_regular(os.fstat(fd).st_mode)
        if kind is None:
            os.set_blocking(fd, True)
            return os.fdopen(fd, "rb")
        os.close(fd)
    raise ValueError(f"not a regular file ({kind}); not read")


def could_be_a_list(path: Path) -> bool:
    """Whether a file's extension leaves room for a paper list (so a folder's `.py` or `.png`
    files are passed over unread)."""
    ext = path.suffix.lower()
    return ext in _EXTENSIONS or ext in SNIFFED_EXTENSIONS or ext in PAGE_EXTENSIONS


def detect_format(path: Path, head: bytes) -> str | None:
    """The reader for a file: by extension, else (for extensions that name no format) by its
    first bytes; None for "not a paper list"."""
    ext = path.suffix.lower()
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    stripped = text.lstrip()
    if ext in (".jsonl", ".ndjson") or (
        ext in (*SNIFFED_EXTENSIONS, ".json")
        and stripped.startswith("{")
        and ("\n{" in stripped.strip() or ext != ".json")
    ):
        return "arxiv" if looks_like_arxiv(first_json_record(head)) else "jsonl"
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext]
    if ext in SNIFFED_EXTENSIONS:
        if stripped.startswith("["):
            return "json"
        if stripped.startswith("@"):
            return "bibtex"
        first = stripped.splitlines()[0] if stripped else ""
        if csv_delimiter(first) is not None and len(first) < 400:
            return "csv"
    if ext in PAGE_EXTENSIONS and looks_like_pagetext(text):
        return "pagetext"
    return None


class Reading:
    """Papers streamed from files and folders. Iterate it once; afterwards `errors` holds every
    problem, `notes` every record that was read with a repair, and `files` per-file counts."""

    def __init__(self, paths: Iterable[Path], options: ReadOptions = ReadOptions()) -> None:
        self.paths = list(paths)
        self.options = options
        self.errors: list[InputError] = []
        self.notes: list[InputError] = []
        self.files: list[FileReport] = []
        self.ignored: list[str] = []
        self._counter = 0

    def __iter__(self) -> Iterator[Paper]:
        for path in self.paths:
            for file, explicit in self._files(path):
                yield from self._read(file, explicit)

    # -- files --------------------------------------------------------------------------------
    def _files(self, path: Path) -> Iterator[tuple[Path, bool]]:
        try:
            root = path.resolve(strict=True)
        except RuntimeError:
            self.errors.append(InputError(str(path), "symbolic link loop"))
            return
        except OSError as err:
            reason = "symbolic link loop" if err.errno == 40 else "no such file or folder"
            self.errors.append(InputError(str(path), reason))
            return
        if not root.is_dir():
            yield root, True
            return
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in [d for d in dirnames if (Path(dirpath) / d).is_symlink()]:
                link = Path(dirpath) / name
                self.errors.append(
                    InputError(str(link), f"symbolic link to a folder (to {os.path.realpath(link)}); not followed")
                )
            for name in sorted(filenames):
                if name.startswith(".") or name in SKIPPED_NAMES:
                    continue
                file = Path(dirpath) / name
                if file.is_symlink():
                    try:
                        target = file.resolve(strict=True)
                    except (OSError, RuntimeError):
                        self.errors.append(InputError(str(file), "broken or looping symbolic link; skipped"))
                        continue
                    if not target.is_relative_to(root):
                        self.errors.append(
                            InputError(str(file), f"symbolic link leaves the folder (to {target}); not followed")
                        )
                        continue
                yield file, False

    def _read(self, file: Path, explicit: bool) -> Iterator[Paper]:
        if not explicit and not self.options.fmt and not could_be_a_list(file):
            self.ignored.append(str(file))  # a folder's source code, images, configs: not even opened
            return
        report = FileReport(str(file))
        self.files.append(report)
        try:
            handle = open_regular(file)
        except ValueError as err:
            self._error(report, InputError(str(file), str(err)))
            return
        except OSError as err:
            self._error(report, InputError(str(file), f"cannot read file ({err.strerror})"))
            return
        with handle:
            yield from self._read_open(file, explicit, report, handle)

    def _read_open(self, file: Path, explicit: bool, report: FileReport, handle: IO[bytes]) -> Iterator[Paper]:
        head = handle.read(HEAD_BYTES)
        if not head.strip():
            self._error(report, InputError(str(file), "file is empty"))
            return
        encoding = sniff(head)
        if encoding.binary:
            self._error(report, InputError(str(file), "binary file, not a paper list"))
            return
        fmt = self.options.fmt or detect_format(file, utf8_head(head, encoding))
        if fmt is None:
            if explicit:
                self._error(report, InputError(str(file), f"not a paper list; readable formats: {FORMATS_HELP}"))
            else:
                self.files.remove(report)
                self.ignored.append(str(file))
            return
        report.format = fmt
        if encoding.note:
            self.notes.append(InputError(str(file), encoding.note))
        handle.seek(0)
        errors_before = len(self.errors)
        order = SourceOrder()
        held: list[Paper] = []  # copies held back until the source's author order is judged
        for item in self._records(file, fmt, handle, encoding):
            if isinstance(item, Paper) and (field := nul_field(item)):
                reason = f"field '{field}' holds a NUL character (byte 0); record skipped"
                item = InputError(str(file), reason, item.position)
            if isinstance(item, InputError):
                self._error(report, item)
                continue
            report.read += 1
            notes = item.extra.pop("_notes", None)
            if notes:
                self.notes += [InputError(str(file), note, item.position) for note in notes]
            item.venue = item.venue or self.options.venue
            item.year = item.year or self.options.year
            if not self._take():
                continue
            if order.done:
                yield order.mark(item)
                continue
            order.observe(item.authors)
            held.append(item)
            if order.done:
                yield from map(order.mark, held)
                held = []
        yield from map(order.mark, held)
        if report.read == 0 and report.skipped == 0:
            self._error(report, InputError(str(file), "no papers found in file"))
        report.complete = not self.options.partial and len(self.errors) == errors_before

    def _records(self, file: Path, fmt: str, handle: IO[bytes], encoding: Encoding) -> Iterator[Paper | InputError]:
        source = str(file)
        decoder = Utf8Lines()
        if fmt in STREAMED:
            lines = utf8_lines(handle, encoding)
            if fmt == "arxiv":
                yield from read_arxiv(lines, source, decoder, self.options.categories, self.options.since)
            else:
                yield from read_jsonl(lines, source, decoder)
        else:
            data = handle.read()
            text = decode_whole(data, encoding)
            text = decoder.text(data) if text is None else text
            reader = {"json": read_json, "csv": read_csv, "bibtex": read_bibtex, "pagetext": read_pagetext}[fmt]
            yield from reader(text, source)
        self.notes += decoder.notes(source)

    def _take(self) -> bool:
        """Sharding: paper number k goes to shard k mod n."""
        shard = self.options.shard
        self._counter += 1
        return shard is None or (self._counter - 1) % shard[1] == shard[0]

    def _error(self, report: FileReport, err: InputError) -> None:
        report.skipped += 1 if err.line is not None else 0
        self.errors.append(err)


def nul_field(paper: Paper) -> str | None:
    """The first text field of a paper holding a NUL character, or None. No paper's title or
    abstract holds one; a stray NUL is damage, and it costs its record, not the file."""
    for name in ("title", "abstract", "venue", "track", "decision", "url"):
        if "\x00" in getattr(paper, name):
            return name
    if any("\x00" in a for a in paper.authors):
        return "authors"
    return None


def estimate_records(paths: Iterable[Path], options: ReadOptions = ReadOptions()) -> int | None:
    """About how many records these files and folders hold, for a progress total with time left,
    without parsing them: the files a Reading would read (same walk, same rules; never a FIFO),
    and in each, the lines of JSON Lines, the rows of a CSV, the entries of BibTeX, the paragraphs
    of page text (read: they are small), the "title" keys of JSON. None when nothing is countable."""
    walker = Reading(paths, options)  # its walk only: its errors and notes are the real run's business
    total = 0
    for path in walker.paths:
        for file, explicit in walker._files(path):
            if not explicit and not options.fmt and not could_be_a_list(file):
                continue
            try:
                with open_regular(file) as handle:
                    head = handle.read(HEAD_BYTES)
                    encoding = sniff(head)
                    fmt = options.fmt or (None if encoding.binary else detect_format(file, utf8_head(head, encoding)))
                    if fmt is None:
                        continue
                    handle.seek(0)
                    if fmt == "pagetext":  # small files whose paragraphs are not all papers: read them
                        data = handle.read()
                        text = decode_whole(data, encoding) or Utf8Lines().text(data)
                        total += sum(isinstance(p, Paper) for p in read_pagetext(text, str(file)))
                    else:
                        total += _count_records(handle, fmt, encoding)
            except (OSError, ValueError):
                continue
    return total or None


def _count_records(handle: IO[bytes], fmt: str, encoding: Encoding) -> int:
    counts = {b"\n": 0, b"\n@": 0, b'"title"': 0}
    last = b"\n"
    for block in iter(lambda: handle.read(1 << 20), b""):
        data = block if encoding.codec == "utf-8" else block.decode(encoding.codec, "ignore").encode()
        joined = last[-1:] + data  # a separator split across two blocks
        for needle in counts:
            counts[needle] += joined.count(needle) - last[-1:].count(needle)
        last = data or last
    lines = counts[b"\n"] + (0 if last.endswith(b"\n") else 1)
    return {
        "jsonl": lines,
        "arxiv": lines,
        "csv": max(lines - 1, 0),
        "bibtex": counts[b"\n@"] + 1,
        "json": counts[b'"title"'],
    }.get(fmt, 0)


@dataclass
class ReadResult:
    """Everything read, in memory: for tests and small inputs (ingest streams instead)."""

    papers: list[Paper] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def read_paths(paths: Iterable[Path], venue: str = "", year: int | None = None, fmt: str | None = None) -> ReadResult:
    reading = Reading(paths, ReadOptions(venue=venue, year=year, fmt=fmt))
    papers = list(reading)
    return ReadResult(papers, reading.errors, [f.file for f in reading.files])


def read_file(path: Path, fmt: str | None = None) -> ReadResult:
    return read_paths([path], fmt=fmt)
