"""Answers: reading a question, routing it, the relevance models, the extractive composer, the
catalogue's answers, the LLM answerer and its tools, citations checked, and multi-turn chat.

Other parts import from here, never from the modules inside; names load on first use, so
importing the package costs nothing until a name is needed (`rag --help` imports no model,
no Chroma)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag.lazy import exports

if TYPE_CHECKING:
    from rag.answer.catalogue import CatalogueAnswerer, describe, matching
    from rag.answer.chat import ChatSession
    from rag.answer.chatmodel import ChatModel, Usage
    from rag.answer.cite import MARKER, SupportChecker, bibtex_entry, parse_numbers
    from rag.answer.compose import ExtractiveAnswerer, name_of
    from rag.answer.evidence import leading_sentences, source_sentences
    from rag.answer.examples import example_questions
    from rag.answer.llm import OpenAIChat, OpenAIEmbedder
    from rag.answer.logistic import LogisticModel
    from rag.answer.pipeline import AnswerPipeline, LLMAnswerer, Verifier
    from rag.answer.prompts import load
    from rag.answer.query import read
    from rag.answer.relevance import ANSWERABLE_FEATURES, FEATURES, QUESTION_FEATURES, RELEVANCE_MODEL, Relevance, idf
    from rag.answer.route import ROUTER_MODEL, Intent, Router, route_features
    from rag.answer.sentences import SENTENCE_FEATURES, SENTENCE_MODEL, SentenceScorer
    from rag.answer.trees import TreeModel, load_model, question_models

_WHERE = {
    "ANSWERABLE_FEATURES": "rag.answer.relevance",
    "AnswerPipeline": "rag.answer.pipeline",
    "CatalogueAnswerer": "rag.answer.catalogue",
    "ChatModel": "rag.answer.chatmodel",
    "ChatSession": "rag.answer.chat",
    "ExtractiveAnswerer": "rag.answer.compose",
    "FEATURES": "rag.answer.relevance",
    "Intent": "rag.answer.route",
    "LLMAnswerer": "rag.answer.pipeline",
    "LogisticModel": "rag.answer.logistic",
    "MARKER": "rag.answer.cite",
    "OpenAIChat": "rag.answer.llm",
    "OpenAIEmbedder": "rag.answer.llm",
    "QUESTION_FEATURES": "rag.answer.relevance",
    "RELEVANCE_MODEL": "rag.answer.relevance",
    "ROUTER_MODEL": "rag.answer.route",
    "Relevance": "rag.answer.relevance",
    "Router": "rag.answer.route",
    "SENTENCE_FEATURES": "rag.answer.sentences",
    "SENTENCE_MODEL": "rag.answer.sentences",
    "SentenceScorer": "rag.answer.sentences",
    "SupportChecker": "rag.answer.cite",
    "TreeModel": "rag.answer.trees",
    "Usage": "rag.answer.chatmodel",
    "Verifier": "rag.answer.pipeline",
    "bibtex_entry": "rag.answer.cite",
    "describe": "rag.answer.catalogue",
    "example_questions": "rag.answer.examples",
    "idf": "rag.answer.relevance",
    "load": "rag.answer.prompts",
    "matching": "rag.answer.catalogue",
    "name_of": "rag.answer.compose",
    "parse_numbers": "rag.answer.cite",
    "read": "rag.answer.query",
    "route_features": "rag.answer.route",
    "leading_sentences": "rag.answer.evidence",
    "load_model": "rag.answer.trees",
    "question_models": "rag.answer.trees",
    "source_sentences": "rag.answer.evidence",
}
__all__ = [
    "ANSWERABLE_FEATURES",
    "AnswerPipeline",
    "CatalogueAnswerer",
    "ChatModel",
    "ChatSession",
    "ExtractiveAnswerer",
    "FEATURES",
    "Intent",
    "LLMAnswerer",
    "LogisticModel",
    "MARKER",
    "OpenAIChat",
    "OpenAIEmbedder",
    "QUESTION_FEATURES",
    "RELEVANCE_MODEL",
    "ROUTER_MODEL",
    "Relevance",
    "Router",
    "SENTENCE_FEATURES",
    "SENTENCE_MODEL",
    "SentenceScorer",
    "SupportChecker",
    "TreeModel",
    "Usage",
    "Verifier",
    "bibtex_entry",
    "describe",
    "example_questions",
    "idf",
    "load",
    "matching",
    "name_of",
    "parse_numbers",
    "read",
    "route_features",
    "leading_sentences",
    "load_model",
    "question_models",
    "source_sentences",
]

__getattr__ = exports(__name__, _WHERE)
