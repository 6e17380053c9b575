"""Example questions drawn from the loaded collection itself, so a user who ingested other papers
gets examples the collection can answer (fixed examples about the bundled sample would abstain).

The questions name things the papers coined ("Which paper introduced DataEnvGym?", "What is
Celcomen?") and a topic several titles share ("Which papers are about sparse autoencoders?"),
which the answerer can find by name. Picks are spread over the collection by
a stable hash of the paper id, so the same collection always gives the same examples."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence

from rag.papers import introduced_name
from rag.text import STOPWORDS, contains_term, fold, is_coined, plain
from rag.types import Paper

_TOPIC_STOP = STOPWORDS | frozenset(
    "via towards toward beyond learning model models large language neural network networks deep efficient "
    "scalable simple robust better improving improved understanding rethinking revisiting unified general "
    "generalization training data fast free can your all just what when through without".split()
)


def _stable(paper: Paper) -> str:
    return hashlib.sha1(paper.id.encode()).hexdigest()


def coined_name(paper: Paper) -> str:
    """The name a paper coined: the part of its title before a colon ("DataEnvGym: …"), else the
    name its abstract introduces; "" when neither is a coined word the paper's text contains."""
    title = plain(paper.title)
    head = title.split(":", 1)[0].strip() if ":" in title else ""
    candidates = [head] if head and len(head.split()) == 1 else []
    if paper.abstract:
        candidates.append(introduced_name(paper.abstract))
    candidates.append(paper.label)
    for name in candidates:
        name = name.strip(" .,;$*{}\\")
        if (
            name
            and is_coined(name)
            and 3 <= len(name) <= 30
            and (contains_term(paper.abstract, name) or contains_term(paper.title, name))
        ):
            return name
    return ""


def shared_topic(papers: Sequence[Paper], least: int = 3) -> str:
    """A two-word phrase that at least `least` titles share ("sparse autoencoders"), the most
    shared first; "" when no phrase recurs."""
    counts: Counter[str] = Counter()
    for paper in papers:
        words = re.findall(r"[a-z][a-z-]+", fold(plain(paper.title)))
        pairs = {
            f"{a} {b}"
            for a, b in zip(words, words[1:])
            if a not in _TOPIC_STOP and b not in _TOPIC_STOP and len(a) > 2 and len(b) > 2
        }
        counts.update(pairs)
    ranked = sorted(((c, t) for t, c in counts.items() if c >= least), key=lambda item: (-item[0], item[1]))
    return ranked[0][1] if ranked else ""


def example_questions(papers: Sequence[Paper], limit: int = 4) -> list[str]:
    """Up to `limit` candidate questions in a stable order: one per coined name (spread over the
    collection), with a shared-topic question third. The caller may check them by answering
    them and keep the ones that do not abstain (App.example_questions does)."""
    names: list[str] = []
    seen: set[str] = set()
    for paper in sorted(papers, key=_stable):
        name = coined_name(paper)
        if name and name.lower() not in seen and paper.abstract:
            names.append(name)
            seen.add(name.lower())
        if len(names) >= limit:
            break
    templates = ["What is {}?", "Which paper introduced {}?", "What does {} do, and how well?"]
    questions = [templates[i % len(templates)].format(name) for i, name in enumerate(names)]
    topic = shared_topic(papers)
    if topic:
        questions.insert(min(2, len(questions)), f"Which papers are about {topic}?")
    return questions[:limit]
