"""The one text module: sentences, names, labels, plain and terminal-safe text, author lists."""

from __future__ import annotations

from rag.readers import read_paths
from rag.text import (
    derive_label,
    for_terminal,
    format_authors,
    introduced_name,
    introduces,
    join_sentences,
    plain,
    printable,
    split_sentences,
)
from tests.conftest import SAMPLE


def test_sentences_survive_abbreviations_numbers_and_glued_ends() -> None:
    assert split_sentences("We use e.g. GPT-4 here. It works.") == ["We use e.g. GPT-4 here.", "It works."]
    assert split_sentences("See Fig. 2 and Eq. 3 for details. No. 1 is best.") == [
        "See Fig. 2 and Eq. 3 for details.",
        "No. 1 is best.",
    ]
    assert split_sentences("Smith et al. (2020) found this. We extend it.") == [
        "Smith et al. (2020) found this.",
        "We extend it.",
    ]
    assert split_sentences("Accuracy rises by 91.5% over J. Smith's baseline. Next.") == [
        "Accuracy rises by 91.5% over J. Smith's baseline.",
        "Next.",
    ]
    assert split_sentences("Does it yield improvements?In this work we test it.") == [
        "Does it yield improvements?",
        "In this work we test it.",
    ]


def test_labels_are_introduced_names_never_generic_words() -> None:
    labels = {derive_label(p.abstract) for p in read_paths([SAMPLE]).papers}
    assert {"PersuasionBench", "Celcomen", "NUCFL", "PLNL", "SAeUron", "TGB-Seq", "MIB", "UNI", "Cybench"} <= labels
    assert "LLM-based" not in labels and "Frank-Wolfe" not in labels
    assert introduced_name("We study X. Based on the Frank-Wolfe algorithm, we show a bound.") == ""
    assert introduced_name("Celcomen, a new generative model, is shown here.") == "Celcomen"
    assert introduces("We introduce Celcomen, a model of cells.", "Celcomen")
    assert not introduces("We fine-tune BERT with dropout on three tasks.", "dropout")


def test_plain_and_terminal_safe_text() -> None:
    assert (
        plain(r"from 34.96\% to 55.25\% with $\texttt{UNI}$ and **bold**") == "from 34.96% to 55.25% with UNI and bold"
    )
    assert plain(r"$O(n^{2})$ and $2\times$ faster") == "O(n^2) and 2× faster"
    hostile = "ok\x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07 \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \u202etxt"
    safe = printable(hostile)
    assert "\x1b" not in safe and "\x07" not in safe and "\u202e" not in safe and "link" in safe
    assert for_terminal("![x](http://evil/beacon) **hi**") == "x hi"


def test_one_author_formatter_never_doubles_a_period() -> None:
    assert format_authors(["A", "B", "C"], limit=2) == "A, B et al."
    assert format_authors(["A"], truncated=True, style="bibtex") == "A and others"
    assert (
        join_sentences(["Title", format_authors(["Henk Tillman"], True), "ICLR 2025"])
        == "Title. Henk Tillman et al. ICLR 2025"
    )
