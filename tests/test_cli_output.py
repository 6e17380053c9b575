"""What the `rag` command prints carries no terminal control sequence from the papers: every
command that shows paper text, in its plain and its --json form, over a list whose titles,
authors, venues, tracks, links and abstracts hold CSI colours, screen clears, OSC 52 clipboard
writes, OSC 8 links and their 8-bit (C1) forms. Real subprocesses, as a user runs them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import HASH, run_rag

CSI_RED, RESET, CLEAR = "\x1b[31m", "\x1b[0m", "\x1b[2J"
OSC52 = "\x1b]52;c;Y3VybCBldmlsLnNo\x07"  # would put "curl evil.sh" on the clipboard
OSC8 = "\x1b]8;;http://evil.example/\x1b\\"  # a hidden hyperlink
C1_CSI, C1_OSC = "\x9b31m", "\x9d52;c;QUFBQQ==\x9c"  # the same as single 8-bit characters
HOSTILE = [
    {
        "id": "EVIL1",
        "title": f"{CSI_RED}Zorblax{RESET}: Coloured Titles {CLEAR}for Everyone",
        "authors": [f"Eve {C1_CSI}Mallory", f"Trudy{OSC52} Intruder"],
        "abstract": (
            f"We introduce Zorblax{OSC52}, a method that {OSC8}clicks{OSC8} through abstracts{C1_OSC} and "
            f"rewrites terminals {CLEAR}with colour.\x07 Zorblax improves terminal safety by 42% on the "
            "hostile benchmark, which no earlier method reaches."
        ),
        "venue": f"ICLR{C1_CSI}",
        "year": 2025,
        "track": f"Safety{CSI_RED}",
        "decision": f"Oral{C1_OSC}",
        "url": f"https://example.org/{OSC8}zorblax",
    },
    {
        "id": "CALM1",
        "title": "A Calm Paper on Graph Pooling",
        "authors": ["Ada Lovelace"],
        "abstract": "We propose a calm pooling method for graphs that keeps every node of the graph.",
        "venue": "ICLR",
        "year": 2025,
    },
]
# A byte the terminal would obey: C0 controls but newline and tab, DEL, C1 controls.
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture(scope="module")
def hostile_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    papers = folder / "hostile.jsonl"
    papers.write_text("".join(json.dumps(p) + "\n" for p in HOSTILE), encoding="utf-8")
    home = folder / "home"
    out = run_rag("ingest", str(papers), env={**HASH, "RAG_HOME": str(home)})
    assert out.returncode == 0, out.stderr
    return home


def _rag(home: Path, *args: str) -> str:
    # answers always, so the hostile text reaches the printer: whether to abstain is not what is tested here
    out = run_rag(*args, env={**HASH, "RAG_HOME": str(home), "RAG_ABSTAIN_THRESHOLD": "0"})
    assert out.returncode == 0, out.stderr
    for stream, text in (("stdout", out.stdout), ("stderr", out.stderr)):
        found = sorted({f"U+{ord(c):04X}" for c in RAW_CONTROL.findall(text)})
        assert not found, f"`rag {' '.join(args)}` wrote raw control characters {found} to {stream}"
    assert "\\u001b" not in out.stdout and "\\u009" not in out.stdout, "an escaped control sequence in JSON"
    return out.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("search", "Zorblax terminals"),
        ("papers", "Zorblax"),
        ("ask", "Which paper introduced Zorblax?"),
        ("ask", "Which paper introduced Zorblax?", "--bibtex"),
        ("bibtex", "EVIL1"),
        ("status",),
    ],
)
def test_plain_output_has_no_control_sequences(hostile_home: Path, args: tuple[str, ...]) -> None:
    shown = _rag(hostile_home, *args)
    if args[0] != "status":
        assert "Zorblax" in shown  # the text is kept; only the sequences go


def test_json_output_has_none_and_keeps_the_text(hostile_home: Path) -> None:
    hits = json.loads(_rag(hostile_home, "search", "Zorblax terminals", "--json"))
    evil = next(h for h in hits if h["paper_id"] == "EVIL1")
    assert evil["title"] == "Zorblax: Coloured Titles for Everyone"
    assert evil["authors"] == ["Eve Mallory", "Trudy Intruder"]
    assert (evil["venue"], evil["track"], evil["decision"]) == ("ICLR", "Safety", "Oral")
    assert evil["url"] == "https://example.org/zorblax"
    assert "a method that clicks through abstracts and rewrites terminals with colour." in evil["abstract"]
    entries = json.loads(_rag(hostile_home, "papers", "Zorblax", "--json"))
    assert entries[0]["title"] == "Zorblax: Coloured Titles for Everyone"
    answer = json.loads(_rag(hostile_home, "ask", "Which paper introduced Zorblax?", "--json", "--bibtex"))
    assert not answer["abstained"] and answer["citations"][0]["paper_id"] == "EVIL1"
    assert "@inproceedings{mallory2025zorblax," in answer["bibtex"]
    status = json.loads(_rag(hostile_home, "status", "--json"))
    assert status["papers"] == 2


def test_bibtex_keys_come_from_the_text_without_sequences(hostile_home: Path) -> None:
    entry = _rag(hostile_home, "bibtex", "EVIL1")
    assert entry.startswith("@inproceedings{mallory2025zorblax,\n")
    assert "title = {Zorblax: Coloured Titles for Everyone}" in entry
    assert "author = {Eve Mallory and Trudy Intruder}" in entry
