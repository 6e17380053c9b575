"""How long a command takes from a cold start: `python -m eval.bench.startup [--home DIR] [--runs 3]`.

Times, in the same run and as medians of `--runs`, `python -c pass` (the interpreter alone),
`rag --help`, `rag status` and `rag ask` on the bundled sample (ingested into `--home` first if
it is empty), each as a fresh process, as a user starts it. Prints the load average beside them,
since a busy machine slows every row."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, help="a RAG_HOME holding the sample (default: a new one)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="rag-startup-"))
    env = {**os.environ, "RAG_HOME": str(home)}
    rag = [sys.executable, "-m", "rag.cli"]
    if not (home / "chroma").exists():
        subprocess.run([*rag, "ingest"], env=env, stdout=subprocess.DEVNULL, check=True)
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "rag --help": [*rag, "--help"],
        "rag status": [*rag, "status"],
        'rag ask "Which paper introduced PersuasionBench?"': [*rag, "ask", "Which paper introduced PersuasionBench?"],
    }
    timed(commands["rag --help"], env)  # the first run also fills the OS page cache
    print(f"load average {os.getloadavg()[0]:.2f}; median of {args.runs} runs, seconds")
    for name, command in commands.items():
        runs = [timed(command, env) for _ in range(args.runs)]
        print(f"{statistics.median(runs):6.2f}  {name}  ({', '.join(f'{r:.2f}' for r in runs)})")


if __name__ == "__main__":
    main()
