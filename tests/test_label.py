from rag.label import derive_label
from rag.readers import read_paths
from tests.conftest import SAMPLE


def test_sample_labels_name_the_introduced_method() -> None:
    labels = {derive_label(p.abstract) for p in read_paths([SAMPLE]).papers}
    assert {"Celcomen", "NUCFL", "PLNL", "PersuasionBench", "UNI", "Logic-Logit", "MIB"} <= labels


def test_label_falls_back_to_clipped_first_sentence() -> None:
    text = "Graphs are everywhere in biology and chemistry and social science, and we study them at length. More."
    label = derive_label(text)
    assert label.startswith("Graphs are everywhere") and len(label) <= 61 and label.endswith("…")
