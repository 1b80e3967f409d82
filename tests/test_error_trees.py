"""One error tree per layer: every exception class a layer defines derives from its root.

Callers can then catch one class per layer (the CLI prints any EngineError as one line).
A class may keep a built-in base as well (a DecodeError is still a ValueError).
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from types import ModuleType

import pytest

from engine.errors import EngineError
from events.errors import EventError
from handlers.errors import HandlerError
from replay.errors import ReplayError

ROOT = Path(__file__).resolve().parent.parent
ROOTS: dict[str, type[Exception]] = {
    "events": EventError,
    "handlers": HandlerError,
    "replay": ReplayError,
    "engine": EngineError,
}


def module_names(package: str) -> list[str]:
    names = []
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__main__":  # running it would start the CLI
            continue
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


def exceptions_defined_in(module: ModuleType) -> list[type[BaseException]]:
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__
    ]


def outside_tree(package: str, root: type[Exception]) -> list[str]:
    return [
        f"{name}.{cls.__qualname__}"
        for name in module_names(package)
        for cls in exceptions_defined_in(importlib.import_module(name))
        if not issubclass(cls, root)
    ]


@pytest.mark.parametrize("package", list(ROOTS))
def test_every_exception_a_layer_defines_derives_from_its_root(package: str) -> None:
    """Every exception a layer defines derives from that layer's root error."""
    assert outside_tree(package, ROOTS[package]) == []


@pytest.mark.parametrize("package", list(ROOTS))
def test_each_layer_defines_exceptions_the_check_can_see(package: str) -> None:
    """The check finds each layer's root error and at least one other exception in it."""
    found = [cls for name in module_names(package) for cls in exceptions_defined_in(importlib.import_module(name))]
    assert ROOTS[package] in found
    assert len(found) > 1


def test_an_error_outside_its_layers_tree_is_reported() -> None:
    """An exception defined outside its layer's error tree is reported."""
    module = ModuleType("handlers.stray")
    exec("class Stray(ValueError):\n    pass\n", module.__dict__)
    module.__dict__["Stray"].__module__ = module.__name__
    assert [cls.__name__ for cls in exceptions_defined_in(module) if not issubclass(cls, HandlerError)] == ["Stray"]


def test_errors_that_are_also_builtin_errors_keep_that_base() -> None:
    """Project errors that are also built-in errors keep that built-in base class."""
    from engine.models.scripted import ScriptError
    from engine.nats.publisher import PublishTimeout
    from engine.rag.libraries import UnknownLibraryError
    from events.codec import DecodeError
    from replay.training.tokens import TokenizationError

    assert issubclass(DecodeError, ValueError)
    assert issubclass(ScriptError, ValueError)
    assert issubclass(UnknownLibraryError, ValueError)
    assert issubclass(TokenizationError, ValueError)
    assert issubclass(PublishTimeout, TimeoutError)
