"""Settings: grouped by concern, every existing variable name kept, unknown names and bad values
one line naming them (exit 2), never silently ignored."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag.errors import SettingsError
from rag.settings import GROUPS, Settings, known_variables
from rag.types import Mode
from tests.conftest import ROOT, run_rag

# The variables the README, docs/deploy.md and the tests use: none may be renamed by the grouping.
DOCUMENTED = [
    "RAG_HOME",
    "RAG_CHROMA_HOST",
    "RAG_CHROMA_PORT",
    "RAG_EMBEDDER",
    "RAG_OPENAI_EMBEDDING_MODEL",
    "RAG_EMBED_CONCURRENCY",
    "RAG_WORKERS",
    "RAG_INGEST_BATCH",
    "RAG_PROGRESS_SECONDS",
    "RAG_K",
    "RAG_MODE",
    "RAG_LLM_MODEL",
    "RAG_LLM_TIMEOUT_S",
    "RAG_LLM_MAX_RETRIES",
    "RAG_LLM_BACKOFF_S",
    "RAG_LLM_VERIFY",
    "RAG_CONTEXT_TOKENS",
    "RAG_MAX_ANSWER_TOKENS",
    "RAG_MAX_QUESTION_CHARS",
    "RAG_PRICE_PROMPT_PER_MTOK",
    "RAG_PRICE_COMPLETION_PER_MTOK",
]


def test_every_field_is_in_exactly_one_group_and_names_are_kept() -> None:
    grouped = [name for group in GROUPS.values() for name in group.model_fields]
    assert sorted(grouped) == sorted(Settings.model_fields) and len(grouped) == len(set(grouped))
    assert set(DOCUMENTED) <= set(known_variables())
    assert all(info.description for info in Settings.model_fields.values())


def test_a_misspelled_variable_is_one_line_with_the_valid_names_and_exit_2(tmp_path: Path) -> None:
    out = run_rag("status", env={"RAG_EMBEDER": "hash", "RAG_HOME": str(tmp_path)})
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
    assert "RAG_EMBEDER" in lines[0] and "did you mean RAG_EMBEDDER?" in lines[0]
    assert all(name in lines[0] for name in ("RAG_HOME", "RAG_MODE", "RAG_LLM_TIMEOUT_S"))


@pytest.mark.slow
def test_a_bad_value_is_one_line_naming_the_variable_and_the_allowed_values(tmp_path: Path) -> None:
    out = run_rag("status", env={"RAG_EMBEDDER": "foo", "RAG_HOME": str(tmp_path)})
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert re.search(r"RAG_EMBEDDER='foo'.*'local', 'openai' or 'hash'", out.stderr)
    out = run_rag("status", env={"RAG_MODE": "fuzzy", "RAG_HOME": str(tmp_path)})
    assert out.returncode == 2 and "RAG_MODE='fuzzy'" in out.stderr and "'keyword'" in out.stderr


def test_llm_timeout_has_both_spellings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_LLM_TIMEOUT", "7.5")
    assert Settings().llm_timeout_s == 7.5
    monkeypatch.delenv("RAG_LLM_TIMEOUT")
    monkeypatch.setenv("RAG_LLM_TIMEOUT_S", "3")
    assert Settings().llm_timeout_s == 3.0
    assert Settings(llm_timeout_s=9).llm_timeout_s == 9.0  # by field name too (rag eval --config)


def test_mode_is_the_retrievers_enum_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_MODE", "keyword")
    assert Settings().mode is Mode.KEYWORD
    assert Settings(mode="dense").mode is Mode.DENSE


def test_an_unknown_keyword_names_the_nearest_setting() -> None:
    with pytest.raises(SettingsError, match=r"unknown setting kk \(did you mean k\?\); the valid names are home, "):
        Settings(kk=10)


def test_eval_config_with_a_misspelled_key_fails_before_running(tmp_path: Path) -> None:
    dataset = ROOT / "eval" / "datasets" / "dev.jsonl"
    out = run_rag("eval", str(dataset), "--config", "k10:kk=10", env={"RAG_HOME": str(tmp_path)})
    assert out.returncode == 2 and "unknown setting kk (did you mean k?)" in out.stderr
    assert "dense_weight" in out.stderr and "Traceback" not in out.stderr


def test_version_is_the_installed_package_version() -> None:
    from importlib.metadata import version

    out = run_rag("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"rag, version {version('paper-rag')}", out
