"""Multi-turn chat: a history window, follow-up questions rewritten into standalone queries, and
citations kept per turn (each turn owns its Answer; numbers never leak across turns).

Rewriting: with an LLM, the `condense` prompt. Without one, a documented heuristic: a follow-up
that names no paper of the catalogue (`Catalog.papers_named_in`: a label, a title, a coined
name) is about the previous turn's subject, so the query carries that subject: the labels of the
papers the previous answer cited (or retrieved, if it abstained) and the coined names of the
previous question. The original question is still what the answer is built for; only retrieval
sees the carried subject. The previous answer's papers are also handed to the pipeline as the
conversation's context, so "Who are its authors?" is answered from the catalogue."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag.answer import AnswerPipeline, OnToken
from rag.catalog import Catalog, Filters
from rag.chatmodel import ChatModel, Usage
from rag.prompts import load
from rag.text import names_in
from rag.types import Answer, Paper


@dataclass
class Turn:
    question: str
    answer: Answer


def names_a_paper(question: str, catalog: Catalog) -> bool:
    """True when the question names a catalogued paper (its label, title or a coined name)."""
    return bool(catalog.papers_named_in(question))


def subject_papers(answer: Answer) -> list[Paper]:
    """What a turn was about: the papers it cited, else the papers it listed as related, else the
    best retrieved one."""
    return [c.paper for c in answer.citations] or list(answer.related) or [h.paper for h in answer.sources[:1]]


def heuristic_condense(question: str, history: list[Turn], catalog: Catalog) -> str:
    if not history or names_a_paper(question, catalog):
        return question
    last = history[-1].answer
    subject = [p.title or p.label for p in subject_papers(last)[:3]]
    subject += sorted(names_in(history[-1].question))
    carried = [s for s in dict.fromkeys(subject) if s and s.lower() not in question.lower()]
    return f"{question} ({'; '.join(carried)})" if carried else question


@dataclass
class ChatSession:
    pipeline: AnswerPipeline
    catalog: Catalog
    model: ChatModel | None = None
    max_turns: int = 4
    turns: list[Turn] = field(default_factory=list)

    def condense(self, question: str, usage: Usage) -> str:
        history = self.turns[-self.max_turns :] if self.max_turns else []
        if not history:
            return question
        if self.model is None:
            return heuristic_condense(question, history, self.catalog)
        prompt = load("condense", frozenset({"history", "question"}))
        lines = []
        for turn in history:
            lines.append(f"User: {turn.question}")
            cited = "; ".join(c.paper.display_title for c in turn.answer.citations)
            lines.append(f"Assistant: {turn.answer.text[:600]}" + (f" (cited: {cited})" if cited else ""))
        rewritten = (
            self.model.complete(
                [{"role": "user", "content": prompt.render(history="\n".join(lines), question=question)}],
                usage,
                max_tokens=120,
            )
            .strip()
            .strip('"')
        )
        return rewritten or question

    def ask(
        self, question: str, filters: Filters = Filters(), k: int | None = None, on_token: OnToken | None = None
    ) -> Answer:
        question = self.pipeline.validate(question)
        usage = Usage()
        query = self.condense(question, usage)
        context = subject_papers(self.turns[-1].answer) if self.turns and self.max_turns else []
        answer = self.pipeline.answer(question, query=query, filters=filters, k=k, on_token=on_token, context=context)
        if usage.calls:
            for key, value in usage.public().items():
                answer.usage[key] = answer.usage.get(key, 0) + value
        self.turns.append(Turn(question, answer))
        return answer

    def reset(self) -> None:
        self.turns.clear()
