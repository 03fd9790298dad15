"""Which attributes of a class its users set one by one (`settable`), and the catalog's setters."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

import pytest
from support.modules import imported

from difforacle.generator.worker.introspect import build_catalog
from difforacle.generator.worker.settable import MAX_SETTABLE, settable_attributes

MODULE = "dor_settable_target"
SOURCE = textwrap.dedent('''
    import dataclasses
    import threading


    class Banner:
        greeting = "hi"  # a class-level constant, not set per object

        def __init__(self, text: str, fill="-"):
            self.text = text
            self.fill = fill
            self.width = 20
            self.caption = None  # nothing says what it takes
            self._cache = {}
            self.render = None  # would replace the method below: behaviour, not a setting
            self.pattern = text.upper()  # neither a parameter of its name nor a literal

        @property
        def border(self) -> int:
            return self._border

        @border.setter
        def border(self, value: int) -> None:
            self._border = value

        @property
        def area(self) -> int:  # read-only
            return self.width

        def render(self) -> str:
            return self.text.center(self.width, self.fill)


    @dataclasses.dataclass
    class Point:
        x: int
        y: float = 0.0
        _hidden: int = 0


    @dataclasses.dataclass(frozen=True)
    class Frozen:
        x: int


    class Wide:
        def __init__(self):
            ''' + "\n            ".join(f"self.a{n:02} = {n}" for n in range(MAX_SETTABLE + 3)) + '''


    class Window:
        def __init__(self, size=10):
            if size < 1:
                raise ValueError("size must be positive")
            self.size = size  # checked: not to be set past the check
            self.title = ""


    class Locked(threading.Thread):  # a standard base's own attributes are not the project's
        pass
''')


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    with imported(tmp_path_factory.mktemp("settable"), MODULE, SOURCE) as found:
        yield found


def _ours(function: object) -> bool:
    return getattr(function, "__module__", None) == MODULE


def _names(klass: type) -> dict[str, str]:
    return {found.name: found.parameter.name for found in settable_attributes(klass, _ours)}


def test_properties_with_a_setter_and_what_init_assigns_from_a_parameter_or_a_literal(module) -> None:
    # the value's parameter: the setter's, the __init__ parameter it is assigned from, or the literal's
    assert _names(module.Banner) == {"border": "value", "fill": "fill", "text": "text", "width": "width"}
    width = next(found for found in settable_attributes(module.Banner, _ours) if found.name == "width")
    assert width.parameter.default == 20 and width.parameter.kind.name == "POSITIONAL_ONLY"


def test_a_dataclasss_public_fields_and_none_of_a_frozen_one(module) -> None:
    assert _names(module.Point) == {"x": "x", "y": "y"}
    assert _names(module.Frozen) == {}


def test_a_class_lists_at_most_the_first_by_name(module) -> None:
    assert list(_names(module.Wide)) == [f"a{n:02}" for n in range(MAX_SETTABLE)]


def test_an_attribute_from_a_parameter_the_constructor_checks_is_not_set_past_the_check(module) -> None:
    assert _names(module.Window) == {"title": "title"}


def test_a_standard_bases_attributes_are_not_the_projects(module) -> None:
    assert _names(module.Locked) == {}


def test_the_catalog_lists_setters_only_when_configured(module) -> None:
    operations = {op["id"]: op for op in build_catalog([MODULE], configured=True)["operations"]}
    setters = {op_id: op for op_id, op in operations.items() if op_id.endswith("<set>")}
    assert set(setters) >= {f"{MODULE}:Banner.{name}<set>" for name in ("border", "fill", "text", "width")}
    border, width = setters[f"{MODULE}:Banner.border<set>"], setters[f"{MODULE}:Banner.width<set>"]
    assert border["kind"] == "method" and border["owner"] == f"{MODULE}.Banner"
    assert [(p["hints"], p["has_default"]) for p in border["params"]] == [(["builtins.int"], False)]
    # the literal it starts as types it, yet the value is always given
    assert [(p["hints"], p["has_default"]) for p in width["params"]] == [(["builtins.int"], False)]
    assert not any(op_id.endswith("<set>") for op_id in
                   (op["id"] for op in build_catalog([MODULE])["operations"]))
