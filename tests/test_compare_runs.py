"""`eval.compare_runs` counts what criteria name, in questions, from two runs' stored items."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eval.compare_runs import compare_items, compare_tables, load_run, main


def item(qid: str, answerable: bool, abstained: bool, retrieved: list[str], cited: list[str], **extra: Any) -> dict:
    """One stored item as `eval.heldout --out` writes it: gold paper `g` when answerable."""
    return {
        "source": extra.pop("source", "conf-written-w1"),
        "split": "validation",
        "id": qid,
        "kind": "paraphrase" if answerable else "near-miss",
        "question": f"question {qid}",
        "answerable": answerable,
        "gold_ids": ["g"] if answerable else [],
        "answer": "" if abstained else "an answer",
        "abstained": abstained,
        "cited": [[pid, True] for pid in cited],
        "retrieved": retrieved,
        **extra,
    }


def write_run(folder: Path, items: list[dict], table: list[dict] | None = None) -> Path:
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({"table": table or [], "items": items}), encoding="utf-8")
    return folder


def test_counts_move_by_question_and_decisions_turn_item_by_item(tmp_path: Path) -> None:
    # base: q1 found and cited; q2 found, another paper cited; q3 (unanswerable) answered
    base = write_run(
        tmp_path / "base",
        [
            item("q1", True, False, ["g", "x"], ["g"]),
            item("q2", True, False, ["x", "g"], ["x"]),
            item("q3", False, False, ["x"], ["x"]),
        ],
    )
    # candidate: q1 abstained (turned wrong), q2 cites its gold, q3 abstained (turned right)
    cand = write_run(
        tmp_path / "cand",
        [
            item("q1", True, True, ["g", "x"], []),
            item("q2", True, False, ["x", "g"], ["g"]),
            item("q3", False, True, ["x"], []),
        ],
    )
    cells = compare_items(load_run(base), load_run(cand), "validation")
    writers = cells["conf-written"]
    assert writers["base"]["found, not cited"] == 1
    assert writers["candidate"]["found, not cited"] == 1  # q1 abstained now counts as found, not cited
    assert writers["base"]["answerable abstained"] == 0
    assert writers["candidate"]["answerable abstained"] == 1
    assert writers["base"]["unanswerable answered"] == 1
    assert writers["candidate"]["unanswerable answered"] == 0
    assert (writers["turned right"], writers["turned wrong"]) == (1, 1)
    assert cells["every family"]["base"]["items"] == 3


def test_a_split_stored_without_items_is_compared_on_its_table(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    row = {"family": "conf-written", "kind": "ALL"}
    base = write_run(tmp_path / "base", [], [{**row, "test": {"wrong": 10.0, "fact": 0.9}}])
    cand = write_run(tmp_path / "cand", [], [{**row, "test": {"wrong": 12.0, "fact": 0.9}}])
    assert compare_tables(load_run(base), load_run(cand), "test") == {
        "conf-written": {"wrong": {"base": 10.0, "candidate": 12.0}}
    }
    main([str(base), str(cand), "--split", "test"])
    assert "wrong 10.000 -> 12.000" in capsys.readouterr().out


def test_a_folder_without_results_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="empty"):
        load_run(tmp_path / "empty")
