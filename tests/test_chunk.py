from rag.chunk import Chunker, count_tokens
from rag.types import Paper


def _sentences(n: int) -> str:
    return " ".join(f"Sentence number {i} describes experiment {i} on dataset D{i} with care." for i in range(n))


def test_short_abstract_is_one_chunk_headed_by_its_title() -> None:
    paper = Paper(id="p", title="A Title", abstract=_sentences(5))
    chunks = Chunker(512, 64).chunk(paper)
    assert len(chunks) == 1 and chunks[0].text.startswith("A Title\n") and chunks[0].id == "p#0"
    assert chunks[0].tokens == count_tokens(chunks[0].text)


def test_long_text_splits_on_sentences_with_overlap_within_budget() -> None:
    paper = Paper(id="long", label="LongNet", abstract=_sentences(120))
    chunks = Chunker(256, 32).chunk(paper)
    assert len(chunks) > 3
    assert [c.id for c in chunks] == [f"long#{i}" for i in range(len(chunks))]
    for chunk in chunks:
        assert chunk.text.startswith("LongNet\n") and chunk.tokens <= 256
        assert chunk.text.rstrip().endswith(".")  # cut at a sentence boundary
    first, second = (c.text.split("\n", 1)[1] for c in chunks[:2])
    assert first.split(". ")[-1].strip(". ") in second  # the next chunk repeats the last sentence


def test_no_abstract_no_chunks() -> None:
    assert Chunker().chunk(Paper(id="t", title="Only a title")) == []
