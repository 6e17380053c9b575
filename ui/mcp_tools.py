"""The tools of `rag.tools` inside the running UI, for `rag ui --mcp`.

Gradio's MCP server (`launch(mcp_server=True)`, streamable HTTP at /gradio_api/mcp/, SSE at
/gradio_api/mcp/sse) lists every public API endpoint as a tool, named after its function and
described by its docstring. So each tool becomes a typed function registered with `gr.api` under
its own name, with the docstring built from the shared spec, and the UI's own event handlers (which
carry per-tab gr.State and return HTML) become undocumented endpoints: the browser still calls them,
agents do not see them. The tools run unqueued, which Gradio's MCP server calls in-process instead
of through an HTTP loop back to itself.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable
from typing import Any

import gradio as gr

from rag.app import App
from rag.errors import RagError
from rag.tools import SPECS, PaperTools, bounded

log = logging.getLogger(__name__)


class ToolError(gr.Error):
    """gr.Error whose str() is the bare message (gr.Error's is its repr, quotes included), since
    the MCP server sends str() of the exception as the tool error."""

    def __str__(self) -> str:
        return str(self.message)


def _run(tools: PaperTools, name: str, arguments: dict[str, Any]) -> str:
    """JSON (or BibTeX) text; a RagError becomes a tool error with the same one-line message."""
    try:
        result = tools.call(name, {k: v for k, v in arguments.items() if v is not None})
    except RagError as err:
        raise ToolError(bounded(str(err)), print_exception=False) from err
    except Exception as err:  # a bug, not a user error: log it, answer briefly
        log.exception("tool %s failed", name)
        raise ToolError(f"internal error ({type(err).__name__}); see the server log", print_exception=False) from err
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def tool_functions(tools: PaperTools) -> list[Callable[..., str]]:
    """One function per tool with the signature of its `PaperTools` method (returning text) and
    the docstring of its spec: Gradio reads the names, hints and docstrings."""
    functions = []
    for name, spec in SPECS.items():
        method = inspect.signature(getattr(tools, name))

        def run(*args: Any, _name: str = name, _signature: inspect.Signature = method, **kwargs: Any) -> str:
            return _run(tools, _name, _signature.bind(*args, **kwargs).arguments)

        params = list(method.parameters.values())
        run.__name__ = run.__qualname__ = name
        run.__doc__ = spec.docstring()
        run.__signature__ = method.replace(parameters=params, return_annotation="str")  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in params} | {"return": "str"}
        functions.append(run)
    return functions


def add_tools(demo: gr.Blocks, app: App) -> None:
    """Register the tools on `demo` (before launch) and hide the UI's handlers from MCP."""
    for block_fn in demo.fns.values():
        if block_fn.api_visibility == "public":
            block_fn.api_visibility = "undocumented"
    with demo:
        for fn in tool_functions(PaperTools(app)):
            gr.api(fn, api_name=fn.__name__, queue=False)


def check_started(demo: gr.Blocks) -> None:
    """Gradio records a failure to start its MCP server in `mcp_error` and prints it only when not
    quiet, then serves the UI without the tools: close the app and fail loudly instead."""
    if not demo.mcp_server:
        demo.close()
        raise RuntimeError(getattr(demo, "mcp_error", None) or "Gradio's MCP server did not start")
