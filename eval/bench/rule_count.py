"""Count the regular expressions and branches of the answer layer: `python -m eval.bench.rule_count
[--rev REV] FILE...` (default: the answer layer's modules at the working tree, rag/answer/ and the
shared text rules; `--rev` reads the answer layer's modules of before this wave from a git
revision, for a before/after picture).

Regular expressions: calls of `re.compile`, `re.search`, `re.match`, `re.fullmatch`, `re.sub`,
`re.findall`, `re.finditer`, `re.split`. Branches: `if`/`elif`, conditional expressions, loops,
`and`/`or` operands beyond the first, comprehension conditions and `match` cases, by the syntax
tree."""

from __future__ import annotations

import argparse
import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BEFORE = (
    "rag/answer.py",
    "rag/compose.py",
    "rag/gate.py",
    "rag/question.py",
    "rag/catalog_answers.py",
    "rag/evidence.py",
    "rag/text.py",
    "rag/chat.py",
)
# the same concerns after the answer layer was rebuilt (citations, the LLM client and prompts,
# counted in neither list, are unchanged in kind)
AFTER = (
    "rag/answer/pipeline.py",
    "rag/answer/compose.py",
    "rag/answer/query.py",
    "rag/answer/route.py",
    "rag/answer/relevance.py",
    "rag/answer/sentences.py",
    "rag/answer/logistic.py",
    "rag/answer/cues.py",
    "rag/answer/catalogue.py",
    "rag/answer/evidence.py",
    "rag/text.py",
    "rag/answer/chat.py",
)
REGEX_CALLS = {"compile", "search", "match", "fullmatch", "sub", "findall", "finditer", "split"}


def count(source: str) -> tuple[int, int, int]:
    tree = ast.parse(source)
    regexes = branches = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.func.attr in REGEX_CALLS:
                regexes += 1
        if isinstance(node, (ast.If, ast.IfExp, ast.For, ast.While, ast.match_case)):
            branches += 1
        elif isinstance(node, ast.BoolOp):
            branches += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            branches += len(node.ifs)
    return regexes, branches, len(source.splitlines())


def read(path: str, rev: str | None) -> str | None:
    if rev is None:
        file = ROOT / path
        return file.read_text(encoding="utf-8") if file.exists() else None
    got = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True)
    return got.stdout if got.returncode == 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rev", help="a git revision to read the files from")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = args.files or (BEFORE if args.rev else AFTER)
    total = [0, 0, 0]
    print("| file | regular expressions | branches | lines |\n|---|---|---|---|")
    for path in files:
        source = read(path, args.rev)
        if source is None:
            continue
        figures = count(source)
        total = [a + b for a, b in zip(total, figures)]
        print(f"| {path} | {figures[0]} | {figures[1]} | {figures[2]} |")
    print(f"| all | {total[0]} | {total[1]} | {total[2]} |")


if __name__ == "__main__":
    main()
