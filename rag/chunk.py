"""Paper -> Chunks. Token counts come from tiktoken (cl100k_base, shipped with llama-index-core).

Most abstracts (p99 about 410 tokens in the ICLR/ICML lists) fit one chunk of 512 tokens; longer
texts split on sentence boundaries with overlap, by llama-index's SentenceSplitter. The title (or
label) heads every chunk, because a chunk without it loses the name a user searches for."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import tiktoken
from rag.types import Chunk, Paper

ENCODING = "cl100k_base"
HEAD_RESERVE = 48  # tokens kept free in each chunk for the title or label that heads it


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


class Chunker:
    def __init__(self, chunk_tokens: int = 512, overlap: int = 64) -> None:
        self.chunk_tokens = chunk_tokens
        self.overlap = min(overlap, chunk_tokens // 4)
        self._splitter: Any = None

    def _split(self, text: str) -> list[str]:
        """Sentence-boundary split with overlap; built on first use, since importing
        llama-index costs a second that search and ask never need."""
        if self._splitter is None:
            from llama_index.core.node_parser import SentenceSplitter

            self._splitter = SentenceSplitter(
                chunk_size=self.chunk_tokens - HEAD_RESERVE,
                chunk_overlap=self.overlap,
                tokenizer=lambda t: encoding().encode(t, disallowed_special=()),
            )
        return list(self._splitter.split_text(text))

    @property
    def fingerprint(self) -> str:
        return f"c{self.chunk_tokens}o{self.overlap}"

    def chunk(self, paper: Paper) -> list[Chunk]:
        if not paper.abstract:
            return []
        head = paper.display_title
        budget = self.chunk_tokens - count_tokens(head) - 2
        body = paper.abstract
        pieces = [body] if count_tokens(body) <= budget else self._split(body)
        chunks = []
        for index, piece in enumerate(pieces):
            text = f"{head}\n{piece}"
            chunks.append(
                Chunk(id=f"{paper.id}#{index}", paper_id=paper.id, index=index, text=text, tokens=count_tokens(text))
            )
        return chunks
