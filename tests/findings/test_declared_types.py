"""Input realism (`difforacle.generator.findings.declared_types`): which arguments the declared types
of their operation rule out. Only `None` is judged, and only against a declaration that names types."""

from __future__ import annotations

import pytest

from difforacle.generator.findings.declared_types import accepts_none, outside_declared_types
from difforacle.generator.runtime.catalog import Operation, Parameter

NONE = {"lit": ["none"]}
TEXT = {"lit": ["str", "a"]}


def param(name: str, hints: tuple[str, ...] = ("builtins.str",), **fields: object) -> Parameter:
    kind = str(fields.pop("kind", "POSITIONAL_OR_KEYWORD"))
    has_default = bool(fields.pop("has_default", False))
    return Parameter(name, kind, has_default, hints, **fields)  # type: ignore[arg-type]


def operation(op_id: str, kind: str, *params: Parameter) -> Operation:
    return Operation(op_id, kind, None, params, (), None, None)


def call(op: str, *args: dict, **kwargs: dict) -> dict:
    return {"op": op, "args": list(args), "kwargs": kwargs}


@pytest.mark.parametrize(("parameter", "admits"), [
    (param("text"), False),  # `text: str`
    (param("text", ("?Node",)), False),  # a class the annotation names, as a string
    (param("text", ("builtins.str", "builtins.NoneType")), True),  # Optional[str]
    (param("text", has_default=True, default_is_none=True), True),  # `text: str = None`
    (param("text", hints_from="docstring"), False),  # "text : str" in the docstring
    (param("text", hints_from="default"), True),  # guessed from a default value: nothing declared
    (param("text", hints_from="isinstance"), True),  # guessed from the body
    (param("value", ()), True),  # no annotation, or `Any`
    (param("mode", (), choices=(("str", "r"), ("str", "w"))), False),  # Literal["r", "w"]
    (param("mode", (), choices=(("str", "r"), ("none",))), True),  # Literal["r", None]
])
def test_which_declarations_admit_none(parameter: Parameter, admits: bool) -> None:
    assert accepts_none(parameter) is admits


def test_the_first_argument_outside_is_said_with_its_declaration() -> None:
    ops = {"m:width": operation("m:width", "function", param("text"), param("size", ("builtins.int",))),
           "m:Box": operation("m:Box", "constructor", param("label", ("builtins.str", "builtins.NoneType"))),
           "m:Box.fit": operation("m:Box.fit", "method", param("text"))}
    assert outside_declared_types([call("m:width", TEXT, {"lit": ["int", 1]})], ops) is None
    assert outside_declared_types([call("m:width", NONE)], ops) == "`None` for `text: str` of `m:width`"
    assert outside_declared_types([call("m:width", TEXT, NONE)], ops) == "`None` for `size: int` of `m:width`"
    assert outside_declared_types([call("m:width", size=NONE, text=TEXT)], ops) == \
        "`None` for `size: int` of `m:width`"
    # a method's receiver is no parameter: `Box(None).fit("a")` is within, `Box(None).fit(None)` is not
    box = call("m:Box", NONE)
    assert outside_declared_types([box, call("m:Box.fit", {"ref": 0}, TEXT)], ops) is None
    assert outside_declared_types([box, call("m:Box.fit", {"ref": 0}, NONE)], ops) == \
        "`None` for `text: str` of `m:Box.fit`"


def test_extra_positional_arguments_and_unknown_operations() -> None:
    ops = {"m:join": operation("m:join", "function", param("sep"), param("parts", kind="VAR_POSITIONAL"))}
    assert outside_declared_types([call("m:join", TEXT, TEXT, NONE)], ops) == \
        "`None` for `parts: str` of `m:join`"
    assert outside_declared_types([call("m:join", TEXT, TEXT, TEXT)], ops) is None
    # a returned callable's call, or an operation the catalog does not list: nothing is declared
    assert outside_declared_types([call("call", {"ref": 0}, NONE), call("m:gone", NONE)], ops) is None
    # an argument Python would reject (too many, an unknown keyword) is the call's own failure
    assert outside_declared_types([call("m:join", TEXT, other=NONE)], ops) is None
