"""The ports and the handler context carry typed settings, never a settings mapping."""

from __future__ import annotations

import inspect
import typing

from handlers import context, ports
from handlers.context import HandlerContext, Services
from handlers.ports import ModelRouter, ToolOptions, ToolRunner
from handlers.run_settings import EpisodeSpec, ModelSpec, RunSettings


def _hints(function: object) -> dict[str, object]:
    return typing.get_type_hints(function, vars(ports) | vars(context))


def test_the_model_router_takes_a_model_spec_and_the_tool_runner_tool_options() -> None:
    """client_for(role, spec: ModelSpec, *, branch) and run(tool, input, options: ToolOptions)."""
    assert _hints(ModelRouter.client_for)["spec"] is ModelSpec
    assert _hints(ToolRunner.run)["options"] is ToolOptions
    assert _hints(ToolOptions)["episode"] is EpisodeSpec


def test_no_port_or_context_method_takes_or_returns_a_settings_mapping() -> None:
    """No parameter or return value of a port or of the context is a dict of settings."""
    classes = [ModelRouter, ToolRunner, ports.ModelClient, ports.AnswerGrader, HandlerContext, Services]
    for cls in classes:
        for name, member in inspect.getmembers(cls, inspect.isfunction):
            for parameter, hint in _hints(member).items():
                text = str(hint)
                mapping = "dict[str, typing.Any]" in text or "Mapping[str, typing.Any]" in text
                assert not (mapping and "settings" in parameter), f"{cls.__name__}.{name}({parameter}: {text})"
                assert not (parameter == "return" and mapping and "settings" in name), f"{cls.__name__}.{name}"
    assert _hints(HandlerContext.run_settings)["return"] is RunSettings
    assert not hasattr(HandlerContext, "settings")
