"""What the class benches built from the held-out sets share (`conversation_switch`,
`described_fields`, `pasted_markup`): the conference's questions of one split, and what counts as
a right answer, so that every class is scored as `eval.heldout` scores its source questions."""

from __future__ import annotations

import argparse
import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rag.types import Answer


def class_parser(doc: str) -> argparse.ArgumentParser:
    """The arguments every class bench takes: the conference index, the split, where to write
    every item."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="an index of the conference (RAG_HOME)")
    parser.add_argument("--split", default="validation", choices=("train", "validation", "test"))
    parser.add_argument("--out", type=Path, help="write every item as JSON")
    return parser


def open_home(home: Path) -> tuple[Any, Any]:
    """The App over `home` and its catalogue; RAG_HOME is set before the settings are read."""
    os.environ["RAG_HOME"] = str(home)
    from rag.app import App
    from rag.settings import Settings

    app = App(Settings())
    return app, app.index.load().catalog


def conference_items(catalog: Any, split: str) -> Iterator[tuple[Any, Any]]:
    """(source, item) of every measured conference source, the paper-removed index's included,
    for one split."""
    from eval.heldout import split_items

    for source, item, _, at in itertools.chain(
        split_items("conf", catalog, measured=True), split_items("conf-removed", catalog, measured=True)
    ):
        if at == split:
            yield source, item


def right(answer: Answer, gold: set[str], answerable: bool, first_only: bool = False) -> bool:
    """An answerable question's gold paper cited (the first citation with `first_only`: a
    field question names one paper), an unanswerable one's abstention."""
    if not answerable:
        return answer.abstained
    cited = [c.paper.id for c in answer.citations]
    return not answer.abstained and bool(set(cited[:1] if first_only else cited) & gold)
