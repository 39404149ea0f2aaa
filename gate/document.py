"""Plain TOML and JSON documents read strictly into frozen dataclasses: the config and both
baselines.

A field's type says what it accepts, without coercion: `true` or `"10"` is not an integer. An
array becomes a tuple; a table a nested dataclass. `field(metadata=...)` adds an `alias` (the
spelling in the file; the field's own name is accepted too unless `by_name` is false, the
alias winning when both are given), a lower bound `ge`, a `min_length` and a `check(value)`
that returns the value or raises Invalid. Every problem is collected, in the order of the
fields, then the unknown keys, with the wording pydantic uses, so that errors read as they did
when pydantic read these files (importing pydantic cost a warm run a quarter of a second).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, Union

Location = tuple[str | int, ...]
Document = TypeVar("Document")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a document: where (keys and array indexes), of what kind
    (`extra_forbidden`, `missing`, `string_type`, ...), the message, and the value found."""

    location: Location
    kind: str
    message: str
    value: Any = None


class Invalid(Exception):
    """Raised by a field's `check`: the value has the right type but cannot be used."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class DocumentError(Exception):
    """A document that does not fit its dataclass; `problems` lists every reason."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(problem.message for problem in problems))
        self.problems = problems


def read_document(kind: type[Document], data: Any) -> Document:
    """`data` (parsed TOML or JSON) as an instance of the dataclass `kind`; raises
    DocumentError listing every problem."""
    problems: list[Problem] = []
    value = _read(kind, data, (), problems)
    if problems:
        raise DocumentError(problems)
    return typing.cast(Document, value)


@functools.cache
def _hints(kind: type) -> dict[str, Any]:
    return typing.get_type_hints(kind)


def _read(expected: Any, value: Any, where: Location, problems: list[Problem]) -> Any:
    """`value` read as the type `expected`; what is wrong is added to `problems`."""
    if dataclasses.is_dataclass(expected):
        return _read_dataclass(typing.cast(type, expected), value, where, problems)
    origin = typing.get_origin(expected)
    if origin is Union or origin is types.UnionType:
        return _read_optional(expected, value, where, problems)
    if origin is Literal:
        return _read_literal(typing.get_args(expected), value, where, problems)
    if origin is tuple:
        return _read_tuple(typing.get_args(expected), value, where, problems)
    if origin is dict:
        return _read_dict(typing.get_args(expected), value, where, problems)
    return _read_scalar(expected, value, where, problems)


SCALARS: dict[Any, tuple[Callable[[Any], bool], str, str]] = {
    str: (lambda value: isinstance(value, str), "string_type", "Input should be a valid string"),
    int: (lambda value: type(value) is int, "int_type", "Input should be a valid integer"),
    bool: (lambda value: isinstance(value, bool), "bool_type", "Input should be a valid boolean"),
    object: (lambda value: True, "", ""),
}


def _read_scalar(expected: Any, value: Any, where: Location, problems: list[Problem]) -> Any:
    accepts, kind, message = SCALARS[expected]
    if not accepts(value):
        problems.append(Problem(where, kind, message, value))
    return value


def _read_optional(expected: Any, value: Any, where: Location, problems: list[Problem]) -> Any:
    options = [option for option in typing.get_args(expected) if option is not type(None)]
    if value is None and len(options) < len(typing.get_args(expected)):
        return None
    if len(options) != 1:
        raise TypeError(f"only `X | None` unions are supported, not {expected}")
    return _read(options[0], value, where, problems)


def _read_literal(
    choices: tuple[Any, ...], value: Any, where: Location, problems: list[Problem]
) -> Any:
    if not any(type(value) is type(choice) and value == choice for choice in choices):
        spelled = [repr(choice) for choice in choices]
        listed = spelled[0] if len(spelled) == 1 else f"{', '.join(spelled[:-1])} or {spelled[-1]}"
        problems.append(Problem(where, "literal_error", f"Input should be {listed}", value))
    return value


def _read_tuple(
    arguments: tuple[Any, ...], value: Any, where: Location, problems: list[Problem]
) -> Any:
    if len(arguments) != 2 or arguments[1] is not Ellipsis:
        raise TypeError(f"only tuple[X, ...] is supported, not tuple{list(arguments)}")
    if not isinstance(value, list | tuple):
        problems.append(Problem(where, "tuple_type", "Input should be a valid tuple", value))
        return value
    return tuple(
        _read(arguments[0], item, (*where, number), problems) for number, item in enumerate(value)
    )


def _read_dict(
    arguments: tuple[Any, ...], value: Any, where: Location, problems: list[Problem]
) -> Any:
    if not isinstance(value, dict):
        problems.append(Problem(where, "dict_type", "Input should be a valid dictionary", value))
        return value
    keys, values = arguments
    return {
        _read(keys, key, (*where, key), problems): _read(values, item, (*where, key), problems)
        for key, item in value.items()
    }


def _read_dataclass(kind: type, value: Any, where: Location, problems: list[Problem]) -> Any:
    if not isinstance(value, dict):
        message = f"Input should be a valid dictionary or instance of {kind.__name__}"
        problems.append(Problem(where, "model_type", message, value))
        return value
    hints = _hints(kind)
    used: set[str] = set()
    values: dict[str, Any] = {}
    before = len(problems)
    for field in dataclasses.fields(kind):
        key = _key_given(field, value)
        if key is None:
            if _required(field):
                missing = (*where, field.metadata.get("alias", field.name))
                problems.append(Problem(missing, "missing", "Field required"))
            continue
        used.add(key)
        values[field.name] = _read_field(
            field, hints[field.name], value[key], (*where, key), problems
        )
    for key in value:
        if key not in used:
            problems.append(
                Problem(
                    (*where, key), "extra_forbidden", "Extra inputs are not permitted", value[key]
                )
            )
    return kind(**values) if len(problems) == before else value


def _key_given(field: dataclasses.Field[Any], value: dict[str, Any]) -> str | None:
    """The key the document gives `field` under: its alias, else its name, else None."""
    alias = field.metadata.get("alias")
    if alias is not None and alias in value:
        return str(alias)
    by_name = field.metadata.get("by_name", True)
    return field.name if by_name and field.name in value else None


def _required(field: dataclasses.Field[Any]) -> bool:
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING


def _read_field(
    field: dataclasses.Field[Any],
    expected: Any,
    value: Any,
    where: Location,
    problems: list[Problem],
) -> Any:
    """A field's value: its type, then its bounds, then its own check."""
    before = len(problems)
    value = _read(expected, value, where, problems)
    if len(problems) > before:
        return value
    bounds = field.metadata
    if "ge" in bounds and value < bounds["ge"]:
        message = f"Input should be greater than or equal to {bounds['ge']}"
        problems.append(Problem(where, "greater_than_equal", message, value))
    elif "min_length" in bounds and len(value) < bounds["min_length"]:
        least = bounds["min_length"]
        message = f"String should have at least {least} character{'s' if least != 1 else ''}"
        problems.append(Problem(where, "string_too_short", message, value))
    elif "check" in bounds:
        try:
            value = bounds["check"](value)
        except Invalid as error:
            problems.append(Problem(where, error.kind, error.message, value))
    return value


def alias(spelling: str, by_name: bool = True, **more: Any) -> dict[str, Any]:
    """A field's metadata: spelled `spelling` in the file (and, when `by_name`, by its own
    name), with `more` (`ge`, `min_length`, `check`)."""
    return {"alias": spelling, "by_name": by_name, **more}
