"""gate.document reads the config and the baselines strictly, every problem in field order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pytest

from gate.document import DocumentError, Invalid, alias, read_document


def _even(value: int) -> int:
    if value % 2:
        raise Invalid("odd", "should be even")
    return value


@dataclass(frozen=True)
class Inner:
    name: str
    count: int = field(metadata={"ge": 1})


@dataclass(frozen=True)
class Outer:
    words: tuple[str, ...] = field(default=(), metadata=alias("word-list"))
    level: Literal["low", "high"] = "low"
    label: str | None = None
    pairs: int = field(default=2, metadata={"check": _even})
    inner: tuple[Inner, ...] = ()
    only_alias: int = field(default=0, metadata=alias("only-alias", by_name=False))


def problems(data: object) -> list[tuple[tuple[str | int, ...], str, str]]:
    with pytest.raises(DocumentError) as raised:
        read_document(Outer, data)
    return [(p.location, p.kind, p.message) for p in raised.value.problems]


def test_a_valid_document_reads_by_alias_and_by_name() -> None:
    read = read_document(Outer, {"word-list": ["a"], "inner": [{"name": "n", "count": 3}]})
    assert read == Outer(words=("a",), inner=(Inner("n", 3),))
    assert read_document(Outer, {"words": ["b"], "pairs": 4}) == Outer(words=("b",), pairs=4)


def test_every_problem_in_field_order_then_unknown_keys() -> None:
    data = {"zz": 1, "label": 3, "word-list": "a", "level": "mid", "inner": [{"count": 0}]}
    assert problems(data) == [
        (("word-list",), "tuple_type", "Input should be a valid tuple"),
        (("level",), "literal_error", "Input should be 'low' or 'high'"),
        (("label",), "string_type", "Input should be a valid string"),
        (("inner", 0, "name"), "missing", "Field required"),
        (("inner", 0, "count"), "greater_than_equal", "Input should be greater than or equal to 1"),
        (("zz",), "extra_forbidden", "Extra inputs are not permitted"),
    ]


def test_no_coercion() -> None:
    assert problems({"pairs": True}) == [
        (("pairs",), "int_type", "Input should be a valid integer")
    ]
    assert problems({"pairs": "2"}) == [(("pairs",), "int_type", "Input should be a valid integer")]
    assert problems({"words": [1]}) == [
        (("words", 0), "string_type", "Input should be a valid string")
    ]


def test_the_alias_wins_and_the_name_is_then_unknown() -> None:
    assert problems({"words": ["a"], "word-list": ["b"]}) == [
        (("words",), "extra_forbidden", "Extra inputs are not permitted")
    ]
    assert problems({"only_alias": 1}) == [
        (("only_alias",), "extra_forbidden", "Extra inputs are not permitted")
    ]


def test_a_check_runs_after_the_type() -> None:
    assert problems({"pairs": 3}) == [(("pairs",), "odd", "should be even")]


def test_not_a_table() -> None:
    assert problems([]) == [
        ((), "model_type", "Input should be a valid dictionary or instance of Outer")
    ]
