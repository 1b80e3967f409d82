"""A recorded role section that names only some keys resolves as the router always did:
laid over the policy's section key by key (``{**policy, **section}``), once, when decoded."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import msgspec

from engine.models.router import endpoint_of
from engine.testing.event_builders import started, submitted
from events.model import ChatMessage, ModelCallRequested, ModelResponded, SamplingParams
from handlers.context import HandlerContext, Services
from handlers.episode.effects import call_model
from handlers.episode.model_choice import sampling_params
from handlers.ports import ModelClient, ModelReply
from handlers.run_settings import ModelSpec, run_settings_of

POLICY = {"model": "p-model", "base_url": "http://policy:8000/v1", "temperature": 0.3, "top_p": 0.9,
          "top_k": 20, "max_tokens": 1024, "timeout": 60.0, "max_retries": 2, "max_concurrency": 4,
          "system_prompt": "Be brief.", "return_token_ids": True}
VERIFIER = {"base_url": "http://verifier:8000/v1", "temperature": 0.1}
"""Names only what differs from the policy: a hand-written or older recording."""
RECORDED = {"models": {"policy": POLICY, "verifier": VERIFIER}}
BEFORE = msgspec.convert({**POLICY, **VERIFIER}, ModelSpec)
"""What the router resolved the verifier to when it merged the recorded dicts itself."""


class Recording:
    """A model router that notes the spec each call is served with."""

    def __init__(self) -> None:
        self.specs: list[tuple[str, ModelSpec, str | None]] = []

    def client_for(self, role: str, spec: ModelSpec, *, branch: str | None = None) -> ModelClient:
        self.specs.append((role, spec, branch))
        return self

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> ModelReply:
        return ModelReply(text="ok", model="served")


def test_a_partial_role_section_resolves_the_model_endpoint_and_sampling_as_before() -> None:
    """Model, endpoint and sampling of a partial verifier section are the policy's keys with its own on top."""
    run = run_settings_of(RECORDED)
    for spec in (run.model_for("verifier"), run.model_of_call("verifier", None), run.role_models(None)["verifier"]):
        assert spec == BEFORE
        assert endpoint_of(spec, api_key="k") == endpoint_of(BEFORE, api_key="k")
        assert sampling_params(spec) == sampling_params(BEFORE)
    assert (BEFORE.model, BEFORE.base_url, BEFORE.temperature, BEFORE.top_p, BEFORE.max_tokens) == (
        "p-model", "http://verifier:8000/v1", 0.1, 0.9, 1024)
    assert run.role_models(None)["summarizer"] == BEFORE  # a role without a section: the verifier's
    assert run.model_for("policy") == msgspec.convert(POLICY, ModelSpec)


async def test_a_call_of_a_partial_role_is_served_with_the_merged_spec() -> None:
    """The call_model effector hands the router the same merged spec the router built before."""
    at = datetime.now(UTC)
    begun = started("r-1", settings=RECORDED)
    request = ModelCallRequested(event_id="c", run_id="r-1", occurred_at=at, call_id="c1", role="verifier",
                                 step=1, messages=[ChatMessage(role="user", content="check")],
                                 model=BEFORE.model, params=sampling_params(BEFORE), episode="r0.verifier.0")
    router = Recording()
    history = [submitted("r-1"), begun, request]
    for settings in (None, run_settings_of(RECORDED)):  # decoded from the history, or carried decoded
        ctx = HandlerContext(event=request, handler="call_model", history=history,
                             services=Services(models=router), wall_clock=True, typed_settings=settings)
        (reply,) = await call_model(request, ctx)
        assert isinstance(reply, ModelResponded) and reply.text == "ok"
    assert router.specs == [("verifier", BEFORE, None), ("verifier", BEFORE, None)]
