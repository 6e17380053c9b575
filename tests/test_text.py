"""The one text module: sentences, names, labels, plain and terminal-safe text, author lists."""

from __future__ import annotations

import re

from rag.papers.naming import cited_names, derive_label, introduced_name
from rag.papers.readers import read_paths
from rag.text import (
    end_sentence,
    for_terminal,
    format_authors,
    join_sentences,
    names_in,
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
    assert introduced_name("We introduce Celcomen, a model of cells.") == "Celcomen"
    assert introduced_name("We fine-tune BERT with dropout on three tasks.") == ""


def test_plain_and_terminal_safe_text() -> None:
    assert (
        plain(r"from 34.96\% to 55.25\% with $\texttt{UNI}$ and **bold**") == "from 34.96% to 55.25% with UNI and bold"
    )
    assert plain(r"$O(n^{2})$ and $2\times$ faster") == "O(n^2) and 2× faster"
    hostile = "ok\x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07 \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \u202etxt"
    safe = printable(hostile)
    assert "\x1b" not in safe and "\x07" not in safe and "\u202e" not in safe and "link" in safe
    assert for_terminal("![x](http://evil/beacon) **hi**") == "x hi"
    assert for_terminal("Pooling with [links](javascript:alert(1)) and ![m](http://x/a_(b).png).") == (
        "Pooling with links and m."
    )
    assert for_terminal("Graph pooling with [links](javascript:alert(1)).") == "Graph pooling with links."


def test_one_author_formatter_never_doubles_a_period() -> None:
    assert format_authors(["A", "B", "C"], limit=2) == "A, B et al."
    assert format_authors(["A"], truncated=True, style="bibtex") == "A and others"
    assert (
        join_sentences(["Title", format_authors(["Henk Tillman"], True), "ICLR 2025"])
        == "Title. Henk Tillman et al. ICLR 2025"
    )


def test_latex_and_markdown_read_as_text_in_the_terminal() -> None:
    assert plain(r"$O\left(n^2\right)$ time") == "O(n^2) time"
    assert plain(r"$\tilde{O}(d)$ regret and $\widetilde{\mathcal{O}}(\sqrt{T})$") == "Õ(d) regret and Õ(√T)"
    assert plain(r"$\frac{1}{2}$ of $\log n$ and $2\times$ faster") == "1/2 of log n and 2× faster"
    assert plain("an _it_ emphasis, snake_case and $l_1$ stay") == "an it emphasis, snake_case and l_1 stay"
    assert plain("it costs $5 and $10") == "it costs $5 and $10"  # prices are not math


def test_one_period_rule_for_names_and_labels() -> None:
    assert end_sentence("Authors: A, B et al.") == "Authors: A, B et al."
    assert end_sentence("Also relevant: **A label…**") == "Also relevant: **A label…**"
    assert end_sentence("Also relevant: **A**") == "Also relevant: **A**."
    assert join_sentences(["Understanding how features evolve…", "ICLR 2025"]) == (
        "Understanding how features evolve… ICLR 2025"
    )


KAN_ANALYSIS = (
    "Kolmogorov–Arnold Network (KAN) is a network structure recently proposed in Liu et al. (2024) that offers "
    "improved interpretability. This work provides a rigorous theoretical analysis of KAN by establishing "
    "generalization bounds for KAN equipped with activation functions."
)


def test_a_label_is_a_name_the_paper_introduces_not_one_it_cites() -> None:
    assert cited_names(KAN_ANALYSIS) >= {"kan"}
    assert derive_label(KAN_ANALYSIS) != "KAN"
    kans = "Inspired by the Kolmogorov-Arnold representation theorem, we propose Kolmogorov-Arnold Networks (KANs)."
    assert derive_label(kans) == "KANs"
    assert introduced_name("We propose FooNet. FooNet is introduced in Section 3 in detail.") == "FooNet"


def test_names_a_paper_uses_are_not_the_name_it_introduces() -> None:
    mba = (
        "Model-based architectures (MBAs), such as loop unrolling methods, are interpretable. In this work, we "
        "propose a simple yet effective training scheme for MBAs, called SGD jittering, which injects noise."
    )
    assert introduced_name(mba) == "SGD jittering"
    assert introduced_name("We propose a client selection rule for FedAvg that is fair.") == ""
    assert introduced_name("This work provides an analysis of GradNet using tools from RKHS theory.") == ""


def test_a_name_may_open_with_digits() -> None:
    """ "Which paper proposes 3D-MolT5?" must look for 3D-MolT5, not for "D-MolT5"."""
    assert names_in("Which paper proposes 3D-MolT5?") == {"3D-MolT5"}
    assert {"3D-MolT5", "3DGS"} <= names_in("3D-MolT5 and 3DGS in 3D, 10x faster") and "3D" not in names_in("3D")
    assert names_in("trained on 8xA100 with 24GB at 30FPS") == set()  # units and GPU counts are no names


def test_bibtex_entries_carry_no_control_sequences_in_key_or_fields() -> None:
    """The UI and MCP hand BibTeX out without the CLI's printing, so the entry itself is inert."""
    from rag.answer.cite import bibtex_entry
    from rag.types import Paper

    paper = Paper(
        id="X1",
        title="\x1b[31mZorblax\x1b[0m: Coloured \x1b]52;c;Y3VybA==\x07Titles",
        authors=["Eve \x9b31mMallory\x1b[0m", "Trudy Intruder"],
        venue="ICLR\x1b[2J",
        year=2025,
    )
    entry = bibtex_entry(paper)
    assert entry.startswith("@inproceedings{mallory2025zorblax,\n")
    assert "title = {Zorblax: Coloured Titles}" in entry
    assert "author = {Eve Mallory and Trudy Intruder}" in entry
    assert "booktitle = {ICLR}" in entry
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", entry)
