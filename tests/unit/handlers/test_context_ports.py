"""The handler context types every port with its Protocol: no ``Any`` among them."""

from __future__ import annotations

import dataclasses
import typing

from handlers.catalog import Catalog
from handlers.context import HandlerContext, Services
from handlers.ports import AnswerGrader, ModelRouter, ToolRunner


def _mentions_any(hint: object) -> bool:
    if hint is typing.Any:
        return True
    return any(_mentions_any(arg) for arg in typing.get_args(hint) if arg is not Ellipsis and not isinstance(arg, list))


def _callable_parts(hint: object) -> list[object]:
    """A Callable's parameter and return types (``get_args`` nests the parameters in a list)."""
    found: list[object] = []
    for arg in typing.get_args(hint):
        found += arg if isinstance(arg, list) else [arg]
    return found


def test_no_port_of_the_services_is_typed_any() -> None:
    """Each Services field resolves to its Protocol (or the catalog), never to Any."""
    hints = typing.get_type_hints(Services)
    assert {f.name for f in dataclasses.fields(Services)} == set(hints)
    for name, hint in hints.items():
        assert not _mentions_any(hint), f"Services.{name} is typed {hint}"
    assert hints["models"] == ModelRouter | None
    assert hints["tools"] == ToolRunner | None
    assert hints["grader"] == AnswerGrader | None
    assert hints["catalog"] is Catalog


def test_settings_for_run_is_a_typed_callable() -> None:
    """settings_for_run is a Callable from overrides to settings, not an untyped slot."""
    hint = typing.get_type_hints(Services)["settings_for_run"]
    [callable_hint] = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    assert typing.get_origin(callable_hint) is not None and "Callable" in str(typing.get_origin(callable_hint))
    assert all(part is not typing.Any for part in _callable_parts(callable_hint))


def test_the_handler_context_holds_typed_services() -> None:
    """HandlerContext's services field is Services, and its catalog is the services' catalog."""
    assert typing.get_type_hints(HandlerContext)["services"] is Services
