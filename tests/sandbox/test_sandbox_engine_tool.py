"""The five attack classes through the engine's own tool (``SandboxedPython``), one instance.

The engine keeps one ``SandboxedPython`` per process and calls it for every ``python_code``
tag; these attackers run back to back on one such tool and every later call still works.
"""

from __future__ import annotations

import json

import pytest
from test_sandbox_call_life import FAKE_DONE, ORPHAN_WITH_CLOSED_PIPES
from test_sandbox_kernel_objects import PLANT, PRELUDE, PROBE
from test_sandbox_memory_cap import MEMFD
from test_sandbox_status_channel import WRITE_GARBAGE

from engine.testing.harness import tool_options
from engine.tools.python_code import SandboxedPython

ASYNC = pytest.mark.asyncio(loop_scope="module")


@ASYNC
async def test_attackers_back_to_back_through_the_engine_tool() -> None:
    """Garbage, fake done, kernel objects, memory and orphans: each a result, none a crash."""
    tool = SandboxedPython()
    try:
        garbage = json.loads((await tool.run(WRITE_GARBAGE, tool_options(python_code_timeout=20))).text)
        assert garbage["status"] == "success" and garbage["result"].endswith("done\n")

        fake = json.loads((await tool.run(FAKE_DONE, tool_options(python_code_timeout=2))).text)
        assert fake["status"] == "failed" and fake["run_status"] == "Timeout"

        for kind in ("keyrings", "sysv"):
            await tool.run(PRELUDE + PLANT[kind], tool_options())
            for _ in range(10):  # more calls than the pool has uids
                probe = json.loads((await tool.run(PRELUDE + PROBE[kind], tool_options())).text)
                found = [x for x in probe["result"].splitlines() if x.startswith("found")]
                assert found and all(int(x.split()[1]) < 0 for x in found), probe

        big = MEMFD.replace("range(40)", "range(192)")  # 3 GiB against the 2 GiB default
        memory = json.loads((await tool.run(big, tool_options(python_code_timeout=60))).text)
        assert memory["status"] == "failed"

        orphan = json.loads((await tool.run(ORPHAN_WITH_CLOSED_PIPES, tool_options())).text)
        assert orphan["status"] == "success"

        last = json.loads((await tool.run("print(6 * 7)", tool_options())).text)
        assert last["result"] == "42\n"
    finally:
        await tool.close()
