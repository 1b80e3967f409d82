"""The apollo agent loop's pure parts: sample checks, sampling parameters, outcomes, the relay."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from engine.models.nats_relay import RelayClient
from engine.training.verl_loop.outcome import outcome_of
from engine.training.verl_loop.sample import SampleError, check_sampling, problem_of, run_sampling
from events.model import ChatMessage, SamplingParams
from events.record import Recorded
from events.run import RunCompleted
from events.tool import ToolFailed
from handlers.ports import ModelError

_T = datetime(2026, 1, 1, tzinfo=UTC)


def recorded(*events: Any) -> list[Recorded]:
    """Events as the log hands them back."""
    return [Recorded(seq=i + 1, subject=f"apollo.run.r.{i}", event=e) for i, e in enumerate(events)]


def test_problem_from_verl_fields() -> None:
    """extra_info.question and reward_model.ground_truth make the problem; uid is the group."""
    problem = problem_of({"raw_prompt": [{"role": "user", "content": "templated"}], "data_source": "math",
                          "extra_info": {"question": "What is 1+1?", "index": 7},
                          "reward_model": {"ground_truth": "2"}, "uid": "u 1"})
    assert (problem.question, problem.ground_truth, problem.problem_id, problem.group_id) == \
        ("What is 1+1?", "2", "math-7", "u-1")


def test_problem_falls_back_to_the_last_user_message() -> None:
    """Without extra_info.question the prompt's last user message is the problem."""
    problem = problem_of({"raw_prompt": [{"role": "user", "content": "What is 2+2?"}],
                          "reward_model": {"ground_truth": "4"}})
    assert problem.question == "What is 2+2?"


def test_missing_problem_is_named() -> None:
    """A sample with no question anywhere is refused, naming where it looked."""
    with pytest.raises(SampleError, match="no problem"):
        problem_of({"raw_prompt": [], "reward_model": {"ground_truth": "4"}})


def test_unsupported_sampling_parameter_is_named() -> None:
    """A parameter apollo cannot record is refused by name; verl's defaults pass."""
    defaults = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}
    assert check_sampling(defaults)["logprobs"] is True
    assert run_sampling(defaults) == {"temperature": 1.0, "top_p": 1.0, "top_k": -1}
    with pytest.raises(SampleError, match=r"repetition_penalty=1\.1"):
        check_sampling({**defaults, "repetition_penalty": 1.1})
    with pytest.raises(SampleError, match="min_p"):
        check_sampling({**defaults, "min_p": 0.1})


def test_sandbox_failure_masks_the_sample() -> None:
    """A tool that could not run (sandbox failure) masks the sample even though the run completed."""
    failed = ToolFailed(event_id="t", run_id="r", occurred_at=_T, call_id="c", role="policy", step=1,
                        tool="python_code", error="sandbox did not start", kind="infrastructure")
    done = RunCompleted(event_id="d", run_id="r", occurred_at=_T, done_reason="answer", score=0.0)
    outcome = outcome_of("r", recorded(failed, done), timeout=5)
    assert outcome.masked and "python_code could not run" in (outcome.failure or "")


def test_unfinished_run_is_masked() -> None:
    """No ending within the timeout: masked, saying so."""
    assert outcome_of("r", None, timeout=2).failure == "the run did not end within 2 s"


@pytest.mark.nats
async def test_relay_without_a_loop_fails_as_connection(nats_server: Any) -> None:
    """A verl: call nobody holds fails at once as a connection error naming the model."""
    import nats

    nc = await nats.connect(nats_server.url)
    try:
        client = RelayClient(nc, "policy", "verl:gone", timeout=5)
        with pytest.raises(ModelError, match="verl:gone") as caught:
            await client.complete([ChatMessage(role="user", content="hi")], SamplingParams())
        assert caught.value.kind == "connection"
    finally:
        await nc.close()


def test_router_provider_serves_its_prefix() -> None:
    """The router hands ``verl:`` specs to the registered provider and others to the built-in kinds."""
    from engine.models.nats_relay import relay_provider
    from engine.models.router import ModelRouter
    from handlers.run_settings import ModelSpec

    router = ModelRouter(providers={"verl:": relay_provider(nc=None)})
    client = router.client_for("policy", ModelSpec(model="verl:run-1"))
    assert isinstance(client, RelayClient) and client.model == "verl:run-1" and client.role == "policy"
    assert not isinstance(router.client_for("policy", ModelSpec(model="qwen3-4b")), RelayClient)
