"""A model client whose replies say which policy version served them."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from events.model import ChatMessage, SamplingParams
from handlers.ports import ModelClient, ModelReply


class VersionedClient:
    """Wraps one call's client: its reply carries ``version``, the version that was active
    for the role when the call was made (read by the router just before it)."""

    def __init__(self, inner: ModelClient, version: int) -> None:
        self.inner = inner
        self.version = version

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> ModelReply:
        reply = await self.inner.complete(messages, params)
        return msgspec.structs.replace(reply, policy_version=self.version)
