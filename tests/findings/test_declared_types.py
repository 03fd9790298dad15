"""Input realism (`difforacle.generator.findings.declared_types`): which arguments the declared types
of their operation rule out. `None` is judged against a declaration that names types, and an object
a constructor made against the classes an annotation names."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

from difforacle.generator.findings.declared_types import accepts_none, outside_declared_types
from difforacle.generator.runtime.catalog import Catalog, Operation, Parameter
from difforacle.generator.worker.introspect import build_catalog

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


def test_an_object_a_constructor_made_is_judged_by_the_classes_the_annotation_names() -> None:
    sequences = param("escape_sequences", ("builtins.list",), declared=("collections.abc.Collection",))
    ops = {"m:escape": operation("m:escape", "function", param("s"), sequences),
           "m:Parser": Operation("m:Parser", "constructor", "m.Parser", (), (), None, None),
           "m:Words": Operation("m:Words", "constructor", "m.Words", (), (), None, None),
           "m:Other": Operation("m:Other", "constructor", "m.Other", (), (), None, None)}
    classes = {"m.Parser": {"mro": ["m.Parser"], "protocols": ["collections.abc.Hashable"]},
               "m.Words": {"mro": ["m.Words"], "protocols": ["collections.abc.Iterable",
                                                             "collections.abc.Collection"]}}

    def passing(maker: str) -> list[dict]:
        return [call(maker), call("m:escape", TEXT, {"ref": 0})]

    assert outside_declared_types(passing("m:Parser"), ops, classes) == \
        "a `Parser` for `escape_sequences: Collection` of `m:escape`"
    assert outside_declared_types(passing("m:Words"), ops, classes) is None  # a Collection by its methods
    assert outside_declared_types(passing("m:Other"), ops, classes) is None  # a class the catalog lacks
    assert outside_declared_types(passing("m:Parser"), ops) is None  # no classes: nothing known of it
    undeclared = dict(ops, **{"m:escape": operation("m:escape", "function", param("s"),
                                                    param("escape_sequences", ("builtins.list",)))})
    assert outside_declared_types(passing("m:Parser"), undeclared, classes) is None  # `Any`, or unknown
    exact = dict(ops, **{"m:escape": operation("m:escape", "function", param("s"),
                                               param("escape_sequences", ("builtins.list",),
                                                     declared=("builtins.list",)))})
    assert outside_declared_types(passing("m:Parser"), exact, classes) is not None  # `list`, not a list
    a_list = {"m.Parser": {"mro": ["m.Parser", "builtins.list"]}}
    assert outside_declared_types(passing("m:Parser"), exact, a_list) is None  # a subclass of list


ESCAPES = textwrap.dedent("""
    from collections.abc import Collection


    class Reader:
        def __init__(self, text: str = "") -> None:
            self.text = text


    class Words:
        def __init__(self) -> None:
            self.words = ["a"]

        def __iter__(self):
            return iter(self.words)

        def __len__(self) -> int:
            return len(self.words)

        def __contains__(self, word: object) -> bool:
            return word in self.words


    def escape(s: str, sequences: Collection[str] = ("\\\\",)) -> str:
        return s
""")


def test_the_worker_lists_what_the_judgement_of_an_object_needs(tmp_path: Path) -> None:
    # the catalog of a real module: `sequences: Collection[str]` (hints: list) and its classes' protocols
    (tmp_path / "escapes_mod.py").write_text(ESCAPES)
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        catalog = Catalog.from_json(build_catalog(["escapes_mod"]))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("escapes_mod", None)

    def passing(maker: str) -> list[dict]:
        return [call(f"escapes_mod:{maker}"), call("escapes_mod:escape", TEXT, {"ref": 0})]

    assert outside_declared_types(passing("Reader"), catalog.by_id, catalog.classes) == \
        "a `Reader` for `sequences: Collection` of `escapes_mod:escape`"
    assert outside_declared_types(passing("Words"), catalog.by_id, catalog.classes) is None
