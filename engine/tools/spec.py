"""Tool plugins: a name (its tag), an argument schema, a timeout and an async call.

Two ways to write one:

* a function: ``@tool(usage="...")`` on ``async def word_count(text: str) -> dict``.
  The parameters are the schema: a single ``str`` parameter receives the tag body
  as raw text (like ``python_code``); otherwise the body must be a JSON object whose
  keys are the parameters. A parameter named ``settings`` is not part of the schema:
  it receives the run's ``episode`` settings.
* a class deriving from :class:`Tool` with ``name``, ``usage``, ``args`` (a msgspec
  Struct, a JSON Schema mapping, or ``str`` for raw text) and
  ``async def call(self, args, settings)``.

What the call returns becomes the ``<tool_response>`` JSON: a
:class:`~handlers.ports.ToolResult` is used as is; any other value ``v`` becomes
``{"result": v, "status": "success"}`` with score 1. Bad arguments and exceptions
come back to the model as ``{"status": "error"}`` results (score 0); running past
the timeout is a :class:`~handlers.ports.ToolError` (recorded as ``tool.failed``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, get_type_hints

import msgspec

from handlers.ports import ToolError, ToolOptions, ToolResult

_TAG = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RESERVED = frozenset({"answer", "report", "think", "tool_response"})
_JSON_TYPES: dict[str, Any] = {
    "string": str, "integer": int, "number": float, "boolean": bool,
    "array": list, "object": dict,
}
DEFAULT_TIMEOUT = 30.0


class Tool:
    """Base class of class-based tool plugins (see the module docstring)."""

    name: ClassVar[str] = ""
    usage: ClassVar[str] = ""
    args: ClassVar[Any] = str
    timeout: ClassVar[float] = DEFAULT_TIMEOUT

    async def call(self, args: Any, settings: dict[str, Any]) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class ToolSpec:
    """A checked tool definition: how to build the runner and what to tell the model."""

    name: str
    usage: str
    timeout: float
    schema: Any
    """``str`` (raw body) or a msgspec Struct type (JSON object body)."""
    factory: Callable[[], Any]
    """Builds the object whose ``call(args, settings)`` runs the tool."""
    wants_settings: bool = True
    description: str = ""

    def runner(self) -> PluginToolRunner:
        return PluginToolRunner(self, self.factory())

    def schema_text(self) -> str:
        if self.schema is str:
            return "raw text"
        return json.dumps(msgspec.json.schema(self.schema).get("$defs", {}).get(self.schema.__name__, {})
                          .get("properties", {}))


def tool(name: str | None = None, *, usage: str | None = None, timeout: float = DEFAULT_TIMEOUT,
         ) -> Callable[[Callable[..., Any]], ToolSpec]:
    """Decorator: an ``async def`` becomes a tool spec (checked when the engine loads it)."""

    def wrap(function: Callable[..., Any]) -> ToolSpec:
        return function_tool(function, name=name, usage=usage, timeout=timeout)

    return wrap


def function_tool(function: Callable[..., Any], *, name: str | None = None, usage: str | None = None,
                  timeout: float = DEFAULT_TIMEOUT) -> ToolSpec:
    """A :class:`ToolSpec` from an async function and its annotated parameters.

    Raises:
        ValueError: not async, ``*args``/``**kwargs``, a parameter without a usable
            annotation, a bad name, no usage text, or a bad timeout.
    """
    tag = name or getattr(function, "__name__", "")
    if not inspect.iscoroutinefunction(function):
        msg = f"tool {tag!r} must be an async function (async def), got {function!r}"
        raise ValueError(msg)
    params = _parameters(function, tag)
    wants_settings = "settings" in params
    params.pop("settings", None)
    if not params:
        msg = f"tool {tag!r} takes no argument: it needs at least one (the tag body)"
        raise ValueError(msg)
    if len(params) == 1 and next(iter(params.values()))[0] is str:
        schema: Any = str
        only = next(iter(params))

        async def call_raw(args: str, settings: dict[str, Any]) -> Any:
            extra = {"settings": settings} if wants_settings else {}
            return await function(**{only: args}, **extra)

        call = call_raw
    else:
        fields = [(key, kind) if default is inspect.Parameter.empty else (key, kind, default)
                  for key, (kind, default) in params.items()]
        schema = _struct(tag, fields)

        async def call_struct(args: Any, settings: dict[str, Any]) -> Any:
            extra = {"settings": settings} if wants_settings else {}
            return await function(**msgspec.structs.asdict(args), **extra)

        call = call_struct
    text = usage if usage is not None else inspect.getdoc(function)
    spec = ToolSpec(name=tag, usage=_usage(tag, text), timeout=_timeout(tag, timeout), schema=schema,
                    factory=lambda: _Call(call), description=_first_line(inspect.getdoc(function) or text))
    _check_name(spec.name)
    return spec


def class_tool(cls: type[Any]) -> ToolSpec:
    """A :class:`ToolSpec` from a :class:`Tool` subclass (or any class shaped like one)."""
    tag = getattr(cls, "name", "") or ""
    _check_name(tag)
    call = getattr(cls, "call", None)
    if call is None or not inspect.iscoroutinefunction(call):
        msg = f"tool {tag!r}: {cls.__name__}.call must be 'async def call(self, args, settings)'"
        raise ValueError(msg)
    try:
        inspect.signature(call).bind(None, None, {})
    except TypeError as exc:
        msg = f"tool {tag!r}: {cls.__name__}.call must accept (self, args, settings): {exc}"
        raise ValueError(msg) from exc
    try:
        inspect.signature(cls).bind()
    except TypeError as exc:
        msg = f"tool {tag!r}: {cls.__name__}() must be constructible without arguments: {exc}"
        raise ValueError(msg) from exc
    text = getattr(cls, "usage", "") or inspect.getdoc(cls)
    return ToolSpec(name=tag, usage=_usage(tag, text), timeout=_timeout(tag, getattr(cls, "timeout", DEFAULT_TIMEOUT)),
                    schema=schema_type(tag, getattr(cls, "args", str)), factory=cls,
                    description=_first_line(inspect.getdoc(cls) or text))


def schema_type(tag: str, args: Any) -> Any:
    """``str``, a msgspec Struct type, or a Struct built from a JSON Schema object.

    Raises:
        ValueError: anything else, or a JSON Schema that is not a flat object schema.
    """
    if args is str:
        return str
    if isinstance(args, type) and issubclass(args, msgspec.Struct):
        try:
            msgspec.json.schema(args)
        except Exception as exc:
            msg = f"tool {tag!r}: args struct {args.__name__} has no JSON schema: {exc}"
            raise ValueError(msg) from exc
        return args
    if isinstance(args, Mapping):
        return _struct_from_json_schema(tag, args)
    msg = f"tool {tag!r}: args must be str, a msgspec.Struct type or a JSON Schema object, got {args!r}"
    raise ValueError(msg)


def _struct_from_json_schema(tag: str, schema: Mapping[str, Any]) -> Any:
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), Mapping) \
            or not schema["properties"]:
        msg = f"tool {tag!r}: JSON schema must be {{'type': 'object', 'properties': {{...}}}} with properties"
        raise ValueError(msg)
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        msg = f"tool {tag!r}: JSON schema 'required' must be a list of property names"
        raise ValueError(msg)
    unknown = set(required) - set(schema["properties"])
    if unknown:
        msg = f"tool {tag!r}: JSON schema requires undeclared properties {sorted(unknown)}"
        raise ValueError(msg)
    fields: list[tuple[Any, ...]] = []
    for key, prop in schema["properties"].items():
        kind = _JSON_TYPES.get(prop.get("type") if isinstance(prop, Mapping) else None)
        if kind is None or not str(key).isidentifier():
            msg = f"tool {tag!r}: JSON schema property {key!r} needs a 'type' of {sorted(_JSON_TYPES)}"
            raise ValueError(msg)
        fields.append((key, kind) if key in required else (key, kind | None, prop.get("default")))
    return _struct(tag, fields)


def _struct(tag: str, fields: list[tuple[Any, ...]]) -> Any:
    try:
        struct = msgspec.defstruct(f"{tag}_args", fields, kw_only=True, forbid_unknown_fields=True)
        msgspec.json.schema(struct)
    except Exception as exc:
        msg = f"tool {tag!r}: its arguments cannot form a schema: {exc}"
        raise ValueError(msg) from exc
    return struct


def _parameters(function: Callable[..., Any], tag: str) -> dict[str, tuple[Any, Any]]:
    signature = inspect.signature(function)
    try:
        hints = get_type_hints(function)
    except Exception as exc:
        msg = f"tool {tag!r}: cannot resolve its annotations: {exc}"
        raise ValueError(msg) from exc
    params: dict[str, tuple[Any, Any]] = {}
    for key, param in signature.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            msg = f"tool {tag!r}: *args/**kwargs cannot be described to the model; name each argument"
            raise ValueError(msg)
        if key != "settings" and key not in hints:
            msg = f"tool {tag!r}: parameter {key!r} needs a type annotation (it is the schema)"
            raise ValueError(msg)
        params[key] = (hints.get(key, Any), param.default)
    return params


def _check_name(tag: str) -> None:
    if not isinstance(tag, str) or not _TAG.fullmatch(tag) or tag.lower() in _RESERVED:
        msg = f"tool name {tag!r} is not a usable tag (letters, digits, _; not answer/report/think)"
        raise ValueError(msg)


def _usage(tag: str, text: str | None) -> str:
    if not isinstance(text, str) or not text.strip():
        msg = f"tool {tag!r} has no usage text: pass usage=... or write a docstring (the model reads it)"
        raise ValueError(msg)
    return " ".join(text.split())


def _timeout(tag: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 86400:
        msg = f"tool {tag!r}: timeout must be a number of seconds > 0, got {value!r}"
        raise ValueError(msg)
    return float(value)


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


class _Call:
    def __init__(self, call: Callable[[Any, dict[str, Any]], Any]) -> None:
        self.call = call


class PluginToolRunner:
    """The engine-side runner of a tool spec: parse per schema, call with a timeout, wrap."""

    def __init__(self, spec: ToolSpec, implementation: Any) -> None:
        self.spec = spec
        self.name = spec.name
        self.implementation = implementation

    async def run(self, tool_input: str, options: ToolOptions) -> ToolResult:
        try:
            args = self._arguments(tool_input)
        except ValueError as exc:
            return _error_result(str(exc), status="invalid_arguments")
        try:
            value = await asyncio.wait_for(self.implementation.call(args, plugin_settings(options)),
                                           self.spec.timeout)
        except TimeoutError as exc:
            msg = f"tool {self.name} did not finish within {self.spec.timeout:g}s"
            raise ToolError(msg, kind="timeout") from exc
        except ToolError:
            raise
        except Exception as exc:  # noqa: BLE001 - a plugin tool's bug is an observation, not a crash
            return _error_result(f"{type(exc).__name__}: {exc}", status="error")
        return as_tool_result(value)

    def _arguments(self, tool_input: str) -> Any:
        if self.spec.schema is str:
            return tool_input
        try:
            return msgspec.json.decode(tool_input.encode(), type=self.spec.schema)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            example = self.spec.schema_text()
            msg = f"{self.name} expects one JSON object with the fields {example}: {exc}"
            raise ValueError(msg) from exc

    async def close(self) -> None:
        closer = getattr(self.implementation, "close", None)
        if closer is not None:
            result = closer()
            if inspect.isawaitable(result):
                await result


def as_tool_result(value: Any) -> ToolResult:
    """A tool's return value as the recorded result (see the module docstring)."""
    if isinstance(value, ToolResult):
        return value
    try:
        text = json.dumps({"result": value, "status": "success"}, ensure_ascii=False)
    except (TypeError, ValueError):
        text = json.dumps({"result": str(value), "status": "success"}, ensure_ascii=False)
    return ToolResult(text=text, score=1.0)


def plugin_settings(options: ToolOptions) -> dict[str, Any]:
    """What a plugin tool's ``settings`` parameter receives: the calling role's episode
    settings as plain values, with the retrieval options under ``rag`` (a stable plugin API)."""
    episode: dict[str, Any] = msgspec.to_builtins(options.episode)
    episode["rag"] = {"top_k": options.episode.rag_top_k}
    return episode


def _error_result(message: str, *, status: str) -> ToolResult:
    return ToolResult(text=json.dumps({"result": f"Error: {message[:2000]}", "status": status}), score=0.0)


BUILTIN = "built-in"


@dataclass(frozen=True)
class RegisteredTool:
    """A tool the engine can run, with the usage text prompts show for its tag."""

    name: str
    usage: str
    source: str
    plugin: str
    build: Callable[[Any], Any]
    """``(engine settings) -> runner`` with ``async run(tool_input, options: ToolOptions) -> ToolResult``."""
    args: str = "raw text"
    timeout: float | None = None
    description: str = ""
    enabled_by: str | None = None
    """For a built-in tool: the ``episode`` switch that turns it on or off (its default is
    ``handlers.run_settings.EpisodeSpec``'s); a plugin tool is offered through ``episode.tools``."""

    @classmethod
    def from_spec(cls, spec: ToolSpec, *, plugin: str, source: str) -> RegisteredTool:
        return cls(name=spec.name, usage=spec.usage, source=source, plugin=plugin,
                   build=lambda settings: spec.runner(), args=spec.schema_text(), timeout=spec.timeout,
                   description=spec.description)
