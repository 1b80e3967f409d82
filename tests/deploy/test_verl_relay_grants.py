"""The worker role of deploy/nats/auth.conf carries a `verl:` run's model call to the agent loop and back."""

from __future__ import annotations

import nats
import pytest

from engine.cli.nats_passwords import SERVER_VARIABLES, new_password
from tests.deploy.test_nats_passwords import _start

pytestmark = pytest.mark.nats


async def test_one_worker_relays_a_call_and_the_loop_answers_it(tmp_path) -> None:
    """A worker's request on apollo_verl.generate.<run> reaches the loop (a worker) and gets its reply."""
    passwords = {name: new_password() for name in SERVER_VARIABLES}
    process, port = _start(tmp_path, passwords)
    url = f"nats://127.0.0.1:{port}"
    try:
        loop = await nats.connect(url, user="worker", password=passwords["APOLLO_NATS_WORKER_PASSWORD"])
        relay = await nats.connect(url, user="worker", password=passwords["APOLLO_NATS_WORKER_PASSWORD"])

        async def answer(msg) -> None:
            await msg.respond(b"generated:" + msg.data)

        await loop.subscribe("apollo_verl.generate.run-1", cb=answer)
        await loop.flush()
        reply = await relay.request("apollo_verl.generate.run-1", b"prompt", timeout=5)
        assert reply.data == b"generated:prompt"
        await loop.close()
        await relay.close()
    finally:
        process.terminate()
        process.wait(10)
