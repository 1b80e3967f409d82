"""The worker role of deploy/nats/auth.conf carries a `verl:` run's model call to the agent loop and back."""

from __future__ import annotations

import asyncio

import nats
import pytest
from nats.errors import NoRespondersError

from engine.cli.nats_passwords import SERVER_VARIABLES, new_password
from tests.deploy.test_nats_passwords import _start

pytestmark = pytest.mark.nats


async def _request_once_interest_is_seen(relay, subject: str, payload: bytes, *, within_s: float = 10.0):
    """The reply to ``payload``; a no-responders answer is asked again until ``within_s``.

    The loop's subscription is flushed before the first request, yet on a loaded machine a
    CI run once saw one no-responders answer: a grant that denied the subscription keeps
    answering no-responders (and shows up as an async permissions error), so retrying only
    tolerates timing, never a missing permission.
    """
    deadline = asyncio.get_running_loop().time() + within_s
    while True:
        try:
            return await relay.request(subject, payload, timeout=5)
        except NoRespondersError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.1)


async def test_one_worker_relays_a_call_and_the_loop_answers_it(tmp_path) -> None:
    """A worker's request on apollo_verl.generate.<run> reaches the loop (a worker) and gets its reply."""
    passwords = {name: new_password() for name in SERVER_VARIABLES}
    process, port = _start(tmp_path, passwords)
    url = f"nats://127.0.0.1:{port}"
    refused: list[str] = []

    async def note_error(exc: Exception) -> None:
        refused.append(f"{type(exc).__name__}: {exc}")

    try:
        assert process.poll() is None, f"nats-server exited: {process.stderr.read().decode()[-2000:]}"
        options = {"user": "worker", "password": passwords["APOLLO_NATS_WORKER_PASSWORD"], "error_cb": note_error}
        loop = await nats.connect(url, **options)
        relay = await nats.connect(url, **options)

        async def answer(msg) -> None:
            await msg.respond(b"generated:" + msg.data)

        await loop.subscribe("apollo_verl.generate.run-1", cb=answer)
        await loop.flush()
        reply = await _request_once_interest_is_seen(relay, "apollo_verl.generate.run-1", b"prompt")
        assert reply.data == b"generated:prompt"
        assert not refused, refused  # no permissions violation on either side
        await loop.close()
        await relay.close()
    finally:
        process.terminate()
        process.wait(10)
