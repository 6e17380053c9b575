"""What a question names, read once per question: the catalogue filters it names (venue, year,
decision, track), the authors it names, the filters the collection cannot apply, what is left of
it as a topic, and whether it refers back to an earlier turn.

Filters are recognised against the values the catalogue holds (`Catalog.facet_values`), so
"ICML 2025" becomes a filter only in a collection with ICML 2025 papers, and a year no paper has
stays an ordinary word. What the question *asks* (a count, a list, a paper's authors, or the
abstracts' content) is not decided here but by `rag.answer.route`'s classifier.

Pure functions of the question and the catalogue's values; no retrieval here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

from rag.answer.cues import BACK_REFERENCE, EXCLUDED, WIDENED, Cue
from rag.text import STOPWORDS, collapse, fold
from rag.types import Filters

if TYPE_CHECKING:
    from rag.store import Catalog

# Words that make a question about the catalogue rather than a topic: left out of the topic.
CATALOGUE_WORDS = frozenset(
    "which what who whom whose where when how are is was were there do does did the a an of in on at by for from to "
    "and or all any list show me give find tell papers paper works work studies study articles collection catalogue "
    "catalog index accepted accept total number count many much these those some with about have has had "
    "included include includes contain contains listed get got published publish presented appear appeared "
    "wrote write written author authors authored co-authored coauthored an anything here conference track area "
    "decision oral orals spotlight spotlights poster posters position main tracks areas category "
    "venue year years session sessions it its their they them this that receive received "
    # the words of a count's scope, not of a topic ("ICLR 2025 acceptances, whatever the decision, across
    # both conferences in total", "orals vs posters, separately")
    "across whatever regardless irrespective acceptance acceptances accepts overall total together "
    "altogether entire entirely both conferences vs versus separately respectively apiece".split()
)


@dataclass
class Query:
    text: str
    filters: Filters = field(default_factory=Filters)
    authors: list[str] = field(default_factory=list)  # full author names the question names
    # filters the question names that the collection cannot apply: (the words, why), e.g.
    # ("orals", "the collection records no decisions"); answers say so instead of ignoring them
    unmet: list[tuple[str, str]] = field(default_factory=list)
    spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # where each filter was named
    topic: str = ""  # the question without the words that named filters, authors and the catalogue
    # the topic's alternatives when it names several ("about benchmarks or evaluation": two), else []
    alternatives: list[str] = field(default_factory=list)
    # the values of a facet the question names as one list ("orals or spotlights": decision -> [Oral,
    # Spotlight]), whose union the filters hold: a count says how many of each
    listed: dict[str, list[str]] = field(default_factory=dict)

    @property
    def unmet_note(self) -> str:
        """ "not restricted to orals: the collection records no decisions" ("" when none)."""
        return "; ".join(f"not restricted to {words}: {why}" for words, why in self.unmet)

    @property
    def refers_back(self) -> bool:
        """It points at an earlier answer ("it", "its authors", "that paper") or leaves its
        subject out: no topic word of its own beyond one ("How much better?", "And on COCO?")."""
        return bool(BACK_REFERENCE.pattern.search(self.text)) or len(self.topic.split()) <= 1

    @property
    def named_filters(self) -> Filters:
        """The filters the question names: its venue, year, track and decision, and its author
        when it names exactly one (two names are not one author's papers)."""
        return replace(self.filters, author=self.authors[0] if len(self.authors) == 1 else self.filters.author)

    def searched(self, applied: Filters) -> str:
        """The question without the words that named a filter the search applies (`applied`, the
        filters in force): "Which papers by Sergey Levine are about diffusion?" -> "Which papers by
        are about diffusion?". Every candidate already holds those words (the keyword index reads
        authors, venue, year, track and decision), so among them the words only favour the
        shortest texts: with the author in the query, the author's title-only papers led a
        question about diffusion whatever their topic. Words stay when their filter is not the one
        applied (two authors named, none of them a filter; a caller's venue in place of the
        question's) or cannot be applied at all."""
        return _without(self.text, self._applied_spans(applied)) or self.text

    @property
    def has_topic(self) -> bool:
        """The question asks about something beyond its filters and catalogue wording: "Which
        papers by Sergey Levine are about diffusion?", not "Which ICLR papers have Sara Hooker as
        an author?"."""
        return any(w.lower() not in STOPWORDS for w in self.topic.split())

    def applied_words(self, applied: Filters) -> str:
        """The words `searched` leaves out ("Sergey Levine"): what every candidate of a search under
        `applied` holds, whatever its title and abstract say."""
        return " ".join(self.text[start:end] for start, end in sorted(self._applied_spans(applied)))

    def _applied_spans(self, applied: Filters) -> list[tuple[int, int]]:
        """The spans of the filters `applied` holds as the question named them, and every clause that
        leaves a value out or adds one back ("not counting position papers"): its words name no
        paper's content, whatever filters are applied."""
        own = self.named_filters
        return [
            span
            for kind, spans in self.spans.items()
            if kind == "clause"
            or (getattr(own, kind, None) is not None and getattr(applied, kind, None) == getattr(own, kind))
            for span in spans
        ]

    def placeholders(self) -> str:
        """The question with each named filter or author replaced by its kind ("papers by <author>
        at <venue> <year>"): what the router reads, so that it learns the shape, not the names."""
        marks = sorted((span, kind) for kind, spans in self.spans.items() if kind != "clause" for span in spans)
        out, at = [], 0
        for (start, end), kind in marks:
            if start < at:
                continue
            out += [self.text[at:start], f" <{kind}> "]
            at = end
        out.append(self.text[at:])
        return collapse("".join(out))


def _word(pattern: str) -> str:
    """`pattern` as a whole word, or after "non-" ("non-oral"), which `_clause` reads as an exclusion."""
    return rf"(?:(?<=\bnon-)|(?<![\w-])){pattern}(?![\w-])"


_VALUE = "<value>"  # what the clause cues (rag.answer.cues.EXCLUDED, WIDENED) read in place of a value


def _clause(question: str, span: tuple[int, int]) -> tuple[str, tuple[int, int]] | None:
    """How a clause around the facet value at `span` reads it: "excluded" ("not counting position
    papers", "non-oral") or "widened" ("counting the position track too"), with the clause's span
    (its cue words and the value); None when the value is an ordinary filter. An exclusion wins when
    both read it ("not including position papers")."""
    start, end = span
    before, after = question[:start], question[end : end + 40]  # from the start: "Didn't an ICLR paper …"
    noun = re.search(r"\s+(?:papers?|presentations?|track)$", question[start:end], re.I)  # "non-poster papers"
    probe = before + _VALUE + (noun.group(0) if noun else "") + after
    cut = len(probe) - len(after)

    def at(i: int) -> int:  # a position in the probe, as a position in the question
        return start - len(before) + i if i <= len(before) else end + max(i - cut, 0)

    readings: tuple[tuple[str, tuple[Cue, ...]], ...] = (("excluded", EXCLUDED), ("widened", WIDENED))
    for reading, cues in readings:
        for cue in cues:
            m = cue.pattern.search(probe)
            if m and m.start() <= len(before) and m.end() >= len(before) + len(_VALUE):
                return reading, (at(m.start()), at(m.end()))
    return None


def _after_non(question: str, span: tuple[int, int]) -> bool:
    return question[max(span[0] - 4, 0) : span[0]].lower() == "non-"


def _topic_word(question: str, span: tuple[int, int]) -> bool:
    """A value's word after "non-" that no clause reads ("speech recognition for non-oral languages"):
    a topic's word, neither a value nor one the collection lacks."""
    return _after_non(question, span) and _clause(question, span) is None


class Reading(NamedTuple):
    """What `recognise_filters` reads: the filters, the spans that named each kind (and the clauses,
    `spans["clause"]`), and the values each facet was named with as one list (`Query.listed`)."""

    filters: Filters
    spans: dict[str, list[tuple[int, int]]]
    listed: dict[str, list[str]]


def recognise_filters(question: str, facets: dict[str, list[str]]) -> Reading:
    """Filters named in the question, and the character spans that named each kind.

    venue: a venue value as a word ("ICLR"); year: a year value as a word ("2025"), or both in one
    ("ICLR'25", "ICLR-2025", "ICML25": the two-digit year when one year of the collection ends
    so); decision: the word of a decision value, singular or plural ("orals" for "Accept (Oral)");
    track: "position paper(s)"/"position track"/"position orals", "main track", or a part of a
    track value next to the word area/track/category ("the Causality area", "Robustness-track").
    A facet named with several values ("spotlights or orals") is their union (`_filters_of`). A value inside a
    clause that leaves it out ("not counting position papers", "non-oral") is excluded
    (`Filters.excluded`); one a clause adds back ("counting the position track too") leaves its facet
    unfiltered. Those clauses' spans are `spans["clause"]`."""
    named: list[tuple[tuple[int, int], str, str]] = []  # (span, facet, value), as the question names them

    def note(kind: str, value: str, match: re.Match[str]) -> None:
        named.append((match.span(), kind, value))

    for venue in facets.get("venue", []):
        for m in re.finditer(_word(re.escape(venue)), question, re.I):
            note("venue", venue, m)
    for year in facets.get("year", []):
        for m in re.finditer(_word(re.escape(year)), question):
            note("year", year, m)
    for venue in facets.get("venue", []):  # "ICLR'25", "ICLR-2025", "ICML25": a venue and its year in one word
        for m in re.finditer(rf"(?<![\w-]){re.escape(venue)}['’-]?(\d{{4}}|\d{{2}})(?![\w-])", question, re.I):
            years = [
                y
                for y in facets.get("year", [])
                if y == m.group(1) or (len(m.group(1)) == 2 and y.endswith(m.group(1)))
            ]
            if len(years) == 1:
                note("venue", venue, m)
                note("year", years[0], m)
    for decision in facets.get("decision", []):
        word = _decision_word(decision)
        for m in re.finditer(_word(rf"{re.escape(word)}s?(?:\s+papers?|\s+presentations?)?"), question, re.I):
            note("decision", word, m)
    tracks = facets.get("track", [])
    folded_tracks = [fold(t) for t in tracks]
    if any("position" in t for t in folded_tracks):
        for m in _POSITION_WORD.finditer(question):
            note("track", "position", m)
    if any(t.startswith("main") for t in folded_tracks):
        for m in re.finditer(_word(r"main[- ](?:track|conference)(?:\s+papers?)?"), question, re.I):
            note("track", "main", m)
    parts = sorted({p.strip() for t in tracks for p in t.split("·") if len(p.strip()) >= 4}, key=len, reverse=True)
    for part in parts:
        if fold(part) in ("position", "main"):
            continue
        pattern = (
            rf"(?:(?<![\w-]){re.escape(part)}[- ](?:area|track|category|subarea|session)s?)|"
            rf"(?:(?:area|track|category|subarea|session)\s+(?:of\s+|on\s+)?{_word(re.escape(part))})|"
            rf"(?:\bthe\s+{re.escape(part)}\s+(?:area|track))"
        )
        for m in re.finditer(pattern, question, re.I):
            note("track", part, m)
    return _filters_of(question, sorted(named), facets)


def _filters_of(question: str, named: list[tuple[tuple[int, int], str, str]], facets: dict[str, list[str]]) -> Reading:
    """The filters of the values a question names, in the order it names them. A value a clause
    leaves out is excluded, and so is one joined to it ("excluding orals and spotlights", "excluding
    ICLR and position papers"). A value a clause adds back joins the facet's other values
    ("spotlights plus orals"), or leaves the facet
    unfiltered when the question names no other ("ICML 2025 orals, counting the position track
    too": the orals of every track). Several values of one venue, year or decision named as one list
    ("spotlights or orals") are that facet's union: every other value of the facet is excluded; named
    apart ("Which ICLR papers build on ICML work?"), or several tracks (a track value holds many
    areas), they are no filter."""
    spans: dict[str, list[tuple[int, int]]] = {"clause": []}
    kept: dict[str, dict[str, None]] = {}
    excluded: dict[tuple[str, str], None] = {}
    widened: dict[str, dict[str, None]] = {}
    listed: dict[str, bool] = {}  # whether the facet's kept values form one list ("orals or spotlights")
    last: tuple[int, str] | None = None  # the end and reading of the last value a clause read
    ends: dict[str, int] = {}  # where each facet's last kept value ends
    for span, kind, value in named:
        clause = _clause(question, span)
        if clause is None and _after_non(question, span):
            continue  # a topic's word (`_topic_word`)
        spans.setdefault(kind, []).append(span)
        if clause is None and last and _JOINED.fullmatch(question[last[0] : span[0]]):
            clause = (last[1], (last[0], span[1]))  # "excluding ICLR and position papers"
        if clause is None:
            if kind in ends and value not in kept.get(kind, {}):
                listed[kind] = listed.get(kind, True) and bool(_JOINED.fullmatch(question[ends[kind] : span[0]]))
            kept.setdefault(kind, {})[value] = None
            ends[kind] = span[1]
            continue
        spans["clause"].append(clause[1])
        last = (span[1], clause[0])
        if clause[0] == "excluded":
            excluded[(kind, value)] = None
        else:
            widened.setdefault(kind, {})[value] = None
    one: dict[str, str] = {}
    unions: dict[str, list[str]] = {}
    for kind, values in kept.items():
        values = {**values, **widened.get(kind, {})}
        if len(values) == 1:
            one[kind] = next(iter(values))
        elif kind != "track" and listed.get(kind, True):
            unions[kind] = list(values)
            words = {fold(v) for v in values}
            for other in facets.get(kind, []):
                word = _decision_word(other) if kind == "decision" else other
                if fold(word) not in words:
                    excluded[(kind, word)] = None
    filters = Filters(
        venue=one.get("venue"),
        year=int(one["year"]) if "year" in one else None,
        track=one.get("track"),
        decision=one.get("decision"),
        excluded=tuple(pair for pair in excluded if one.get(pair[0]) != pair[1]),
    )
    return Reading(filters, {k: v for k, v in spans.items() if v}, unions)


# what joins a value to the one before it in a list ("orals and spotlights", "ICLR, ICML", "orals vs
# posters", "orals and how many posters"); not a space
# alone ("non-position orals": the orals are kept)
_JOINED = re.compile(
    r"\s*(?:,|/|&|\band(?:\s+how\s+many)?\b|\bor\b|\bnor\b|\bplus\b|\bvs\.?|\bversus\b)\s*(?:(?:the|any|a|an|even)\s+)?",
    re.I,
)


def _decision_word(decision: str) -> str:
    """The word users write for a decision value: "Oral" for "Accept (Oral)"."""
    inner = re.search(r"\((\w+)\)", decision)
    return inner.group(1) if inner else decision.split()[-1]


_DECISION_WORD = re.compile(_word(r"(oral|spotlight|poster)s?(?:\s+papers?|\s+presentations?)?"), re.I)
# "position papers", "the position track", "position orals", "non-position": never the word alone
# ("remove position bias", "a relevance score that ignores position")
_POSITION_WORD = re.compile(
    _word(
        r"position(?:[- ]track(?:\s+papers?)?|\s+papers?|(?=\s+(?:orals?|spotlights?|posters?)\b)|(?<=non-position))"
    ),
    re.I,
)


def unmet_filters(question: str, facets: dict[str, list[str]]) -> list[tuple[str, str, tuple[int, int]]]:
    """Decision words ("orals") and "position papers" in a question that the collection cannot
    filter by, because it records no decisions (or none of that kind) or no position track, with
    the reason. A collection of abstracts without decisions must say it cannot tell orals apart,
    not list other papers as if they were orals."""
    out: list[tuple[str, str, tuple[int, int]]] = []
    decisions = facets.get("decision", [])
    for m in _DECISION_WORD.finditer(question):
        if _topic_word(question, m.span()):
            continue
        word = m.group(1).lower()
        if not decisions:
            out.append((m.group(0), "the collection records no decisions (oral, spotlight, poster)", m.span()))
        elif not any(word in fold(d) for d in decisions):
            out.append((m.group(0), f"the collection records no {word} decisions", m.span()))
    position = next((m for m in _POSITION_WORD.finditer(question) if not _topic_word(question, m.span())), None)
    if position and not any("position" in fold(t) for t in facets.get("track", [])):
        out.append((position.group(0), "the collection records no position track", position.span()))
    return out


def topic_of(text: str) -> str:
    """The content of a question once filter, author and catalogue wording is gone ("" if none)."""
    return " ".join(w for w in re.findall(r"[\w][\w'-]*", text) if w.lower() not in CATALOGUE_WORDS)


def alternatives_of(text: str) -> list[str]:
    """The topics a question names as alternatives, split at "or" ("papers about benchmarks or
    evaluation": "benchmarks", "evaluation"); [] when it names one. A count reads them as either:
    read as one topic, "Percy Liang's papers about benchmarks or evaluation" counted only the
    papers mentioning both."""
    text = re.sub(r"\beither\b", " ", text, flags=re.I)
    parts = [topic for topic in (topic_of(part) for part in re.split(r"\bor\b", text, flags=re.I)) if topic]
    return parts if len(parts) > 1 else []


def read(question: str, catalog: Catalog | None = None) -> Query:
    """Read a question once: filters, authors, unmet filters, topic."""
    text = collapse(question)
    if catalog is None:
        return Query(text=text, topic=topic_of(text), alternatives=alternatives_of(text))
    facets = {f: catalog.facet_values(f) for f in ("venue", "year", "track", "decision")}
    filters, spans, listed = recognise_filters(text, facets)
    authors = catalog.authors_named_in(text)
    for name in authors:
        m = re.search(re.escape(name).replace(r"\.", r"\.?").replace(r"\ ", r"\s+") + _POSSESSIVE, text, re.I)
        if m:
            spans.setdefault("author", []).append(m.span())
    unmet = unmet_filters(text, facets)  # "not orals" is as unanswerable as "orals" without decisions
    for _, _, span in unmet:
        spans.setdefault("unmet", []).append(span)
    rest = _without(text, [s for found in spans.values() for s in found])
    return Query(
        text=text,
        filters=filters,
        authors=authors,
        unmet=list(dict.fromkeys((words, why) for words, why, _ in unmet)),
        spans=spans,
        topic=topic_of(rest),
        alternatives=alternatives_of(rest),
        listed=listed,
    )


_POSSESSIVE = r"(?:['’]s\b|(?<=s)['’](?!\w))?"  # "Aaron Roth's papers": the name's span takes its "'s"


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with the characters of `spans` left out (spans may overlap: "ICML 2025" named a venue
    and a year)."""
    dropped = set().union(*(range(start, end) for start, end in spans)) if spans else set()
    return collapse("".join(" " if i in dropped else c for i, c in enumerate(text)))
