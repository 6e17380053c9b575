"""Questions pasted with HTML, as a class built from the held-out sets:
`python -m eval.bench.pasted_markup --home DIR --split S [--n 300] [--seed 2412] [--out FILE]`.

Every first-turn question of the conference writers' sets of a split (a seeded sample of `--n`) is
asked twice: as written, and marked up as a page or a rich-text box would hand it over (a paragraph
around it, one to three of its words in bold, italic, a link or a span, and one question in three
behind a script element). A question right as written (answerable: its gold paper cited;
unanswerable: abstained) and wrong marked up lost its answer to the markup.

Why a class: a blind user probe (session 23) asked "<script>alert(1)</script> which papers use
<b>graph neural networks</b> for <i>drug discovery</i>?" and the answer abstained, while the same
words without tags were answered."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from eval.bench.built_class import class_parser, conference_items, open_home, right

WRAPS = ("<b>{}</b>", "<i>{}</i>", '<a href="https://example.org/p?id=7">{}</a>', '<span class="hl">{}</span>')


def marked_up(question: str, rng: random.Random) -> str:
    """The question in a paragraph, some of its words wrapped, sometimes after a script."""
    words = question.split(" ")
    spots = [i for i, w in enumerate(words) if re.fullmatch(r"[A-Za-z][\w-]{3,}", w)]
    for i in rng.sample(spots, min(len(spots), rng.randint(1, 3))):
        words[i] = rng.choice(WRAPS).format(words[i])
    text = "<p>" + " ".join(words) + "</p>"
    return ("<script>alert(document.cookie)</script>" + text) if rng.random() < 1 / 3 else text


def main() -> None:
    parser = class_parser(__doc__)
    parser.add_argument("--n", type=int, default=300, help="questions to ask (seeded sample)")
    parser.add_argument("--seed", type=int, default=2412)
    args = parser.parse_args()
    app, catalog = open_home(args.home)
    items = [
        item
        for source, item in conference_items(catalog, args.split)
        if source.name.startswith("conf-written") and not item.history
    ]
    rng = random.Random(args.seed)
    rng.shuffle(items)

    rows: list[dict[str, Any]] = []
    for item in items[: args.n]:
        asked = marked_up(item.question, rng)
        gold = set(item.gold_ids)
        rows.append(
            {
                "id": item.id,
                "answerable": item.answerable,
                "marked_up": asked,
                "plain": right(app.ask(item.question), gold, item.answerable),
                "marked": right(app.ask(asked), gold, item.answerable),
            }
        )
    figures = {
        "split": args.split,
        "questions": len(rows),
        "right as written": sum(r["plain"] for r in rows),
        "right marked up": sum(r["marked"] for r in rows),
        "lost to the markup (right as written, wrong marked up)": sum(r["plain"] and not r["marked"] for r in rows),
    }
    print(json.dumps(figures, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"figures": figures, "class": rows}, indent=1))


if __name__ == "__main__":
    main()
