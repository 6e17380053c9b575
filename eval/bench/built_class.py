"""What the class benches built from the held-out sets share (`conversation_switch`,
`described_fields`, `pasted_markup`): the conference's questions of one split, and what counts as
a right answer, so that every class is scored as `eval.heldout` scores its source questions."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from rag.types import Answer


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
