"""Every error a user can cause or fix, under one base class.

    RagError                    base: a one-line message a user can act on
    ├── SettingsError           an unknown RAG_ variable or setting key, or a bad value
    ├── InputError              a file or record that cannot be read (names file and line)
    ├── NothingReadError        no record at all could be read from the given paths
    ├── IndexMissingError       search or ask before any ingest
    ├── ModelMissingError       the local embedding model file is absent or corrupt
    ├── StoreError              Chroma unreachable or refusing
    ├── QuestionError           an empty or absurdly long question
    ├── PromptError             a prompt template with a missing or unknown placeholder
    └── LLMError                the LLM endpoint failed (auth, model, rate, server, stream)

The CLI turns these into one line on stderr and a non-zero exit; the UI into gr.Error.
"""

from __future__ import annotations


class RagError(Exception):
    """Base class: `str(err)` is the whole user-facing message."""

    exit_code = 1


class InputError(RagError):
    """A file or a record in it could not be read."""

    def __init__(self, source: str, reason: str, line: int | None = None) -> None:
        self.source = source
        self.line = line
        self.reason = reason
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {reason}")


class SettingsError(RagError):
    """Names the variable or key, the nearest valid name, and the valid names or values."""

    exit_code = 2


class NothingReadError(RagError):
    exit_code = 2


class IndexMissingError(RagError):
    exit_code = 3


class ModelMissingError(RagError):
    exit_code = 4


class StoreError(RagError):
    exit_code = 5


class QuestionError(RagError):
    exit_code = 2


class PromptError(RagError):
    exit_code = 6


class LLMError(RagError):
    exit_code = 7
