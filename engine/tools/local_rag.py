"""The ``local_rag`` tool: parse the tag body, search the KB off the event loop, reply JSON."""

from __future__ import annotations

import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from engine.rag.kb import KnowledgeBase
from engine.rag.render import render_hits
from engine.rag.request import DEFAULT_TOP_K, RagRequest, RequestProblem, parse_request
from handlers.ports import ToolOptions, ToolResult

log = logging.getLogger(__name__)


class LocalRagTool:
    """Offline documentation retrieval for sympy, scipy, numpy and four stdlib modules.

    Settings read per call: ``enable_local_rag`` (the tool registry applies its default;
    an explicit false here also disables it) and ``rag.top_k`` (the default when the
    model gives none).
    """

    name = "local_rag"

    def __init__(self, kb: KnowledgeBase | None = None, data_dir: Path | None = None) -> None:
        self._kb = kb
        self._data_dir = data_dir
        # One worker: KB loading happens once and torch already uses every core.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="local-rag")

    @property
    def kb(self) -> KnowledgeBase:
        """The knowledge base, created on first use."""
        if self._kb is None:
            self._kb = KnowledgeBase(self._data_dir)
        return self._kb

    async def run(self, tool_input: str, options: ToolOptions) -> ToolResult:
        """Answer one tag body; every failure is an observation with score 0."""
        if not options.episode.enable_local_rag:
            return _reply({"result": "Local RAG is not enabled.", "status": "disabled"}, 0)
        parsed = parse_request(tool_input, _default_top_k(options.episode.rag_top_k))
        if isinstance(parsed, RequestProblem):
            return _problem(parsed)
        loop = asyncio.get_running_loop()
        try:
            text = await loop.run_in_executor(self._executor, self._search, parsed)
        except Exception as exc:  # retrieval bugs become observations, never worker crashes
            log.exception("local_rag_failed")
            return _reply(
                {"result": f"Exception during local_rag query: {exc}", "status": "error"}, 0
            )
        return _reply({"result": text, "status": "success"}, 1)

    def _search(self, request: RagRequest) -> str:
        hits = self.kb.search(request.library, request.query, request.top_k)
        return render_hits(hits)

    def close(self) -> None:
        """Stop the worker thread (pending searches finish first)."""
        self._executor.shutdown(wait=True)


def _default_top_k(value: int) -> int:
    """The run's ``rag_top_k`` when positive, else the tool's default."""
    return value if value > 0 else DEFAULT_TOP_K


def _problem(problem: RequestProblem) -> ToolResult:
    if problem.missing:
        return _reply({"result": problem.message, "status": "error"}, 0)
    return _reply(
        {"result": f"Error: {problem.message}", "status": "failed", "error": problem.message}, 0
    )


def _reply(payload: dict[str, Any], score: int) -> ToolResult:
    return ToolResult(text=json.dumps(payload), score=float(score))
