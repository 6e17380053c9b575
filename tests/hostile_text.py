"""Text that tries to drive a terminal or a page, shared by the tests of every way text leaves the
app: the terminal stream, MCP results, the UI's exports."""

from __future__ import annotations

import json
from pathlib import Path

OSC52 = "\x1b]52;c;aGFja2Vk\x07"  # writes "hacked" to the clipboard
CLEAR = "\x1b[2J"  # clears the screen
TITLE = "\x1b]0;owned\x1b\\"  # sets the window title (OSC ended by ST)
C1_CSI = "\x9b31m"  # 8-bit CSI
SCRIPT = "<script>fetch('http://127.0.0.1:9/s')</script>"
IMG = "<img src=x onerror=alert(1)>"
BEACON = "![pixel](http://127.0.0.1:9/beacon.png)"
CONTROLS = (OSC52, CLEAR, TITLE, C1_CSI)


def visible_escapes(text: str) -> list[str]:
    """What would drive a terminal, or is left over from a sequence cut in two: raw ESC and C1
    bytes, and the visible tails "]52;", "[2J", "]0;"."""
    found = [c for c in ("\x1b", "\x9b", "\x9d", "\x07") if c in text]
    return found + [tail for tail in ("]52;", "[2J", "]0;", "aGFja2Vk") if tail in text]


def escape_records() -> list[dict[str, object]]:
    """Two papers whose title, authors and abstract carry all of the above."""
    return [
        {
            "id": "esc-1",
            "title": f"EscNet{CLEAR}: terminal {OSC52}escapes",
            "authors": [f"Eve {TITLE}Escape", "Mal Lory"],
            "venue": "ICLR",
            "year": 2025,
            "abstract": f"We introduce EscNet, a network of escapes {OSC52}{CLEAR}{C1_CSI}. {SCRIPT} {IMG} "
            f"EscNet reaches 91.5% accuracy {BEACON} on the EscBench benchmark. {TITLE}It runs in 3 ms.",
        },
        {
            "id": "esc-2",
            "title": "QuietNet: a plain paper",
            "authors": ["Ann Plain"],
            "venue": "ICML",
            "year": 2025,
            "abstract": "We propose QuietNet, a calm model. QuietNet reaches 80% accuracy on EscBench.",
        },
    ]


def write_escape_records(path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in escape_records()), encoding="utf-8")
    return path
