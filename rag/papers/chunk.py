"""Paper -> Chunks. Token counts come from tiktoken (cl100k_base, shipped with llama-index-core).

Most abstracts (p99 about 410 tokens in the ICLR/ICML lists) fit one chunk of 512 tokens; longer
texts split on sentence boundaries with overlap, by llama-index's SentenceSplitter. The title (or
label) heads every chunk, because a chunk without it loses the name a user searches for. A paper
without an abstract is one chunk: its title, so it is found by title and topic too.

A paper's chunks share a version, a hash of their texts: chunk ids carry it, so the vectors of an
old text and of a new one never share an id."""

from __future__ import annotations

from typing import Any

from rag.text import short_hash
from rag.tokens import count_tokens, encoding
from rag.types import Chunk, ChunkId, Paper

HEAD_RESERVE = 48  # tokens kept free in each chunk for the title or label that heads it


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
        head = paper.display_title
        if not paper.abstract:
            texts = [head]
            tokens = [count_tokens(head)]
        else:
            whole = f"{head}\n{paper.abstract}"
            whole_tokens = count_tokens(whole)  # one encoding for the common case: it fits
            if whole_tokens <= self.chunk_tokens:
                texts, tokens = [whole], [whole_tokens]
            else:
                texts = [f"{head}\n{piece}" for piece in self._split(paper.abstract)]
                tokens = [count_tokens(t) for t in texts]
        version = short_hash("\x1f".join(texts), 10)
        return [Chunk(ChunkId(paper.id, version, i), text, n) for i, (text, n) in enumerate(zip(texts, tokens))]

    def texts(self, paper: Paper, n_chunks: int) -> list[str]:
        """The chunk texts of a paper whose chunk count is known: one chunk needs no tokenising
        (a title-headed abstract, or the title alone)."""
        if n_chunks <= 1:
            head = paper.display_title
            return [f"{head}\n{paper.abstract}" if paper.abstract else head]
        return [c.text for c in self.chunk(paper)]

    def version_of(self, paper: Paper) -> tuple[str, int]:
        """(text version, number of chunks): what the catalogue records for a paper."""
        chunks = self.chunk(paper)
        return chunks[0].id.version, len(chunks)
