"""The settings digest in dataset run ids: what changes it, what does not."""

from __future__ import annotations

from engine.config.run_identity import other_digests, settings_digest
from engine.config.settings import load_settings
from engine.datasets import group_id_for, run_id_for


def _settings(**policy: object) -> dict[str, object]:
    model = {"model": "qwen", "base_url": "http://a/v1", "temperature": 0.6, "top_p": 0.95, **policy}
    return {"models": {"policy": model}, "episode": {"max_steps": 8, "protocol": "reference_test"}}


def test_digest_ignores_key_order_and_secrets() -> None:
    """Reordered keys and another api_key give the same digest."""
    first = _settings(api_key="sk-1")
    second = {"episode": {"protocol": "reference_test", "max_steps": 8},
              "models": {"policy": dict(reversed(list(_settings(api_key="sk-2")["models"]["policy"].items())))}}  # type: ignore[index]
    assert settings_digest(first, workflow="reason") == settings_digest(second, workflow="reason")


def test_every_result_changing_setting_changes_the_digest() -> None:
    """Model, endpoint, sampling, protocol, step budget and workflow each give a new digest."""
    base = settings_digest(_settings(), workflow="reason")
    changed = [
        settings_digest(_settings(model="llama"), workflow="reason"),
        settings_digest(_settings(base_url="http://b/v1"), workflow="reason"),
        settings_digest(_settings(temperature=0.7), workflow="reason"),
        settings_digest(_settings(top_k=20), workflow="reason"),
        settings_digest({**_settings(), "episode": {"max_steps": 1, "protocol": "reference_test"}}, workflow="reason"),
        settings_digest({**_settings(), "episode": {"max_steps": 8, "protocol": "apollo"}}, workflow="reason"),
        settings_digest(_settings(), workflow="evolve"),
    ]
    assert base not in changed
    assert len(set(changed)) == len(changed)


def test_digest_of_loaded_settings_is_stable() -> None:
    """The same config loaded twice digests the same: nothing time- or process-dependent enters."""
    one = load_settings(None, environ={}).run_settings()
    two = load_settings(None, environ={}).run_settings()
    assert settings_digest(one, workflow="reason") == settings_digest(two, workflow="reason")


def test_run_ids_carry_the_digest_and_the_attempt() -> None:
    """Another digest or attempt is another run id; the group id ignores the attempt."""
    first = run_id_for("aime24", "60", 3, settings="0123456789ab")
    assert first == "aime24-0123456789ab-60-s3"
    assert run_id_for("aime24", "60", 3, settings="0123456789ab", attempt=1) == "aime24-0123456789ab-60-s3-r1"
    assert run_id_for("aime24", "60", 3, settings="ba9876543210") != first
    assert group_id_for("aime24", "60", settings="0123456789ab") == "aime24-0123456789ab-60-g"


def test_earlier_digests_are_found_from_run_ids() -> None:
    """Runs of the same dataset with other digests are recognised, hashed ids included."""
    ids = {
        run_id_for("aime24-reason", "60", 0, settings="aaaaaaaaaaaa"),
        run_id_for("aime24-reason", "61", 2, settings="bbbbbbbbbbbb", attempt=2),
        run_id_for("aime24-evolve", "60", 0, settings="cccccccccccc"),
        run_id_for("aime24-reason", "60", 0),
    }
    assert other_digests(ids, "aime24-reason", "aaaaaaaaaaaa") == {"bbbbbbbbbbbb"}
    assert other_digests(ids, "math500-reason", "aaaaaaaaaaaa") == set()
