"""`rag ask` and `rag chat` in a terminal: a real pseudo-terminal, so the command streams as it
does for a user, against a local OpenAI-compatible server that streams the answer in pieces
chosen by the test (issue 21, items 12 and 16)."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.hostile_text import visible_escapes
from tests.openai_server import FakeOpenAI

# An answer whose escape sequences are cut between streamed pieces, as a model's tokens cut them.
SPLIT_CHUNKS = [
    "PersuasionBench measures persuasion [1].",
    " It clears the screen \x1b",
    "[2J and writes the clipboard \x1b]52;",
    "c;aGFja2Vk",
    "\x07 and sets the title \x1b]0;ow",
    "ned\x1b",
    "\\ then ends [1].",
]


def in_terminal(args: list[str], home: Path, env: dict[str, str], typed: str = "", timeout: float = 180) -> str:
    """Run `python -m rag.cli ARGS` with stdin and stdout on a pseudo-terminal; return what the
    terminal received (stdout; stderr goes to a pipe and is dropped)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rag.cli", *args],
        cwd=ROOT,
        env={**os.environ, "RAG_HOME": str(home), "COLUMNS": "200", **env},
        stdin=slave,
        stdout=slave,
        stderr=subprocess.DEVNULL,
    )
    os.close(slave)
    if typed:
        os.write(master, typed.encode())
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the other end closed
                    break
                if not data:
                    break
                out += data
            elif proc.poll() is not None:
                break
        assert proc.wait(timeout=30) == 0, out.decode(errors="replace")[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return out.decode("utf-8", errors="replace").replace("\r\n", "\n")


@pytest.fixture
def llm_home(sample_home: Path, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(sample_home, home)
    return home


def llm_env(llm: FakeOpenAI) -> dict[str, str]:
    return {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": llm.base_url, "RAG_LLM_MODEL": "test-model"}


def test_escape_codes_split_across_streamed_pieces_are_removed(llm_home: Path) -> None:
    """Each piece used to be cleaned alone, so "\\x1b" then "[2J" printed "[2J", and
    "\\x1b]52;" then "c;…" printed the clipboard payload."""
    with FakeOpenAI(default="INSUFFICIENT_EVIDENCE") as llm:
        llm.replies.append({"chunks": SPLIT_CHUNKS})
        shown = in_terminal(["ask", "Which paper introduced PersuasionBench?"], llm_home, llm_env(llm))
        assert len(llm.chat_requests()) == 1  # the answer came from the stream above
    assert "It clears the screen" in shown and "then ends" in shown, shown
    own = shown.replace("\x1b[33m", "").replace("\x1b[0m", "")  # the CLI's own colour for warnings
    assert visible_escapes(own) == [], repr(shown)


def test_chat_prints_each_answer_once(llm_home: Path) -> None:
    """A streamed answer is the answer: no second copy under "(checked answer)"."""
    # cites its sources as [2] and [1]: the checked answer renumbers them [1] and [2], as the stream did
    answer = "PersuasionBench is a benchmark of persuasion tasks [2]. It measures how well models persuade [1]."
    with FakeOpenAI(default="INSUFFICIENT_EVIDENCE") as llm:
        llm.replies.append({"content": answer})
        typed = "Which paper introduced PersuasionBench?\n\n"
        shown = in_terminal(["chat"], llm_home, {**llm_env(llm), "RAG_ANSWERER": "llm"}, typed)
        assert len(llm.chat_requests()) == 1
    assert "checked answer" not in shown, shown
    # the answer's lines, with their markers (a warning may quote a claim without them)
    assert shown.count("PersuasionBench is a benchmark of persuasion tasks [1].") == 1, shown
    assert shown.count("It measures how well models persuade [2].") == 1, shown
