"""Citations as data: parse the numbered markers of an answer, drop numbers that were not among
the sources, and check each cited sentence against the abstracts it cites.

The check needs no LLM. For each claim it finds the sentence of each cited abstract that supports
it best (cosine of sentence embeddings blended with word overlap) and then applies hard checks:
every number and every coined name in the claim must occur in a cited abstract. A claim failing a
hard check, or scoring below the threshold, is flagged unsupported, never silently kept."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rag.embed import Embedder
from rag.text import comparable, content_words, format_authors, has_number, names_in, numbers_in, split_sentences
from rag.types import Citation, Claim, Hit, Paper

MARKER = re.compile(r"\s*\[(\d+(?:\s*[,;–-]\s*\d+)*)\]")


def parse_numbers(group: str) -> list[int]:
    numbers: list[int] = []
    for piece in re.split(r"\s*[,;]\s*", group):
        if re.fullmatch(r"\d+\s*[–-]\s*\d+", piece):
            low, high = (int(x) for x in re.split(r"\s*[–-]\s*", piece))
            numbers += list(range(low, high + 1)) if 0 < high - low < 20 else [low, high]
        elif piece.strip().isdigit():
            numbers.append(int(piece))
    return numbers


def parse_claims(answer: str) -> list[Claim]:
    """Answer text -> claims. Markers that open a sentence belong to the sentence before it."""
    sentences = split_sentences(answer)
    claims: list[Claim] = []
    for sentence in sentences:
        lead = re.match(r"^(\s*\[[\d,;\s–-]+\])+", sentence)
        if lead and claims:
            claims[-1].cites += [n for g in MARKER.findall(lead.group(0)) for n in parse_numbers(g)]
            sentence = sentence[lead.end():].strip()
            if not sentence:
                continue
        cites = [n for g in MARKER.findall(sentence) for n in parse_numbers(g)]
        text = MARKER.sub("", sentence).strip()
        claims.append(Claim(text=text, cites=list(dict.fromkeys(cites))))
    for claim in claims:
        claim.cites = list(dict.fromkeys(claim.cites))
    return [c for c in claims if c.text or c.cites]


def strip_invalid(answer: str, valid: set[int]) -> tuple[str, list[int]]:
    """Remove cited numbers that are not sources; return the cleaned text and what was removed."""
    removed: list[int] = []

    def fix(match: re.Match[str]) -> str:
        numbers = parse_numbers(match.group(1))
        keep = [n for n in numbers if n in valid]
        removed.extend(n for n in numbers if n not in valid)
        return f" [{', '.join(map(str, keep))}]" if keep else ""

    return MARKER.sub(fix, answer).strip(), removed


@dataclass
class SupportChecker:
    embedder: Embedder
    threshold: float = 0.5
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embeddings with a bounded per-process cache: answering and checking look at the same
        abstract sentences, and each should be embedded once."""
        known = {t: self._cache[t] for t in set(texts) if t in self._cache}
        todo = [t for t in dict.fromkeys(texts) if t not in known]
        if todo:
            known.update(zip(todo, self.embedder.embed(todo)))
            if len(self._cache) > 20000:  # bounded; several UI sessions may share this cache
                self._cache.clear()
            self._cache.update((t, known[t]) for t in todo)
        return np.vstack([known[t] for t in texts]) if texts else np.zeros((0, 1), dtype=np.float32)

    def best_sentence(self, claim: str, abstract: str) -> tuple[str, float]:
        sentences = split_sentences(abstract) or [abstract]
        vectors = self.embed([claim, *sentences])
        cos = vectors[1:] @ vectors[0]
        words = content_words(claim)
        scores = []
        for sentence, sim in zip(sentences, cos):
            overlap = len(words & content_words(sentence)) / len(words) if words else 0.0
            scores.append(0.6 * max(float(sim), 0.0) + 0.4 * overlap)
        best = int(np.argmax(scores))
        return sentences[best], scores[best]

    def check(self, claim: Claim, sources: dict[int, Paper]) -> Claim:
        cited = [sources[n] for n in claim.cites if n in sources]
        if not cited:
            claim.supported, claim.support, claim.reason = False, 0.0, "no citation"
            return claim
        best_quote, best_score = "", -1.0
        for paper in cited:
            quote, score = self.best_sentence(claim.text, paper.abstract)
            if score > best_score:
                best_quote, best_score = quote, score
        claim.quote, claim.support = best_quote, best_score
        haystack = " ".join(f"{p.title} {p.label} {p.abstract}" for p in cited)
        squashed = comparable(haystack)
        missing = [n for n in numbers_in(claim.text) if not has_number(haystack, n)]
        missing += [n for n in names_in(claim.text) if comparable(n).strip() not in squashed]
        if missing:
            claim.supported, claim.reason = False, f"not in the cited source: {', '.join(sorted(set(missing)))}"
        elif best_score < self.threshold:
            claim.supported, claim.reason = False, f"weak support ({best_score:.2f} < {self.threshold:.2f})"
        else:
            claim.supported, claim.reason = True, ""
        return claim


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
                by_n[n] = Citation(n, hits[n - 1].paper, claim.quote, claim.support, claim.supported or bool(current and current.supported))
            elif claim.supported:
                current.supported = True
    return [by_n[n] for n in sorted(by_n)]


def bibtex_entry(paper: Paper) -> str:
    """A BibTeX entry; a cut author list ends in `and others`, BibTeX's own `et al.`."""
    surname = (paper.authors[0].split()[-1] if paper.authors else "anon").lower()
    surname = re.sub(r"[^a-z]", "", surname) or "anon"
    word = re.sub(r"[^a-z]", "", (paper.display_title.split() or ["paper"])[0].lower()) or "paper"
    key = f"{surname}{paper.year or ''}{word}"
    authors = format_authors(paper.authors, paper.authors_truncated, style="bibtex")
    fields = [("title", paper.title or paper.label), ("author", authors), ("booktitle", paper.venue),
              ("year", str(paper.year or "")), ("url", paper.url)]
    if not paper.title:
        fields.append(("note", "title not in the source list; label derived from the abstract"))
    fields.append(("x-paper-id", paper.id))
    body = ",\n".join(f"  {name} = {{{value.replace('{', '').replace('}', '')}}}" for name, value in fields if value)
    return f"@inproceedings{{{key},\n{body}\n}}"
