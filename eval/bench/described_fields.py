"""Field questions about a described paper, as a class built from the held-out sets:
`python -m eval.bench.described_fields --home DIR --split S [--form authors|decision] [--out FILE]`.

"Who wrote the paper where a small local model teams up with a cloud LLM?" goes to the catalogue,
which must first find the paper the description names. The writers' questions that describe one
paper (paraphrases, title-only papers, and their near misses) are rewritten by fixed patterns into
that form ("Is there a paper that X?" -> "Who wrote the paper that X?", or with `--form decision`
"Was the paper that X an oral?"; questions matching no pattern are left out) and asked once.
Right: for an answerable question, the answer's first cited paper is the gold one (the field shown
is its); for a near miss, an abstention.

Why a class: a blind user probe (session 23) found "Who wrote the paper where …" abstaining where
"Which paper …" answered, and the issue's "names the authors of another paper"; neither the
writers' sets nor the mechanical ones ask for a described paper's authors."""

from __future__ import annotations

import json
import re
from typing import Any

from eval.bench.built_class import class_parser, conference_items, open_home, right

# (pattern over the writers' question, its rewrite): the first that matches is used.
REWRITES: tuple[tuple[str, str], ...] = (
    (
        r"(?i)^(?:is|are) there (?:any )?(?:a |an )?(?:paper|papers|work|study|studies|research)\s+"
        r"(that|which|where|on|about|using|proposing|showing|in which)\b\s*(.*)",
        r"Who wrote the paper \1 \2",
    ),
    (r"(?i)^(?:is|are) there (?:any )?(an?|any) (.*)", r"Who wrote the paper on \1 \2"),
    (r"(?i)^has anyone (.*)", r"Who wrote the paper that \1"),
    (r"(?i)^(?:which|what) (?:paper|work|study)\s+(.*)", r"Who wrote the paper that \1"),
    (r"(?i)^(?:what'?s|what is) the paper (where|that|which|on|about|in which)\s+(.*)", r"Who wrote the paper \1 \2"),
    (
        r"(?i)^(?:i'?m )?looking for (?:a |the )?(?:paper|work)\s+(that|which|where|on|about)\s+(.*)",
        r"Who wrote the paper \1 \2",
    ),
    (
        r"(?i)^(?:any |a )?(?:paper|work) (that|which|where|on|about|showing|proposing)\s+(.*)",
        r"Who wrote the paper \1 \2",
    ),
)
KINDS = ("paraphrase", "title-only", "near-miss", "factoid")
# How each form asks for the field, around the described paper ("the paper that X").
FORMS = {"authors": "Who wrote {paper}?", "decision": "Was {paper} an oral?"}


def rewrite(question: str, form: str = "authors") -> str | None:
    """The question as a request for the described paper's field (`FORMS`), or None."""
    for pattern, replacement in REWRITES:
        if re.match(pattern, question.strip()):
            asked = re.sub(r"\s+", " ", re.sub(pattern, replacement, question.strip())).rstrip(" ?.")
            return FORMS[form].format(paper=asked.removeprefix("Who wrote "))
    return None


def main() -> None:
    parser = class_parser(__doc__)
    parser.add_argument("--form", default="authors", choices=sorted(FORMS), help="the field asked for")
    args = parser.parse_args()
    app, catalog = open_home(args.home)
    rows: list[dict[str, Any]] = []
    for source, item in conference_items(catalog, args.split):
        if not source.name.startswith("conf-written") or item.history or item.kind not in KINDS:
            continue
        asked = rewrite(item.question, args.form)
        if asked is None:
            continue
        answer = app.ask(asked)
        first = answer.citations[0].paper.id if answer.citations and not answer.abstained else None
        rows.append(
            {"id": item.id, "source": source.name, "answerable": item.answerable, "asked": asked}
            | {"kind": answer.kind, "abstained": answer.abstained, "first": first}
            | {"right": right(answer, set(item.gold_ids), item.answerable, first_only=True)}
        )
    figures: dict[str, Any] = {"split": args.split, "form": args.form}
    for answerable, name in ((True, "answerable"), (False, "near misses")):
        part = [r for r in rows if r["answerable"] is answerable]
        figures[name] = {
            "questions": len(part),
            "right": sum(r["right"] for r in part),
            "abstained": sum(r["abstained"] for r in part),
            "sent to the catalogue": sum(r["kind"] in ("authors-of", "field-of") for r in part),
        }
    print(json.dumps(figures, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"figures": figures, "class": rows}, indent=1))


if __name__ == "__main__":
    main()
