"""Mistakes on the command line and in a config file are named as the user wrote them
(issue 31, smaller items): a mistyped flag by its command with the flag meant, a wrong
type by the user's key, never by an internal path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.support import apollo


@pytest.mark.parametrize(("args", "said"), [
    (["runs", "--limt", "3"], "apollo runs: error: unrecognized arguments: --limt 3 (did you mean --limit?)"),
    (["show", "r-1", "--jsn"], "apollo show: error: unrecognized arguments: --jsn (did you mean --json?)"),
    (["fork", "r-1", "--at", "2", "--mdoel", "m"],
     "apollo fork: error: unrecognized arguments: --mdoel m (did you mean --model?)"),
])
def test_a_mistyped_flag_gets_its_commands_usage_and_the_flag_meant(tmp_path: Path, args: list[str],
                                                                     said: str) -> None:
    """A mistyped flag prints its command's usage and suggests the flag meant."""
    code, out, err = apollo(tmp_path / "data", *args)
    assert code == 2 and out == ""
    assert err.startswith(f"usage: apollo {args[0]} ")
    assert err.strip().splitlines()[-1] == said


@pytest.mark.parametrize(("config", "said"), [
    ("models:\n  policy:\n    max_tokens: lots\n", "models.policy.max_tokens must be a whole number, got text"),
    ("models:\n  policy: {}\n  verifier:\n    temperature: hot\n",
     "models.verifier.temperature must be a number, got text"),
    ("models:\n  policy:\n    max_tokns: 5\n", "unknown key models.policy.max_tokns"),
    ("evolve:\n  rounds: 0\n", "evolve.rounds must be a whole number >= 1"),
])
def test_a_wrong_config_value_is_named_by_the_users_key(tmp_path: Path, config: str, said: str) -> None:
    """A wrong config value is reported by the key the user wrote."""
    path = tmp_path / "apollo.yaml"
    path.write_text(config)
    code, out, err = apollo(tmp_path / "data", "--config", str(path), "runs")
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [f"apollo: error: invalid config: {said}"]


@pytest.mark.parametrize("args", [
    ["streams", "ensure", "--nats-url", "nats://127.0.0.1:1"],
    ["sandbox", "run", "-c", "print(1)", "--nats-url", "nats://127.0.0.1:1"],
    ["model", "serve", "/nonexistent/nope.gguf", "--port", "0", "--nats-url", "nats://127.0.0.1:1"],
])
def test_global_flags_work_after_a_commands_action_too(tmp_path: Path, args: list[str]) -> None:
    """`apollo streams ensure --nats-url U` is `apollo --nats-url U streams ensure`: the flag is taken, not refused."""
    code, _, err = apollo(tmp_path / "data", *args[:-2], "--log-level", "error", *args[-2:])
    assert "unrecognized arguments" not in err, err[-2000:]
    if args[0] == "streams":  # the URL given after the action is the one tried
        assert code == 1 and "nats://127.0.0.1:1" in err


def test_a_mistyped_flag_after_an_action_gets_that_actions_usage_and_never_itself_as_a_suggestion(
    tmp_path: Path,
) -> None:
    """A typo after `streams ensure` is refused by `apollo streams ensure`, suggesting its own flag."""
    code, out, err = apollo(tmp_path / "data", "streams", "ensure", "--replcas", "3")
    assert code == 2 and out == ""
    assert err.startswith("usage: apollo streams ensure ")
    assert err.strip().splitlines()[-1] == ("apollo streams ensure: error: unrecognized arguments: --replcas 3 "
                                            "(did you mean --replicas?)")
