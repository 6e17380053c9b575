"""The abstention gate: do these sources address this question, or do they merely mention its
subject? Both answerers pass it before answering, so both abstain the same way.

Rules, in order (the first that decides, decides):
1. nothing retrieved -> "nothing found";
2. a question about a person's life ("When was Albert Einstein born?") -> abstain; an author the
   question names wrote a retrieved paper -> answerable;
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
   currency for a price, a factor for "how fast", a percentage for an accuracy or rate); for a
   does-it-work question about a named X ("How well does SAeUron work?") a result sentence that
   names X (cosine >= `min_similarity`) addresses it; for a numeric question with a unit, a
   sentence stating a number in that unit and sharing half the question's words (cosine >= 0.2)
   does ("How much faster is it?": "2-3x faster").

Rules 1-6 need no embedding, so they run first and most abstentions cost no model call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag.evidence import (
    FINDING,
    MOTIVATION,
    Candidate,
    Scored,
    Vectors,
    overlap,
    sentence_score,
    source_sentences,
    source_text,
)
from rag.question import Kind, Question, key_terms, wanted_unit
from rag.text import (
    asserted,
    contains_term,
    content_words,
    fold,
    introduces,
    plain,
    split_sentences,
    stated_numbers,
    value_numbers,
)
from rag.types import Hit

ABSTAIN_SENTINEL = "INSUFFICIENT_EVIDENCE"
ABSTAIN_TEXT = "The collection does not say: none of the retrieved abstracts answers this question."
NO_MATCH_TEXT = "Nothing found: no paper in the collection matches this question and these filters."


class Bonus:
    """What the gate adds to rag.evidence's sentence score, by what the question asks for."""

    KEY_TERM = 0.15  # the sentence contains a name or number the question names
    VALUE = 0.15  # numeric question: the sentence states a value
    FINDING = 0.1  # does-it-help question: the sentence reports a result ...
    MOTIVATION = -0.1  # ... not the motivation
    INTRODUCES = 0.2  # which-paper / what-is: the sentence introduces or defines the subject
    AUTHOR = 0.2  # the question names an author of this source


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


def words_of(text: str) -> set[str]:
    """Content words as five-letter stems (see `_words`)."""
    return _words(text)


def topic_words(question: Question) -> set[str]:
    """The words of what a list question is about ("Which papers use Shapley values?" -> shapl,
    value): the topic without list wording, filters and authors."""
    return _words(question.topic) - _words("papers paper use uses using study studies about")


def focus_words(question: Question, text: str, exclude: set[str]) -> set[str]:
    """Content words of the question that a sentence should share: not the key names (they are
    checked apart), not filter or author words."""
    return _words(text) - {w for term in exclude for w in _words(term)}


def also_relevant(question: Question, scored: list[Scored], exclude: set[int]) -> list[int]:
    """Sources worth listing beside an answer ("Also relevant"), best first: not already cited,
    with a sentence close to the question (cosine >= 0.35 and >= 0.6 of the best) that shares two
    of its content words (or its only one), so a paper on "sparse attention" is not listed for
    a question on "sparse autoencoders"."""
    best = max((r.cosine for r in scored), default=0.0)
    qwords = focus_words(question, question.rest or question.text, set(question.authors))
    found: dict[int, float] = {}
    for row in scored:
        n = row.source
        if n in exclude or n in found or row.cosine < max(0.35, 0.6 * best):
            continue
        if len(qwords & _words(row.sentence)) >= min(2, len(qwords)):
            found[n] = row.cosine
    return sorted(found, key=lambda n: -found[n])


@dataclass
class _Open:
    """What the rules leave for the closeness check: the key terms and the words to ignore."""

    terms: set[str]
    exclude: set[str]


class Relevance:
    """Sentence-level relevance of sources to a question, shared by the gate and the composer.

    `assess` runs the gate's rules that need no embedding first (names, authors, "introduces
    X"), so most abstentions cost no model call, then embeds only candidate sentences: of each
    source its first sentence and the `per_source` sentences that share most with the question
    (word overlap and the same bonuses as the score; one for a list, which quotes one sentence a
    paper), and for a numeric (does-it-help) question also the best `per_source` of its sentences
    that state a number (report a result). Embedding is the cost of an answer (the model embeds
    5-30 sentences a second on 2 busy cores); sentences sharing nothing with the question rarely
    answer it, and the composer finds the defining and mechanism sentences by their wording, not
    their score."""

    def __init__(self, vectors: Vectors, min_similarity: float = 0.35, per_source: int = 2) -> None:
        self.vectors = vectors
        self.min_similarity = min_similarity
        self.per_source = per_source

    def assess(self, question: Question, text: str, hits: list[Hit]) -> tuple[list[Scored], Gate]:
        """The scored candidate sentences (best first) and the gate's verdict."""
        decided = self._rules(question, text, hits)
        if isinstance(decided, Gate) and not decided.answerable:
            return [], decided
        scored = self.sentences(question, text, hits)
        best = max((r.cosine for r in scored), default=0.0)
        if isinstance(decided, Gate):
            decided.best_similarity = best
            return scored, decided
        return scored, self._close(question, text, hits, scored, decided, best)

    # -- scoring ---------------------------------------------------------------------------

    def _bonus(self, question: Question, sentence: str, terms: set[str], subjects: list[str]) -> float:
        bonus = 0.0
        if terms and any(contains_term(sentence, t) for t in terms):
            bonus += Bonus.KEY_TERM
        if question.kind is Kind.NUMERIC and value_numbers(sentence):
            bonus += Bonus.VALUE
        if question.kind is Kind.FINDING:
            bonus += Bonus.FINDING if FINDING.search(sentence) else 0.0
            bonus += Bonus.MOTIVATION if MOTIVATION.search(sentence) else 0.0
        if subjects and question.kind in (Kind.WHICH_PAPER, Kind.DEFINITION, Kind.MECHANISM):
            if any(introduces(sentence, s) or defines(sentence, s) for s in subjects):
                bonus += Bonus.INTRODUCES
        return bonus

    def candidates(self, question: Question, text: str, hits: list[Hit]) -> list[Candidate]:
        """The sentences worth embedding (see the class)."""
        words = content_words(text)
        terms = key_terms(text)
        subjects = question.subject_names if question.names_subject else []
        by_author = {n for n, hit in enumerate(hits, start=1) if mentions_author(text, hit)}
        keep = 1 if question.kind is Kind.LIST else self.per_source  # a list quotes one sentence a paper
        out: list[Candidate] = []
        for n, hit in enumerate(hits, start=1):
            sentences = source_sentences(hit.paper)
            bonuses = [
                self._bonus(question, s, terms, subjects) + (Bonus.AUTHOR if n in by_author else 0.0) for s in sentences
            ]
            lexical = sorted(range(len(sentences)), key=lambda i: -(overlap(words, sentences[i]) + bonuses[i]))
            chosen = {0, *lexical[:keep]} if sentences else set()
            if question.kind is Kind.NUMERIC:  # answered by a sentence with a number, in figures before words
                numbered = [i for i in lexical if value_numbers(sentences[i])]
                numbered += [i for i in lexical if i not in numbered and stated_numbers(sentences[i])]
                chosen |= set(numbered[:keep])
            elif question.kind is Kind.FINDING:  # and a does-it-help question by a result
                chosen |= set([i for i in lexical if FINDING.search(sentences[i])][:keep])
            out += [Candidate(n, sentences[i], bonuses[i]) for i in sorted(chosen)]
        return out

    def sentences(self, question: Question, text: str, hits: list[Hit]) -> list[Scored]:
        """Candidate sentences scored against the question, best first: rag.evidence's score plus
        the `Bonus` for what the question asks (a value for numeric questions, a finding for
        does-it-help questions, the introducing or defining sentence for which-paper and what-is
        questions, a source by an author the question names)."""
        rows = self.candidates(question, text, hits)
        if not rows:
            return []
        vectors = self.vectors.embed([text] + [row.sentence for row in rows])
        cos = vectors[1:] @ vectors[0]
        words = content_words(text)
        scored = [
            Scored(
                sentence_score(float(sim), overlap(words, row.sentence)) + row.bonus,
                float(sim),
                row.source,
                row.sentence,
            )
            for row, sim in zip(rows, cos)
        ]
        scored.sort(key=lambda row: -row.score)
        return scored

    # -- the rules ---------------------------------------------------------------------------

    def _rules(self, question: Question, text: str, hits: list[Hit]) -> Gate | _Open:
        """Rules 1-6 and the examples-or-quotes part of rule 4: a final Gate, or what is left open."""
        if not hits:
            return Gate(False, "no paper matched", 0.0)
        if question.life:  # even of an author: the collection knows papers, not birthdays
            return Gate(False, "the question asks about a person's life; the collection knows only papers", 0.0)
        if any(mentions_author(text, h) for h in hits):
            return Gate(True, "an author named in the question wrote a retrieved paper", 0.0)
        if question.person:
            return Gate(
                False, "the question asks who did something; the collection knows only its papers' authors", 0.0
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
            return Gate(False, f"the sources never mention {', '.join(missing)}", 0.0)
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
                    0.0,
                    related=mentioning,
                )
            return Gate(True, "", 0.0, focus=focus)
        if question.kind in (Kind.DEFINITION, Kind.MECHANISM) and subjects:
            focus = [
                n
                for n, h in enumerate(hits, start=1)
                if any(defines(source_text(h.paper), s, h.paper.title, h.paper.label) for s in subjects)
            ]
            if not focus:
                return Gate(False, f"no source introduces or defines {subjects[0]}", 0.0, related=mentioning)
            return Gate(True, "", 0.0, focus=focus)
        if terms and not self._holding(hits, terms):
            return Gate(False, f"the sources name {', '.join(sorted(terms))} only in examples or quotes", 0.0)
        return _Open(terms, exclude)

    @staticmethod
    def _holding(hits: list[Hit], terms: set[str]) -> set[int]:
        """Sources that contain every key term outside examples and quotes."""
        asserting = {
            n: f"{h.paper.title} {h.paper.label} {asserted(source_text(h.paper))} {' '.join(h.paper.authors)} "
            f"{h.paper.track} {h.paper.venue}"
            for n, h in enumerate(hits, start=1)
        }
        return {n for n, c in asserting.items() if all(contains_term(c, t) for t in terms)}

    def _close(
        self, question: Question, text: str, hits: list[Hit], scored: list[Scored], open_: _Open, best: float
    ) -> Gate:
        """Rule 7: some sentence, in a source holding all the key terms, addresses the question."""
        terms = open_.terms
        holding = self._holding(hits, terms) if terms else set(range(1, len(hits) + 1))
        qwords = focus_words(question, text, open_.exclude | terms)
        good = 0.0
        unit = wanted_unit(question.text) if question.kind is Kind.NUMERIC else None
        attribute = _words(question.attribute)
        escape = 0.5 if terms else 0.45  # named things: the sentence should share the question's words
        for row in scored:
            sim, sentence = row.cosine, row.sentence
            if row.source not in holding or sim < 0.2:
                continue
            if question.kind is Kind.NUMERIC and (not stated_numbers(sentence) or (unit and not unit.search(sentence))):
                continue
            words = _words(sentence)
            if attribute and not attribute & words:
                continue  # "the recommended dose of the Moderna vaccine": a sentence that never says dose
            shared = len(qwords & words) / len(qwords) if qwords else 1.0
            close = sim >= self.min_similarity and (shared >= 0.25 or sim >= escape)
            # "How well does X work?": a result sentence about the named X answers it
            result = (
                question.kind is Kind.FINDING
                and bool(terms)
                and sim >= self.min_similarity
                and bool(FINDING.search(sentence))
                and not MOTIVATION.search(sentence)
                and any(contains_term(sentence, t) for t in terms)
            )
            # a number in the unit asked for, next to the word asked about ("How much faster is it?": "2-3x faster")
            measured = question.kind is Kind.NUMERIC and unit is not None and shared >= 0.5 and bool(qwords)
            if close or result or measured or (shared >= 0.5 and len(qwords) >= 2):  # or most of the question's words
                good = max(good, sim)
        if not good:
            why = (
                "no sentence that states a number is close to the question"
                if question.kind is Kind.NUMERIC
                else "no sentence is close to the question"
            )
            return Gate(False, f"{why} (best {best:.2f})", best)
        if question.kind is Kind.WHICH_PAPER and terms:
            # "Which paper trains on LibriSpeech?": every source with a sentence close to the
            # question that names the terms outside examples and quotes answers it (the composer
            # names up to three), not only the best-ranked one
            naming = {
                r.source
                for r in scored
                if r.source in holding
                and r.cosine >= 0.2
                and all(contains_term(asserted(r.sentence), t) for t in terms)
            }
            return Gate(True, "", best, focus=sorted(naming))
        return Gate(True, "", best)
