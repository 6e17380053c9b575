from rag.papers.chunk import Chunker
from rag.tokens import count_tokens
from rag.types import ChunkId, Paper


def _sentences(n: int) -> str:
    return " ".join(f"Sentence number {i} describes experiment {i} on dataset D{i} with care." for i in range(n))


def test_short_abstract_is_one_chunk_headed_by_its_title() -> None:
    paper = Paper(id="p", title="A Title", abstract=_sentences(5))
    chunks = Chunker(512, 64).chunk(paper)
    assert len(chunks) == 1 and chunks[0].text.startswith("A Title\n")
    assert chunks[0].id.paper_id == "p" and chunks[0].id.n == 0
    assert chunks[0].tokens == count_tokens(chunks[0].text)


def test_long_text_splits_on_sentences_with_overlap_within_budget() -> None:
    paper = Paper(id="long", label="LongNet", abstract=_sentences(120))
    chunks = Chunker(256, 32).chunk(paper)
    assert len(chunks) > 3
    assert [c.id.n for c in chunks] == list(range(len(chunks))) and len({c.id.version for c in chunks}) == 1
    for chunk in chunks:
        assert chunk.text.startswith("LongNet\n") and count_tokens(chunk.text) <= 256
        assert chunk.text.rstrip().endswith(".")  # cut at a sentence boundary
    first, second = (c.text.split("\n", 1)[1] for c in chunks[:2])
    assert first.split(". ")[-1].strip(". ") in second  # the next chunk repeats the last sentence


def test_a_title_only_paper_is_one_chunk_of_its_title() -> None:
    chunks = Chunker().chunk(Paper(id="t", title="Only a title"))
    assert [c.text for c in chunks] == ["Only a title"]


def test_the_version_changes_with_the_text_and_ids_round_trip() -> None:
    chunker = Chunker()
    a = chunker.chunk(Paper(id="x#1", title="T", abstract="One text about graphs."))[0].id
    b = chunker.chunk(Paper(id="x#1", title="T", abstract="Another text about graphs."))[0].id
    assert a.version != b.version and ChunkId.parse(str(a)) == a and a.paper_id == "x#1"
