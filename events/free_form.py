"""Which event types can hold data of any depth (free-form fields such as ``metadata``).

The decoder refuses bodies nested deeper than ``codec.MAX_DEPTH``. A body decoded into a type
whose schema fixes the depth of every field cannot hand readers anything deeper than the
schema: a deeper value in a known field fails validation, and one in an unknown field is
dropped by the decoder (msgspec skips it, with its own recursion guard). Only types with a
free-form field (``Any``, ``dict[str, Any]``, raw JSON, a recursive type) need their bytes
checked after a successful typed decode.
"""

from __future__ import annotations

import msgspec.inspect as mi

_BOUNDED_LEAVES = (
    mi.NoneType, mi.BoolType, mi.IntType, mi.FloatType, mi.StrType, mi.BytesType, mi.ByteArrayType,
    mi.MemoryViewType, mi.DateTimeType, mi.DateType, mi.TimeType, mi.TimeDeltaType, mi.UUIDType,
    mi.DecimalType, mi.LiteralType, mi.EnumType,
)
"""Types that decode from a JSON scalar. Anything not named here or below counts as free-form."""


def nests_freely(event_type: type) -> bool:
    """Whether a body of ``event_type`` may nest as deep as the sender likes and still decode."""
    return _free(mi.type_info(event_type), ())


def _free(info: mi.Type, enclosing: tuple[type, ...]) -> bool:
    if isinstance(info, _BOUNDED_LEAVES):
        return False
    if isinstance(info, mi.StructType | mi.DataclassType | mi.TypedDictType | mi.NamedTupleType):
        if info.cls in enclosing:
            return True  # a type inside itself: its depth has no bound
        return any(_free(field.type, (*enclosing, info.cls)) for field in info.fields)
    if isinstance(info, mi.UnionType):
        return any(_free(member, enclosing) for member in info.types)
    if isinstance(info, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
        return _free(info.item_type, enclosing)
    if isinstance(info, mi.TupleType):
        return any(_free(item, enclosing) for item in info.item_types)
    if isinstance(info, mi.DictType):
        return _free(info.key_type, enclosing) or _free(info.value_type, enclosing)
    return True  # Any, raw JSON, custom or extension types: assume the worst
