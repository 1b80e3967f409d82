"""Evolve trajectories as training samples: ground-truth or verifier-vote rewards."""

from __future__ import annotations

import argparse
import json

import msgspec
import pyarrow.parquet as pq
import pytest
import torch

from engine.cli.export import register
from events import TrajectorySealed, decode, encode
from replay.training import InMemoryRolloutSource, RolloutSubscription, SubscriptionOptions
from replay.training.dataproto import collate
from replay.training.samples import SampleOptions, build_many, build_samples
from replay.training.tokens import tokenize_sample
from tests.evolve.support import RoleModel, of, run_evolve, standard_reply
from tests.training.conftest import trajectory


async def _evolve_events() -> list:
    """Round 0 answers wrong and is rejected 2:1; round 1 answers right and is approved."""
    model = RoleModel(standard_reply(answers=["41", "42"], verdicts=["0", "0", "1", "1", "1", "1"]))
    return await run_evolve(model, evolve={"rounds": 2, "verifiers": 3, "aggregate": False})


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.handler(args)


def test_vote_source_rewards_with_the_vote_and_ground_truth_with_the_grade() -> None:
    """The same trajectory gives its grade or its vote as the outcome reward."""
    t = trajectory("g", 0, reward=0.0, vote=0.75)
    [graded] = build_samples(t, "multi_turn").samples
    [voted] = build_samples(t, "multi_turn", SampleOptions(reward_source="verifier_vote")).samples
    assert (graded.outcome_reward, graded.reward_source) == (0.0, "ground_truth")
    assert (voted.outcome_reward, voted.episode_reward, voted.vote) == (0.75, 0.75, 0.75)
    assert voted.reward_source == "verifier_vote"


def test_a_missing_reward_is_skipped_with_a_reason() -> None:
    """No vote under verifier_vote, no label under ground_truth: skipped, never trained as 0."""
    no_vote = build_samples(trajectory("g", 0), "per_turn", SampleOptions(reward_source="verifier_vote"))
    unlabelled = build_samples(trajectory("g", 1, graded=False, vote=1.0), "per_turn")
    assert not no_vote.samples and "no verifier vote" in no_vote.skipped[0].reason
    assert not unlabelled.samples and "no ground truth" in unlabelled.skipped[0].reason


def test_sft_keeps_what_the_chosen_source_calls_correct() -> None:
    """Under verifier_vote, SFT keeps trajectories the verifiers approved, whatever the label."""
    approved = trajectory("g", 0, reward=0.0, vote=1.0)
    opts = SampleOptions(reward_source="verifier_vote")
    assert build_samples(approved, "sft", opts).samples
    assert not build_samples(approved, "sft").samples


@pytest.mark.parametrize("source", ["vote", "", "GROUND_TRUTH", "label_free"])
def test_unknown_reward_source_is_refused_in_one_line(source: str) -> None:
    """A garbage reward source names itself and the accepted values."""
    for make in (lambda: SampleOptions(reward_source=source),
                 lambda: SubscriptionOptions(group_size=1, reward_source=source)):
        with pytest.raises(ValueError, match="unknown reward source") as info:
            make()
        assert "\n" not in str(info.value) and "ground_truth, verifier_vote" in str(info.value)


def test_trajectories_recorded_before_the_evolve_fields_still_decode() -> None:
    """An old trajectory.sealed (no role, vote, graded, round) decodes with the defaults."""
    body = json.loads(encode(trajectory("g", 0)))
    for key in ("role", "vote", "graded", "round", "verifier"):
        body.pop(key, None)
    old = decode(json.dumps(body).encode())
    assert isinstance(old, TrajectorySealed)
    assert (old.role, old.vote, old.graded, old.round, old.verifier) == ("policy", None, True, None, None)


async def test_cli_exports_an_evolve_run_with_either_reward(tmp_path, capsys) -> None:
    """``apollo export --reward-source`` writes policy and verifier rows with the chosen reward."""
    events = await _evolve_events()
    path = tmp_path / "events.jsonl"
    path.write_text("".join(encode(e).decode() + "\n" for e in events))
    capsys.readouterr()  # the run's own log lines
    rewards = {}
    for source in ("ground_truth", "verifier_vote"):
        out = tmp_path / f"{source}.parquet"
        argv = ["export", "--layout", "multi_turn", "--out", str(out), "--events", str(path),
                "--reward-source", source]
        assert _cli(argv) == 0
        assert json.loads(capsys.readouterr().out)["rows"] == 8
        table = pq.read_table(out).to_pylist()
        rewards[source] = {(r["role"], r["uid"]): r["outcome_reward"] for r in table if r["role"] == "policy"}
        assert {r["reward_source"] for r in table} == {source}
        assert sorted(r["role"] for r in table).count("verifier") == 6
    assert rewards["ground_truth"] == {("policy", "r-evo/r0"): 0.0, ("policy", "r-evo/r1"): 1.0}
    assert rewards["verifier_vote"] == {("policy", "r-evo/r0"): 1 / 3, ("policy", "r-evo/r1"): 1.0}


def test_cli_refuses_an_unknown_reward_source(capsys) -> None:
    """argparse refuses a reward source that does not exist, naming the flag."""
    with pytest.raises(SystemExit):
        _cli(["export", "--reward-source", "bogus", "--out", "x"])
    assert "--reward-source" in capsys.readouterr().err


async def test_subscription_trains_verifier_groups_on_the_vote(tokenizer) -> None:
    """Verifier trajectories of a round come out of the subscription as one group, voted rewards
    on the last token, and verl's GRPO advantage runs on them."""
    from verl.trainer.ppo import core_algos

    events = await _evolve_events()
    source = InMemoryRolloutSource(of(events, TrajectorySealed))
    options = SubscriptionOptions(group_size=3, roles=("verifier",), reward_source="verifier_vote",
                                  fetch_timeout=0.0, idle_timeout=0.0, heartbeat_interval=0.0)
    subscription = RolloutSubscription(source, options)
    batches = [batch async for batch in subscription]
    assert [[g.group_id for g in b.groups] for b in batches] == [["r-evo/r0/verifiers"], ["r-evo/r1/verifiers"]]
    assert {s.reason for s in subscription.skipped} == {"role policy is not trained by this subscription"}
    samples = batches[0].samples("multi_turn").samples
    votes = sorted(s.outcome_reward for s in samples)
    assert votes == [0.0, 1.0, 1.0]  # two rejected with the majority, one approved against it
    data = collate([tokenize_sample(s, tokenizer) for s in samples], pad_token_id=0)
    scores = data.batch["token_level_scores"].sum(dim=-1)
    assert sorted(scores.tolist()) == votes
    advantages, _ = core_algos.compute_grpo_outcome_advantage(
        token_level_rewards=data.batch["token_level_scores"],
        response_mask=data.batch["response_mask"],
        index=data.non_tensor_batch["uid"],
    )
    dissenter, sider = int(torch.argmin(scores)), int(torch.argmax(scores))
    assert advantages[dissenter, 0].item() < 0 < advantages[sider, 0].item()


def test_the_sample_carries_role_and_vote_for_any_layout() -> None:
    """Every layout keeps the trajectory's role and vote (a trainer can mix or split them)."""
    t = trajectory("g", 0, role="verifier", vote=1.0, verifier=2)
    for layout in ("per_turn", "multi_turn", "sft"):
        [sample] = build_many([t], layout).samples
        assert (sample.role, sample.vote) == ("verifier", 1.0)
    assert msgspec.structs.asdict(t)["verifier"] == 2
