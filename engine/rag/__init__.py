"""Offline retrieval over the documentation of the math libraries (the local_rag tool)."""

from __future__ import annotations

from engine.rag.index import Hit
from engine.rag.kb import KnowledgeBase
from engine.rag.libraries import SUPPORTED_LIBRARIES, UnknownLibraryError
from engine.rag.render import render_hits
from engine.rag.request import RagRequest, RequestProblem, parse_request

__all__ = [
    "SUPPORTED_LIBRARIES",
    "Hit",
    "KnowledgeBase",
    "RagRequest",
    "RequestProblem",
    "UnknownLibraryError",
    "parse_request",
    "render_hits",
]
