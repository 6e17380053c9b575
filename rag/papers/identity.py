"""Who a paper is. A record's own id (OpenReview id, DOI, arXiv id, an `id` field) is its identity,
and two records with different own ids are never one paper. Records without an id get one derived
from their content: the whole normalised abstract when it is long enough to identify a paper, else
the title, else the raw record.

Joining an id-less copy (a pasted abstract) to a listed paper needs strong evidence, decided in
`rag.store.plan` with these keys: the whole normalised abstract equal (never a placeholder such as
"No abstract available" or a text too short to identify anything), or a title-only listed paper
whose title starts with the coined name the abstract introduces, when exactly one title does.
"""

from __future__ import annotations

import hashlib
import json
import re

from rag.papers.naming import introduced_name
from rag.text import fold, normalise, short_hash
from rag.types import Paper

# Normalised texts that say "there is no abstract" rather than being one.
PLACEHOLDERS = frozenset(
    normalise(text)
    for text in (
        "No abstract available",
        "No abstract available.",
        "Abstract not available",
        "No abstract",
        "Abstract",
        "N/A",
        "NA",
        "none",
        "null",
        "nil",
        "TBD",
        "TBA",
        "todo",
        "coming soon",
        "to appear",
        "abstract missing",
        "no abstract provided",
        "abstract unavailable",
        "not available",
        "unknown",
        "-",
        "?",
    )
)
MIN_IDENTIFYING_CHARS = 80  # normalised letters and digits: about two short sentences


def is_placeholder(abstract: str) -> bool:
    """A text standing in for a missing abstract ("No abstract available.", "N/A", "-")."""
    return len(abstract) < 64 and normalise(abstract) in PLACEHOLDERS


def abstract_key(abstract: str) -> str:
    """The whole normalised abstract, hashed; "" when it cannot identify a paper (a placeholder,
    emoji only, or too short)."""
    text = normalise(abstract)
    if len(text) < MIN_IDENTIFYING_CHARS or text in PLACEHOLDERS:
        return ""
    return short_hash(text)


def title_key(title: str) -> str:
    text = normalise(title)
    return short_hash(text) if text else ""


_HEAD = re.compile(r"\s*([^\s:,;]{2,40})")  # the first word of a title, as written


def title_head(title: str) -> str:
    """The word a title opens with, where a coined name stands ("BrainOOD: Out-of-distribution …"
    -> "brainood", "TGB-Seq Benchmark: …" -> "tgb-seq")."""
    match = _HEAD.match(title)
    return fold(match.group(1)).strip(".-") if match else ""


_ACRONYM = r"[A-Z][A-Z0-9-]*[A-Z0-9]"


def coined_keys(name: str) -> set[str]:
    """The title heads a coined name stands for: itself, and for a plural acronym ("KANs",
    "GANs") its singular too, since the paper that proposes KANs is titled "KAN: …"."""
    key = fold(name)
    if not key:
        return set()
    return {key, key[:-1]} if re.fullmatch(_ACRONYM + "s", name) else {key}


def head_labels(title: str) -> set[str]:
    """The coined-name labels a title's head stands for (the inverse of `coined_keys`)."""
    head = title_head(title)
    if not head:
        return set()
    raw = _HEAD.match(title)
    return {head, head + "s"} if raw and re.fullmatch(_ACRONYM, raw.group(1)) else {head}


def derived_id(paper: Paper) -> str:
    """An id for a record that has none: from the abstract, else the title, else the record."""
    key = abstract_key(paper.abstract)
    if key:
        return "a-" + key
    title = normalise(paper.title)
    if title:
        return "t-" + short_hash(title)
    raw = json.dumps([paper.abstract, paper.authors, paper.venue, paper.year], ensure_ascii=False)
    return "r-" + hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]


_IDLESS_KEY = re.compile(r"\|#\d+\Z")


def looks_idless(skey: str) -> bool:
    """Whether a copy key is an id-less copy's (`copy_key`: `source|#n`, where an own id gives
    `source|id:…`). Only a hint for skipping work: an own id ending in `|#5` would look id-less."""
    return _IDLESS_KEY.search(skey) is not None


def idless_keys(paper: Paper) -> list[tuple[str, str]]:
    """What an id-less copy may join a listed paper by: ("a", its whole-abstract key) and, for an
    untitled abstract, ("n", each title head the name it introduces stands for). None for a copy
    with its own id: its id is its identity."""
    if paper.own_id:
        return []
    out: list[tuple[str, str]] = []
    key = abstract_key(paper.abstract)
    if key:
        out.append(("a", key))
    if paper.abstract and not paper.title:
        out += [("n", name) for name in sorted(coined_keys(introduced_name(paper.abstract)))]
    return out


def copy_key(paper: Paper) -> str:
    """Identity of a copy within its source: its own id, or its place among the file's records
    (so an edited abstract at the same place is the same copy, changed)."""
    if paper.own_id:
        return f"{paper.source}|id:{paper.id}"
    return f"{paper.source}|#{paper.ordinal}"


def copy_digest(paper: Paper) -> str:
    """What a copy says, hashed: equal digests mean nothing to do on re-ingest. The id is left
    out: it is part of the copy's key, and an id-less copy takes the id of the paper it joins."""
    data = paper.to_dict()
    for volatile in ("id", "own_id", "position", "ordinal", "label"):
        data.pop(volatile, None)
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def copies_digest(digests: list[str]) -> str:
    """One digest for a paper's set of copies: equal when the same copies say the same things."""
    return hashlib.sha1("|".join(sorted(digests)).encode()).hexdigest()[:20]
