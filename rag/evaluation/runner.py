"""Run configurations over a dataset: per-item results, aggregates, repeats.

A configuration is a name plus overrides of Settings (`mode`, `k`, `answerer`, `rrf_k`, ...). All
configurations see the same items; each item with `history` first replays those turns in a fresh
chat session (unscored), so follow-ups are scored as a user would meet them."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.answer import load
from rag.app import App
from rag.errors import InputError, RagError, SettingsError
from rag.evaluation import metrics as m
from rag.evaluation.dataset import Item
from rag.evaluation.results import ItemResult
from rag.settings import Settings

PRESETS: dict[str, dict[str, Any]] = {
    "hybrid": {"mode": "hybrid"},
    "dense": {"mode": "dense"},
    "keyword": {"mode": "keyword"},
    "extractive": {"answerer": "extractive"},
    "llm": {"answerer": "llm"},
}
STAGES = ("retrieve", "generate", "check")


@dataclass
class Config:
    name: str
    overrides: dict[str, Any] = field(default_factory=dict)

    def settings(self, base: Settings) -> Settings:
        return Settings(**{**base.model_dump(), **self.overrides})

    def validate(self) -> Config:
        """Fail with one line (SettingsError, exit 2) on a key that is not a setting ("rrf_kk":
        the nearest valid key and all of them) or a value the setting refuses ("rrf_k=abc"): a
        misspelt key must not run silently with the default. The same check as RAG_ variables."""
        try:
            Settings(**self.overrides)
        except SettingsError as err:
            raise SettingsError(f"--config {self.name}: {err}") from None
        return self


def parse_config(spec: str) -> Config:
    """A preset name ("dense"), a JSON file ({"name": ..., "settings": {...}}), or inline
    `NAME:key=value,key=value` (e.g. `k10:k=10,mode=hybrid`)."""
    if spec in PRESETS:
        return Config(spec, dict(PRESETS[spec]))
    path = Path(spec)
    if path.suffix == ".json" and path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
        return Config(str(data.get("name", path.stem)), dict(data.get("settings", {}))).validate()
    if ":" in spec:
        name, _, body = spec.partition(":")
        overrides: dict[str, Any] = {}
        for pair in filter(None, body.split(",")):
            key, _, value = pair.partition("=")
            overrides[key.strip()] = json.loads(value) if _is_json(value) else value.strip()
        return Config(name, overrides).validate()
    raise InputError(
        "--config", f"unknown configuration {spec!r}: use one of {', '.join(PRESETS)}, a .json file, or NAME:key=value"
    )


def _is_json(value: str) -> bool:
    try:
        json.loads(value)
        return True
    except ValueError:
        return False


class Judge:
    """Optional LLM-judge correctness, reported apart from the deterministic metrics."""

    def __init__(self, app: App) -> None:
        if app.chat_model is None:
            raise RagError("--judge needs an LLM: set OPENAI_API_KEY (and OPENAI_BASE_URL)")
        self.model = app.chat_model
        self.prompt = load("judge", frozenset({"question", "expected", "abstracts", "answer"}))
        self.catalog = app.index.load().catalog

    def correct(self, item: Item, answer: str) -> bool:
        from rag.answer import Usage

        found = [self.catalog.get(pid) for pid in item.gold_ids] if self.catalog else []
        abstracts = "\n".join(p.abstract[:800] for p in found if p is not None)
        reply = self.model.complete(
            [
                {
                    "role": "user",
                    "content": self.prompt.render(
                        question=item.question,
                        expected="; ".join(item.answer_contains) or "(none given)",
                        abstracts=abstracts or "(none)",
                        answer=answer,
                    ),
                }
            ],
            Usage(),
            max_tokens=5,
        )
        return "INCORRECT" not in reply.upper() and "CORRECT" in reply.upper()


def run_item(app: App, item: Item, retrieval_only: bool, judge: Judge | None) -> ItemResult:
    session = app.chat()
    for earlier in item.history:
        session.ask(earlier)
    result = ItemResult(item.id, item.kind, item.question, item.answerable, item.gold_ids)
    start = time.perf_counter()
    if retrieval_only:
        from rag.answer import Usage

        result.query = session.condense(item.question, Usage())
    else:
        answer = session.ask(item.question)
        result.query = answer.query
        result.answer = answer.text
        result.abstained = answer.abstained
        result.confidence = getattr(answer, "confidence", None)
        result.threshold = getattr(answer, "threshold", None)
        result.cited = [(c.paper.id, c.supported) for c in answer.citations]
        result.claims = len(answer.claims)
        result.unsupported = sum(1 for c in answer.claims if not c.supported)
        result.removed = len(answer.removed_citations)
        result.timings_ms = dict(answer.timings_ms)
        result.usage = dict(answer.usage)
    searched = time.perf_counter()
    result.retrieved = [h.paper.id for h in app.search(result.query, k=10).hits]
    if retrieval_only:  # the scoring search is the whole run: time it as retrieval
        result.timings_ms["retrieve"] = (time.perf_counter() - searched) * 1000
        result.timings_ms["total"] = (time.perf_counter() - start) * 1000
    else:
        result.timings_ms["total"] = (searched - start) * 1000
    if result.answer is not None and item.answer_contains and item.answerable:
        result.fact_hit = m.fact_hit(result.answer, item.answer_contains)
    if judge and result.answer is not None:
        result.judge_correct = judge.correct(item, result.answer)
    return result


def aggregate(results: list[ItemResult], settings: Settings) -> dict[str, float]:
    scored = [r for r in results if r.answerable and r.gold_ids]
    out: dict[str, float] = {
        "items": float(len(results)),
        "recall@5": m.mean(m.recall_at_k(r.retrieved, r.gold_ids, 5) for r in scored),
        "recall@10": m.mean(m.recall_at_k(r.retrieved, r.gold_ids, 10) for r in scored),
        "mrr": m.mean(m.reciprocal_rank(r.retrieved, r.gold_ids) for r in scored),
        "ndcg@10": m.mean(m.ndcg_at_k(r.retrieved, r.gold_ids, 10) for r in scored),
    }
    answered = [r for r in results if r.answer is not None]
    if answered:
        facts = [r.fact_hit for r in answered if r.fact_hit is not None]
        cites = [(pid, ok, r.gold_ids) for r in answered for pid, ok in r.cited]
        out["fact_hit_rate"] = m.mean(1.0 if f else 0.0 for f in facts) if facts else float("nan")
        out["citation_precision"] = (
            (sum(1 for pid, ok, gold in cites if pid in gold or ok) / len(cites)) if cites else float("nan")
        )
        out["citation_recall"] = m.nanmean(
            m.citation_recall(r.cited_ids, r.gold_ids, settings.k) for r in answered if r.answerable and r.gold_ids
        )
        out.update(m.abstention_scores([bool(r.abstained) for r in answered], [not r.answerable for r in answered]))
        out["false_abstention_rate"] = m.rate([bool(r.abstained) for r in answered if r.answerable])
        out["unanswerable_abstention_rate"] = m.rate([bool(r.abstained) for r in answered if not r.answerable])
        claims = sum(r.claims for r in answered)
        out["unsupported_claim_rate"] = sum(r.unsupported for r in answered) / claims if claims else float("nan")
        prompt = [r.usage.get("prompt_tokens", 0) for r in answered]
        completion = [r.usage.get("completion_tokens", 0) for r in answered]
        out["prompt_tokens_mean"] = m.mean(prompt)
        out["completion_tokens_mean"] = m.mean(completion)
        out["cost_usd_per_question"] = m.mean(
            m.cost_usd(p, c, settings.price_prompt_per_mtok, settings.price_completion_per_mtok)
            for p, c in zip(prompt, completion)
        )
        judged = [r.judge_correct for r in answered if r.judge_correct is not None]
        if judged:
            out["llm_judge_correct"] = m.mean(1.0 if j else 0.0 for j in judged)
    for stage in (*STAGES, "total"):
        values = [r.timings_ms[stage] for r in results if stage in r.timings_ms]
        if values:
            out[f"{stage}_ms_p50"] = m.percentile(values, 50)
            out[f"{stage}_ms_p95"] = m.percentile(values, 95)
    return out


def summarise(runs: list[dict[str, float]]) -> tuple[dict[str, float], dict[str, float]]:
    """Mean and standard deviation of each metric over repeats."""
    keys = runs[0].keys()
    mean = {k: m.nanmean(r[k] for r in runs) for k in keys}
    spread = {k: (statistics.pstdev([r[k] for r in runs if r[k] == r[k]]) if len(runs) > 1 else 0.0) for k in keys}
    return mean, spread


def run(
    configs: list[Config],
    items: list[Item],
    base: Settings,
    repeat: int = 1,
    retrieval_only: bool = False,
    judge: bool = False,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for config in configs:
        settings = config.settings(base)
        app = App(settings)
        app.index.load()
        judge_obj = Judge(app) if judge else None
        repeats: list[list[ItemResult]] = []
        for _ in range(repeat):
            results = []
            for item in items:
                results.append(run_item(app, item, retrieval_only, judge_obj))
                if progress:
                    progress(1)
            repeats.append(results)
        mean, spread = summarise([aggregate(r, settings) for r in repeats])
        out[config.name] = {
            "settings": {k: v for k, v in settings.model_dump(mode="json").items() if k != "openai_api_key"},
            "overrides": config.overrides,
            "metrics": mean,
            "spread": spread,
            "results": repeats,
            "fingerprint": app.index.fingerprint,
            "papers": len(app.index.catalog or []),
            "answer_mode": "retrieval-only" if retrieval_only else settings.answer_mode,
        }
    return out
