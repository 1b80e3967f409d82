"""The python tool's sandbox can start before its first call, and stops cleanly either way."""

from __future__ import annotations

import asyncio
import json

from engine.app.bootstrap import build_services
from engine.testing.harness import make_settings, tool_options
from engine.tools.python_code import SandboxedPython


async def test_a_sandbox_started_in_the_background_serves_the_first_call() -> None:
    """A sandbox warmed up in the background is ready and serves the first call."""
    tool = SandboxedPython()
    tool.start_in_background()
    assert tool._warming is not None  # the warm-up under way
    await asyncio.wait_for(asyncio.shield(tool._warming), 60)
    assert tool._tool is not None  # started without any call
    try:
        result = await tool.run("print(6 * 7)", tool_options())
        assert json.loads(result.text)["result"] == "42\n"
    finally:
        await tool.close()


async def test_closing_during_the_warm_up_stops_it_without_errors() -> None:
    """Closing the tool during its warm-up stops the warm-up without errors."""
    tool = SandboxedPython()
    tool.start_in_background()
    await asyncio.sleep(0.05)
    await tool.close()
    assert tool._warming is not None and tool._warming.done()


def test_without_a_running_loop_the_warm_up_waits_for_the_first_call() -> None:
    """Without a running event loop, the background warm-up is deferred to the first call."""
    tool = SandboxedPython()
    tool.start_in_background()
    assert tool._warming is None


async def test_services_warm_the_sandbox_only_when_python_is_enabled() -> None:
    """Python on for the policy or the verifiers warms the sandbox; off for both does not."""
    for enabled in (True, False):
        settings = make_settings({
            "episode": {"enable_python_code": enabled},
            "evolve": {"verifier_episode": {"enable_python_code": enabled}},
        })
        services, closers = build_services(settings)
        try:
            python = services.tools.tools["python_code"]
            assert (python._warming is not None) is enabled
        finally:
            for close in reversed(closers):
                result = close()
                if asyncio.iscoroutine(result):
                    await result


async def test_services_warm_the_sandbox_when_only_the_verifiers_use_python() -> None:
    """An evolve worker whose verifiers run code has the sandbox ready though the policy has none."""
    settings = make_settings({
        "episode": {"enable_python_code": False},
        "evolve": {"verifier_episode": {"enable_python_code": True}},
    })
    services, closers = build_services(settings)
    try:
        assert services.tools.tools["python_code"]._warming is not None
    finally:
        for close in reversed(closers):
            result = close()
            if asyncio.iscoroutine(result):
                await result
