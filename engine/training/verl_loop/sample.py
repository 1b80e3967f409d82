"""A verl sample's fields and sampling parameters, checked before anything is submitted.

Each refusal is one :class:`SampleError` naming the field or parameter; verl's worker
raises it out of ``generate_sequences`` as it does its own loops' errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from engine.errors import EngineError


class SampleError(ValueError, EngineError):
    """A sample or a sampling parameter the apollo agent loop cannot run (the message names it)."""


class SampleProblem(msgspec.Struct, frozen=True, kw_only=True):
    question: str
    ground_truth: str
    problem_id: str
    data_source: str
    group_id: str | None = None


HONOURED = frozenset({"temperature", "top_p", "top_k", "logprobs"})
"""verl's sampling parameters apollo records with every call (``logprobs``: whether the server returns them)."""
NEUTRAL = {"repetition_penalty": 1.0}
"""Parameters accepted only at the value that changes nothing (apollo records no such knob)."""


def problem_of(sample: Mapping[str, Any]) -> SampleProblem:
    """The problem of a verl sample (RLHFDataset fields), or :class:`SampleError` naming what is missing.

    Question: ``extra_info.question``, else the last user message of ``raw_prompt``.
    Ground truth: ``reward_model.ground_truth``, else ``extra_info.ground_truth`` / ``extra_info.answer``.
    """
    extra = _mapping(sample.get("extra_info"))
    question = _text(extra.get("question")) or _last_user(sample.get("raw_prompt"))
    if not question:
        msg = "the sample has no problem: neither extra_info.question nor a user message in raw_prompt"
        raise SampleError(msg)
    truth = _text(_mapping(sample.get("reward_model")).get("ground_truth"))
    truth = truth or _text(extra.get("ground_truth")) or _text(extra.get("answer"))
    if not truth:
        msg = "the sample has no ground truth: reward_model.ground_truth (or extra_info.ground_truth) is missing"
        raise SampleError(msg)
    index = extra.get("index", sample.get("index"))
    source = _text(sample.get("data_source")) or "verl"
    uid = sample.get("uid")
    return SampleProblem(question=question, ground_truth=truth, data_source=source,
                         problem_id=_token(f"{source}-{index}" if index is not None else source),
                         group_id=_token(str(uid)) if uid is not None else None)


def check_sampling(params: Mapping[str, Any]) -> dict[str, Any]:
    """verl's sampling parameters as apollo runs them; :class:`SampleError` names one it cannot honour."""
    for name, value in params.items():
        if name in HONOURED:
            continue
        if name in NEUTRAL and _same(value, NEUTRAL[name]):
            continue
        allowed = ", ".join(sorted(HONOURED))
        msg = (f"verl sampling parameter {name}={value!r} cannot be honoured by the apollo agent loop "
               f"(apollo records {allowed} with every call)")
        raise SampleError(msg)
    out: dict[str, Any] = {"logprobs": bool(params.get("logprobs", False))}
    if "repetition_penalty" in params:
        out["repetition_penalty"] = 1.0
    return out


def run_sampling(params: Mapping[str, Any]) -> dict[str, Any]:
    """The run's ``models.policy`` sampling keys: what apollo records with each call."""
    top_k = params.get("top_k", -1)
    return {"temperature": float(params.get("temperature", 1.0)), "top_p": float(params.get("top_p", 1.0)),
            "top_k": int(top_k) if top_k is not None and int(top_k) > 0 else -1}


def _same(value: Any, expected: float) -> bool:
    try:
        return float(value) == expected
    except (TypeError, ValueError):
        return False


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, int | float):
        return str(value)
    return value.strip() if isinstance(value, str) else ""


def _last_user(messages: Any) -> str:
    try:
        items = list(messages) if messages is not None else []
    except TypeError:
        return ""
    for message in reversed(items):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return _text(message.get("content"))
    return ""


def _token(text: str) -> str:
    """Only ``[A-Za-z0-9_-]`` (ids travel in NATS subjects), at most 80 characters."""
    cleaned = "".join(c if (c.isascii() and c.isalnum()) or c in "-_" else "-" for c in text)
    return cleaned[:80] or "sample"
