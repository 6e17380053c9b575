"""The abstention gate: do these sources address this question, or do they merely mention its
subject? Both answerers pass it before answering, so both abstain the same way.

Rules, in order (the first that decides, decides):
1. nothing retrieved -> "nothing found";
2. an author the question names wrote a retrieved paper -> answerable;
3. a "who …" question that is not about authorship ("Who painted the Mona Lisa?") -> abstain:
   the only people the collection knows are its authors;
4. a key name or number of the question (coined or proper names, numbers; not filter values or
   author names) that no source contains, or that the sources name only in examples or quotes
   ("(e.g., "what club does Lionel Messi play for?")") -> abstain;
5. "which paper proposes/introduces X" -> some source must introduce X (rag.text.introduces:
   "we propose X", "X, a new …", "called X", a title opening with X); else abstain and list the
   sources that use X as "Related, not answering";
6. "what is X" / "how does X work" for a named X -> some source must introduce X, define it
   ("X is …", "X, a …"), or be the paper named X; else abstain, listing the sources that use X;
7. some sentence, in a source that holds all the key names, must address the question: close to
   it (cosine >= `min_similarity`) and sharing a quarter of its content words (or a cosine of
   0.45; 0.5 when the question names things), or sharing half of them (at least two) at a cosine
   of 0.2; asked for "the <attribute> of X", it must say the attribute; for a numeric question that
   sentence must state a number, with the unit the question asks for (a time for "how long", a
   currency for a price, a factor for "how fast", a percentage for an accuracy or rate).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag.cite import SupportChecker, source_text
from rag.question import Kind, Question, key_terms, wanted_unit
from rag.text import (
    asserted,
    contains_term,
    content_words,
    fold,
    introduces,
    plain,
    split_sentences,
    value_numbers,
)
from rag.types import Hit

# (score, cosine, source number, sentence)
Scored = tuple[float, float, int, str]

ABSTAIN_SENTINEL = "INSUFFICIENT_EVIDENCE"
ABSTAIN_TEXT = "The collection does not say: none of the retrieved abstracts answers this question."
NO_MATCH_TEXT = "Nothing found: no paper in the collection matches this question and these filters."

_FINDING_WORDS = re.compile(
    r"\b(?:we\s+(?:find|found|show|observe|demonstrate|report)|results?\s+(?:show|indicate|suggest|demonstrate)|"
    r"experiments?\s+(?:show|demonstrate|reveal)|outperform\w*|improv\w*|fail\w*|does\s+not|do\s+not|no\s+(?:significant|"
    r"discernible)|little\s+(?:discernible\s+)?difference|worse|better|surpass\w*|reduc\w*|increas\w*|not\s+sufficient|"
    r"contrary|comparable)\b",
    re.I,
)
_MOTIVATION = re.compile(
    r"^(?:however|while|although|despite|recent|existing|prior|traditional|current|many|most)\b|"
    r"\bremains?\s+(?:a|an)?\s*(?:challenge|open|unclear)|\bhave\s+(?:shown|been)\b",
    re.I,
)


@dataclass
class Gate:
    """Why a question can or cannot be answered from these sources."""

    answerable: bool
    reason: str
    best_similarity: float
    focus: list[int] = field(default_factory=list)  # source numbers that answer (e.g. introduce X)
    related: list[int] = field(default_factory=list)  # sources that mention the subject but do not answer


def mentions_author(question: str, hit: Hit) -> bool:
    """The question names an author of this paper (full name, or a surname of 4+ letters)."""
    folded = fold(question)
    for name in hit.paper.authors:
        parts = fold(name).split()
        surname = parts[-1] if parts else ""
        if (parts and fold(name) in folded) or (len(surname) >= 4 and re.search(rf"\b{re.escape(surname)}\b", folded)):
            return True
    return False


def defines(abstract: str, term: str, title: str = "", label: str = "") -> bool:
    """The source introduces `term`, is the paper named `term`, or has a sentence defining it
    ("X is a …", "X (…) are …", "X refers to …", "X, a …")."""
    if introduces(abstract, term, title) or fold(label) == fold(term):
        return True
    pattern = re.compile(
        rf"(?:^|[.;:]\s)(?:the\s+)?{re.escape(term)}s?\s*(?:\([^)]{{0,60}}\)\s*)?"
        rf"(?:is|are|refers?\s+to|denotes?|describes?|,\s+(?:a|an|the))\s",
        re.I,
    )
    return any(pattern.search(plain(s)) for s in split_sentences(abstract))


def _words(text: str) -> set[str]:
    """Content words as five-letter stems ("train" meets "training"), hyphenated compounds also
    by part ("capture-the-flag" meets "flag")."""
    return {w[:5] for w in content_words(text) | content_words(text.replace("-", " "))}


def focus_words(question: Question, text: str, exclude: set[str]) -> set[str]:
    """Content words of the question that a sentence should share: not the key names (they are
    checked apart), not filter or author words."""
    return _words(text) - {w for term in exclude for w in _words(term)}


def also_relevant(question: Question, scored: list[Scored], exclude: set[int]) -> list[int]:
    """Sources worth listing beside an answer ("Also relevant"), best first: not already cited,
    with a sentence close to the question (cosine >= 0.35 and >= 0.6 of the best) that shares two
    of its content words (or its only one), so a paper on "sparse attention" is not listed for
    a question on "sparse autoencoders"."""
    best = scored[0][1] if scored else 0.0
    qwords = focus_words(question, question.rest or question.text, set(question.authors))
    found: dict[int, float] = {}
    for _, sim, n, sentence in scored:
        if n in exclude or n in found or sim < max(0.35, 0.6 * best):
            continue
        if len(qwords & _words(sentence)) >= min(2, len(qwords)):
            found[n] = sim
    return sorted(found, key=lambda n: -found[n])


class Relevance:
    """Sentence-level relevance of sources to a question, shared by the gate and the composer."""

    def __init__(self, checker: SupportChecker, min_similarity: float = 0.35) -> None:
        self.checker = checker
        self.min_similarity = min_similarity

    def sentences(self, question: Question, text: str, hits: list[Hit]) -> list[Scored]:
        """(score, cosine, source number, sentence) for every sentence of every source, best first.
        The score blends cosine and word overlap with bonuses by kind: a sentence with a value
        number for numeric questions, a finding for does-it-help questions, the introducing or
        defining sentence for which-paper and what-is questions."""
        rows = [(n, s) for n, hit in enumerate(hits, start=1) for s in split_sentences(source_text(hit.paper))]
        if not rows:
            return []
        vectors = self.checker.embed([text] + [s for _, s in rows])
        by_author = {n for n, hit in enumerate(hits, start=1) if mentions_author(text, hit)}
        cos = vectors[1:] @ vectors[0]
        words = content_words(text)
        terms = key_terms(text)
        subjects = question.subject_names if question.names_subject else []
        scored = []
        for (n, sentence), sim in zip(rows, cos):
            overlap = len(words & content_words(sentence)) / len(words) if words else 0.0
            score = 0.55 * float(sim) + 0.3 * overlap
            if terms and any(contains_term(sentence, t) for t in terms):
                score += 0.15
            if question.kind is Kind.NUMERIC and value_numbers(sentence):
                score += 0.15
            if question.kind is Kind.FINDING:
                score += 0.1 if _FINDING_WORDS.search(sentence) else 0.0
                score -= 0.1 if _MOTIVATION.search(sentence) else 0.0
            if subjects and question.kind in (Kind.WHICH_PAPER, Kind.DEFINITION, Kind.MECHANISM):
                if any(introduces(sentence, s) or defines(sentence, s) for s in subjects):
                    score += 0.2
            if n in by_author:
                score += 0.2
            scored.append((score, float(sim), n, sentence))
        scored.sort(key=lambda row: -row[0])
        return scored

    def gate(self, question: Question, text: str, hits: list[Hit], scored: list[Scored]) -> Gate:
        if not hits:
            return Gate(False, "no paper matched", 0.0)
        best = max((sim for _, sim, _, _ in scored), default=0.0)
        if any(mentions_author(text, h) for h in hits):
            return Gate(True, "an author named in the question wrote a retrieved paper", best)
        if question.person:
            return Gate(
                False, "the question asks who did something; the collection knows only its papers' authors", best
            )
        exclude = {str(v) for v in question.filters.public().values()} | set(question.authors)
        asked = (question.rest or question.text) + (
            text[len(question.text) :] if text.startswith(question.text) else ""
        )
        terms = key_terms(asked, exclude)
        corpora = {
            n: f"{h.paper.title} {h.paper.label} {source_text(h.paper)} {' '.join(h.paper.authors)} "
            f"{h.paper.track} {h.paper.venue}"
            for n, h in enumerate(hits, start=1)
        }
        missing = sorted(t for t in terms if not any(contains_term(c, t) for c in corpora.values()))
        if missing:
            return Gate(False, f"the sources never mention {', '.join(missing)}", best)
        subjects = question.subject_names if question.names_subject else []
        mentioning = [n for n, c in corpora.items() if subjects and any(contains_term(c, s) for s in subjects)]
        if question.kind is Kind.WHICH_PAPER and question.introduce and subjects:
            focus = [
                n for n, h in enumerate(hits, start=1) if question.introduced_in(source_text(h.paper), h.paper.title)
            ]
            if not focus:
                return Gate(
                    False,
                    f"no source introduces {subjects[0]}; {len(mentioning)} only mention it",
                    best,
                    related=mentioning,
                )
            return Gate(True, "", best, focus=focus)
        if question.kind in (Kind.DEFINITION, Kind.MECHANISM) and subjects:
            focus = [
                n
                for n, h in enumerate(hits, start=1)
                if any(defines(source_text(h.paper), s, h.paper.title, h.paper.label) for s in subjects)
            ]
            if not focus:
                return Gate(False, f"no source introduces or defines {subjects[0]}", best, related=mentioning)
            return Gate(True, "", best, focus=focus)
        asserting = {
            n: f"{h.paper.title} {h.paper.label} {asserted(source_text(h.paper))} {' '.join(h.paper.authors)} "
            f"{h.paper.track} {h.paper.venue}"
            for n, h in enumerate(hits, start=1)
        }
        holding = {n for n, c in asserting.items() if all(contains_term(c, t) for t in terms)}
        if terms and not holding:
            return Gate(False, f"the sources name {', '.join(sorted(terms))} only in examples or quotes", best)
        qwords = focus_words(question, text, exclude | terms)
        good = 0.0
        unit = wanted_unit(question.text) if question.kind is Kind.NUMERIC else None
        attribute = _words(question.attribute)
        escape = 0.5 if terms else 0.45  # named things: the sentence should share the question's words
        for _, sim, n, sentence in scored:
            if n not in holding or sim < 0.2:
                continue
            if question.kind is Kind.NUMERIC and (not value_numbers(sentence) or (unit and not unit.search(sentence))):
                continue
            words = _words(sentence)
            if attribute and not attribute & words:
                continue  # "the recommended dose of the Moderna vaccine": a sentence that never says dose
            overlap = len(qwords & words) / len(qwords) if qwords else 1.0
            close = sim >= self.min_similarity and (overlap >= 0.25 or sim >= escape)
            if close or (overlap >= 0.5 and len(qwords) >= 2):  # or it shares most of the question's words
                good = max(good, sim)
        if not good:
            why = (
                "no sentence that states a number is close to the question"
                if question.kind is Kind.NUMERIC
                else "no sentence is close to the question"
            )
            return Gate(False, f"{why} (best {best:.2f})", best)
        return Gate(True, "", best)
