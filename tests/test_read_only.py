"""A data folder this process may only read (a shared index on a read-only mount) serves search,
ask, papers and status, and says clearly that writing needs a writable one (issue 21, item 6).

The folder is made read-only for real: as root (where chmod stops nothing) with a read-only bind
mount in a private mount namespace (`unshare -m`), so every write fails with EROFS, root or not;
as another user with chmod. Without either the test is skipped, saying why."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_rag

HASH = {"RAG_EMBEDDER": "hash"}


def _can_mount_read_only() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return probe.returncode == 0


def _run_read_only(home: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`rag ARGS` with `home` read-only for the whole run."""
    command = [sys.executable, "-m", "rag.cli", *args]
    full_env = {**os.environ, **env}
    if _can_mount_read_only():
        script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
        return subprocess.run(
            ["unshare", "-m", "sh", "-c", script, "sh", str(home), *command],
            capture_output=True,
            text=True,
            timeout=300,
            env=full_env,
            cwd=ROOT,
        )
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=full_env, cwd=ROOT)


@pytest.fixture
def read_only_home(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "shared-index"
    env = {**HASH, "RAG_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "user-cache")}
    papers = tmp_path / "papers.jsonl"
    records = [
        {
            "id": f"R{i}",
            "title": f"Graph method {i} for molecules",
            "abstract": f"We propose GraphMol{i}, a graph neural network for molecule property {i} prediction.",
            "authors": ["Ada Lovelace", "Alan Turing"],
            "venue": "ICLR",
            "year": 2025,
        }
        for i in range(40)
    ]
    papers.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = run_rag("ingest", str(papers), env=env)
    assert out.returncode == 0, out.stderr
    if not _can_mount_read_only():
        if os.geteuid() == 0:
            pytest.skip("running as root without `unshare -m`: no way to make a folder read-only for this process")
        for path in [home, *home.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
    return home, env


def _tree(home: Path) -> list[tuple[str, int, int]]:
    return sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in home.rglob("*") if p.is_file())


def test_a_read_only_data_folder_serves_search_ask_papers_and_status(
    read_only_home: tuple[Path, dict[str, str]],
) -> None:
    home, env = read_only_home
    writable = run_rag("search", "graph neural network molecules", "--k", "5", "--json", env=env)
    before = _tree(home)
    search = _run_read_only(home, "search", "graph neural network molecules", "--k", "5", "--json", env=env)
    assert search.returncode == 0, search.stderr
    assert search.stdout == writable.stdout  # the same hits, byte for byte
    ask = _run_read_only(home, "ask", "Which paper proposes GraphMol7?", "--json", env=env)
    assert ask.returncode == 0, ask.stderr
    assert "R7" in [c["paper_id"] for c in json.loads(ask.stdout)["citations"]]
    papers = _run_read_only(home, "papers", "GraphMol3", "--json", env=env)
    assert papers.returncode == 0 and json.loads(papers.stdout)[0]["paper_id"] == "R3", papers.stderr
    status = _run_read_only(home, "status", "--json", env=env)
    assert status.returncode == 0 and json.loads(status.stdout)["papers"] == 40, status.stderr
    ingest = _run_read_only(home, "ingest", str(home.parent / "papers.jsonl"), env=env)
    assert ingest.returncode != 0 and "Traceback" not in ingest.stderr
    assert "needs a writable data folder (RAG_HOME)" in ingest.stderr
    assert _tree(home) == before  # nothing was written
