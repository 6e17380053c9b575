"""Citations as data: parse the numbered markers of an answer, drop numbers that were not among
the sources, renumber them in order of appearance, check each cited sentence against what it
cites, and write BibTeX.

The check needs no LLM. For each claim it finds the sentence of each cited abstract (or, for a
title-only paper, its title) that supports it best (rag.answer.evidence's sentence score: cosine of
sentence embeddings blended with word overlap; a verbatim quote is its own support) and then
applies hard checks:
every number and every coined name in the claim must occur in a cited abstract. A claim failing a
hard check, or scoring below the threshold, is flagged unsupported, never silently kept. A claim
that states a catalogue field (authors, track, venue, decision, year) is checked against that
field instead of the abstract.

Everything here is linear in the size of the answer and the sources: markers are found by one
regex pass that cannot backtrack over long runs of spaces, each source's numbers and words are
computed once per check, and a source is read only up to `rag.answer.evidence.MAX_SOURCE_CHARS`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rag.answer.evidence import Support, Vectors, overlap, sentence_score, source_sentences, source_text
from rag.embed import Embedder
from rag.text import (
    ALPHABETICAL_MARK,
    comparable,
    content_words,
    fold,
    format_authors,
    names_in,
    normalise,
    numbers_in,
    plain,
    printable,
    split_sentences,
)
from rag.types import Citation, Claim, Hit, Paper

# A marker: "[3]", "[1, 2]", "[2-4]". Spaces before it are not part of the pattern (a `\s*`
# prefix would make every position of a long run of spaces a new, failing match attempt).
MARKER = re.compile(r"\[(\d{1,4}(?:\s{0,3}[,;–-]\s{0,3}\d{1,4}){0,30})\]")


def parse_numbers(group: str) -> list[int]:
    numbers: list[int] = []
    for piece in re.split(r"\s*[,;]\s*", group):
        if re.fullmatch(r"\d+\s*[–-]\s*\d+", piece):
            low, high = (int(x) for x in re.split(r"\s*[–-]\s*", piece))
            numbers += list(range(low, high + 1)) if 0 < high - low < 20 else [low, high]
        elif piece.strip().isdigit():
            numbers.append(int(piece))
    return numbers


def _drop_space_before(text: str, start: int) -> int:
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    return start


def rewrite_markers(text: str, mapping: dict[int, int] | None, valid: set[int] | None = None) -> tuple[str, list[int]]:
    """Rewrite every marker: numbers outside `valid` are dropped (and returned), the others are
    mapped through `mapping` (None keeps them). A marker left empty disappears with the spaces
    before it. One pass over the text."""
    removed: list[int] = []
    out: list[str] = []
    last = 0
    for match in MARKER.finditer(text):
        numbers = parse_numbers(match.group(1))
        keep = [n for n in numbers if valid is None or n in valid]
        removed.extend(n for n in numbers if valid is not None and n not in valid)
        new = [mapping.get(n, n) if mapping is not None else n for n in keep]
        new = list(dict.fromkeys(new))
        if new:
            out.append(text[last : match.start()])
            out.append(f"[{', '.join(map(str, new))}]")
        else:
            out.append(text[last : max(last, _drop_space_before(text, match.start()))])
        last = match.end()
    out.append(text[last:])
    return "".join(out), removed


def strip_invalid(answer: str, valid: set[int]) -> tuple[str, list[int]]:
    """Remove cited numbers that are not sources; return the cleaned text and what was removed."""
    text, removed = rewrite_markers(answer, None, valid)
    return text.strip(), removed


def appearance_order(text: str) -> dict[int, int]:
    """Old number -> new number, numbering cited sources 1, 2, … in the order the text first
    cites them."""
    order: dict[int, int] = {}
    for match in MARKER.finditer(text):
        for n in parse_numbers(match.group(1)):
            order.setdefault(n, len(order) + 1)
    return order


def renumber(text: str, claims: Sequence[Claim], sources: Sequence[Hit]) -> tuple[str, list[Hit], dict[int, int]]:
    """Renumber citations in order of appearance: the text's markers, the claims' cites, and the
    sources (cited ones first, in their new order, then the rest as retrieved), so that citation
    n is always `sources[n - 1]`. Returns the new text, sources and the mapping used."""
    mapping = appearance_order(text)
    for claim in claims:  # claims may cite numbers the text does not show (kept, numbered after)
        for n in claim.cites:
            mapping.setdefault(n, len(mapping) + 1)
    mapping = {old: new for old, new in mapping.items() if 1 <= old <= len(sources)}
    mapping = {old: i for i, old in enumerate(sorted(mapping, key=mapping.__getitem__), start=1)}
    new_text, _ = rewrite_markers(text, mapping)
    for claim in claims:
        claim.cites = list(dict.fromkeys(mapping[n] for n in claim.cites if n in mapping))
    cited = [sources[old - 1] for old in sorted(mapping, key=mapping.__getitem__)]
    rest = [hit for i, hit in enumerate(sources, start=1) if i not in mapping]
    return new_text, cited + rest, mapping


class StreamRenumberer:
    """Renumbers citations while an answer streams, so what a reader sees arrive is already the
    final numbering ([1], [2], … in order of appearance, numbers that were not sources dropped).
    A piece that ends inside a possible marker is held back until the marker closes (at most
    `hold` characters; a longer "[" run is not a marker and is let through)."""

    def __init__(self, valid: set[int], hold: int = 48) -> None:
        self.valid = valid
        self.hold = hold
        self.mapping: dict[int, int] = {}
        self.removed: list[int] = []
        self._pending = ""

    def _rewrite(self, text: str) -> str:
        for match in MARKER.finditer(text):
            for n in parse_numbers(match.group(1)):
                if n in self.valid:
                    self.mapping.setdefault(n, len(self.mapping) + 1)
        new, removed = rewrite_markers(text, self.mapping, self.valid)
        self.removed.extend(removed)
        return new

    def feed(self, piece: str) -> str:
        text = self._pending + piece
        cut = text.rfind("[")
        head = text
        if (
            cut != -1
            and "]" not in text[cut:]
            and len(text) - cut <= self.hold
            and re.fullmatch(r"\[[\d\s,;–-]*", text[cut:])
        ):
            head = text[:cut]
        # Trailing spaces wait for what follows: they vanish with a dropped marker after them.
        head = head.rstrip(" \t") if len(text) - len(head.rstrip(" \t")) <= self.hold else head
        self._pending = text[len(head) :]
        return self._rewrite(head)

    def flush(self) -> str:
        text, self._pending = self._pending, ""
        return self._rewrite(text)


def parse_claims(answer: str) -> list[Claim]:
    """Answer text -> claims. Markers that open a sentence belong to the sentence before it."""
    claims: list[Claim] = []
    for sentence in split_sentences(answer):
        lead = re.match(r"^(?:\s*\[[\d,;\s–-]+\])+", sentence)
        if lead and claims:
            claims[-1].cites += [n for g in MARKER.findall(lead.group(0)) for n in parse_numbers(g)]
            sentence = sentence[lead.end() :].strip()
            if not sentence:
                continue
        cites = [n for g in MARKER.findall(sentence) for n in parse_numbers(g)]
        # a claim is shown and checked as text: a model's escape codes are no words of it
        text = re.sub(r"\s+", " ", printable(MARKER.sub("", sentence))).strip()
        text = re.sub(r"\s+([.,;:!?])", r"\1", text)
        claims.append(Claim(text=text, cites=list(dict.fromkeys(cites))))
    for claim in claims:
        claim.cites = list(dict.fromkeys(claim.cites))
    return [c for c in claims if c.text or c.cites]


# -- the support check ----------------------------------------------------------------------


@dataclass
class _SourceFacts:
    """What the hard checks look up in one source, computed once per source."""

    haystack: str
    numbers: set[str]
    sentences: list[str]
    exact: dict[str, str]  # normalised sentence -> sentence, to recognise verbatim quotes


@dataclass
class SupportChecker:
    """Checks each claim against what it cites. The sentence scorer and the embedding cache are
    rag.answer.evidence's, shared with the gate, so "supports" and "addresses" are scored alike."""

    embedder: Embedder
    threshold: float = 0.5
    vectors: Vectors = field(init=False, repr=False)
    _facts: dict[str, _SourceFacts] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.vectors = Vectors(self.embedder)

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.vectors.embed(texts)

    def facts(self, paper: Paper) -> _SourceFacts:
        """A source's sentences, numbers and words; a title-only paper's title is its text."""
        key = f"{paper.id}\x00{len(paper.abstract)}\x00{paper.title}"
        found = self._facts.get(key)
        if found is None:
            text = source_text(paper)
            sentences = source_sentences(paper) or [""]
            haystack = comparable(f"{paper.title} {paper.label} {text}")
            found = _SourceFacts(
                haystack,
                {n for n in numbers_in(plain(text) + " " + paper.title)},
                sentences,
                {normalise(s): s for s in sentences if s},
            )
            if len(self._facts) > 2000:
                self._facts.clear()
            self._facts[key] = found
        return found

    def best_sentence(self, claim: str, paper: Paper) -> Support:
        """The sentence of `paper` that supports `claim` best, and its score. A claim that is a
        verbatim sentence of the paper (an extractive answer's quote) is its own best support."""
        facts = self.facts(paper)
        exact = facts.exact.get(normalise(claim))
        if exact is not None:
            return Support(exact, 1.0)
        sentences = facts.sentences
        vectors = self.embed([claim, *sentences])
        cos = vectors[1:] @ vectors[0]
        words = content_words(claim)
        scores = [sentence_score(float(sim), overlap(words, sentence)) for sentence, sim in zip(sentences, cos)]
        best = int(np.argmax(scores))
        return Support(sentences[best], scores[best])

    def check(self, claim: Claim, sources: dict[int, Paper]) -> Claim:
        cited = [sources[n] for n in claim.cites if n in sources]
        if not cited:
            claim.supported, claim.support, claim.reason = False, 0.0, "no citation"
            return claim
        if claim.field:
            return self._check_field(claim, cited)
        best_quote, best_score = "", -1.0
        for paper in cited:
            support = self.best_sentence(claim.text, paper)
            if support.score > best_score:
                best_quote, best_score = support.sentence, support.score
        claim.quote, claim.support = best_quote, best_score
        facts = [self.facts(p) for p in cited]
        missing = [n for n in numbers_in(plain(claim.text)) if not any(n in f.numbers for f in facts)]
        missing += [
            n
            for n in names_in(plain(claim.text))
            if not any(
                f" {comparable(n).strip()} " in f" {f.haystack} " or comparable(n).strip() in f.haystack for f in facts
            )
        ]
        if missing:
            claim.supported, claim.reason = False, f"not in the cited source: {', '.join(sorted(set(missing)))}"
        elif best_score < self.threshold:
            claim.supported, claim.reason = False, f"weak support ({best_score:.2f} < {self.threshold:.2f})"
        else:
            claim.supported, claim.reason = True, ""
        return claim

    @staticmethod
    def _check_field(claim: Claim, cited: list[Paper]) -> Claim:
        """A catalogue claim ("authors: …") is supported when the cited paper's field holds it."""
        paper = cited[0]
        value = field_value(paper, claim.field)
        claim.quote = f"{claim.field}: {value}" if value else ""
        if claim.field == "authors":  # every name the claim lists is an author of the paper
            text = claim.text.strip().replace(ALPHABETICAL_MARK.strip(), "")  # "A, B (alphabetical)."
            listed = re.sub(r"^\s*authors?\s*:\s*|\s*et al\.?\s*\.?$|\.$", "", text.strip(), flags=re.I)
            names = [n.strip() for n in listed.split(",") if n.strip()]
            known = {comparable(a).strip() for a in paper.authors}
            ok = bool(names) and all(comparable(n).strip() in known for n in names)
        else:
            ok = bool(value) and comparable(value).strip() in comparable(claim.text)
        claim.supported, claim.support = ok, 1.0 if ok else 0.0
        claim.reason = "" if ok else f"the catalogue has no {claim.field} for this paper"
        return claim


def field_value(paper: Paper, name: str) -> str:
    """A catalogue field as text ("authors" joined by the one author formatter)."""
    if name == "authors":
        return format_authors(paper.authors, paper.authors_truncated, alphabetical=paper.alphabetical)
    value = getattr(paper, name, "")
    return str(value) if value not in (None, "") else ""


def citations_for(claims: Sequence[Claim], hits: Sequence[Hit]) -> list[Citation]:
    """One Citation per cited source, numbered as in the answer, with its best supporting quote."""
    by_n: dict[int, Citation] = {}
    for claim in claims:
        for n in claim.cites:
            if not 1 <= n <= len(hits):
                continue
            current = by_n.get(n)
            # The earliest claim (the most relevant, in answer order) keeps the quote unless a
            # later one is clearly better supported.
            if current is None or (claim.supported and not current.supported) or claim.support > current.support + 0.05:
                by_n[n] = Citation(
                    n,
                    hits[n - 1].paper,
                    claim.quote,
                    claim.support,
                    claim.supported or bool(current and current.supported),
                )
            elif claim.supported:
                current.supported = True
    return [by_n[n] for n in sorted(by_n)]


_KEY_STOPWORDS = frozenset("a an the of on in for to and with via from towards toward is are do does".split())


def bibtex_key(paper: Paper) -> str:
    """A BibTeX key from what the data knows. An author list in the paper's order: the first
    author's surname, the year and the title's first word ("gao2025scaling"). A list sorted by
    name (`Paper.alphabetical`: ICLR's), or none: the title's first content word, the year and its
    second ("scaling2025evaluating"), never an invented first author ("radford2025scaling") nor
    "anon2025…"."""
    title = printable(paper.display_title)
    year = str(paper.year or "")
    if paper.authors and not paper.alphabetical:
        surname = re.sub(r"[^a-z]", "", (printable(paper.authors[0]).split() or [""])[-1].lower())
        if surname:
            word = re.sub(r"[^a-z]", "", (title.split() or ["paper"])[0].lower()) or "paper"
            return f"{surname}{year}{word}"
    words = [re.sub(r"[^a-z0-9]", "", w) for w in fold(title).split()]
    words = [w for w in words if w and w not in _KEY_STOPWORDS] or ["paper"]
    return f"{words[0]}{year}{words[1] if len(words) > 1 else ''}"


def bibtex_entry(paper: Paper) -> str:
    """A BibTeX entry; a cut author list ends in `and others`, BibTeX's own `et al.`. Fields are
    untrusted text: control sequences are removed before the key is derived (an escape code's
    `[31m` would otherwise become part of it) and from every value (a .bib file is shown in
    terminals)."""
    key = bibtex_key(paper)
    authors = " and ".join(paper.authors + (["others"] if paper.authors_truncated else []))
    fields = [
        ("title", paper.title or paper.label),
        ("author", authors),
        ("booktitle", paper.venue),
        ("year", str(paper.year or "")),
        ("url", paper.url),
    ]
    notes = []
    if not paper.title:
        notes.append("title not in the source list; label derived from the abstract")
    if paper.alphabetical and paper.authors:
        notes.append("authors (alphabetical): the source lists them sorted by name, not in the paper's order")
    if notes:
        fields.append(("note", "; ".join(notes)))
    fields.append(("x-paper-id", paper.id))
    values = [(name, printable(value).replace("{", "").replace("}", "")) for name, value in fields]
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in values if value)
    return f"@inproceedings{{{key},\n{body}\n}}"
