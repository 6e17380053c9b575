"""A short readable label for a paper that has no title.

Sample abstracts carry no titles, so lists and citations need something a person recognises. The
best handle is the name of the method, model or benchmark the paper introduces ("Celcomen",
"NUCFL", "PersuasionBench"); failing that, a clipped first sentence."""

from __future__ import annotations

import re

_INTRODUCE = re.compile(
    r"\b(?:(?:we|I|this\s+(?:paper|work|study))\s+(?:propose|introduce|present|develop|design|build|release|construct|curate|create|"
    r"call|term|name|dub|contribute|offer|describe|provide)s?|(?:is\s+)?called|named|termed|dubbed|coined|"
    r"introducing|proposing|presenting)\b",
    re.I,
)
_LATEX_NAME = re.compile(r"(?:\\(?:texttt|textbf|textsc|textit|mathrm|mathbf|emph)\{|\{\\(?:bf|sc|tt|it)\s+)([^{}$]{2,40})\}")
_MARKDOWN = re.compile(r"(?<![\w*])\*{1,2}([^*]{2,60})\*{1,2}(?![\w*])")
_PAREN_ACRONYM = re.compile(r"\(([A-Z][A-Za-z0-9-]*[A-Z0-9][A-Za-z0-9-]*)\)")
# Common field acronyms that an abstract mentions but does not introduce.
_COMMON = {
    "LLM", "LLMs", "GNN", "GNNs", "MLP", "MLPs", "AI", "NLP", "CNN", "CNNs", "RL", "SAE", "SAEs",
    "GPU", "GPUs", "VLM", "VLMs", "LM", "LMs", "ML", "DNN", "DNNs", "OOD", "SOTA", "OT", "API",
    "RLHF", "ViT", "ViTs", "BERT", "GPT", "GPT-4", "GPT-4o", "CLIP", "KL", "SGD", "MDP", "MDPs",
    "PDE", "PDEs", "OpenAI", "AGI", "GPT-4o-mini", "LLaMA-2", "ODE", "ODEs", "NP", "IID", "II", "III", "IV", "ImageNet", "CIFAR-10",
    "CIFAR-100", "TL", "DR", "AUC", "QA", "RAG", "MoE", "LoRA", "FL", "DP", "LLaMA", "VAE",
}


def _is_name(token: str) -> bool:
    """A coined name: CamelCase, ALLCAPS, or letters with digits/hyphens inside, not a common acronym."""
    token = token.strip(".,;:()[]\"'`")
    if len(token) < 2 or token in _COMMON or token.rstrip("s") in _COMMON:
        return False
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]", token):
        return False
    inner_caps = sum(c.isupper() for c in token[1:])
    return inner_caps >= 1 or (token[0].isupper() and any(c.isdigit() for c in token))


_CALLED = re.compile(r"\b(?:called|named|termed|dubbed|coined)\s+(?:it\s+|as\s+)?([$\\{*]*[A-Z][\w-]+)")
_AFTER_VERB = re.compile(r"^\S+(?:\s+\S+)?\s+(?:(?:a|an|the|our|new|novel)\s+)*([A-Z][\w-]+)(?=\s*[,:(]|\s+(?:a|an|which|that)\b)")


def _name_in(sentence: str, tail: str) -> str:
    """The coined name in the part of a sentence that starts with an introducing verb."""
    called = _CALLED.search(sentence)
    if called and called.group(1).strip("$\\{*") not in _COMMON:
        return called.group(1).strip("$\\{*.,")
    after = _AFTER_VERB.match(tail)
    if after and after.group(1) not in _COMMON and not after.group(1).lower() in ("we", "this", "it"):
        return after.group(1)
    acronym = _PAREN_ACRONYM.search(tail)
    for word in re.finditer(r"[\w-]+", tail[:300]):
        if _is_name(word.group(0)):
            if acronym and 0 < acronym.start() - word.start() < 90 and acronym.group(1) not in _COMMON:
                return acronym.group(1)
            return word.group(0)
    if acronym and acronym.group(1) not in _COMMON:
        return acronym.group(1)
    return ""


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z$\\*{(])", text) if s]


def derive_label(abstract: str, max_chars: int = 60) -> str:
    """The introduced name if one can be found, else the first sentence clipped to `max_chars`."""
    for sentence in _sentences(abstract):
        intro = _INTRODUCE.search(sentence)
        if not intro:
            continue
        tail = sentence[intro.start():]
        for pattern in (_LATEX_NAME, _MARKDOWN):
            match = pattern.search(tail)
            if match and len(match.group(1).split()) <= 4:
                inner = match.group(1).strip()
                acronym = re.search(re.escape(match.group(0)) + r"\s*\(([^)]{2,15})\)", tail)
                return acronym.group(1) if acronym and _is_name(acronym.group(1)) else inner
        name = _name_in(sentence, tail)
        if name:
            return name
    first = _sentences(abstract)[0] if abstract else ""
    first = re.sub(r"[$*{}\\]|\\\w+", "", first).strip()
    if len(first) <= max_chars:
        return first.rstrip(".")
    return first[: max_chars].rsplit(" ", 1)[0].rstrip(",;:") + "…"
