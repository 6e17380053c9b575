"""One view of the index per request: an answer, a chat turn or a search lists the change log's
segments in Chroma once, however many of its parts read the index (five times per answer before)."""

from __future__ import annotations

from pathlib import Path

from rag.app import App
from rag.settings import Settings
from rag.store.chroma import ChromaStore


class CountingStore(ChromaStore):
    """A real Chroma store that counts how often the log's segments are listed (each listing is a
    query to Chroma: the cost of bringing the index up to date)."""

    listings = 0

    def segment_ids(self) -> list[str]:
        CountingStore.listings += 1
        return super().segment_ids()


def counting_app(home: Path) -> App:
    app = App(Settings(home=home))
    app.__dict__["store"] = CountingStore(app.store.fingerprint, path=Path(home) / "chroma")
    return app  # every other part is built from this store


def test_an_answer_and_a_chat_turn_bring_the_index_up_to_date_once(sample_app: App) -> None:
    app = counting_app(sample_app.settings.home)
    app.ask("warm-up: open the index")
    CountingStore.listings = 0
    answer = app.ask("Which paper introduced PersuasionBench?")
    assert not answer.abstained and CountingStore.listings == 1
    session = app.chat()
    CountingStore.listings = 0
    session.ask("Which paper introduced PersuasionBench?")
    session.ask("Who are its authors?")
    assert CountingStore.listings == 2
    CountingStore.listings = 0
    app.search("sparse autoencoders")
    assert CountingStore.listings == 1
