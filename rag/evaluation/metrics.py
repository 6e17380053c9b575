"""Evaluation metrics as pure functions: no I/O, no state, easy to test by hand."""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Sequence

from rag.evaluation.results import ItemResult


def recall_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Capped recall (BEIR's R_cap@k): gold papers in the top k over min(k, |gold|), so a topic
    with more relevant papers than k ("Which papers are about optimal transport?" over a whole
    conference) scores 1 when the top k are all relevant; with at most k gold papers it is the
    usual recall."""
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    return len(gold_set & set(ranked[:k])) / min(k, len(gold_set))


def reciprocal_rank(ranked: Sequence[str], gold: Iterable[str]) -> float:
    gold_set = set(gold)
    for rank, item in enumerate(ranked, start=1):
        if item in gold_set:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[str], gold: Iterable[str], k: int = 10) -> float:
    """Binary-relevance nDCG, as BEIR reports for SciFact."""
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    dcg = sum(1.0 / math.log2(rank + 1) for rank, item in enumerate(ranked[:k], start=1) if item in gold_set)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(gold_set), k) + 1))
    return dcg / ideal


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100]."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q / 100
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return statistics.fmean(values) if values else float("nan")


def precision(true_positive: int, predicted: int) -> float:
    return true_positive / predicted if predicted else float("nan")


def fact_hit(answer: str, contains: Sequence[str]) -> bool:
    """Any-of: the answer states at least one of the expected facts (case-insensitive; Markdown
    bold does not count as text, so "by **8.5%**" states "by 8.5%"). An expected fact written in
    bold ("**3,330**") must be stated in bold: the figure the answer puts forward, not one it
    mentions in passing."""
    low = answer.replace("**", "").lower()
    bold = [span.lower() for span in re.findall(r"\*\*(.+?)\*\*", answer)]  # "**3,330 papers**" holds 3,330
    return any(
        any(fact.strip("*").lower() in span for span in bold) if fact.startswith("**") else fact.lower() in low
        for fact in contains
    )


def citation_precision(cited: Sequence[tuple[str, bool]], gold: Iterable[str]) -> float:
    """Share of cited papers that are gold or whose quote supports the sentence citing them.
    `cited` holds (paper id, supported) per citation."""
    if not cited:
        return float("nan")
    gold_set = set(gold)
    return sum(1 for pid, supported in cited if pid in gold_set or supported) / len(cited)


def citation_recall(cited_ids: Iterable[str], gold: Iterable[str], cap: int | None = None) -> float:
    """Gold papers cited over the gold papers, or over `cap` when there are more (an answer
    cites at most k sources: a topic with 30 relevant papers is fully answered by k of them)."""
    gold_set = set(gold)
    if not gold_set:
        return float("nan")
    return min(1.0, len(gold_set & set(cited_ids)) / min(len(gold_set), cap or len(gold_set)))


def abstention_scores(predicted: Sequence[bool], should: Sequence[bool]) -> dict[str, float]:
    """Precision, recall and accuracy of abstaining, where `should` marks unanswerable items."""
    tp = sum(1 for p, s in zip(predicted, should) if p and s)
    fp = sum(1 for p, s in zip(predicted, should) if p and not s)
    fn = sum(1 for p, s in zip(predicted, should) if not p and s)
    correct = sum(1 for p, s in zip(predicted, should) if p == s)
    return {
        "abstention_precision": precision(tp, tp + fp),
        "abstention_recall": precision(tp, tp + fn),
        "abstention_accuracy": correct / len(predicted) if predicted else float("nan"),
    }


def cost_usd(prompt_tokens: int, completion_tokens: int, price_in: float, price_out: float) -> float:
    """Cost from token counts and prices per million tokens."""
    return (prompt_tokens * price_in + completion_tokens * price_out) / 1_000_000


def nanmean(values: Iterable[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return statistics.fmean(kept) if kept else float("nan")


def rate(flags: Sequence[bool]) -> float:
    """Share of true flags (nan when there are none): e.g. abstentions among answerable items."""
    return sum(1 for f in flags if f) / len(flags) if flags else float("nan")


def by_kind(results: Sequence[ItemResult], kinds: Sequence[str], cap: int | None = None) -> dict[str, dict[str, float]]:
    """Answer metrics per kind of question, from per-item results (the runner's rows): items,
    fact hit rate, citation recall, and the abstention rate (wanted for unanswerable kinds, false
    for answerable ones)."""
    table: dict[str, dict[str, float]] = {}
    for kind in kinds:
        rows = [r for r in results if (r.kind or "-") == kind and r.answer is not None]
        facts = [bool(r.fact_hit) for r in rows if r.fact_hit is not None]
        recall = [citation_recall(r.cited_ids, r.gold_ids, cap) for r in rows if r.answerable and r.gold_ids]
        table[kind] = {
            "items": float(len(rows)),
            "fact_hit_rate": rate(facts),
            "citation_recall": nanmean(recall),
            "abstained": rate([bool(r.abstained) for r in rows]),
            "answerable": rate([bool(r.answerable) for r in rows]),
        }
    return table
