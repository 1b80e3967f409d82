"""Global flags work after the subcommand; an unknown log level is refused in one line."""

from __future__ import annotations

import pytest

from engine.cli.main import build_parser, main, settings_from_args


@pytest.mark.parametrize("command", [["runs"], ["show", "r-1"], ["solve", "1+1"], ["up"], ["doctor"]])
def test_global_flags_after_the_subcommand_mean_the_same(command: list[str], tmp_path) -> None:
    """``apollo CMD --nats-url U --log-level debug --log-json`` equals the flags before CMD."""
    flags = ["--nats-url", "nats://10.0.0.9:4222", "--log-level", "DEBUG", "--log-json"]
    after = settings_from_args(build_parser().parse_args([*command, *flags]))
    before = settings_from_args(build_parser().parse_args([*flags, *command]))
    assert after == before
    assert after.nats.url == "nats://10.0.0.9:4222"
    assert after.log.level == "debug"
    assert after.log.json is True


def test_a_flag_after_the_subcommand_wins_over_the_same_flag_before() -> None:
    """The later one counts, as with any repeated flag."""
    args = build_parser().parse_args(["--nats-url", "nats://a:1", "runs", "--nats-url", "nats://b:2"])
    assert settings_from_args(args).nats.url == "nats://b:2"


@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.parametrize("level", ["verbose", "", "10", "info,debug"])
def test_an_unknown_log_level_flag_is_a_usage_error_naming_the_choices(where: str, level: str, capsys) -> None:
    """Exit 2 with argparse's one-line error; no traceback."""
    argv = ["--log-level", level, "runs"] if where == "before" else ["runs", "--log-level", level]
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "unknown log level" in err
    assert "debug, info, warning, error" in err
    assert "Traceback" not in err


def test_an_unknown_log_level_in_the_environment_is_one_config_error(monkeypatch, tmp_path, capsys) -> None:
    """``APOLLO_LOG_LEVEL=verbose`` fails the command with one line naming the key."""
    monkeypatch.setenv("APOLLO_LOG_LEVEL", "verbose")
    monkeypatch.setenv("APOLLO_DATA_DIR", str(tmp_path))
    assert main(["schema"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "log.level" in err[0]
    assert "verbose" in err[0]
