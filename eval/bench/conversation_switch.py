"""New questions in a conversation, as a class built from the held-out sets:
`python -m eval.bench.conversation_switch --home DIR --split S [--family NAME ...] [--n 400] [--seed 2312]`.

Every first-turn question of the chosen families and split (default: the conference writers',
catalogue questions aside) is asked twice: alone, and in a chat after a first turn about another
paper (the opening question of one of the mechanical conversations, `conf-conversations`, of the
same split, drawn with the seed). A question right alone (answerable: its gold paper cited;
unanswerable: abstained) and wrong in the chat was hijacked by the conversation: read as a
follow-up, it was answered from the previous turn's paper. The follow-ups of the same split
(`conf-conversations` generic ones, the writers' own) are asked after their history too: what the
reading rules must not lose. `--family conf-topic-pairs --family conf-topic-absent` builds the
short topic questions' class ("Which papers use GNNs for large language models?").

Why a class: the rule that reads a question both ways was chosen on long "Which paper ..."
sentences; a short request for papers, or a pronoun whose subject is in the question, was never
among them (docs/benchmarks.md, session 23)."""

from __future__ import annotations

import json
import random
from typing import Any

from eval.bench.built_class import class_parser, conference_items, open_home, right


def main() -> None:
    parser = class_parser(__doc__)
    parser.add_argument("--family", action="append", help="source name prefix (default conf-written)")
    parser.add_argument("--n", type=int, default=400, help="class questions to ask (seeded sample)")
    parser.add_argument("--seed", type=int, default=2312)
    args = parser.parse_args()
    app, catalog = open_home(args.home)
    families = tuple(args.family or ["conf-written"])
    openings: list[tuple[str, set[str]]] = []
    questions, follow_ups = [], []
    for source, item in conference_items(catalog, args.split):
        if item.history and item.kind in ("generic-follow-up", "follow-up"):
            follow_ups.append(item)
            if source.name == "conf-conversations":
                openings.append((item.history[0], set(item.gold_ids)))
        elif source.name.startswith(families) and not item.history and item.kind != "catalogue":
            questions.append(item)
    rng = random.Random(args.seed)
    rng.shuffle(questions)
    questions = questions[: args.n]

    rows: list[dict[str, Any]] = []
    for item in questions:
        opening, _ = rng.choice([o for o in openings if not o[1] & set(item.gold_ids)])
        session = app.chat()
        session.ask(opening)
        in_chat = session.ask(item.question)
        gold = set(item.gold_ids)
        rows.append(
            {
                "id": item.id,
                "question": item.question,
                "opening": opening,
                "alone": right(app.ask(item.question), gold, item.answerable),
                "chat": right(in_chat, gold, item.answerable),
                "followed": (in_chat.query or item.question) != item.question,
            }
        )
    followed: list[dict[str, Any]] = []
    for item in follow_ups:
        session = app.chat()
        for turn in item.history:
            session.ask(turn)
        answer = session.ask(item.question)
        followed.append({"id": item.id, "kind": item.kind, "right": right(answer, set(item.gold_ids), item.answerable)})
    figures = {
        "split": args.split,
        "families": families,
        "class questions": len(rows),
        "right alone": sum(r["alone"] for r in rows),
        "right in the chat": sum(r["chat"] for r in rows),
        "hijacked (right alone, wrong in the chat)": sum(r["alone"] and not r["chat"] for r in rows),
        "read as a follow-up": sum(r["followed"] for r in rows),
        "follow-ups right": f"{sum(f['right'] for f in followed)} of {len(followed)}",
    }
    print(json.dumps(figures, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"figures": figures, "class": rows, "follow_ups": followed}, indent=1))


if __name__ == "__main__":
    main()
