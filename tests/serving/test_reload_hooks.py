"""The full-weight reload hooks: an HTTP POST to the deployment, or a command."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from engine.serving import CommandReloadHook, HttpReloadHook, LoadFailed
from events.policy import PolicyUpdated, policy_run_id


def _update(checkpoint: str = "/ckpt/step-7", version: int = 7) -> PolicyUpdated:
    return PolicyUpdated(event_id="u", run_id=policy_run_id(), occurred_at=datetime.now(UTC),
                         version=version, checkpoint=checkpoint, base_model="qwen3-4b")


class _Hook:
    def __init__(self) -> None:
        self.bodies: list[Any] = []
        self.answer: web.Response = web.json_response({"ok": True})

    async def handle(self, request: web.Request) -> web.Response:
        self.bodies.append(await request.json())
        return self.answer


@pytest.fixture
async def hook() -> AsyncIterator[tuple[_Hook, str]]:
    recorder = _Hook()
    app = web.Application()
    app.router.add_post("/reload", recorder.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield recorder, f"http://127.0.0.1:{port}/reload"
    finally:
        await runner.cleanup()


async def test_the_http_hook_posts_the_update_and_takes_a_2xx_as_served(hook: tuple[_Hook, str]) -> None:
    """The HTTP reload hook posts the update and takes a 2xx reply as served."""
    recorder, url = hook
    served = await HttpReloadHook(url).load(_update(), None)
    assert served is None
    assert recorder.bodies == [{"policy": "default", "version": 7, "checkpoint": "/ckpt/step-7",
                                "base_model": "qwen3-4b", "adapter": None}]


async def test_the_http_hook_may_name_the_model_calls_must_send(hook: tuple[_Hook, str]) -> None:
    """The HTTP reload hook's reply may name the model later calls must send."""
    recorder, url = hook
    recorder.answer = web.json_response({"served_model": "qwen3-4b-step7"})
    assert await HttpReloadHook(url).load(_update(), None) == "qwen3-4b-step7"


async def test_the_http_hook_refusing_is_a_load_failure_with_its_status(hook: tuple[_Hook, str]) -> None:
    """An HTTP hook's error reply is a load failure carrying its status and body."""
    recorder, url = hook
    recorder.answer = web.Response(status=503, text="restart already under way\n")
    with pytest.raises(LoadFailed, match="HTTP 503: restart already under way"):
        await HttpReloadHook(url).load(_update(), None)


async def test_an_unreachable_hook_is_a_load_failure_naming_the_url() -> None:
    """An unreachable HTTP hook is a load failure naming its URL."""
    with pytest.raises(LoadFailed, match=r"cannot reach http://127\.0\.0\.1:9/reload"):
        await HttpReloadHook("http://127.0.0.1:9/reload", timeout=5).load(_update(), None)


async def test_the_command_hook_gets_the_update_in_its_environment(tmp_path: Path) -> None:
    """The command reload hook receives the update's fields in its environment."""
    out = tmp_path / "seen"
    script = ("import os, sys; open(sys.argv[1], 'w').write(os.environ['APOLLO_POLICY_VERSION'] + ' ' + "
              "os.environ['APOLLO_POLICY_CHECKPOINT'] + ' [' + os.environ['APOLLO_POLICY_ADAPTER'] + ']')")
    assert await CommandReloadHook([sys.executable, "-c", script, str(out)]).load(_update(), None) is None
    assert out.read_text() == "7 /ckpt/step-7 []"


async def test_a_failing_command_is_a_load_failure_with_its_last_words() -> None:
    """A failing reload command is a load failure with its exit code and last stderr line."""
    script = ("import sys; print('loading...', file=sys.stderr); "
              "print('CUDA out of memory', file=sys.stderr); sys.exit(3)")
    with pytest.raises(LoadFailed, match="exited with 3: CUDA out of memory"):
        await CommandReloadHook([sys.executable, "-c", script]).load(_update(), None)


async def test_a_command_that_does_not_exist_is_a_load_failure() -> None:
    """A reload command that does not exist is a load failure naming it."""
    with pytest.raises(LoadFailed, match="cannot run the reload command '/no/such/reload'"):
        await CommandReloadHook(["/no/such/reload"]).load(_update(), None)


def test_an_empty_command_is_refused_when_configured() -> None:
    """An empty reload command is refused when the hook is configured."""
    with pytest.raises(ValueError, match="empty"):
        CommandReloadHook([])
