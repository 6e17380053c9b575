"""Report writers: a JSON file with every per-item result, a Markdown report with the
configurations side by side, and PNG charts. The report names the dataset (with its sha256), the
index fingerprint, the settings and the code version, so two reports can be compared later."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import rag
from rag.evaluation.metrics import recall_at_k
from rag.evaluation.results import ItemResult

HEADLINE = [
    "recall@5",
    "recall@10",
    "mrr",
    "ndcg@10",
    "fact_hit_rate",
    "citation_precision",
    "citation_recall",
    "abstention_precision",
    "abstention_recall",
    "abstention_accuracy",
    "unanswerable_abstention_rate",
    "false_abstention_rate",
    "unsupported_claim_rate",
    "prompt_tokens_mean",
    "completion_tokens_mean",
    "cost_usd_per_question",
    "retrieve_ms_p50",
    "retrieve_ms_p95",
    "generate_ms_p50",
    "generate_ms_p95",
    "check_ms_p50",
    "check_ms_p95",
    "total_ms_p50",
    "total_ms_p95",
]
CHART = ["recall@5", "mrr", "ndcg@10", "fact_hit_rate", "citation_precision", "citation_recall", "abstention_accuracy"]


def code_version() -> str:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=rag.PROJECT_ROOT, capture_output=True, text=True, timeout=5
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=rag.PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
        if commit:
            return f"{rag.__version__} ({commit}{'+changes' if dirty else ''})"
    except (OSError, subprocess.SubprocessError):
        pass
    return rag.__version__


def _fmt(value: float, spread: float, key: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    digits = 1 if key.endswith(("_ms_p50", "_ms_p95", "tokens_mean")) else (5 if key.startswith("cost") else 3)
    text = f"{value:.{digits}f}"
    if spread and spread > 0:
        text += f" ± {spread:.{digits}f}"
    return text


def public(dataset: Path, configs: dict[str, Any]) -> dict[str, Any]:
    """The `--json` summary: settings and metrics per configuration (no per-item rows)."""
    return {
        "dataset": str(dataset),
        "configs": {name: {"settings": c["settings"], "metrics": c["metrics"]} for name, c in configs.items()},
    }


def markdown(dataset: Path, configs: dict[str, Any], errors: list[str], repeat: int) -> str:
    digest = hashlib.sha256(dataset.read_bytes()).hexdigest()[:12]
    names = list(configs)
    first = configs[names[0]]
    lines = [
        f"# Evaluation: {dataset.name}",
        "",
        f"- dataset: `{dataset}` (sha256 {digest}, {int(first['metrics']['items'])} items"
        + (f", {len(errors)} skipped" if errors else "")
        + ")",
        f"- index: `{first['fingerprint']}`, {first['papers']} papers",
        f"- code: {code_version()}; run {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}; repeats: {repeat}",
        "",
        "| metric | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    lines.append("| answerer | " + " | ".join(configs[n]["answer_mode"] for n in names) + " |")
    for key in HEADLINE:
        if not any(key in configs[n]["metrics"] for n in names):
            continue
        cells = [
            _fmt(configs[n]["metrics"].get(key, float("nan")), configs[n]["spread"].get(key, 0.0), key) for n in names
        ]
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    judged = [n for n in names if "llm_judge_correct" in configs[n]["metrics"]]
    if judged:
        lines += [
            "",
            "## LLM judge (not deterministic; kept apart from the metrics above)",
            "",
            "| config | llm_judge_correct |",
            "|---|---|",
        ]
        lines += [
            f"| {n} | {_fmt(m['llm_judge_correct'], s.get('llm_judge_correct', 0), 'x')} |"
            for n in judged
            for m, s in [(configs[n]["metrics"], configs[n]["spread"])]
        ]
    lines += ["", "## Settings", ""]
    for name in names:
        overrides = ", ".join(f"{k}={v}" for k, v in configs[name]["overrides"].items()) or "current settings"
        s = configs[name]["settings"]
        lines.append(
            f"- **{name}**: {overrides} (mode={s['mode']}, k={s['k']}, answerer={s['answerer']}, "
            f"embedder={s['embedder']}, dense_weight={s['dense_weight']}, "
            f"rerank_depth={s.get('rerank_depth', '–')}, chunk_tokens={s['chunk_tokens']})"
        )
    lines += [
        "",
        f"## Recall@5 by kind of question ({names[0]} and the others)",
        "",
        "| kind | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    kinds = sorted({r.kind or "-" for r in first["results"][0]})
    for kind in kinds:
        cells = []
        for name in names:
            rows = [r for r in configs[name]["results"][0] if (r.kind or "-") == kind and r.answerable and r.gold_ids]
            hits = [recall_at_k(r.retrieved, r.gold_ids, 5) for r in rows]
            cells.append(f"{sum(hits) / len(hits):.2f} (n={len(rows)})" if rows else "–")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    answered = [r for r in first["results"][0] if r.answer is not None]
    if answered:
        from rag.evaluation.metrics import by_kind

        lines += [
            "",
            f"## Answers by kind of question ({names[0]})",
            "",
            "abstained: share of the kind's items that abstained "
            "(wanted for unanswerable kinds, false abstention for the others)",
            "",
            "| kind | items | fact hit | citation recall | abstained |",
            "|---|---|---|---|---|",
        ]
        for kind, row in by_kind(answered, kinds, first["settings"].get("k")).items():
            if not row["items"]:
                continue
            cells = [_fmt(row[k], 0.0, k) for k in ("fact_hit_rate", "citation_recall", "abstained")]
            lines.append(
                f"| {kind}{'' if row['answerable'] else ' (unanswerable)'} | {int(row['items'])} | "
                + " | ".join(cells)
                + " |"
            )
    misses = [
        r for r in first["results"][0] if r.answerable and r.gold_ids and not set(r.retrieved[:5]) & set(r.gold_ids)
    ]
    wrong_abstain = [r for r in first["results"][0] if r.abstained is not None and r.abstained == r.answerable]
    if misses or wrong_abstain:
        lines += ["", f"## Where {names[0]} went wrong", ""]
        lines += [f"- retrieval miss `{r.id}`: {r.question}" for r in misses[:15]]
        lines += [
            f"- {'abstained on answerable' if r.answerable else 'answered unanswerable'} `{r.id}`: {r.question}"
            for r in wrong_abstain[:15]
        ]
    if errors:
        lines += ["", "## Skipped items", ""] + [f"- {e}" for e in errors]
    lines += ["", "Charts: `metrics.png` (metrics per configuration), `latency.png` (time per question).", ""]
    return "\n".join(lines)


def charts(configs: dict[str, Any], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(configs)
    keys = [k for k in CHART if any(not math.isnan(configs[n]["metrics"].get(k, float("nan"))) for n in names)]
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(keys) * max(1, len(names)) / 2), 4))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = [configs[name]["metrics"].get(k, float("nan")) for k in keys]
        errors = [configs[name]["spread"].get(k, 0.0) for k in keys]
        ax.bar(
            [x + i * width for x in range(len(keys))],
            [0 if math.isnan(v) else v for v in values],
            width,
            yerr=errors,
            label=name,
        )
    ax.set_xticks([x + width * (len(names) - 1) / 2 for x in range(len(keys))], keys, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_title("Metrics per configuration")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    paths = [out / "metrics.png"]
    fig.savefig(paths[0], dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 4))
    data = [[r.timings_ms["total"] for rep in configs[n]["results"] for r in rep] for n in names]
    ax.boxplot(data)
    ax.set_xticks(range(1, len(names) + 1), names)
    ax.set_ylabel("ms per question (retrieve + answer + check)")
    ax.set_title("Latency per question")
    fig.tight_layout()
    paths.append(out / "latency.png")
    fig.savefig(paths[1], dpi=110)
    plt.close(fig)
    return paths


def _plain(value: object) -> object:
    """JSON for what the runner keeps as objects (per-item results)."""
    if isinstance(value, ItemResult):
        return value.to_dict()
    return str(value)


def write(dataset: Path, configs: dict[str, Any], errors: list[str], repeat: int, out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.json"
    results.write_text(
        json.dumps(
            {"dataset": str(dataset), "code": code_version(), "repeat": repeat, "skipped": errors, "configs": configs},
            ensure_ascii=False,
            indent=1,
            default=_plain,
        )
    )
    report = out / "report.md"
    report.write_text(markdown(dataset, configs, errors, repeat), encoding="utf-8")
    png = charts(configs, out)
    return {"results": results, "report": report, "metrics_chart": png[0], "latency_chart": png[1]}
