"""Every token count and budget of the project: tiktoken's cl100k_base, shipped with llama-index-core
(its cache folder is set at start-up, `rag.__init__`, so nothing downloads). Chunk sizes, prompt
budgets and usage figures all count with it."""

from __future__ import annotations

from functools import lru_cache

import tiktoken

ENCODING = "cl100k_base"


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))
