"""The one renderer for text that did not come from us: abstracts, titles, authors, URLs, and LLM
answers (which may repeat an abstract's injected instructions). Everything the UI shows from those
goes through `markdown_html` / `inline_html` / `safe_url`, while streaming and at the end alike.

Two walls, both allowlists:
1. markdown-it with raw HTML off: `<script>`, `<img>`, `<form>`, `<iframe>` in the text become
   visible text. Images render as their alt text (no URL is kept), reference definitions are off
   (a hostile `[1]: http://…` cannot turn citation markers into links), and links keep only an
   `http`/`https` target.
2. nh3 (the ammonia sanitiser) over the result with a short tag list, no event attributes, URL
   schemes `http`/`https`, and `rel="noopener noreferrer" target="_blank"` forced on links.

Math: `$…$`, `$$…$$`, `\\(…\\)` and `\\[…\\]` are cut out before Markdown sees them (so `x_1` is not
read as emphasis) and come back escaped, wrapped as `\\(…\\)` / `\\[…\\]`, which is what the
browser's KaTeX (bundled with Gradio, `LATEX_DELIMITERS`) renders. KaTeX runs with `trust`
off, so `\\href`/`\\includegraphics` in math do not load or link anything. A `$` that does not
look like math (`$5 and $10`) stays a dollar sign.

Gradio shows these strings without parsing them as Markdown again (the chat uses
`render_markdown=False`; the Markdown panels get one `<div>` with no blank line, which Markdown
passes through as a single HTML block), so nothing escaped here is re-read as Markdown."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

import nh3
from markdown_it import MarkdownIt

from rag.answer import MARKER, parse_numbers
from rag.text import printable

# KaTeX delimiters the UI components are configured with; the renderer emits only these.
LATEX_DELIMITERS: list[dict[str, str | bool]] = [
    {"left": "\\[", "right": "\\]", "display": True},
    {"left": "\\(", "right": "\\)", "display": False},
]

TAGS = {
    "p",
    "br",
    "em",
    "strong",
    "code",
    "pre",
    "a",
    "ul",
    "ol",
    "li",
    "blockquote",
    "span",
    "mark",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "sup",
    "sub",
}
CLASSES = {"a": {"cite"}, "span": {"math", "math-display", "img-alt"}}
SCHEMES = {"http", "https"}

# nh3 forces target/rel on every link; citation markers are in-page anchors and keep neither.
_CITE_AFTER_CLEAN = re.compile(r'<a class="cite" href="(#src-\d+-\d+)"[^>]*>')
_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")
_PRIVATE = re.compile("[\ue000\ue001\x00]")
# Inline code first (left as it is), then math: $$…$$, \[…\], \(…\), and $…$ with no space inside
# the dollars and no digit right after the closing one (so "$5 and $10" is money, not math).
_MATH = re.compile(
    r"(`+)(?:.+?)\1"
    r"|\$\$(?P<dd>.{1,2000}?)\$\$"
    r"|\\\[(?P<bd>.{1,2000}?)\\\]"
    r"|\\\((?P<bi>.{1,2000}?)\\\)"
    r"|(?<![\\$\w])\$(?=[^\s$])(?P<di>(?:\\.|[^$\\\n]){1,400}?)(?<=[^\s\\])\$(?!\d)",
    re.S,
)
_TEXT_LATEX = [
    (re.compile(r"\\(?:textbf|mathbf)\{([^{}$]{1,200})\}"), r"**\1**"),
    (re.compile(r"\\(?:textit|emph)\{([^{}$]{1,200})\}"), r"*\1*"),
    (re.compile(r"\\texttt\{([^{}$`]{1,200})\}"), r"`\1`"),
    (re.compile(r"\\(?:textsc|textrm|textsf|text|mbox)\{([^{}$]{1,200})\}"), r"\1"),
    (re.compile(r"(?<=\S)~(?=\S)"), "\u00a0"),  # LaTeX's non-breaking space: "Fig.~2"
]


def _is_web_url(url: str) -> bool:
    return re.match(r"(?i)^https?://[^\s/?#]+", url.strip()) is not None


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable(["reference", "html_block", "html_inline"])
    md.validateLink = _is_web_url  # type: ignore[method-assign]

    def image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        alt = self.renderInlineAsText(tokens[idx].children or [], options, env)
        return f'<span class="img-alt">{html.escape(alt)}</span>' if alt else ""

    def link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        env["in_link"] = True
        return self.renderToken(tokens, idx, options, env)

    def link_close(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        env["in_link"] = False
        return self.renderToken(tokens, idx, options, env)

    def text(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        escaped = html.escape(tokens[idx].content, quote=False)
        if env.get("turn") is None or env.get("in_link"):
            return escaped
        return link_markers(escaped, env["turn"], env.get("valid", set()))

    md.add_render_rule("image", image)
    md.add_render_rule("link_open", link_open)
    md.add_render_rule("link_close", link_close)
    md.add_render_rule("text", text)
    return md


_MD = _markdown()


def link_markers(escaped: str, turn: int, valid: set[int]) -> str:
    """Citation markers `[1]`, `[1, 2]` in escaped text become links that select their source
    card (`#src-TURN-N`); numbers that are not a source of this answer stay plain."""

    def repl(match: re.Match[str]) -> str:
        links = [
            f'<a class="cite" href="#src-{turn}-{n}">{n}</a>' if n in valid else str(n)
            for n in parse_numbers(match.group(1))
        ]
        return "[" + ", ".join(links) + "]"

    return MARKER.sub(repl, escaped)


def _cut_math(text: str) -> tuple[str, list[tuple[str, bool]]]:
    found: list[tuple[str, bool]] = []

    def repl(match: re.Match[str]) -> str:
        if match.group(1):  # inline code: leave it to Markdown
            return match.group(0)
        display = match.group("dd") is not None or match.group("bd") is not None
        tex = next(
            g for g in (match.group("dd"), match.group("bd"), match.group("bi"), match.group("di")) if g is not None
        )
        if not tex.strip():
            return match.group(0)
        found.append((tex.strip(), display))
        return f"\ue000{len(found) - 1}\ue001"

    return _MATH.sub(repl, text), found


def _put_math(rendered: str, found: Sequence[tuple[str, bool]]) -> str:
    def repl(match: re.Match[str]) -> str:
        tex, display = found[int(match.group(1))]
        tex = tex.replace("\\)", "\\ )").replace("\\]", "\\ ]")  # cannot close its own delimiter early
        if display:
            return f'<span class="math-display">\\[{html.escape(tex, quote=False)}\\]</span>'
        return f'<span class="math">\\({html.escape(tex, quote=False)}\\)</span>'

    return _PLACEHOLDER.sub(repl, rendered)


def clean(fragment: str) -> str:
    """The allowlist wall: only `TAGS`, no event or style attributes, http(s) links only."""
    return nh3.clean(
        fragment,
        tags=TAGS,
        clean_content_tags={"script", "style"},
        attributes={"a": {"href", "title"}, "ol": {"start"}},
        allowed_classes=CLASSES,
        url_schemes=SCHEMES,
        link_rel="noopener noreferrer",
        set_tag_attribute_values={"a": {"target": "_blank"}},
    )


def markdown_html(text: str, turn: int | None = None, valid: set[int] | None = None, inline: bool = False) -> str:
    """Untrusted Markdown + LaTeX -> safe HTML. With `turn`, citation markers link to the source
    cards of that answer. `inline`: no paragraphs, lists or headings (titles, abstract sentences).
    Partial text (a stream cut mid-link or mid-formula) renders as text, never as markup."""
    cut, found = _cut_math(_PRIVATE.sub("", text or ""))
    for pattern, repl in _TEXT_LATEX:  # text-mode LaTeX, outside math only
        cut = pattern.sub(repl, cut)
    env: dict[str, Any] = {"turn": turn, "valid": valid or set()}
    rendered = _MD.renderInline(cut, env) if inline else _MD.render(cut, env)
    safe = _CITE_AFTER_CLEAN.sub(r'<a class="cite" href="\1">', clean(_put_math(rendered, found)))
    return safe.replace("\n", " ").strip() if inline else safe.strip()


def inline_html(text: str) -> str:
    return markdown_html(text, inline=True)


def escape(text: object) -> str:
    """Plain text (names, venues, filter values) with nothing rendered."""
    return html.escape(_PRIVATE.sub("", str(text or "")))


def safe_url(url: str) -> str | None:
    """An http(s) URL fit for an href, or None (a `javascript:` or `data:` URL is dropped)."""
    url = (url or "").strip()
    if not _is_web_url(url) or re.search(r"[\s\"'<>`\\]", url):
        return None
    return html.escape(url)


def one_block(fragment: str) -> str:
    """For gr.Markdown: one line inside one `<div>`, which Markdown passes through untouched
    (a blank line would end the HTML block and let Markdown read what follows)."""
    return '<div class="rendered">' + re.sub(r"\s*\n\s*", " ", fragment) + "</div>"


# -- Markdown that leaves the app (exports, the clipboard) -----------------------------------

_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)")
_LINK = re.compile(r"(?<!\\)\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+[^)\n]*)?\)")
_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_REFERENCE_DEFINITION = re.compile(r"^( {0,3})\[(?=[^\]\n]+\]:)", re.M)


def markdown_export(text: str) -> str:
    """Untrusted text made safe to save as Markdown or paste anywhere: what the app itself never
    shows raw, the exported file could still do where it is opened. So terminal control
    sequences are removed as the command line removes them (`rag.text.printable`: OSC 52
    clipboard writes, screen clears, in a `cat` of the file), images become their alt text (an
    image is a beacon fetched on view), links keep only http(s) targets, and raw HTML tags and
    reference definitions are escaped (a Markdown viewer would run `<img onerror>`, or turn
    `[1]` into a link). Everything else, emphasis, math and citation markers, stays as written."""
    out = printable(text)
    out = _IMAGE.sub(lambda m: m.group(1), out)
    out = out.replace("![", "!\\[")
    out = _LINK.sub(lambda m: m.group(0) if _is_web_url(m.group(2)) else m.group(1), out)
    out = _TAG.sub("&lt;", out)
    return _REFERENCE_DEFINITION.sub(r"\1\\[", out)
