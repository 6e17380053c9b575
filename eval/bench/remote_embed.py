"""Remote embedding: papers/s the ingest pipeline sustains against an OpenAI-compatible
embedding server, by number of requests in flight (RAG_EMBED_CONCURRENCY).

    python -m eval.bench.remote_embed [--n 3000] [--latency-ms 80] [--concurrency 1 4 8]

The server is a local stand-in for text-embeddings-inference or vLLM: every request waits
`latency-ms` plus 0.2 ms per text (a GPU's time), then returns deterministic 384-d vectors. The
figures show how far bounded concurrency hides that latency; the server itself costs nothing."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

from eval.bench.scale import rag, synth


def serve(latency_s: float) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            time.sleep(latency_s + 0.0002 * len(inputs))
            data = []
            for i, text in enumerate(inputs):
                seed = int.from_bytes(hashlib.sha256(str(text).encode()).digest()[:8], "little")
                vector = np.random.default_rng(seed).standard_normal(384).round(5).tolist()
                data.append({"object": "embedding", "index": i, "embedding": vector})
            payload = json.dumps(
                {
                    "object": "list",
                    "data": data,
                    "model": body.get("model"),
                    "usage": {"prompt_tokens": 0, "total_tokens": 0},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--latency-ms", type=float, default=80)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-remote-"))
    data = synth(work / "papers.jsonl", args.n)
    server = serve(args.latency_ms / 1000)
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    print(f"{args.n} papers, server latency {args.latency_ms:g} ms per request + 0.2 ms per text")
    for concurrency in args.concurrency:
        home = work / f"home-{concurrency}"
        env = {
            **os.environ,
            "RAG_EMBEDDER": "openai",
            "OPENAI_API_KEY": "bench",
            "OPENAI_BASE_URL": base,
            "RAG_EMBED_CONCURRENCY": str(concurrency),
            "RAG_HOME": str(home),
        }
        result = rag("ingest", str(data), "--json", env=env)
        print(
            f"  concurrency {concurrency:>2}: {args.n / result['s']:7.1f} papers/s ({result['s']:.1f} s, "
            f"exit {result['code']})"
        )
        shutil.rmtree(home, ignore_errors=True)
    server.shutdown()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
