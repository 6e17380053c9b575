"""What a question asks: its kind, its subject, and the catalogue filters it names.

The kind decides how an answer is composed (rag.compose, rag.catalog_answers) and what the gate
demands of the sources (rag.gate). Detection is by rules on the wording, documented per kind on
`Kind`; a question that fits no rule is `general`. Filters are recognised against the values the
catalogue actually holds (`Catalog.facet_values`), so "ICML 2025" becomes a filter only in a
collection that has ICML 2025 papers, and a year no paper has stays an ordinary word.

Pure functions of the question and the catalogue's facet values; no retrieval here."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from rag.catalog import Filters
from rag.text import (
    COMMON_ACRONYMS,
    NAME_WORD,
    NUMBER_WORDS,
    collapse,
    content_words,
    fold,
    introduces,
    is_coined,
    names_in,
    numbers_in,
)

if TYPE_CHECKING:
    from rag.catalog import Catalog


class Kind(StrEnum):
    """Kinds of question. Catalogue kinds are answered from catalogue fields, the others from
    quoted abstract sentences."""

    WHICH_PAPER = "which-paper"  # "Which paper proposed X?", "Who introduced X?", "Which paper studies …?"
    LIST = "list"  # "Which papers use X?", "papers on X", "Show me the orals about X"
    NUMERIC = "numeric"  # "How many …", "How much does X improve …", "What accuracy …"
    DEFINITION = "what-is"  # "What is X?", "What does X do?", "Tell me about X"
    MECHANISM = "how-it-works"  # "How does X work?"
    FINDING = "finding"  # "Does X help …?", "Is X better than Y?", "Compare X and Y"
    GENERAL = "general"
    COUNT = "count"  # "How many ICML 2025 papers are there?"
    AUTHORS_OF = "authors-of"  # "Who wrote the paper on X?", "Who are its authors?"
    BY_AUTHOR = "by-author"  # "Which papers by <author> …?", "What did <author> propose?"
    FIELD_OF = "field-of"  # "What track is X in?", "Is X an oral?"
    CATALOGUE_LIST = "catalogue-list"  # "Which position papers are there?"

    @property
    def catalogue(self) -> bool:
        return self in (Kind.COUNT, Kind.AUTHORS_OF, Kind.BY_AUTHOR, Kind.FIELD_OF, Kind.CATALOGUE_LIST)


@dataclass
class Question:
    text: str
    kind: Kind = Kind.GENERAL
    subject: str = ""  # what the question is about ("NUCFL", "dropout", "sparse autoencoders")
    introduce: bool = False  # asks which paper introduces/proposes the subject
    filters: Filters = field(default_factory=Filters)
    authors: list[str] = field(default_factory=list)  # full author names the question names
    field: str = ""  # for field-of: authors | track | venue | decision | year
    topic: str = ""  # the question without filter and list wording: what to retrieve
    rest: str = ""  # the question without the words that named filters and authors
    person: bool = False  # asks "who …" about something other than authorship
    life: bool = False  # asks about a person's life ("When was Albert Einstein born?")
    pronoun: bool = False  # refers back ("it", "its", "this paper", "they") and names no paper
    described: bool = False  # describes a paper ("the paper on …") rather than naming a thing
    attribute: str = ""  # what is asked of the subject in "the <attribute> of <subject>" ("recommended dose")
    # Filters the question names that the collection cannot apply: (the words used, why), e.g.
    # ("orals", "the collection records no decisions"). Answers say so instead of ignoring them.
    unmet: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    @property
    def unmet_note(self) -> str:
        """ "not restricted to orals: the collection records no decisions" ("" when none)."""
        return "; ".join(f"not restricted to {words}: {why}" for words, why in self.unmet)

    @property
    def subject_names(self) -> list[str]:
        """Spellings of the subject to look for: the phrase, and without a generic head noun
        ("the Adam optimizer" -> "Adam optimizer", "Adam")."""
        subject = re.sub(r"^(?:the|a|an)\s+", "", self.subject.strip(), flags=re.I)
        if not subject:
            return []
        out = [subject]
        bare = re.sub(rf"\s+(?:{_GENERIC_HEADS})$", "", subject, flags=re.I)
        if bare and bare != subject:
            out.append(bare)
        return out

    def introduced_in(self, abstract: str, title: str = "") -> bool:
        """Does this paper introduce the subject? The full phrase, or the bare name; when the
        dropped head noun says what kind of thing the name is (optimizer, loss, metric, layer …),
        the paper must be about that kind of thing too ("the Adam optimizer" is not introduced
        by "ADAM: An Embodied Causal Agent", which never mentions an optimizer)."""
        names = self.subject_names
        if not names:
            return False
        if introduces(abstract, names[0], title):
            return True
        head = names[0][len(names[-1]) :].strip().lower() if len(names) > 1 else ""
        if head in _SPECIFIC_HEADS and not re.search(rf"\b{re.escape(head[:5])}", f"{title} {abstract}", re.I):
            return False
        return any(introduces(abstract, name, title) for name in names[1:])

    @property
    def names_subject(self) -> bool:
        """The subject is a name or a short term ("NUCFL", "dropout", "the Transformer"), not a
        description ("a benchmark for persuasion")."""
        subject = self.subject.strip()
        if not subject or re.match(r"(?:a|an|some|any|new)\s", subject, re.I):
            return False
        words = subject.split()
        return len(words) <= 4 and not any(w.lower() in _DESCRIPTIVE for w in words)


_GENERIC_HEADS = (
    "architecture|model|models|method|methods|benchmark|dataset|framework|algorithm|technique|approach|agent|"
    "platform|environment|suite|toolkit|simulator|"
    "network|networks|optimizer|optimiser|loss|metric|layer|mechanism|paper|library|tool|system|task"
)
# What a question may ask "of" a paper without the answer repeating the word ("the main idea of X").
_GENERIC_ASKS = set(
    "idea ideas contribution contributions goal goals aim purpose main key result results finding findings "
    "method methods approach role effect effects impact benefit benefits advantage advantages limitation "
    "limitations difference differences motivation problem task focus name definition meaning point "
    "summary gist novelty outcome output input core basis principle intuition".split()
)
# Heads that say what kind of thing a name is, where a namesake of another kind is not it.
_SPECIFIC_HEADS = {"optimizer", "optimiser", "loss", "metric", "layer", "mechanism", "library"}
_DESCRIPTIVE = {"for", "that", "which", "to", "how", "with", "about", "when", "where", "whose", "whether"}
_INTRODUCE_VERB = (
    r"(?:first\s+)?(?:propos|introduc|present|develop|creat|releas|design|buil[dt]|invent|coin|"
    r"came up with|come up with|define|devis|formulat)\w*"
)
_PAPER = r"(?:paper|work|study|article|publication|submission|abstract)"
_PRONOUN = re.compile(
    r"\b(?:it|its|it's|this (?:paper|work|method|model|study|one)|that (?:paper|work|one)|the paper|"
    r"they|their|them|these papers|those papers)\b",
    re.I,
)
_FILLER = set(
    "which what who whom whose where when how are is was were there do does did the a an of in on at by "
    "for from to and or all any list show me give find tell papers paper works work studies study articles "
    "collection catalogue catalog index accepted total number count many much there's these those "
    "some with about have has had included include includes contain contains listed accept accepted "
    "get got were published presented appear appeared".split()
)


# -- filters --------------------------------------------------------------------------------


def _word(pattern: str) -> str:
    return rf"(?<![\w-]){pattern}(?![\w-])"


def recognise_filters(question: str, facets: dict[str, list[str]]) -> tuple[Filters, list[tuple[int, int]]]:
    """Filters named in the question, and the character spans that named them.

    venue: a venue value as a word ("ICLR"); year: a year value as a word ("2025"); decision:
    the word of a decision value, singular or plural ("orals" for "Accept (Oral)"); track:
    "position paper(s)"/"position track", "main track", or a part of a track value next to
    the word area/track/category ("the Causality area", "Robustness-track"). A facet named
    twice with different values ("ICLR or ICML") is not a filter."""
    spans: list[tuple[int, int]] = []
    found: dict[str, set[str]] = {"venue": set(), "year": set(), "decision": set(), "track": set()}
    for venue in facets.get("venue", []):
        for m in re.finditer(_word(re.escape(venue)), question, re.I):
            found["venue"].add(venue)
            spans.append(m.span())
    for year in facets.get("year", []):
        for m in re.finditer(_word(re.escape(year)), question):
            found["year"].add(year)
            spans.append(m.span())
    for decision in facets.get("decision", []):
        inner = re.search(r"\((\w+)\)", decision)
        word = inner.group(1) if inner else decision.split()[-1]
        for m in re.finditer(_word(rf"{re.escape(word)}s?(?:\s+papers?|\s+presentations?)?"), question, re.I):
            found["decision"].add(word)
            spans.append(m.span())
    tracks = facets.get("track", [])
    folded_tracks = [fold(t) for t in tracks]
    if any("position" in t for t in folded_tracks):
        for m in re.finditer(_word(r"position(?:[- ]track)?(?:\s+papers?)?|position[- ]track"), question, re.I):
            found["track"].add("position")
            spans.append(m.span())
    if any(t == "main" or t.startswith("main") for t in folded_tracks):
        for m in re.finditer(_word(r"main[- ](?:track|conference)(?:\s+papers?)?"), question, re.I):
            found["track"].add("main")
            spans.append(m.span())
    parts = sorted({p.strip() for t in tracks for p in t.split("·") if len(p.strip()) >= 4}, key=len, reverse=True)
    for part in parts:
        if fold(part) in ("position", "main"):
            continue
        pattern = (
            rf"(?:(?<![\w-]){re.escape(part)}[- ](?:area|track|category|subarea|session)s?)|"
            rf"(?:(?:area|track|category|subarea|session)\s+(?:of\s+|on\s+)?{_word(re.escape(part))})"
        )
        for m in re.finditer(pattern, question, re.I):
            found["track"].add(part)
            spans.append(m.span())
    one = {k: next(iter(v)) for k, v in found.items() if len(v) == 1}
    filters = Filters(
        venue=one.get("venue"),
        year=int(one["year"]) if "year" in one else None,
        track=one.get("track"),
        decision=one.get("decision"),
    )
    return filters, spans


_DECISION_WORD = re.compile(_word(r"(oral|spotlight|poster)s?(?:\s+papers?|\s+presentations?)?"), re.I)
_POSITION_WORD = re.compile(_word(r"position(?:[- ]track)?\s+papers?|position[- ]track"), re.I)


def unmet_filters(question: str, facets: dict[str, list[str]]) -> list[tuple[str, str, tuple[int, int]]]:
    """Decision words ("orals") and "position papers" in a question that the collection cannot
    filter by, because it records no decisions (or none of that kind) or no position track, with
    the reason. A collection of abstracts without decisions must say it cannot tell orals apart,
    not list other papers as if they were orals."""
    out: list[tuple[str, str, tuple[int, int]]] = []
    decisions = facets.get("decision", [])
    for m in _DECISION_WORD.finditer(question):
        word = m.group(1).lower()
        if not decisions:
            out.append((m.group(0), "the collection records no decisions (oral, spotlight, poster)", m.span()))
        elif not any(word in fold(d) for d in decisions):
            out.append((m.group(0), f"the collection records no {word} decisions", m.span()))
    position = _POSITION_WORD.search(question)
    if position and not any("position" in fold(t) for t in facets.get("track", [])):
        out.append((position.group(0), "the collection records no position track", position.span()))
    return out


def _remove_spans(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + " " + text[end:]
    return collapse(text)


def topic_of(text: str) -> str:
    """The content of a question once filter, list and question wording is gone ("" if none)."""
    words = re.findall(r"[\w][\w'-]*", text)
    kept = [w for w in words if w.lower() not in _FILLER]
    return " ".join(kept)


# -- subjects -------------------------------------------------------------------------------


def _clean_subject(text: str) -> str:
    text = re.sub(r"[?.!]+\s*$", "", text.strip())
    text = re.sub(
        r"\s+(?:in|at|for)\s+(?:this|the)\s+(?:collection|catalogue|catalog|index|corpus)$", "", text, flags=re.I
    )
    text = re.sub(r"\s+(?:first|originally|initially)$", "", text, flags=re.I)
    return text.strip(" \"'“”‘’")


def proper_names(question: str) -> list[str]:
    """Names a source must contain: coined names and acronyms (rag.text.names_in) and
    capitalised words that do not open the sentence ("Mona Lisa", "Tesla"), minus common
    acronyms of the field and the catalogue's own words (venues, authors are handled apart)."""
    names = set(names_in(question))
    tokens = list(re.finditer(r"(?<![\w'-])[A-Za-z][\w'-]*", question))  # not "D-MolT5" inside "3D-MolT5"
    for i, m in enumerate(tokens):
        word = m.group(0)
        if i == 0 or not word[0].isupper() or len(word) < 3:
            continue
        before = question[: m.start()].rstrip()
        if before.endswith((".", "?", "!", ":", '"')):
            continue
        names.add(re.sub(r"['’]s$", "", word).strip("'’"))
    return sorted(n for n in names if n not in COMMON_ACRONYMS and n.rstrip("s") not in COMMON_ACRONYMS)


# -- kinds ----------------------------------------------------------------------------------

_NUMERIC = re.compile(
    r"\b(?:how\s+(?:many|much|often|large|fast|big|long|accurate)|by\s+how\s+much|"
    r"what\s+(?:is\s+the\s+|are\s+the\s+)?(?:accuracy|percentage|percent|score|number|rate|speed-?up|improvement|gain|"
    r"size|price|cost|value|error|f1|auc|win\s+rate|success\s+rate|reduction|performance)|"
    r"what\s+(?:[\w-]+\s+){1,3}(?:accuracy|rate|score|improvement|gain|speed-?up|reduction|error)|"
    r"what\s+(?:(?:input|sequence|context|value)\s+)?(?:range|lengths?)\s+(?:of|does|do|did|is|are|can)\b)\b",
    re.I,
)
_FINDING = re.compile(
    r"^(?:does|do|did|is|are|can|could|will|would|was|were)\b|\b(?:compare|comparison|versus|vs\.?|better than|"
    r"worse than|outperform\w*|help\w*|hurt\w*|effect of|impact of|benefit\w*|what did .+ find\b|findings\b|"
    r"results? (?:of|for|on)\b)",
    re.I,
)


_HOW_WELL = re.compile(
    r"^how\s+(?:well|good|effective(?:ly)?|accurately|reliabl[ey])\s+(?:does|do|did|is|are|can|could)\s+(.+?)"
    r"(?:\s+(?:work|works|perform|performs|do|generali[sz]e|scale|compare|hold\s+up)\b.*)?[?.!]*$|"
    r"^how\s+(?:does|do|did)\s+(.+?)\s+(?:perform|compare|fare)\b",
    re.I,
)


_LIFE = re.compile(
    r"^(?i:when|where|how\s+old)\s+(?i:was|were|is|did)\s+(?:[A-Z][\w.'-]*\s+){1,4}"
    r"(?:born|die|died|raised|grow\s+up|married|buried|live|lived)\b"
)


def parse(question: str, catalog: Catalog | None = None) -> Question:
    """Read a question: kind, subject, filters, named authors, topic."""
    text = collapse(question)
    facets = {f: catalog.facet_values(f) for f in ("venue", "year", "track", "decision")} if catalog is not None else {}
    filters, spans = recognise_filters(text, facets)
    authors = catalog.authors_named_in(text) if catalog is not None else []
    for name in authors:
        m = re.search(re.escape(name).replace(r"\.", r"\.?").replace(r"\ ", r"\s+"), text, re.I)
        if m:
            spans.append(m.span())
    unmet = unmet_filters(text, facets) if catalog is not None else []
    spans += [span for _, _, span in unmet]
    rest = _remove_spans(text, spans)
    q = Question(text=text, filters=filters, authors=authors, topic=topic_of(rest), rest=rest)
    q.unmet = list(dict.fromkeys((words, why) for words, why, _ in unmet))
    q.pronoun = bool(_PRONOUN.search(text)) and not proper_names(rest)
    low = text.lower()
    asked = re.search(
        r"\b(?:what|which|how)\s+(?:is|are|was|were)\s+the\s+((?:[\w-]+\s+){0,2}?[\w-]+)\s+of\s+\S", text, re.I
    )
    if asked and not set(asked.group(1).lower().split()) & _GENERIC_ASKS:
        q.attribute = asked.group(1)

    # -- catalogue kinds -----------------------------------------------------------------
    if re.match(r"^how many\b", low) and re.search(
        r"\b(?:papers?|orals?|posters?|spotlights?|submissions|works|articles)\b", low
    ):
        rest_topic = topic_of(rest)
        if not content_words(rest_topic) or set(rest_topic.lower().split()) <= {
            "did",
            "write",
            "wrote",
            "written",
            "publish",
            "published",
            "author",
            "authored",
        }:
            q.kind = Kind.COUNT
            return q
    m = re.search(
        r"\bwho\s+(?:wrote|authored|are\s+the\s+authors\s+of|is\s+the\s+author\s+of|were\s+the\s+authors\s+of|"
        r"are\s+(?:its|their)\s+authors|are\s+the\s+authors|is\s+behind)\b\s*(.*)|\bauthors?\s+of\s+(.*)|"
        r"\b(?:its|their)\s+authors\b|\bwritten\s+by\s+whom\b",
        text,
        re.I,
    )
    if m:
        q.kind, q.field = Kind.AUTHORS_OF, "authors"
        q.described = bool(re.search(rf"\b{_PAPER}s?\b", text, re.I))
        q.subject = _clean_subject(next((g for g in m.groups() if g), "") if m.groups() else "")
        q.subject = re.sub(
            r"^(?:the\s+)?(?:paper|work|study)\s+(?:on|about|that|which|introducing|proposing)?\s*",
            "",
            q.subject,
            flags=re.I,
        )
        return q
    if authors and re.search(
        r"\b(?:by|from|of)\b|\bwhat\s+(?:did|has|have|does|do)\b|\bwhich\s+(?:papers?|works?)\b|"
        r"\b(?:wrote|write|written|author\w*|publish\w*|propos\w*|work\w*\s+on|stud\w*)\b",
        low,
    ):
        q.kind = Kind.BY_AUTHOR
        return q
    m = re.search(
        r"\b(?:what|which)\s+(track|venue|decision|year|area|conference|session|category)\b|"
        r"\b(?:is|was)\s+(.+?)\s+an?\s+(oral|spotlight|poster)\b|\bwhere\s+was\s+(.+?)\s+(?:published|presented|accepted)\b|"
        r"\bwhen\s+was\s+(.+?)\s+(?:published|presented|accepted)\b",
        text,
        re.I,
    )
    if m:
        word = (m.group(1) or m.group(3) or ("venue" if m.group(4) else "year")).lower()
        q.kind = Kind.FIELD_OF
        q.described = bool(re.search(rf"\b{_PAPER}s?\b", text, re.I))
        q.field = {
            "area": "track",
            "session": "track",
            "category": "track",
            "conference": "venue",
            "oral": "decision",
            "spotlight": "decision",
            "poster": "decision",
        }.get(word, word)
        subject = (
            m.group(2)
            or m.group(4)
            or m.group(5)
            or re.sub(
                r"^.*?\b(?:track|venue|decision|year|area|conference|session|category)\b\s*(?:is|was|does|did)?\s*",
                "",
                text,
                flags=re.I,
            )
        )
        q.subject = _clean_subject(
            re.sub(
                r"\s+(?:in|at|from|published|presented|accepted|belong\s+to|have|get)$",
                "",
                _clean_subject(subject),
                flags=re.I,
            )
        )
        q.subject = re.sub(r"^(?:the\s+)?(?:paper|work)\s+(?:on|about)?\s*", "", q.subject, flags=re.I)
        return q
    listy = re.match(
        r"^(?:which|what|list|show|give|find|name)\b.*\b(?:papers|works|studies|articles|orals|posters|spotlights|submissions)\b"
        r"|^(?:list|show|give|find)\b",
        low,
    )
    if listy and (filters.active() or q.unmet) and not content_words(q.topic):
        q.kind = Kind.CATALOGUE_LIST
        return q

    # -- content kinds -------------------------------------------------------------------
    m = re.search(
        rf"\b(?:which|what)\s+{_PAPER}\s+(?:\w+\s+){{0,2}}?({_INTRODUCE_VERB})\s+(.+)|"
        rf"^who\s+(?:first\s+)?({_INTRODUCE_VERB})\s+(.+)|"
        rf"\bwhere\s+(?:was|were|is|are)\s+(.+?)\s+(?:first\s+)?({_INTRODUCE_VERB})\b|"
        rf"\b(?:which|what)\s+{_PAPER}\s+(?:is|was)\s+(.+?)\s+(?:from|in)\b",
        text,
        re.I,
    )
    if m:
        q.kind, q.introduce = Kind.WHICH_PAPER, True
        q.subject = _clean_subject(m.group(2) or m.group(4) or m.group(5) or m.group(7) or "")
        q.subject = re.sub(r"^(?:the\s+(?:idea|concept|notion)\s+of\s+)", "", q.subject, flags=re.I)
        return q
    q.life = bool(_LIFE.search(text))
    if re.match(r"^who\b", low) or q.life:
        q.person = True  # "Who …?", "When was Albert Einstein born?": about a person, not a paper
    rest_low = rest.lower()
    if re.search(rf"\b(?:which|what)\s+{_PAPER}\b", rest_low) or re.search(
        rf"\bthe\s+{_PAPER}\s+(?:on|about|that)\b", rest_low
    ):
        q.kind = Kind.WHICH_PAPER
        q.subject = _clean_subject(re.sub(rf"^.*?\b{_PAPER}\b\s*(?:\w+\s+)?", "", rest, flags=re.I))
        return q
    if listy or re.search(r"\bpapers\s+(?:on|about|that|which|using|studying|related)\b", low):
        q.kind = Kind.LIST
        q.subject = _clean_subject(
            re.sub(r"^.*?\b(?:papers|works|studies|articles)\b\s*(?:on|about|that|which)?\s*", "", rest, flags=re.I)
        )
        return q
    if _NUMERIC.search(text):
        q.kind = Kind.NUMERIC
        m = re.search(
            r"\b(?:does|do|did|is|are|was|were|of|in|for)\s+(?:the\s+)?([A-Z][\w-]*(?:\s+[A-Z0-9][\w-]*)*)", text
        )
        q.subject = m.group(1) if m else ""
        return q
    m = _HOW_WELL.match(text)
    if m:  # "How well does X work?", "How does X perform?": its results
        q.kind = Kind.FINDING
        q.subject = _own_subject(_clean_subject(m.group(1) or m.group(2) or ""))
        return q
    m = re.match(
        r"^how\s+(?:does|do|did|is|are)\s+(.+?)\s+(?:work|works|function|operate|achieve\w*|compute\w*|train\w*|built|implemented|do\s+it)\b",
        text,
        re.I,
    )
    if m or re.search(r"\bmechanism\b|\bhow\s+does\b", low):
        q.kind = Kind.MECHANISM
        q.subject = _own_subject(_clean_subject(m.group(1)) if m else "")
        return q
    if _FINDING.search(text):
        q.kind = Kind.FINDING
        m = re.match(
            r"^(?:does|do|did|is|are|can|could|will|would|was|were)\s+(.+?)\s+(?:help|improve|hurt|outperform|work|reduce|increase|beat|matter|better|worse|lead)\b",
            text,
            re.I,
        )
        q.subject = _own_subject(_clean_subject(m.group(1)) if m else "")
        return q
    m = re.match(
        r"^(?:what\s+(?:is|are|was|were)|what's|whats|tell\s+me\s+(?:more\s+)?about|describe|explain|define|"
        r"what\s+(?:does|do)\s+(.+?)\s+(?:do|stand\s+for|mean|propose|offer|introduce))\s*(.*)$",
        text,
        re.I,
    )
    if m:
        q.kind = Kind.DEFINITION
        q.subject = _own_subject(_clean_subject(m.group(1) or m.group(2) or ""))
        return q
    return q


def _own_subject(subject: str) -> str:
    """A subject that is only a pronoun ("How does it work?") names nothing: "" (the pipeline
    then takes the subject from the conversation)."""
    return "" if _PRONOUN.fullmatch(subject) else subject


_ANY_NUMBER = re.compile(r"\d")
_UNITS = [
    (
        re.compile(r"\b(?:price|cost|costs|salary|revenue|worth)\b", re.I),
        re.compile(r"[$€£¥]|\b(?:USD|EUR|dollars?|euros?|cents?)\b", re.I),
    ),
    (
        re.compile(r"\bhow\s+long\b", re.I),
        re.compile(
            r"\b(?:second|minute|hour|day|week|month|year|epoch|step|iteration|token|word|character|page|layer)s?\b|\b[smh]\b",
            re.I,
        ),
    ),
    (  # before "how much": "how much faster" asks for a factor
        re.compile(r"\bhow\s+fast\b|\bspeed-?ups?\b|\bfaster\b", re.I),
        re.compile(r"\d\s*(?:x|×|times|-fold)|\\times|%|\bfaster\b|\bspeed", re.I),
    ),
    (re.compile(r"\bhow\s+(?:much|many|often)\b", re.I), _ANY_NUMBER),
    (
        re.compile(r"\b(?:percentage|percent|accuracy|rate|score|error|f1|auc)\b", re.I),
        re.compile(r"%|\d\.\d|\bpercent|\d\s*(?:x|×|times|-fold)|\\times", re.I),
    ),
]


_COUNTED = re.compile(
    r"\bhow\s+many\s+((?:[\w'-]+\s+){0,5}?)([A-Za-z][\w-]*?)(?:'s)?\s+"
    r"(?:are|is|was|were|do|does|did|have|has|had|can|could|will|would|should|in|on|at|of|per|to|for|there)\b",
    re.I,
)
_NOT_COUNTED = frozenset("more fewer times different other total new them these those they it".split())


def counted_noun(question: str) -> re.Pattern[str] | None:
    """For "how many <things> …", a pattern for a count of those things: a number written
    before the noun, at most six words apart ("40 professional-level Capture the Flag (CTF)
    tasks", "16 million latent autoencoder"), in brackets after it ("examples (up to 10M)"), or
    as "the number of X is N"; so "players with ratings from 1000 to 2600 Elo" counts no
    players. None when the noun cannot be found."""
    found = _COUNTED.search(question)
    if not found or found.group(2).lower() in _NOT_COUNTED or any(c.isdigit() for c in found.group(2)):
        return None  # "How many of them …", "How many does GPT-3 have?": no noun to count
    noun = found.group(2)
    stem = re.sub(r"(?:ies|ses|xes|ches|shes|s)$", "", noun) if len(noun) > 3 else noun
    number = rf"(?:\d(?:[\d,.]*\d)?\+?(?:\s?[kKMBT]\b)?|{NUMBER_WORDS.pattern})"  # "1,320", "7B", "10K"
    noun = re.escape(stem)
    return re.compile(
        rf"{number}[\s-]+(?:[^\s;.]+\s+){{0,6}}?{noun}"  # "40 professional-level … tasks", "a 12-layer"
        rf"|{noun}[\w-]*\s*\((?:[a-z~≈<>=]+\s*){{0,3}}{number}"  # "examples (up to 10M in some cases)"
        rf"|number\s+of\s+(?:[\w-]+\s+){{0,2}}?{noun}[\w-]*\s+(?:is|was|are|were|reaches|of)\s+(?:\w+\s+)?{number}",
        re.I,
    )


def wanted_unit(question: str) -> re.Pattern[str] | None:
    """What a number answering a numeric question must come with: a currency for a price, a
    time unit for "how long", a factor or percentage for "how fast", a percentage, decimal or
    factor for an accuracy, rate or error, a count of the things asked about for "how many
    <things>"; None when any number will do ("by how much")."""
    for asks, unit in _UNITS:
        if asks.search(question):
            if unit is _ANY_NUMBER:
                return counted_noun(question)
            return unit
    return None


def with_subject_from(q: Question, papers_named: list[str]) -> Question:
    """A copy that knows the question names catalogued papers (used by follow-up handling)."""
    return replace(q, pronoun=q.pronoun and not papers_named)


def key_terms(question: str, exclude: set[str] | None = None) -> set[str]:
    """Names and numbers a source must literally contain to answer `question`: proper and
    coined names (see `proper_names`) and numbers of two digits or more, minus `exclude`
    (filter values and author names, which the catalogue satisfies)."""
    exclude_folded = {fold(e) for e in (exclude or set())}
    terms = set(proper_names(question)) | {n for n in numbers_in(question) if len(n) > 1}
    return {t for t in terms if fold(t) not in exclude_folded and not any(fold(t) in e.split() for e in exclude_folded)}


def coined_in(question: str) -> list[str]:
    return [w for w in NAME_WORD.findall(question) if is_coined(w)]
