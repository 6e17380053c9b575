"""A 2-D map of a collection: where each paper sits, which cluster it belongs to, and what each
cluster is about. Pure computation over vectors and texts (no store, no I/O besides `save`/`load`).

Why this shape, without UMAP or t-SNE (they pull numba/PyTorch and take minutes at 7,000 papers):
1. PCA to at most 50 dimensions (the vectors' main directions; cheap, removes noise);
2. k-means (k-means++ start, fixed seed) in that space gives the clusters;
3. the 2-D picture: each cluster a disc (area in proportion to its papers), placed by classical
   MDS of the cluster centres (similar topics sit near each other) and pushed apart until no two
   discs overlap; inside its disc a paper is placed along the cluster's own two main directions,
   and a paper nearly as close to a second cluster leans toward it. A linear projection of 16
   clusters onto a plane (PCA, or Fisher's discriminant) mixes the colours into confetti at 7,000
   papers; this keeps a colour a region, at the price of distances between clusters being only
   roughly those of the vectors;
4. each cluster is named by its distinctive words: words and word pairs frequent in its papers'
   titles and abstracts and rare in the rest (a class-based TF-IDF).
Everything is deterministic for a given input, so a cached map and a recomputed one agree."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.npy import load_arrays
from rag.text import GENERIC_WORDS, STOPWORDS, fold, plain


@dataclass
class PaperMap:
    """Positions in [0, 1]², one cluster per paper, a name per cluster, and whether the paper was
    placed from its abstract's vectors (`embedded`) or from its title alone."""

    ids: list[str]
    xy: np.ndarray  # (n, 2) float32
    cluster: np.ndarray  # (n,) int32
    names: list[str]  # one per cluster
    embedded: np.ndarray  # (n,) bool
    generation: str = ""

    def __len__(self) -> int:
        return len(self.ids)

    def save(self, path: Path) -> None:
        """Atomically (a reader never sees half a file)."""
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(
            tmp,
            ids=np.array(self.ids, dtype=str),
            xy=self.xy,
            cluster=self.cluster,
            names=np.array(self.names, dtype=str),
            embedded=self.embedded,
            generation=np.array(self.generation),
        )
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> PaperMap:
        with load_arrays(path) as data:
            return cls(
                [str(i) for i in data["ids"]],
                data["xy"].astype(np.float32),
                data["cluster"].astype(np.int32),
                [str(n) for n in data["names"]],
                data["embedded"].astype(bool),
                str(data["generation"]),
            )


def default_k(n: int) -> int:
    """About 4 clusters for a hundred papers, 16 (the most colours one tells apart) for thousands."""
    return int(min(16, max(2, round(math.sqrt(n) / 2.5)))) if n >= 4 else 1


def _kmeans(x: np.ndarray, k: int, seed: int = 0, iterations: int = 40, starts: int = 4) -> np.ndarray:
    """Best of `starts` k-means++ runs (least within-cluster spread): one start can merge two
    clusters and split a third."""
    best: tuple[float, np.ndarray] | None = None
    for start in range(starts):
        labels = _kmeans_once(x, k, seed + start, iterations)
        spread = float(sum(((x[labels == j] - x[labels == j].mean(0)) ** 2).sum() for j in np.unique(labels)))
        if best is None or spread < best[0]:
            best = (spread, labels)
    assert best is not None
    return best[1]


def _kmeans_once(x: np.ndarray, k: int, seed: int, iterations: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = len(x)
    centres = [x[rng.integers(n)]]
    dist = ((x - centres[0]) ** 2).sum(1)
    for _ in range(1, k):  # k-means++: far points are likelier seeds
        total = dist.sum()
        pick = rng.choice(n, p=dist / total) if total > 0 else rng.integers(n)
        centres.append(x[pick])
        dist = np.minimum(dist, ((x - x[pick]) ** 2).sum(1))
    c = np.array(centres)
    labels = np.zeros(n, dtype=np.int32)
    sq = (x**2).sum(1)[:, None]
    for step in range(iterations):
        d = sq - 2 * x @ c.T + (c**2).sum(1)[None, :]
        new = d.argmin(1).astype(np.int32)
        if step and np.array_equal(new, labels):
            break
        labels = new
        for j in range(k):
            members = x[labels == j]
            c[j] = members.mean(0) if len(members) else x[rng.integers(n)]
    return labels


def _absorb_small(x: np.ndarray, labels: np.ndarray, least: int) -> np.ndarray:
    """Clusters of fewer than `least` papers join the nearest larger one and the rest are
    renumbered 0..k-1 (a two-paper cluster is an outlier, not a topic, and Fisher's projection
    would fling it to the edge and squash everything else)."""
    sizes = np.bincount(labels)
    big = [j for j in range(len(sizes)) if sizes[j] >= least]
    if not big or len(big) == len(sizes):
        return labels
    centres = np.array([x[labels == j].mean(0) for j in big])
    out = labels.copy()
    for i in np.flatnonzero(~np.isin(labels, big)):
        out[i] = big[int(((centres - x[i]) ** 2).sum(1).argmin())]
    remap = {old: new for new, old in enumerate(big)}
    return np.array([remap[int(v)] for v in out], dtype=np.int32)


def _centre_layout(centres: np.ndarray, radii: np.ndarray, steps: int = 300) -> np.ndarray:
    """2-D positions for the clusters: classical MDS of their centres' distances (similar topics
    end up near each other), then pushed apart until discs of the given radii do not overlap."""
    k = len(centres)
    if k == 1:
        return np.zeros((1, 2))
    sq = ((centres[:, None, :] - centres[None, :, :]) ** 2).sum(-1)
    j = np.eye(k) - 1.0 / k
    values, vectors = np.linalg.eigh(-0.5 * j @ sq @ j)
    pos = vectors[:, ::-1][:, :2] * np.sqrt(np.maximum(values[::-1][:2], 1e-12))
    spread = np.sqrt((pos**2).sum(1)).max() or 1.0
    pos = pos / spread * radii.sum() * 0.3  # start crowded: the push below opens just enough room
    rng = np.random.default_rng(0)
    pos += rng.normal(scale=1e-6, size=pos.shape)  # coincident centres still get a direction
    for _ in range(steps):
        gap = pos[:, None, :] - pos[None, :, :]
        dist = np.sqrt((gap**2).sum(-1)) + np.eye(k)
        need = (radii[:, None] + radii[None, :]) * 1.15
        overlap = np.clip(need - dist, 0, None) * (1 - np.eye(k))
        if not overlap.any():
            break
        pos += (gap / dist[..., None] * overlap[..., None] * 0.5).sum(1)
    return pos


def _layout(x: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Each cluster a disc (area in proportion to its papers) placed by `_centre_layout`; inside
    it, papers spread along the cluster's own two main directions; a paper almost as close to a
    second cluster leans toward that one, so borders read as borders."""
    sizes = np.bincount(labels, minlength=k).astype(float)
    centres = np.array([x[labels == j].mean(0) for j in range(k)])
    radii = np.sqrt(sizes / sizes.max())
    anchor = _centre_layout(centres, radii)
    xy = np.zeros((len(x), 2))
    for j in range(k):
        idx = np.flatnonzero(labels == j)
        dev = x[idx] - centres[j]
        if len(idx) > 2:
            _, _, vt = np.linalg.svd(dev, full_matrices=False)
            local = dev @ vt[:2].T
        else:
            local = np.zeros((len(idx), 2))
        norm = np.sqrt((local**2).sum(1))
        scale = np.percentile(norm, 90) if len(idx) > 2 and norm.any() else 1.0
        squeezed = np.tanh(norm / (scale or 1.0)) / np.maximum(norm, 1e-12)  # radius -> within the disc
        xy[idx] = anchor[j] + local * squeezed[:, None] * radii[j] * 0.95
    if k > 1:  # lean toward the second-closest cluster, by how close a second it is
        d = ((x[:, None, :] - centres[None, :, :]) ** 2).sum(-1)
        order = np.argsort(d, axis=1)
        first, second = order[:, 0], order[:, 1]
        rows = np.arange(len(x))
        margin = (d[rows, second] - d[rows, first]) / np.maximum(d[rows, first], 1e-12)
        lean = 0.35 * np.exp(-4 * margin)[:, None]
        toward = anchor[second] - anchor[labels]
        length = np.maximum(np.sqrt((toward**2).sum(1, keepdims=True)), 1e-12)
        xy += lean * toward / length * radii[labels][:, None]
    return xy


def _scale(xy: np.ndarray) -> np.ndarray:
    """To [0, 1]² keeping the aspect (the layout keeps every paper inside its cluster's disc, so
    there are no far outliers to clip)."""
    if not len(xy):
        return xy.astype(np.float32)
    low = xy.min(0)
    high = xy.max(0)
    span = float(max((high - low).max(), 1e-9))
    out = (np.clip(xy, low, high) - low) / span
    out += (1 - (high - low) / span) / 2  # centre the shorter axis
    return out.astype(np.float32)


_WORD = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def _terms(text: str) -> set[str]:
    words = [w for w in _WORD.findall(fold(plain(text))) if len(w) > 2]
    keep = [w if w not in STOPWORDS and w not in GENERIC_WORDS else "" for w in words]
    terms = {w for w in keep if w}
    terms |= {f"{a} {b}" for a, b in zip(keep, keep[1:]) if a and b}
    return terms


def cluster_names(texts: Sequence[str], labels: np.ndarray, k: int, words: int = 3) -> list[str]:
    """Each cluster's most distinctive terms over titles and abstracts: share of the cluster's
    papers that use the term times the log of how much likelier they are to use it than the whole
    collection; a word pair wins over its own words ("sparse autoencoders", not "sparse").

    Two rules keep the names apart on the map: within a name no word appears twice, plurals
    included (not "neural networks, networks gnns", nor "llms, llm"), and a word that ranks among
    the top terms of several clusters names only the one it is most distinctive of (not "regret,
    reinforcement, policy" beside "reinforcement, policy, agents"), unless a cluster has no term
    left without such words."""
    docs = [_terms(t) for t in texts]
    overall: Counter[str] = Counter()
    for terms in docs:
        overall.update(terms)
    n = len(docs)
    ranked: list[list[tuple[float, str]]] = []
    for j in range(k):
        members = [docs[i] for i in np.flatnonzero(labels == j)]
        counts: Counter[str] = Counter()
        for terms in members:
            counts.update(terms)
        floor = max(2, len(members) * 0.04)
        size = max(len(members), 1)
        ranked.append(
            sorted(  # share in the cluster × log(lift over the collection): frequent here, rare elsewhere
                ((c / size) * math.log((c / size) / (overall[t] / n)) * (1.3 if " " in t else 1.0), t)
                for t, c in counts.items()
                if c >= floor and overall[t] < n * 0.5
            )[::-1]
        )
    owner: dict[str, tuple[float, int]] = {}  # word stem -> (best score of a top term holding it, cluster)
    for j, scored in enumerate(ranked):
        for score, term in scored[: words * 4]:
            for stem in _stems(term):
                if stem not in owner or score > owner[stem][0]:
                    owner[stem] = (score, j)

    def pick(scored: list[tuple[float, str]], allowed: Callable[[set[str]], bool]) -> list[str]:
        chosen: list[str] = []
        used: set[str] = set()
        for _, term in scored:
            stems = _stems(term)
            if stems & used or not allowed(stems):
                continue
            chosen.append(term)
            used |= stems
            if len(chosen) == words:
                break
        return chosen

    def owned_by(j: int) -> Callable[[set[str]], bool]:
        return lambda stems: all(owner.get(w, (0.0, j))[1] == j for w in stems)

    picked = [pick(scored, owned_by(j)) for j, scored in enumerate(ranked)]
    for j, scored in enumerate(ranked):
        if not picked[j]:  # every top word is another cluster's: any word no other name uses
            taken = {w for i, terms in enumerate(picked) if i != j for t in terms for w in _stems(t)}
            picked[j] = pick(scored, lambda stems: not stems & taken)
    return [", ".join(terms) or f"group {j + 1}" for j, terms in enumerate(picked)]


def _stems(term: str) -> set[str]:
    """The words of a term without a plural ending, so "algorithm, algorithms" or "llm, llms" count
    as one word twice."""
    return {
        w[:-3] + "y" if w.endswith("ies") else w[:-1] if w.endswith("s") and len(w) > 3 else w for w in term.split()
    }


def compute_map(
    ids: Sequence[str],
    vectors: np.ndarray,
    texts: Sequence[str],
    embedded: np.ndarray | None = None,
    k: int | None = None,
    seed: int = 0,
    generation: str = "",
) -> PaperMap:
    """The map of `len(ids)` papers from their vectors (one row each) and texts (title + abstract,
    for naming the clusters)."""
    n = len(ids)
    if n == 0:
        return PaperMap([], np.zeros((0, 2), np.float32), np.zeros(0, np.int32), [], np.zeros(0, bool), generation)
    x = np.asarray(vectors, dtype=np.float64)
    x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    x -= x.mean(0)
    dims = min(50, x.shape[1], max(n - 1, 1))
    _, vectors_ = np.linalg.eigh(x.T @ x)
    reduced = x @ vectors_[:, ::-1][:, :dims]
    k = min(k or default_k(n), n)
    labels = _kmeans(reduced, k, seed) if k > 1 else np.zeros(n, dtype=np.int32)
    labels = _absorb_small(reduced, labels, max(3, int(n * 0.015)))
    k = int(labels.max()) + 1
    xy = _scale(_layout(reduced, labels, k))
    names = cluster_names(texts, labels, k)
    flags = np.ones(n, bool) if embedded is None else np.asarray(embedded, bool)
    return PaperMap(list(ids), xy, labels.astype(np.int32), names, flags, generation)
