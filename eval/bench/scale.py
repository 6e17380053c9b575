"""Scale benchmark: ingest, re-ingest, add, status and search at N synthetic papers, local folder
and Chroma server, with the stand-in embedder so the figures are the pipeline's own.

    python -m eval.bench.scale --n 10000 [--n 100000 ...] [--mode local --mode server]
                               [--work DIR] [--keep] [--json]

Papers are synthetic but shaped like the real lists: sentences of the shared ICLR/ICML abstracts
recombined (about 700 characters), unique titles, authors drawn from the real author names,
eight venues, eleven years, a third without abstract. They stream to a JSONL file, so generating a
million papers needs no memory. Every step runs the real `rag` command in a child process, timed
from process start to exit, with the child's peak RSS from `wait4`; the disk is measured with
`du`. The raw store rate copies every record the pipeline wrote into a fresh collection (a new local
folder, or the same server) with plain `upsert`s in batches of 5,000, timing only the upserts, so
"pipeline / raw" compares the same records, into a collection of the same size, in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"
VENUES = ["ICLR", "ICML", "NeurIPS", "ACL", "CVPR", "AAAI", "KDD", "EMNLP"]
TRACKS = ["main", "main", "main", "position", "datasets and benchmarks"]
DECISIONS = ["Accept (Poster)"] * 8 + ["Accept (Spotlight)", "Accept (Oral)"]
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vi", "zo", "pe", "sa", "de", "fu", "gi", "ho", "ju", "xe"]


# -- synthetic data -------------------------------------------------------------------------------
def _pools(seed: int) -> dict[str, list[str]]:
    """Sentences, title words and author names from the shared lists (or a small fallback)."""
    sentences: list[str] = []
    words: list[str] = []
    authors: list[str] = []
    for path in sorted(SHARED.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            abstract = record.get("abstract") or ""
            sentences += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", abstract) if 40 <= len(s) <= 400]
            words += [w for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", record.get("title") or "")]
            authors += record.get("authors") or []
    if not sentences:  # no shared data: still runnable, on the bundled sample's text
        for path in sorted((ROOT / "data" / "sample").glob("*.txt")):
            text = path.read_text(encoding="utf-8")
            sentences += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text) if 40 <= len(s) <= 400]
        words = re.findall(r"[A-Za-z][A-Za-z-]{3,}", " ".join(sentences[:500]))
        authors = [f"Author {c}{d}" for c in "ABCDEFGHIJ" for d in "KLMNOPQRST"]
    rng = random.Random(seed)
    rng.shuffle(sentences)
    return {"sentences": sentences, "words": sorted(set(words)), "authors": sorted(set(authors))}


def coined(serial: int) -> str:
    """A unique pronounceable name per serial number (base-16 syllables)."""
    parts = []
    value = serial + 4096
    while value:
        value, digit = divmod(value, len(SYLLABLES))
        parts.append(SYLLABLES[digit])
    return "".join(parts).capitalize()


def synth(path: Path, n: int, start: int = 0, seed: int = 13) -> Path:
    """Stream n papers (ids syn-<start+i>) to a JSONL file."""
    pools = _pools(seed)
    rng = random.Random(seed * 1_000_003 + start)
    sentences, words, authors = pools["sentences"], pools["words"], pools["authors"]
    with path.open("w", encoding="utf-8") as out:
        for i in range(start, start + n):
            name = coined(i)
            title = f"{name}: " + " ".join(rng.sample(words, 6))
            abstract = ""
            if rng.random() >= 0.31:  # the real lists: 31% have no abstract
                picked: list[str] = [
                    f"We propose {name}, a method for {rng.choice(words).lower()} {rng.choice(words).lower()}."
                ]
                while sum(len(s) for s in picked) < 650:
                    picked.append(rng.choice(sentences))
                abstract = " ".join(picked)
            record = {
                "id": f"syn-{i:08d}",
                "title": title,
                "authors": rng.sample(authors, rng.randint(1, 6)),
                "abstract": abstract,
                "venue": rng.choice(VENUES),
                "year": rng.randint(2015, 2025),
                "track": rng.choice(TRACKS),
                "decision": rng.choice(DECISIONS),
                "url": f"https://example.org/papers/syn-{i:08d}",
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


# -- measuring child processes --------------------------------------------------------------------
def tree_rss_kib(pid: int) -> int:
    """Resident memory of a process and all its descendants now (the ingest writer process and
    embedding workers run beside the command), from /proc."""
    total = 0
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return total


def run(args: list[str], env: dict[str, str], timeout: float = 6 * 3600) -> dict[str, Any]:
    """Run a command; wall seconds, peak RSS (MiB) of the command with every process it started,
    exit code and output."""
    start = time.perf_counter()
    peak_kib = 0
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(args, env=env, stdout=out, stderr=err, cwd=ROOT)
        deadline = time.time() + timeout
        sampled = 0.0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                proc.kill()
            if time.perf_counter() - sampled > 0.25:
                peak_kib = max(peak_kib, tree_rss_kib(proc.pid))
                sampled = time.perf_counter()
            time.sleep(0.02)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        print(f"  ! {' '.join(args[:4])} exited {code}: {stderr.strip()[-400:]}", file=sys.stderr)
    return {
        "s": round(seconds, 2),
        "rss_mib": round(max(usage.ru_maxrss, peak_kib) / 1024, 1),
        "code": code,
        "stdout": stdout,
        "stderr": stderr,
    }


def rag(*args: str, env: dict[str, str]) -> dict[str, Any]:
    return run([sys.executable, "-m", "rag.cli", *args], env)


def du_mib(path: Path) -> float:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return round(total / 2**20, 1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ChromaServer:
    """`chroma run` in a child process (its own data folder), for the server mode."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.port = free_port()
        chroma = Path(sys.executable).with_name("chroma")
        self.proc = subprocess.Popen(
            [str(chroma), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import urllib.request

        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/v2/heartbeat", timeout=2)
                return
            except OSError:
                time.sleep(0.3)
        raise SystemExit("chroma run did not start")

    def peak_rss_mib(self) -> float:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
        except OSError:
            pass
        return 0.0

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# -- in-process search latency (runs in a child: `scale inproc`) ----------------------------------
def inproc(home: str, queries_file: str) -> None:
    from rag.app import App
    from rag.evaluation import percentile
    from rag.settings import Settings
    from rag.types import Filters

    spec = json.loads(Path(queries_file).read_text())
    app = App(Settings(home=Path(home)))
    app.search("warm up", k=10)
    out: dict[str, Any] = {}
    cases: list[tuple[str, str, Filters]] = [(m, m, Filters()) for m in ("keyword", "dense", "hybrid")]
    cases += [
        ("hybrid+venue", "hybrid", Filters(venue=spec["venue"])),
        ("hybrid+not-venue", "hybrid", Filters(excluded=(("venue", spec["venue"]),))),
        ("hybrid+year", "hybrid", Filters(year=spec["year"])),
        ("hybrid+author", "hybrid", Filters(author=spec["author"])),
    ]
    for label, mode, filters in cases:
        times = []
        for query in spec["queries"]:
            start = time.perf_counter()
            app.search(query, k=10, filters=filters, mode=mode)
            times.append((time.perf_counter() - start) * 1000)
        out[label] = {"p50_ms": round(percentile(times, 50), 1), "p95_ms": round(percentile(times, 95), 1)}
    print(json.dumps(out))


def raw_store_rate(
    store_path: Path | None, host: str | None, port: int, target: Path | None, target_port: int, sample: int = 10**9
) -> dict[str, Any]:
    """Copy up to `sample` records of each collection the pipeline wrote into a fresh collection
    with plain upserts in batches of 5,000: records/s. The copy goes to a fresh local folder
    (`target`) or a second, fresh server (`target_port`), so the pipeline's own store keeps its
    size and memory figures."""
    code = f"""
import json, sys, time, chromadb
from chromadb.config import Settings
s = Settings(anonymized_telemetry=False)
if {host!r}:
    src = chromadb.HttpClient(host={host!r}, port={port}, settings=s)
else:
    src = chromadb.PersistentClient(path={str(store_path)!r}, settings=s)
if {host!r}:  # its own Settings: HttpClient writes the port into the one it is given
    dst = chromadb.HttpClient(host={host!r}, port={target_port}, settings=Settings(anonymized_telemetry=False))
else:
    dst = chromadb.PersistentClient(path={str(target)!r}, settings=s)
out = {{}}
for name in [getattr(c, 'name', c) for c in src.list_collections()]:
    if name.startswith('raw_'):
        continue
    col = src.get_collection(name, embedding_function=None)
    total = col.count()
    if total < 100:
        continue
    fresh = dst.create_collection('raw_' + col.name, metadata={{'hnsw:space': 'cosine'}}, embedding_function=None)
    n = 0
    seconds = 0.0
    while n < min(total, {sample}):
        got = col.get(limit=5000, offset=n, include=['embeddings', 'documents', 'metadatas'])
        if not got['ids']:
            break
        has_docs = got['documents'] is not None and any(d is not None for d in got['documents'])
        docs = got['documents'] if has_docs else None
        metas = got['metadatas'] if got['metadatas'] is not None and any(got['metadatas']) else None
        start = time.perf_counter()  # only the upsert is timed, not reading the source
        fresh.upsert(ids=got['ids'], embeddings=got['embeddings'], documents=docs, metadatas=metas)
        seconds += time.perf_counter() - start
        n += len(got['ids'])
    out[col.name] = {{'records': total, 'sampled': n, 'records_per_s': round(n / seconds, 1)}}
    dst.delete_collection('raw_' + col.name)
print(json.dumps(out))
"""
    result = run([sys.executable, "-c", code], dict(os.environ))
    try:
        return json.loads(result["stdout"].strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}


# -- one configuration ----------------------------------------------------------------------------
def bench(n: int, mode: str, work: Path, keep: bool) -> dict[str, Any]:
    folder = work / f"{mode}-{n}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    data = work / f"synthetic-{n}.jsonl"
    if not data.exists():
        print(f"generating {n:,} papers -> {data}", file=sys.stderr, flush=True)
        synth(data, n)
    extra = work / "synthetic-add-1000.jsonl"
    if not extra.exists():
        synth(extra, 1000, start=50_000_000)
    env = {**os.environ, "RAG_EMBEDDER": "hash", "RAG_HOME": str(folder / "home"), "PYTHONPATH": str(ROOT)}
    env["RAG_SNAPSHOT_EVERY"] = "0"  # ingest figures without publishing; `rag snapshot` is timed on its own
    server = None
    if mode == "server":
        server = ChromaServer(folder / "server")
        env.update(RAG_CHROMA_HOST="127.0.0.1", RAG_CHROMA_PORT=str(server.port))
    row: dict[str, Any] = {"n": n, "mode": mode}
    try:
        print(f"[{mode} {n:,}] ingest …", file=sys.stderr, flush=True)
        first = rag("ingest", str(data), "--json", env=env)
        row["ingest_s"], row["ingest_rss_mib"] = first["s"], first["rss_mib"]
        row["ingest_papers_per_s"] = round(n / first["s"], 1)
        row["ingest_ok"] = first["code"] == 0
        row["disk_mib"] = du_mib(folder)
        print(f"[{mode} {n:,}] raw store rate …", file=sys.stderr, flush=True)
        raw_server = ChromaServer(folder / "raw-server") if server else None
        try:
            raw = raw_store_rate(
                None if server else folder / "home" / "chroma",
                "127.0.0.1" if server else None,
                server.port if server else 0,
                None if server else folder / "raw-chroma",
                raw_server.port if raw_server else 0,
            )
        finally:
            if raw_server:
                raw_server.stop()
            shutil.rmtree(folder / "raw-server", ignore_errors=True)
            shutil.rmtree(folder / "raw-chroma", ignore_errors=True)
        row["raw"] = raw
        per_paper = sum(c["records"] / n / c["records_per_s"] for c in raw.values()) if raw else 0
        if per_paper:
            row["raw_papers_per_s"] = round(1 / per_paper, 1)
            row["pipeline_over_raw"] = round(row["ingest_papers_per_s"] / row["raw_papers_per_s"], 2)
        print(f"[{mode} {n:,}] re-ingest, add 1,000, status, search …", file=sys.stderr, flush=True)
        again = rag("ingest", str(data), "--json", env=env)
        row["reingest_s"], row["reingest_rss_mib"] = again["s"], again["rss_mib"]
        added = rag("ingest", str(extra), "--json", env=env)
        row["add_1000_s"], row["add_1000_rss_mib"] = added["s"], added["rss_mib"]
        status = rag("status", "--json", env=env)
        row["status_s"], row["status_rss_mib"] = status["s"], status["rss_mib"]
        cold = [rag("search", q, "--json", env=env) for q in ("graph neural network robustness", "Kalomi", "diffusion")]
        row["search_cold_s"] = sorted(c["s"] for c in cold)[1]
        row["search_cold_rss_mib"] = max(c["rss_mib"] for c in cold)
        rng = random.Random(3)
        lines = []
        with data.open(encoding="utf-8") as handle:
            for i, line in enumerate(handle):
                if i % max(1, n // 400) == 0:
                    lines.append(json.loads(line))
        picks = rng.sample(lines, min(100, len(lines)))
        queries = [
            p["title"] if i % 2 or not p["abstract"] else " ".join(p["abstract"].split()[5:17])
            for i, p in enumerate(picks)
        ]
        spec = folder / "queries.json"
        spec.write_text(
            json.dumps(
                {"queries": queries, "venue": "ICML", "year": 2020, "author": picks[0]["authors"][0].split()[-1]}
            )
        )
        latency = run([sys.executable, "-m", "eval.bench.scale", "inproc", str(folder / "home"), str(spec)], env)
        try:
            row["search_ms"] = json.loads(latency["stdout"].strip().splitlines()[-1])
        except (ValueError, IndexError):
            row["search_ms"] = {}
        row["search_inproc_rss_mib"] = latency["rss_mib"]
        if server:
            other = {**env, "RAG_HOME": str(folder / "home-2")}
            second = rag("search", "graph neural network robustness", "--json", env=other)
            row["second_machine_first_search_s"], row["second_machine_rss_mib"] = second["s"], second["rss_mib"]
            published = rag("snapshot", "--json", env=env)
            row["snapshot_publish_s"], row["snapshot_publish_rss_mib"] = published["s"], published["rss_mib"]
            with contextlib.suppress(ValueError, IndexError):
                row["snapshot"] = json.loads(published["stdout"])
            third = rag(
                "search", "graph neural network robustness", "--json", env={**env, "RAG_HOME": str(folder / "home-3")}
            )
            row["snapshot_machine_first_search_s"], row["snapshot_machine_rss_mib"] = third["s"], third["rss_mib"]
            row["snapshot_machine_same_hits"] = third["stdout"] == second["stdout"]
            row["server_peak_rss_mib"] = server.peak_rss_mib()
    finally:
        if server:
            server.stop()
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return row


def table(rows: list[dict[str, Any]]) -> str:
    cols = [
        ("n", "papers"),
        ("mode", "mode"),
        ("ingest_papers_per_s", "ingest papers/s"),
        ("raw_papers_per_s", "raw store papers/s"),
        ("pipeline_over_raw", "pipeline/raw"),
        ("ingest_rss_mib", "ingest peak MiB"),
        ("disk_mib", "disk MiB"),
        ("reingest_s", "re-ingest s"),
        ("add_1000_s", "add 1,000 s"),
        ("status_s", "status s"),
        ("search_cold_s", "search cold s"),
        ("search_cold_rss_mib", "search MiB"),
        ("second_machine_first_search_s", "2nd machine s"),
        ("snapshot_publish_s", "publish snapshot s"),
        ("snapshot_machine_first_search_s", "2nd machine from snapshot s"),
    ]
    lines = [
        "| " + " | ".join(c[1] for c in cols) + " | hybrid p50/p95 ms | filtered p95 ms |",
        "|" + "---|" * (len(cols) + 2),
    ]
    for row in rows:
        cells = [f"{row[k]:,}" if isinstance(row.get(k), int) else str(row.get(k, "")) for k, _ in cols]
        s = row.get("search_ms", {})
        hybrid = s.get("hybrid", {})
        filtered = max((v["p95_ms"] for k, v in s.items() if "+" in k), default="")
        cells += [f"{hybrid.get('p50_ms', '')}/{hybrid.get('p95_ms', '')}", str(filtered)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "inproc":
        inproc(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, action="append", help="papers (repeatable; default 10000)")
    parser.add_argument("--mode", action="append", choices=["local", "server"], help="default: both")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "rag-scale")
    parser.add_argument("--keep", action="store_true", help="keep each index folder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows = [
        bench(n, mode, args.work, args.keep) for n in (args.n or [10000]) for mode in (args.mode or ["local", "server"])
    ]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(table(rows))


if __name__ == "__main__":
    main()
