"""The name a paper coins, read from its abstract: "we propose X", "X, a new …", "called X". Ingest
uses it to label papers without a title and to identify pasted abstracts by the name they
introduce; the example questions use it to name what a collection can answer. Hand rules, each
with the abstracts it was written for in the tests (tests/test_text.py): what a paper introduces
is not learnable from the data this project has, and a wrong label costs little (it is shown
only where a list has no title)."""

from __future__ import annotations

import re

from rag.text import COMMON_ACRONYMS, NAME_WORD, STOPWORDS, fold, is_coined, plain, split_sentences

INTRODUCE = re.compile(
    r"\b(?:(?:we|I|this\s+(?:paper|work|study|article)|here\s+we)\s+(?:first\s+|also\s+|further\s+)?"
    r"(?:propose|introduce|present|develop|design|build|release|construct|curate|create|call|term|name|dub|"
    r"contribute|offer|describe|provide|devise|formulate|establish|unveil)s?|(?:is\s+)?called|named|termed|dubbed|"
    r"coined|introducing|proposing|presenting)\b",
    re.I,
)
_LATEX_NAME = re.compile(
    r"(?:\\(?:texttt|textbf|textsc|textit|mathrm|mathbf|emph|text)\{|\{\\(?:bf|sc|tt|it)\s+)([^{}$]{2,40})\}"
)
_MARKDOWN_NAME = re.compile(r"(?<![\w*])\*{1,2}([^*]{2,60})\*{1,2}(?![\w*])")
_PAREN_ACRONYM = re.compile(r"\(([A-Z][A-Za-z0-9-]*[A-Z0-9][A-Za-z0-9-]*)\)")
_CALLED = re.compile(r"\b(?:called|named|termed|dubbed|coined)\s+(?:it\s+|as\s+)?([$\\{*]*[A-Z][\w-]+)")
_AFTER_VERB = re.compile(
    r"^\S+(?:\s+\S+)?\s+(?:(?:a|an|the|our|new|novel|first)\s+)*([A-Z][\w-]+)(?=\s*[,:(]|\s+(?:a|an|which|that)\b)"
)
_APPOSITION = re.compile(r"^([$\\{*]*[A-Z][\w-]{1,40}[}*$]*),\s+(?:a|an)\s+([\w-]+)")
# "X, a new …", "X, a framework …": the words after "X, a" that mark X as introduced here.
_INTRO_WORDS = frozenset(
    "new novel simple general unified scalable efficient lightweight principled modular open open-source "
    "framework benchmark method model dataset library toolkit system approach algorithm suite platform "
    "generative large".split()
)
_OPENERS = frozenset(
    "however moreover recently here thus overall finally specifically importantly "
    "additionally furthermore consequently therefore instead today traditionally".split()
)


def _apposition_name(sentence: str) -> str:
    """X in "X, a new …" at the start of a sentence (a coined name, or a capitalised word before
    a word that marks an introduction)."""
    match = _APPOSITION.match(sentence)
    if not match:
        return ""
    name = plain(match.group(1)).strip("$\\{}* ")
    if is_coined(name) or (
        match.group(2).lower() in _INTRO_WORDS and name.lower() not in _OPENERS and name not in COMMON_ACRONYMS
    ):
        return name
    return ""


_USED_BEFORE = re.compile(
    r"\b(?:based on|using|use|uses|via|with|such as|like|from|than|over|of|for|including|extends?|extending)"
    r"(?:\s+the)?\s+$",
    re.I,
)


_WEAK_VERB = re.compile(
    r"^(?:we|I|this\s+(?:paper|work|study|article)|here\s+we)\s+(?:first\s+|also\s+|further\s+)?"
    r"(?:provide|offer|describe|establish|formulate|contribute)s?\b",
    re.I,
)


_NOT_A_KIND = (
    r"general|novel|simple|principled|unified|first|new|called|named|termed|dubbed|so-called|coined|efficient|"
    r"effective|coherent|elegant|modular|practical|robust|scalable|lightweight|flexible|powerful|generic|versatile|"
    r"universal|original|fundamental|[\w-]*agent|recent|different|consistent|independent|transparent|intelligent|"
    r"a|an|the|our|this|here|also|further|then|now|thus|hence|yet"
)
# "a randomized Frank-Wolfe": a variant of an existing method, not a new name
_VARIANT = re.compile(rf"\b(?!(?:{_NOT_A_KIND})\b)[a-z][a-z-]*(?:ized|ised|ed|ive|ic|ous|able|ible|al|ar|ent|ant)\s+$")


def _name_in(sentence: str, tail: str) -> str:
    called = _CALLED.search(sentence)
    if called:
        name = called.group(1).strip("$\\{*.,")
        if name not in COMMON_ACRONYMS:
            return name
        word = re.match(r"\s+([a-z][a-z-]{2,})\b", sentence[called.end() :])
        if word and word.group(1) not in STOPWORDS:  # "called SGD jittering": a common acronym opens the name
            return f"{name} {word.group(1)}"
    after = _AFTER_VERB.match(tail)
    if after and after.group(1) not in COMMON_ACRONYMS and after.group(1).lower() not in ("we", "this", "it"):
        if is_coined(after.group(1)) or after.group(1)[0].isupper():
            return after.group(1)
    if _WEAK_VERB.match(tail):
        return ""  # "this work provides an analysis of KAN …": a weak verb introduces no name by itself
    acronym = _PAREN_ACRONYM.search(tail)
    for word in re.finditer(r"[\w-]+", tail[:300]):
        before = tail[max(0, word.start() - 24) : word.start()]
        if _USED_BEFORE.search(before) or _VARIANT.search(before):
            continue  # "based on the Frank-Wolfe algorithm", "a randomized Frank-Wolfe": used, not introduced
        if is_coined(word.group(0)):
            if acronym and 0 < acronym.start() - word.start() < 90 and acronym.group(1) not in COMMON_ACRONYMS:
                return acronym.group(1)
            return word.group(0)
    if acronym and acronym.group(1) not in COMMON_ACRONYMS:
        return acronym.group(1)
    return ""


_APPOSITION_ANYWHERE = re.compile(r"(?:^|[.!?]\s+)[$\\{*]*[A-Z][\w-]{1,40}[}*$]*,\s+(?:a|an)\s")


# "X … (recently) proposed in Liu et al. (2024)", "X, introduced by [12]": X is someone else's.
_CITED_BY = re.compile(
    r"\b(?:(?:recently|originally|first|previously)\s+)?(?:proposed|introduced|developed|presented|invented)\s+"
    r"(?:in|by)\s+(?!(?:Section|Sec|Appendix|Table|Figure|Fig|Eq|Chapter|This|Our|We|The)\b)(?:[A-Z][\w'-]+(?:\s+(?:et\s+al\.?|and\s+[A-Z][\w'-]+))?|\[\d|\(\w+,?\s+\d{4}|\d{4})"
)


def cited_names(abstract: str) -> set[str]:
    """Names an abstract attributes to other work ("Kolmogorov–Arnold Network (KAN) is a network
    structure recently proposed in Liu et al. (2024)"): the coined names and parenthesised
    acronyms of a sentence before such a phrase, folded. A paper that analyses KAN is not KAN."""
    found: set[str] = set()
    for match in _CITED_BY.finditer(abstract):
        start = max(abstract.rfind(". ", 0, match.start()), 0)
        before = abstract[start : match.start()]
        for word in NAME_WORD.findall(before):
            if is_coined(word) or word.isupper():
                found.add(fold(word))
                found.add(fold(word.rstrip("s")))
    return found


def introduced_name(abstract: str) -> str:
    """The name of the method, model or benchmark an abstract introduces ("we propose X", "X, a
    new …", "called X"), or "" when it introduces none. A name the abstract attributes to
    others (`cited_names`) is never it."""
    intro = INTRODUCE.search(abstract)
    appos = _APPOSITION_ANYWHERE.search(abstract)
    if not intro and not appos:
        return ""  # the common case at scale: nothing to split sentences for
    cited = cited_names(abstract)
    # Sentences up to a little past the first hint: "we propose X" is rarely far from the start.
    first = min(m.end() for m in (intro, appos) if m)
    name = _introduced_in(split_sentences(abstract[: first + 600]), cited)
    return name or (_introduced_in(split_sentences(abstract), cited) if first + 600 < len(abstract) else "")


def _introduced_in(sentences: list[str], cited: set[str]) -> str:
    for sentence in sentences:
        name = _introduced_by(sentence)
        if name and fold(name) not in cited and fold(name.rstrip("s")) not in cited:
            return name
    return ""


def _introduced_by(sentence: str) -> str:
    """The name one sentence introduces, or ""."""
    name = _apposition_name(sentence)
    if name:
        return name
    intro = INTRODUCE.search(sentence)
    if not intro:
        return ""
    tail = sentence[intro.start() :]
    for pattern in (_LATEX_NAME, _MARKDOWN_NAME):
        match = pattern.search(tail)
        if match and len(match.group(1).split()) <= 4:
            inner = match.group(1).strip()
            acronym = re.search(re.escape(match.group(0)) + r"\s*\(([^)]{2,15})\)", tail)
            if acronym and is_coined(acronym.group(1)):
                return acronym.group(1)
            if inner not in COMMON_ACRONYMS:
                return inner
    return _name_in(sentence, tail)


# Words that, between an introducing verb and a name, show the name is used, not introduced
# ("we propose a method *for* dropout", "we introduce a layer *based on* LoRA").
def derive_label(abstract: str, max_chars: int = 60) -> str:
    """A short handle for a paper without a title: the name it introduces, else its clipped
    first sentence."""
    name = introduced_name(abstract)
    if name:
        return name
    sentences = split_sentences(abstract)
    first = plain(sentences[0]) if sentences else ""
    if len(first) <= max_chars:
        return first.rstrip(".")
    return first[:max_chars].rsplit(" ", 1)[0].rstrip(",;:") + "…"
