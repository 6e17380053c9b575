"""Multi-turn chat: a history window, follow-up questions rewritten into standalone queries, and
citations kept per turn (each turn owns its Answer; numbers never leak across turns).

A question is condensed with its history only when it refers back (`Query.refers_back`: "it",
"its authors", "that paper", or no subject of its own: "How much better?") and brings little of its
own; a self-contained new question is searched as asked, so "Which papers use graph neural
networks?" after a question about one paper is not turned into a search for that paper. Offline,
a question with a pronoun and a subject of its own, or one that does not point back but says
little the previous answer's papers lack, is also read as a follow-up, and that reading is kept
when it clears its own model's threshold by more (`ChatSession.readings`). Rewriting: with an
LLM, the `condense` prompt; without one, the query carries the previous turn's subject (the titles of the papers the
previous answer cited, else retrieved). The previous answer's papers are also handed to the
pipeline as the conversation's context, so "Who are its authors?" is answered from the catalogue."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag.answer.chatmodel import ChatModel, Usage
from rag.answer.cues import NEW_SEARCH
from rag.answer.pipeline import AnswerPipeline, OnToken
from rag.answer.prompts import load
from rag.answer.query import Query
from rag.store import Catalog
from rag.types import Answer, Filters, Paper

# The most a question may say that the conversation's papers do not (`Relevance.unheld`) and still
# be read as a follow-up too. Chosen on the train split of the mechanical conversations
# (`eval/generated/conf_conversations.jsonl`): at 1.6, 116 of 116 generic follow-ups and 4 of 116
# questions about a removed paper qualify, the most follow-ups for the fewest questions that must
# abstain; without the bound, a question the collection cannot answer was answered from the
# previous paper (validation: abstained 0.37 -> 0.02).
FOLLOW_UP_UNHELD = 1.6
# The most the topic of a question that points back ("its", "they") may bring of its own and still
# be read as a follow-up alone; one that brings more, or names a coined name the conversation's
# papers lack, has its own subject for the pronoun ("Which model does InsightBench use as its
# evaluator?") and is read both ways. Chosen on train between the follow-ups (at most 2.01) and
# the writers' self-contained questions that hold a pronoun (from 1.72; 2 of 49 under 2.25):
# docs/benchmarks.md, "New questions in a conversation" (session 23).
REFERS_BACK_UNHELD = 2.25


def _more_confident(followed: Answer, asked: Answer) -> bool:
    """The follow-up reading answers, and the question as asked does not or clears its deciding
    model's own threshold by less (`Answer.margin`: the two readings may be decided by different
    models, whose probabilities are on different scales; a catalogue answer, which has no
    confidence, stands)."""
    if followed.abstained:
        return False
    if asked.abstained:
        return True
    f, a = followed.margin, asked.margin
    return f is not None and a is not None and f > a


@dataclass
class Turn:
    question: str
    answer: Answer


def subject_papers(answer: Answer) -> list[Paper]:
    """What a turn was about: the papers it cited, else the papers it listed as related, else the
    best retrieved one."""
    return [c.paper for c in answer.citations] or list(answer.related) or [h.paper for h in answer.sources[:1]]


def heuristic_condense(question: str, history: list[Turn]) -> str:
    """The question with the previous turn's subject: the titles of the papers it was about."""
    subject = [p.title or p.label for p in subject_papers(history[-1].answer)[:2]]
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
            return heuristic_condense(question, history)
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
        with self.pipeline.scope():
            return self._ask(self.pipeline.validate(question), filters, k, on_token)

    def _ask(self, question: str, filters: Filters, k: int | None, on_token: OnToken | None) -> Answer:
        usage = Usage()
        q = self.pipeline.read(question)
        follows, both_readings = self.readings(question, q)
        shown: list[str] = []
        answer = self._answer(question, q, filters, k, shown.append if both_readings else on_token, usage, follows)
        if both_readings:
            held: list[str] = []
            followed = self._answer(question, q, filters, k, held.append, usage, True)
            if _more_confident(followed, answer):
                answer, shown = followed, held
        if both_readings and on_token:
            for token in shown:
                on_token(token)
        if usage.calls:
            for key, value in usage.public().items():
                answer.usage[key] = answer.usage.get(key, 0) + value
        self.turns.append(Turn(question, answer))
        return answer

    @property
    def in_conversation(self) -> bool:
        """A question now has a history: earlier turns are kept and may be read with it."""
        return bool(self.turns and self.max_turns)

    def readings(self, question: str, q: Query) -> tuple[bool, bool]:
        """How the question is read: (follows, both). With an LLM, a question that points back is
        condensed by the model, which may leave a new question as it is. Offline:
        - one that points back and brings little of its own (`REFERS_BACK_UNHELD`, no coined name
          the conversation's papers lack) is a follow-up;
        - one that points back but has a subject of its own is read both ways;
        - a request for papers that does not point back ("Which papers propose new optimizers?",
          `NEW_SEARCH`) is a new search, read as asked;
        - any other question is read both ways when it brings little the conversation's papers
          lack (`FOLLOW_UP_UNHELD`), such as "what domains does that benchmark cover?" (a definite
          or elided subject no cue names), else as asked.
        Read both ways, the follow-up reading is kept when it clears its own model's threshold by
        more (`_more_confident`). Before the middle two rules, a self-contained question after a
        turn about another paper was answered from that paper ("hijacked") in 24 of 400 writers'
        questions and 21 of 107 short topic questions on validation; after, 10 and 0, with the
        follow-ups unchanged (docs/benchmarks.md, session 23). `eval.fit_relevance` collects the
        follow-up reading through this too, so the answerable model is fitted on what the chat scores."""
        if not self.in_conversation:
            return False, False
        if self.pipeline.llm is not None:
            return q.refers_back, False
        relevance, subject = self.pipeline.relevance, subject_papers(self.turns[-1].answer)
        if q.refers_back:
            # its topic's words, not the catalogue's: in a small collection "Who are its authors?"
            # holds words no abstract does, and read as asked it would name a stranger's authors
            own = relevance.unheld(q.topic, subject) > REFERS_BACK_UNHELD or relevance.names_unheld(question, subject)
            return not own, bool(own)
        if NEW_SEARCH.pattern.search(question):
            return False, False
        return False, relevance.unheld(question, subject) <= FOLLOW_UP_UNHELD

    def _answer(
        self,
        question: str,
        q: Query,
        filters: Filters,
        k: int | None,
        on_token: OnToken | None,
        usage: Usage,
        follows: bool,
    ) -> Answer:
        """The question as asked, or (`follows`) condensed with the conversation's subject."""
        query = self.condense(question, usage) if follows else question
        context = subject_papers(self.turns[-1].answer) if follows else []
        return self.pipeline.answer(
            question,
            query=query,
            filters=filters,
            k=k,
            on_token=on_token,
            context=context,
            q=q,
            later_turn=follows,
        )

    def reset(self) -> None:
        self.turns.clear()
