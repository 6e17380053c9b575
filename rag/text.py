"""The text rules every stage shares: folding and normalising, sentences, words, numbers, coined
names, author lists, and making untrusted text safe and readable in a terminal.

One home for each rule, so that the reader, the catalogue, the chunker, the answerer, the citation
check and the printers agree on what a sentence, a name or a number is. Pure functions, no I/O.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

# -- folding and normalising ------------------------------------------------------------------


_COMBINING = {cp: None for cp in range(0x300, 0x10000) if unicodedata.combining(chr(cp))}


def fold(text: str) -> str:
    """Case- and accent-insensitive form for matching names ("Léo" finds "Leo")."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFKD", text).translate(_COMBINING).lower()


_NOT_WORD = re.compile(r"[\W_]+")
# ASCII text drops what is not a letter or digit by translation: the same result as `_NOT_WORD`,
# five times faster (an abstract key ran once per paper applying the log: 66 us by regex).
_ASCII_NOT_WORD = str.maketrans("", "", "".join(chr(i) for i in range(128) if not chr(i).isalnum()))


def normalise(text: str) -> str:
    """Letters and digits only, folded: survives curly quotes, LaTeX spacing, missing spaces."""
    if text.isascii():
        return text.lower().translate(_ASCII_NOT_WORD)
    return _NOT_WORD.sub("", fold(unicodedata.normalize("NFKC", text)))


def collapse(text: str) -> str:
    """Whitespace runs to one space, trimmed."""
    return " ".join(text.split()) if text else ""


# HTML a question pasted from a web page carries: elements whose content is no text, and the tags
# of the elements people write (a known list, so "x<y and y>z" in a question is left alone).
_MARKUP_BLOCK = re.compile(r"<(script|style|template)\b[^>]*>.*?</\1\s*>", re.I | re.S)
_INLINE_TAGS = "a|abbr|b|big|cite|code|del|em|font|i|ins|kbd|mark|q|s|small|span|strong|sub|sup|u|var"
_BLOCK_TAGS = (
    "blockquote|br|dd|div|dl|dt|h[1-6]|hr|iframe|img|li|ol|p|pre|script|style|table|tbody|td|template|th|thead|tr|ul"
)
_INLINE_TAG = re.compile(rf"</?(?:{_INLINE_TAGS})(?:\s[^<>]*)?/?>", re.I)
_BLOCK_TAG = re.compile(rf"</?(?:{_BLOCK_TAGS})(?:\s[^<>]*)?/?>", re.I)


def without_markup(text: str) -> str:
    """A question as its words, without the HTML it was pasted with: `<b>graph neural networks</b>`
    reads as the words, a script or style element as nothing. Left in, the tags' names and
    attributes are words the keyword index and the relevance model read, and a question the
    collection answers was abstained on (docs/benchmarks.md, session 24)."""
    if "<" not in text:
        return text
    out = _MARKUP_BLOCK.sub(" ", text)
    out = _BLOCK_TAG.sub(" ", _INLINE_TAG.sub("", out))
    return collapse(out)


def short_hash(text: str, size: int = 16) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:size]


# -- sentences --------------------------------------------------------------------------------

# Words that end in a period without ending a sentence ("e.g. GPT-4", "Fig. 2", "No. 1").
ABBREVIATIONS = frozenset(
    "e.g i.e eg ie al etc vs cf fig figs eq eqs no nos sec secs tab tbl approx resp ref refs dr mr ms mrs "
    "prof st viz ca pp vol ch thm lem def prop cor alg app est incl avg max min dept univ jr sr".split()
)
_BOUNDARY = re.compile(r"([.!?…]+)([\"')\]”’]*)(\s+|(?=[A-Z][a-z]))")
_NEXT_OK = re.compile(r"[A-Z0-9\"'(\[$\\*{“‘]")


def _ends_sentence(text: str, match: re.Match[str]) -> bool:
    before = text[: match.start()]
    prev = re.search(r"(\S+)$", before)
    token = prev.group(1) if prev else ""
    bare = token.lower().rstrip(".").lstrip("([{\"'")
    after = text[match.end() : match.end() + 2]
    if not after:
        return True
    spaced = bool(match.group(3))
    if match.group(1) == "." and (bare in ABBREVIATIONS or re.fullmatch(r"[a-z]\.[a-z]", bare)):
        return False
    if match.group(1) == "." and re.fullmatch(r"[A-Z]", token.lstrip("([")):  # an initial: "J. Smith"
        return False
    if not spaced:  # "improvements?In", "results.The": glued ends, only before a capitalised word
        return bool(re.search(r"[a-z%)\]]$", before)) and len(bare) >= 2
    return bool(_NEXT_OK.match(after))


def split_sentences(text: str) -> list[str]:
    """Sentences of a text. Keeps decimals ("91.5%"), abbreviations ("e.g.", "et al.", "Fig. 2",
    "No. 1") and initials together, and splits ends that lack a space ("improvements?In")."""
    text = collapse(text)
    if not text:
        return []
    parts: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if _ends_sentence(text, match):
            end = match.start() + len(match.group(1)) + len(match.group(2))
            parts.append(text[start:end].strip())
            start = match.end()
    parts.append(text[start:].strip())
    merged: list[str] = []
    for part in parts:
        if not part:
            continue
        if merged and (len(part) < 4 or part[0].islower()) and not re.match(r"\[\d", part):
            merged[-1] += " " + part
        else:
            merged.append(part)
    return merged


# -- words, numbers, names --------------------------------------------------------------------

STOPWORDS = frozenset(
    "a an the of in on for to and or but with by from as at is are was were be been being this that these those "
    "it its their they we our which who what when where how why does do did can could may might will would "
    "than then there here into over under about also such not no yes more most less very much many paper papers "
    "work method methods approach propose proposed show shows shown using use used based new novel".split()
)


# Words every abstract uses: they would name every cluster of the paper map the same, and they are
# not the topic of a question (`rag.answer.relevance.topic_parts`).
GENERIC_WORDS = frozenset(
    "model models method methods approach approaches propose proposed proposes paper papers work works result "
    "results show shows shown demonstrate demonstrates performance task tasks data dataset datasets new novel "
    "existing learning framework frameworks problem problems based using use used existing state art however "
    "significantly improve improves improved improvement experiments experimental achieve achieves various "
    "while across different training also well large many first key recent study introduce introduces "
    "present presents provide provides challenge challenges effective efficient efficiency via can may "
    "without within two three one often further extensive benchmark benchmarks code available github https "
    "com www org http com abstract specifically including particular leverage leverages leveraging enable "
    "enables address addresses potential analysis general specific allow allows compared superior "
    "outperforms outperform better high low set sets number lead leads findings empirical empirically "
    "theoretical theoretically understanding ability capabilities capability remain remains settings setting "
    "beyond recently moreover thus furthermore additionally yet still even real world widely commonly "
    # English function words that STOPWORDS leaves out
    "both has have had having due only between towards toward range per each other others own same some any "
    "all across through whether whose whom within without upon onto off out up down once twice since until "
    "because though although unless whereas thereby therefore hence among along around against after before "
    "during above below further must should shall need needs needed often usually rather quite just like "
    "given make makes made making take takes way ways thus instead either neither nor versus vs etc "
    "state-of-the-art art sota prior previous current existing recent able via etc one two three four five "
    "several multiple single various diverse wide range key main important critical crucial significant "
    "substantial substantially strong stronger robust simple effective effectively efficient efficiently "
    "problem task tasks setting settings domain domains scenarios scenario applications application "
    "framework frameworks approach approaches technique techniques strategy strategies system systems".split()
)


def content_words(text: str) -> set[str]:
    """Content words cut to six letters, a crude stem ("introduced" meets "introduce")."""
    words = re.findall(r"[a-z0-9][a-z0-9.%-]*[a-z0-9%]|[a-z0-9]", fold(text))
    return {w[:6] for w in words if w not in STOPWORDS and len(w) > 1}


def numbers_in(text: str) -> set[str]:
    """Numbers as written ("91.5", "4x" -> "4", "1,000" -> "1000"), for must-appear checks."""
    return {n.replace(",", "").rstrip(".") for n in re.findall(r"(?<![\w.])\d[\d,]*(?:\.\d+)?", text)}


def comparable(text: str) -> str:
    """Lower-case words and numbers; thousands separators dropped ("26,206" -> "26206") to match
    how `numbers_in` writes numbers, and LaTeX escapes undone ("55.25\\%")."""
    text = fold(plain(text))
    return re.sub(r"[^a-z0-9.%]+", " ", re.sub(r"(?<=\d),(?=\d{3})", "", text))


COMMON_ACRONYMS = frozenset(
    "LLM LLMs GNN GNNs MLP MLPs AI NLP CNN CNNs RL SAE SAEs GPU GPUs VLM VLMs LM LMs ML DNN DNNs OOD SOTA OT API "
    "RLHF ViT ViTs BERT GPT GPT-4 GPT-4o CLIP KL SGD MDP MDPs PDE PDEs OpenAI AGI GPT-4o-mini LLaMA-2 ODE ODEs NP "
    "IID II III IV ImageNet CIFAR-10 CIFAR-100 TL DR AUC QA RAG MoE LoRA FL DP LLaMA VAE VAEs GAN GANs RNN RNNs "
    "LSTM NeRF MCMC PCA SVM SVMs KNN IoU FID BLEU ROUGE MSE CoT ICL SFT DPO PPO NeurIPS ICLR ICML ACL CVPR "
    "LLM-based".split()
)


# A word that can be a name: letters with digits and hyphens inside, or digits before letters
# ("3D-MolT5", "3DGS"; not "3D", "10x" or a unit such as "24GB").
NAME_WORD = re.compile(
    r"(?<![\w-])(?:\d+(?!(?:[KMGTP]i?B|FPS|fps|[kMG]?Hz|ms|ns|dB|px|x[A-Z])(?![a-z]))"  # not "24GB", "30FPS", "8xA100"
    r"[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]|[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9])"
)


def is_coined(token: str) -> bool:
    """A coined name: CamelCase, ALLCAPS, or letters with digits/hyphens inside, not a common acronym."""
    token = token.strip(".,;:()[]\"'`")
    if len(token) < 2 or token in COMMON_ACRONYMS or token.rstrip("s") in COMMON_ACRONYMS:
        return False
    if not NAME_WORD.fullmatch(token):
        return False
    if "-" in token and all(part.islower() or part in COMMON_ACRONYMS for part in token.split("-")[1:]):
        return False  # "LLM-based", "GNN-style": a common word with a suffix, not a name
    inner_caps = sum(c.isupper() for c in token[1:])
    return inner_caps >= 1 or (token[0].isupper() and any(c.isdigit() for c in token))


def names_in(text: str) -> set[str]:
    """Coined names and acronyms (PLNL, GPT-4o, PersuasionBench) that a source must contain."""
    words = NAME_WORD.findall(text)
    return {
        w for w in words if sum(c.isupper() for c in w[1:]) >= 1 or (w[0].isupper() and any(c.isdigit() for c in w))
    }


def contains_term(text: str, term: str) -> bool:
    """`term` occurs in `text` as a whole word, ignoring case and accents."""
    return re.search(rf"(?<![a-z0-9]){re.escape(fold(term))}(?![a-z0-9])", fold(text)) is not None


# -- plain, readable, safe text for terminals ------------------------------------------------

_LATEX_SYMBOLS = {
    "times": "×",
    "approx": "≈",
    "leq": "≤",
    "le": "≤",
    "geq": "≥",
    "ge": "≥",
    "neq": "≠",
    "ll": "≪",
    "gg": "≫",
    "sim": "~",
    "pm": "±",
    "cdot": "·",
    "circ": "∘",
    "star": "⋆",
    "infty": "∞",
    "rightarrow": "→",
    "Rightarrow": "⇒",
    "to": "→",
    "leftarrow": "←",
    "uparrow": "↑",
    "downarrow": "↓",
    "subset": "⊂",
    "subseteq": "⊆",
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "Gamma": "Γ",
    "delta": "δ",
    "Delta": "Δ",
    "epsilon": "ε",
    "varepsilon": "ε",
    "zeta": "ζ",
    "eta": "η",
    "theta": "θ",
    "Theta": "Θ",
    "kappa": "κ",
    "lambda": "λ",
    "Lambda": "Λ",
    "mu": "μ",
    "nu": "ν",
    "xi": "ξ",
    "pi": "π",
    "Pi": "Π",
    "rho": "ρ",
    "sigma": "σ",
    "Sigma": "Σ",
    "tau": "τ",
    "phi": "φ",
    "varphi": "φ",
    "Phi": "Φ",
    "chi": "χ",
    "psi": "ψ",
    "Psi": "Ψ",
    "omega": "ω",
    "Omega": "Ω",
    "ell": "ℓ",
    "sqrt": "√",
    "sum": "Σ",
    "prod": "Π",
    "partial": "∂",
    "nabla": "∇",
    "forall": "∀",
    "exists": "∃",
    "in": "∈",
    "ldots": "…",
    "dots": "…",
    "cdots": "…",
}
# Spelled-out operators kept as words ("\log n" -> "log n").
_LATEX_WORDS = frozenset("log ln exp max min sup inf lim sin cos tan arg argmax argmin det tr Pr".split())
# Commands that only size or space things: dropped ("\left(" -> "(").
_LATEX_SILENT = frozenset(
    "left right middle big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr quad qquad displaystyle textstyle "
    "limits nolimits mathbb mathcal mathbf mathrm mathit mathsf mathtt mathfrak textbf textit texttt textsc text "
    "textrm textsf textup emph underline boldsymbol bm operatorname textnormal".split()
)
_SPACED = frozenset("times approx leq geq le ge neq ll gg pm in to rightarrow Rightarrow subset subseteq sim".split())
_WRAPPER_NAMES = (
    r"texttt|textbf|textsc|textit|textrm|textsf|textup|text|mathrm|mathbf|mathcal|mathit|mathsf|mathtt|mathbb|"
    r"mathfrak|operatorname|emph|underline|boldsymbol|bm|textnormal|url"
)
_LATEX_WRAPPERS = re.compile(rf"\\(?:{_WRAPPER_NAMES})\s*\{{([^{{}}]*)\}}")
# Accents over a symbol: \tilde{O} -> Õ (a combining mark on one letter, the argument alone otherwise).
_ACCENTS = {
    "tilde": "\u0303",
    "widetilde": "\u0303",
    "hat": "\u0302",
    "widehat": "\u0302",
    "bar": "\u0304",
    "overline": "\u0304",
    "vec": "\u20d7",
    "dot": "\u0307",
    "ddot": "\u0308",
}
_ACCENT = re.compile(r"\\(" + "|".join(_ACCENTS) + r")\s*(?:\{([^{}]*)\}|([A-Za-z]))")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_HREF = re.compile(r"\\href\s*\{[^{}]*\}\s*\{([^{}]*)\}")


def _accent(match: re.Match[str]) -> str:
    body = match.group(2) if match.group(2) is not None else match.group(3)
    body = body.strip()
    return unicodedata.normalize("NFC", body + _ACCENTS[match.group(1)]) if len(body) == 1 else body


def _fraction(match: re.Match[str]) -> str:
    top, bottom = match.group(1).strip(), match.group(2).strip()
    wrap = [f"({x})" if re.search(r"[\s+\-]", x) else x for x in (top, bottom)]
    return f"{wrap[0]}/{wrap[1]}"


def _command(match: re.Match[str]) -> str:
    name = match.group(1)
    if name in _LATEX_SILENT:
        return ""
    if name in _LATEX_WORDS:  # "\log n" -> "log n", "\max_i" -> "max_i"
        following = match.string[match.end() : match.end() + 1]
        return name + (" " if following.isalnum() else "")
    symbol = _LATEX_SYMBOLS.get(name)
    if symbol is None:
        return name  # an unknown macro: its name is the most readable thing left
    following = match.string[match.end() : match.end() + 1]
    return symbol + (" " if name in _SPACED and following not in ("", "$", "}", " ") else "")


def _math(body: str) -> str:
    return body.replace("{", "").replace("}", "")


def plain(text: str) -> str:
    """LaTeX and Markdown emphasis as readable text: `34.96\\% to 55.25\\%` -> `34.96% to 55.25%`,
    `$\\texttt{UNI}$` -> `UNI`, `$O\\left(n^2\\right)$` -> `O(n^2)`, `$\\tilde{O}(d)$` -> `Õ(d)`,
    `**x**`, `*x*`, `_x_` -> `x`. Citation markers `[1]` are left alone. Text cut inside math (a
    quote clipped at 160 characters) reads as well as it can: the unclosed `$` and a command cut
    short at the end are dropped."""
    if not text or not re.search(r"[\\$*_`{\[]", text):  # nothing to rewrite (a Markdown link opens on "[")
        return text
    out = text
    for _ in range(3):  # nested: \textbf{\textit{x}}, \frac{\tilde{a}}{b}
        out = _LATEX_WRAPPERS.sub(r"\1", out)
        out = _ACCENT.sub(_accent, out)
        out = _FRAC.sub(_fraction, out)
    out = _HREF.sub(r"\1", out)
    out = re.sub(r"\{\\(?:bf|it|sc|tt|em|rm)\s+([^{}]*)\}", r"\1", out)
    out = re.sub(r"\\(?:left|right)\.", "", out)  # invisible delimiters
    out = re.sub(r"\\\\|\\[,;:! ]", " ", out)  # line breaks and spacing commands
    out = re.sub(r"\\([%_&#${}|])", lambda m: "\x00" if m.group(1) == "$" else m.group(1), out)
    out = re.sub(r"\\[A-Za-z]*$", "", out)  # a command cut short at the very end
    out = re.sub(r"\\([A-Za-z]+)\s?", _command, out)
    out = re.sub(r"\$\$([^$]{0,400})\$\$", lambda m: _math(m.group(1)), out)
    # A math span opens on "$" before a non-space and closes on "$" after one, not before a digit,
    # so prices ("costs $5 and $10") stay as written.
    out = re.sub(r"\$(?=\S)([^$]{0,200}?)(?<=\S)\$(?!\d)", lambda m: _math(m.group(1)), out)
    lone = re.search(r"\$(?!\s|\d)", out)
    if lone:  # an unclosed math span (the text was cut inside it): drop the "$", read the rest as math
        out = out[: lone.start()] + _math(out[lone.end() :])
    out = out.replace("\x00", "$")
    out = re.sub(r"\^\{([^{}]*)\}", r"^\1", out)
    out = re.sub(r"_\{([^{}]*)\}", r"_\1", out)
    out = re.sub(r"(?<![\w*])\*\*([^*]+)\*\*(?![\w*])", r"\1", out)
    out = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\1", out)
    out = re.sub(r"(?<![\w_])__([^_]+)__(?![\w_])", r"\1", out)
    out = re.sub(r"(?<![\w_])_([^_\s][^_]*?)_(?![\w_])", r"\1", out)
    out = re.sub(r"`([^`]+)`", r"\1", out)
    # Markdown links and images: their text only (a target may hold one level of parentheses:
    # "javascript:alert(1)", "https://en.wikipedia.org/wiki/Mamba_(model)")
    out = re.sub(r"!?\[([^\]]*)\]\((?:[^()]|\([^()]*\))*\)", r"\1", out)
    return re.sub(r"[ \t]{2,}", " ", out)


_TERMINAL_CONTROL = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC (clipboard writes, hyperlinks, titles)
    r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"  # DCS, PM, APC, SOS strings
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI (colours, cursor moves, screen clears)
    r"|\x1b[@-Z\\-_]|\x1b."  # other escapes
    r"|\x9b[0-?]*[ -/]*[@-~]|\x9d[^\x07\x9c]*[\x07\x9c]?"  # 8-bit CSI and OSC
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # remaining C0/C1 controls (tab and newline stay)
    r"|[\u202a-\u202e\u2066-\u2069]"  # bidirectional overrides
)


def printable(text: str) -> str:
    """Text that cannot drive a terminal: escape sequences and control characters removed."""
    return _TERMINAL_CONTROL.sub("", text) if text else text


class TerminalStream:
    """`printable` over text that arrives in pieces (an answer streamed to a terminal). An escape
    sequence cut in two ("\x1b]52;c;" then "aGk=\x07", or "\x1b" then "[2J") would pass piece by
    piece as a harmless-looking tail ("aGk=", "[2J"); so a piece that ends inside a sequence that
    could still go on is held back until the next piece completes it. What comes out, joined, is
    `printable` of the whole text."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, piece: str) -> str:
        text = self._pending + piece
        last = next(reversed(list(_TERMINAL_CONTROL.finditer(text))), None)
        cut = len(text)
        if last is not None:  # would one more character make the last sequence reach further?
            longer = _TERMINAL_CONTROL.match(text + "x", last.start())
            if longer is not None and longer.end() > len(text):
                cut = last.start()
        self._pending = text[cut:]
        return printable(text[:cut])

    def flush(self) -> str:
        """The end of the stream: what was held back, cleaned as a whole."""
        text, self._pending = self._pending, ""
        return printable(text)


def printable_data(value: Any) -> Any:
    """JSON data with terminal control sequences removed from every string, keys included.
    json.dumps escapes C0 controls such as ESC, but a reader that decodes the JSON and shows a
    value in a terminal obeys them; with ensure_ascii=False, C1 ones (U+009B CSI, U+009D OSC) are
    even written raw."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_data(k): printable_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable_data(v) for v in value]
    return value


def for_terminal(text: str) -> str:
    """Untrusted text as a terminal should show it: readable (LaTeX, Markdown) and inert."""
    return plain(printable(text))


# -- authors --------------------------------------------------------------------------------


ALPHABETICAL_MARK = " (alphabetical)"


def format_authors(
    authors: Sequence[str],
    truncated: bool = False,
    limit: int | None = None,
    style: str = "text",
    alphabetical: bool = False,
) -> str:
    """One author-list formatter for every printer: "A, B, C et al." ("et al." when the list was
    cut at the source or at `limit`); `style="bibtex"`: "A and B and others". `alphabetical`: the
    list is sorted by name (`Paper.alphabetical`), not in the paper's order, and the text says so
    ("A, B (alphabetical)"), so no reader takes A for the first author."""
    names = [a for a in authors if a]
    cut = truncated or (limit is not None and len(names) > limit)
    shown = names[:limit] if limit is not None else names
    if style == "bibtex":
        return " and ".join(shown + (["others"] if cut and shown else []))
    text = ", ".join(shown)
    if cut and shown:
        text += " et al."
    if alphabetical and shown:
        text += ALPHABETICAL_MARK
    return text


_CLOSING = "*_`\"'”’)]"


def ends_sentence(text: str) -> bool:
    """The text already ends a sentence: its last character before closing marks (emphasis,
    quotes, brackets) is ".", "!", "?" or "…" ("et al.", "a label…", "**X.**")."""
    return text.rstrip().rstrip(_CLOSING).endswith((".", "!", "?", "…"))


def end_sentence(text: str) -> str:
    """`text` ending in one period: added when it has none, never doubled ("A et al." stays,
    "**label…**" stays). The one rule for every printed list of names and authors."""
    text = text.rstrip()
    return text if not text or ends_sentence(text) else text + "."


def join_sentences(parts: Sequence[str]) -> str:
    """Join parts with ". ", never doubling a period ("Tillman et al." + "ICLR" -> "Tillman et al. ICLR")."""
    out = ""
    for part in (p.strip() for p in parts if p and p.strip()):
        if out:
            out = end_sentence(out) + " "
        out += part
    return out


# -- numbers as values ----------------------------------------------------------------------


# A number that states a value ("55.25%", "8.5\%", "1.11x–2.23x", "26,206", "16 million"), not
# one inside a name ("STL-10", "GPT-4o", "ResNet-50", "Llama-3.1-8B").
def clip(text: str, max_chars: int) -> str:
    """At most `max_chars` characters, cut at a word boundary, with an ellipsis when cut."""
    if len(text) <= max_chars:
        return text
    return text[:max_chars].rsplit(" ", 1)[0].rstrip(",;:") + "…"


# -- what a text asserts ----------------------------------------------------------------------
