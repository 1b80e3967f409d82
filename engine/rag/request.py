"""Parse the body of a ``<local_rag>`` tag into a validated request.

The body is a JSON object ``{"repo_name", "query", "top_k"?}``. The ``key: value``
line form shown in the reference's docs is accepted too. Every malformed input
becomes a :class:`RequestProblem` the tool turns into an observation.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final

from engine.rag.libraries import LIBRARIES, UnknownLibraryError

ALLOWED_KEYS: Final = ("repo_name", "query", "top_k")
DEFAULT_TOP_K: Final = 3
MAX_TOP_K: Final = 10
MAX_QUERY_CHARS: Final = 1000
_LINE: Final = re.compile(r"^\s*(repo_name|query|top_k)\s*:\s*(.*?)\s*$")


@dataclass(frozen=True)
class RagRequest:
    """A valid retrieval request."""

    library: str
    query: str
    top_k: int


@dataclass(frozen=True)
class RequestProblem:
    """Why a body is not a valid request; ``missing`` selects the reference's shape."""

    message: str
    missing: bool = False


def parse_request(body: str, default_top_k: int = DEFAULT_TOP_K) -> RagRequest | RequestProblem:
    """Validate a tag body; never raises."""
    data = _decode(body)
    if isinstance(data, RequestProblem):
        return data
    if not isinstance(data, dict):
        kind = type(data).__name__ if data is not None else "null"
        return RequestProblem(
            f"local_rag input must be a JSON object with repo_name, query and optional "
            f"top_k, not a JSON {kind}"
        )
    unexpected = sorted(str(k) for k in data if k not in ALLOWED_KEYS)
    if unexpected:
        return RequestProblem(
            f"Unexpected keys: {', '.join(unexpected)} (allowed: {', '.join(ALLOWED_KEYS)})"
        )
    repo, query = data.get("repo_name"), data.get("query")
    if repo in (None, "") or query in (None, "") or (isinstance(query, str) and not query.strip()):
        return RequestProblem("Both repo_name and query are required.", missing=True)
    if not isinstance(repo, str) or not isinstance(query, str):
        return RequestProblem("repo_name and query must be strings")
    library = _library(repo)
    if isinstance(library, RequestProblem):
        return library
    top_k = _top_k(data.get("top_k", default_top_k))
    if isinstance(top_k, RequestProblem):
        return top_k
    return RagRequest(library=library, query=query.strip()[:MAX_QUERY_CHARS], top_k=top_k)


def _decode(body: str) -> Any:
    text = body.strip() if isinstance(body, str) else ""
    if not text:
        return RequestProblem("Both repo_name and query are required.", missing=True)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        matches = [_LINE.match(ln) for ln in lines]
        if matches and all(matches):
            return {m.group(1): m.group(2) for m in matches if m}
        return RequestProblem(f"Invalid JSON input for local_rag ({exc})")


def _library(repo: str) -> str | RequestProblem:
    name = repo.strip().lower().removeprefix("local/")
    if name not in LIBRARIES:
        return RequestProblem(str(UnknownLibraryError(repo)))
    return name


def _top_k(value: Any) -> int | RequestProblem:
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return RequestProblem(
            f"top_k must be a positive integer (at most {MAX_TOP_K}), got {value!r}"
        )
    return min(value, MAX_TOP_K)
