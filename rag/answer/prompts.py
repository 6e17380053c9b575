"""Prompt templates live in `prompts/*.md`. A template is checked when loaded: a placeholder the
code does not supply, or one the code supplies that the template lacks, is an error then rather
than a silently odd prompt later."""

from __future__ import annotations

import string
from functools import cache
from pathlib import Path

from rag.errors import PromptError
from rag.resources import asset_dir

PROMPT_DIR = asset_dir("prompts")


class Template:
    def __init__(self, name: str, text: str, fields: set[str]) -> None:
        found = {f for _, f, _, _ in string.Formatter().parse(text) if f}
        if found != fields:
            missing, unknown = sorted(fields - found), sorted(found - fields)
            raise PromptError(f"prompt {name}: missing placeholders {missing}, unknown placeholders {unknown}")
        self.name = name
        self.text = text
        self.fields = fields

    def render(self, **values: object) -> str:
        if set(values) != self.fields:
            raise PromptError(f"prompt {self.name}: expected values for {sorted(self.fields)}, got {sorted(values)}")
        return self.text.format(**values)


@cache
def load(name: str, fields: frozenset[str], folder: Path = PROMPT_DIR) -> Template:
    path = folder / f"{name}.md"
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError as err:
        raise PromptError(f"prompt template {path} cannot be read ({err.strerror})") from err
    return Template(name, text, set(fields))
