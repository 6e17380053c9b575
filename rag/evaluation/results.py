"""One evaluated item's outcome: what was asked, retrieved, answered and cited. The runner fills
it, the metrics and the report read it, `results.json` stores it as a plain object."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class ItemResult:
    id: str
    kind: str
    question: str
    answerable: bool
    gold_ids: list[str]
    query: str = ""
    answer: str | None = None  # None in a retrieval-only run
    abstained: bool | None = None
    cited: list[tuple[str, bool]] = field(default_factory=list)  # (paper id, supported) per citation
    claims: int = 0
    unsupported: int = 0
    removed: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    retrieved: list[str] = field(default_factory=list)  # a 10-paper search for the (condensed) question
    fact_hit: bool | None = None  # None when the item states no fact or is unanswerable
    judge_correct: bool | None = None
    confidence: float | None = None  # the answer's relevance: how sure it is that the sources answer
    threshold: float | None = None  # the deciding model's threshold that confidence was compared with

    @property
    def cited_ids(self) -> list[str]:
        return [pid for pid, _ in self.cited]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
