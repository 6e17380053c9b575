"""Which bytes a file holds: a text encoding to decode it with, or "binary".

A paper list saved by a spreadsheet or an editor on Windows often starts with a byte-order mark
(UTF-16 in particular, where every other byte of ASCII text is a NUL), and a list scraped from the
web can carry one stray NUL byte. Neither makes a file binary: a BOM names its encoding, and a
stray NUL is the fault of its record, which the reader then skips. Only a file whose head is
mostly control bytes or undecodable (an image, an archive) is passed over as binary."""

from __future__ import annotations

import codecs
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO

_BOMS = (  # longest first: the UTF-32 LE mark starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16", "UTF-16"),
)
BINARY_SHARE = 0.10  # control characters and undecodable bytes, as a share of a file's head
_TEXT_CONTROLS = frozenset("\t\n\r\f\v")


@dataclass(frozen=True)
class Encoding:
    """How to decode a file: `codec` for Python, `note` for the user when it is not plain UTF-8
    (None for UTF-8, with or without its BOM), `binary` for a file that is no text at all."""

    codec: str = "utf-8"
    note: str | None = None
    binary: bool = False


def sniff(head: bytes) -> Encoding:
    """The encoding of a file from its first bytes: a byte-order mark, else UTF-16 recognised by
    its NUL bytes at every other place, else UTF-8; binary when, decoded so, more than
    BINARY_SHARE of the head is control characters or undecodable bytes."""
    for bom, codec, name in _BOMS:
        if head.startswith(bom):
            note = f"decoded as {name} (the file starts with its byte-order mark)"
            return Encoding(codec, None if codec == "utf-8" else note)
    sample = head[:4096]
    if len(sample) >= 8:
        even, odd = sample[0::2].count(0), sample[1::2].count(0)
        half = len(sample) / 2
        if odd > 0.4 * half and even < 0.05 * half:
            return Encoding("utf-16-le", "decoded as UTF-16 little-endian (every other byte is NUL)")
        if even > 0.4 * half and odd < 0.05 * half:
            return Encoding("utf-16-be", "decoded as UTF-16 big-endian (every other byte is NUL)")
    text = head[:8192].decode("utf-8", "replace")
    if not text:
        return Encoding()
    bad = sum(1 for ch in text if ch == "\ufffd" or (ch < " " and ch not in _TEXT_CONTROLS))
    return Encoding(binary=bad > BINARY_SHARE * len(text))


def utf8_head(head: bytes, encoding: Encoding) -> bytes:
    """A file's head as UTF-8, for the format sniffers (which read UTF-8)."""
    if encoding.codec == "utf-8":
        return head
    return head.decode(encoding.codec, "replace").encode("utf-8")


def utf8_lines(handle: IO[bytes], encoding: Encoding) -> Iterable[bytes]:
    """The lines of a file as UTF-8 bytes: the file itself when it is UTF-8 (its bytes are
    checked line by line later, so one bad byte costs one line), else decoded as it says."""
    if encoding.codec == "utf-8":
        return handle
    return _transcoded(handle, encoding.codec)


def _transcoded(handle: IO[bytes], codec: str) -> Iterator[bytes]:
    text = io.TextIOWrapper(handle, encoding=codec, errors="replace", newline="")
    try:
        for line in text:
            yield line.encode("utf-8", "replace")
    finally:
        text.detach()  # the caller closes its own handle


def decode_whole(data: bytes, encoding: Encoding) -> str | None:
    """A whole file decoded when it is not UTF-8 (None: UTF-8, decoded line by line by the caller)."""
    if encoding.codec == "utf-8":
        return None
    return data.decode(encoding.codec, "replace")
