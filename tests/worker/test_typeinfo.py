"""Tests for `difforacle.generator.worker.typeinfo`: types from annotations, docstrings and
isinstance checks."""

from __future__ import annotations

import datetime
import enum
import importlib
import io
import json
import os
import pathlib
import sys
import textwrap
import typing
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, NewType, Optional, TypedDict, TypeVar, Union

import pytest

from difforacle.generator.worker.introspect import build_catalog
from difforacle.generator.worker.resolve import PROTOCOLS
from difforacle.generator.worker.typeinfo import (
    NameScope,
    TypeInfo,
    called_parameters,
    checked_types,
    declared_classes,
    docstring_types,
    from_annotation,
    from_doc_text,
    isinstance_targets,
    protocols_of,
)

INT, STR, FLOAT, NONE = "builtins.int", "builtins.str", "builtins.float", "builtins.NoneType"
LIST, DICT = "builtins.list", "builtins.dict"
HERE = __name__


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclass
class Point:
    x: int
    y: float = 0.0


class _ListingKeys(TypedDict):
    title: str
    year: int


class Listing(_ListingKeys, total=False):  # its own key is optional, those it inherits are not
    note: str


if sys.version_info >= (3, 11):
    class Movie(TypedDict):
        title: str
        year: int
        note: typing.NotRequired[str]  # a string under PEP 563, which CPython cannot see into

    WITH_AN_OPTIONAL_KEY: list[type] = [Movie, Listing]
else:  # NotRequired is 3.11's; the worker runs under 3.9 too (.ci/pythons)
    WITH_AN_OPTIONAL_KEY = [Listing]


SCOPE = NameScope({"Point": Point, "Color": Color, "Optional": Optional, "NUMBERS": (int, float)}, {})


def _flat(annotation: Any, wanted: set[type] | None = None) -> TypeInfo:
    return from_annotation(annotation, SCOPE, wanted if wanted is not None else set())


def _doc(text: str) -> TypeInfo:
    return from_doc_text(text, SCOPE, set())


# ---------------------------------------------------------------- annotations


@pytest.mark.parametrize("annotation, hints", [
    (Optional[int], [INT, NONE]),
    *([(eval("int | None"), [INT, NONE])] if sys.version_info >= (3, 10) else []),  # 3.10's union operator
    (Union[int, str, None], [INT, STR, NONE]),
    (Any, []),
    (object, []),
    (None, [NONE]),
    (Annotated[int, "meta"], [INT]),
    (NewType("UserId", int), [INT]),
    (TypeVar("N", int, float), [INT, FLOAT]),
    (TypeVar("B", bound=str), [STR]),
])
def test_unions_and_wrappers_flatten_to_their_types(annotation: Any, hints: list[str]) -> None:
    assert _flat(annotation).hints == hints


@pytest.mark.parametrize("annotation, hints, elements", [
    (list[int], [LIST], {LIST: [[INT]]}),
    (typing.List, [LIST], {}),  # noqa: UP006
    (Sequence[str], [LIST], {LIST: [[STR]]}),
    (Iterable[int], [LIST], {LIST: [[INT]]}),
    (Mapping[str, int], [DICT], {DICT: [[STR], [INT]]}),
    (dict[str, list[int]], [DICT], {DICT: [[STR], [LIST]]}),
    (tuple[int, ...], ["builtins.tuple"], {"builtins.tuple": [[INT]]}),
    (Callable[[int], str], ["collections.abc.Callable"], {}),
    (Iterator[int], ["collections.abc.Iterator"], {"collections.abc.Iterator": [[INT]]}),
])
def test_generics_become_concrete_containers(annotation: Any, hints: list[str], elements: dict) -> None:
    info = _flat(annotation)
    assert (info.hints, info.elements) == (hints, elements)


def test_literal_gives_choices() -> None:
    info = _flat(Literal["a", "b", 3])
    assert info.hints == [STR, INT]
    assert info.choices == [["str", "a"], ["str", "b"], ["int", 3]]


def test_optional_literal_keeps_its_choices_but_a_literal_beside_a_type_does_not() -> None:
    assert _flat(Optional[Literal["x", "y"]]).choices == [["str", "x"], ["str", "y"]]
    mixed = _flat(Union[Literal["auto"], int])
    assert mixed.hints == [STR, INT] and mixed.choices == []  # "auto" is not every value it admits


def test_enum_and_dataclass_are_object_types_whose_constructors_are_wanted() -> None:
    wanted: set[type] = set()
    assert _flat(Color, wanted).hints == [f"{HERE}.Color"]
    assert _flat(Point, wanted).hints == [f"{HERE}.Point"]
    assert wanted == {Color, Point}
    member = _flat(Literal[Color.RED])
    assert member.hints == [f"{HERE}.Color"] and member.choices == []  # a member is no literal


@pytest.mark.parametrize("keyed", WITH_AN_OPTIONAL_KEY)
def test_typed_dict_is_a_dict_with_its_keys_filled(keyed: type) -> None:
    info = _flat(keyed)
    assert info.hints == [DICT]
    required = ["dict", [[["str", "title"], ["str", "a"]], [["str", "year"], ["int", 1]]]]
    assert info.choices == [required, ["dict", [*required[1], [["str", "note"], ["str", "a"]]]]]


@pytest.mark.parametrize("text, hints", [
    ("Optional[int]", [INT, NONE]),
    ("int | None", [INT, NONE]),
    ("list['Point']", [LIST]),
    ("Optional[Node]", ["?Node", NONE]),  # Node: imported under TYPE_CHECKING only
    ("nowhere.Node | None", ["?Node", NONE]),
    ("Union[int, Node]", [INT, "?Node"]),  # Union is found in typing though the module does not import it
])
def test_string_annotations_are_resolved_name_by_name(text: str, hints: list[str]) -> None:
    assert _flat(text).hints == hints


def test_string_literal_annotation_gives_choices() -> None:
    assert _flat("Literal['x', 'y'] | None").choices == [["str", "x"], ["str", "y"]]


# ---------------------------------------------------------------- docstrings

GOOGLE = """Scale a point.

Args:
    factor (float): how much.
    names (list of str, optional): labels;
        a continuation line (int): is no parameter.
    *extra: anything.
    origin (:class:`~tests.Point` or None): where from.

Returns:
    int: nothing.
"""

NUMPY = """Scale a point.

Parameters
----------
factor : int or float
    How much.
order : {'C', 'F'}, default 'C'
x, y : int, optional

Returns
-------
scaled : str
"""

REST = """Scale a point.

:param factor: how much.
:type factor: float
:param str name: a label.
:param list[int] sizes: sizes.
:param plain: no type.
"""


def test_google_docstring() -> None:
    assert docstring_types(GOOGLE) == {"factor": "float", "names": "list of str, optional",
                                       "origin": ":class:`~tests.Point` or None"}


def test_numpy_docstring() -> None:
    assert docstring_types(NUMPY) == {"factor": "int or float", "order": "{'C', 'F'}, default 'C'",
                                      "x": "int, optional", "y": "int, optional"}


def test_rest_docstring() -> None:
    assert docstring_types(REST) == {"factor": "float", "name": "str", "sizes": "list[int]"}


def test_docstring_without_types() -> None:
    assert docstring_types("Just prose: no types here.") == {}
    assert docstring_types(None) == {}


@pytest.mark.parametrize("text, hints", [
    ("int", [INT]),
    ("integer", [INT]),
    ("str, optional", [STR]),
    ("int or None", [INT, NONE]),
    ("bool, default True", ["builtins.bool"]),
    ("positive int", [INT]),
    ("callable", ["collections.abc.Callable"]),
    ("array_like", [LIST]),
    ("Optional[Point]", [f"{HERE}.Point", NONE]),
    (f":class:`~{HERE}.Point` or None", [f"{HERE}.Point", NONE]),
    ("shapes.Point", [f"{HERE}.Point"]),  # the module imports Point itself
    ("Unknown or str", [STR]),  # unresolved names in prose are left out, not guessed
    ("a file-like object", ["_io.StringIO"]),  # the detective's stdlib provider makes one
    ("datetime.datetime or None", ["datetime.datetime", NONE]),
    ("timedelta", ["datetime.timedelta"]),
    ("an object", []),
    ("instance of Point", [f"{HERE}.Point"]),
])
def test_docstring_type_words(text: str, hints: list[str]) -> None:
    assert _doc(text).hints == hints


@pytest.mark.parametrize("annotation, hints", [
    (typing.TextIO, ["_io.StringIO"]), (typing.IO[str], ["_io.StringIO"]), (io.TextIOBase, ["_io.StringIO"]),
    (typing.BinaryIO, ["_io.BytesIO"]), (os.PathLike, ["pathlib.Path"]),
    ("str | os.PathLike[str]", [STR, "pathlib.Path"]), (pathlib.PurePath, ["pathlib.Path"]),
    (datetime.date, ["datetime.date"]),
])
def test_stdlib_protocols_become_the_types_the_detective_provides(annotation: Any, hints: list[str]) -> None:
    assert _flat(annotation).hints == hints


def test_docstring_containers_and_sets() -> None:
    listed = _doc("list of str")
    assert (listed.hints, listed.elements) == ([LIST], {LIST: [[STR]]})
    assert _doc("tuple of (int, float)").elements == {"builtins.tuple": [[INT, FLOAT]]}
    order = _doc("{'C', 'F'}, default 'C'")
    assert (order.hints, order.choices) == ([STR], [["str", "C"], ["str", "F"]])


# ---------------------------------------------------------------- isinstance


def _checked(source: str, *names: str) -> dict[str, list[str]]:
    return {name: info.hints for name, (info, _) in _tests(source, *names).items()}


def _tests(source: str, *names: str) -> dict[str, tuple[TypeInfo, bool]]:
    lines = textwrap.dedent(source).splitlines(keepends=True)
    return {name: checked_types(checks, SCOPE, set())
            for name, checks in isinstance_targets(lines, set(names)).items()}


def test_isinstance_targets_in_source_order() -> None:
    source = '''
        def f(value, label, other, untouched):
            if type(label) is str:
                pass
            if isinstance(value, (int, float)):
                return value
            elif isinstance(value, Point | None):
                return value
            if isinstance(other, NUMBERS) or isinstance(x, bytes):
                return other
    '''
    assert _checked(source, "value", "label", "other", "untouched") == {
        "label": [STR], "value": [INT, FLOAT, f"{HERE}.Point", NONE], "other": [INT, FLOAT]}


def test_isinstance_of_an_indented_method_and_unknown_names() -> None:
    source = '''
        @staticmethod
        def f(value):
            if isinstance(value, Missing):
                return 1
            return isinstance(value, Point)
    '''
    assert _checked(source, "value") == {"value": [f"{HERE}.Point"]}  # Missing is nowhere
    assert isinstance_targets(["def f(x):\n", "    return x\n"], {"x"}) == {}


def test_type_tests_that_turn_other_types_away_are_closed() -> None:
    source = '''
        def f(guarded, asserted, chained, dispatched, declined):
            if guarded is None or not isinstance(guarded, int):
                raise TypeError(guarded)
            assert isinstance(asserted, str)
            if isinstance(chained, int):
                pass
            elif type(chained) is str:
                pass
            else:
                raise TypeError(chained)
            if isinstance(dispatched, str):
                dispatched = Point(int(dispatched))
            if not isinstance(declined, Point):
                return NotImplemented
    '''
    found = _tests(source, "guarded", "asserted", "chained", "dispatched", "declined")
    assert {name: (info.hints, closed) for name, (info, closed) in found.items()} == {
        "guarded": ([INT], True), "asserted": ([STR], True), "chained": ([INT, STR], True),
        "dispatched": ([STR], False), "declined": ([f"{HERE}.Point"], True)}


# ---------------------------------------------------------------- through build_catalog

MODULE = "dor_typeinfo_target"
SOURCE = textwrap.dedent('''
    from __future__ import annotations

    import enum
    from dataclasses import dataclass
    from typing import TYPE_CHECKING, Literal, Optional, Sequence

    if TYPE_CHECKING:
        from elsewhere import Node


    class Mode(enum.Enum):
        FAST = 1
        SLOW = 2


    @dataclass
    class Box:
        width: int
        label: str = ""


    def annotated(a: Optional[int], b: Sequence[str], c: Literal["x", "y"], d: Mode, e: Box,
                  f: Optional[Node] = None) -> int:
        """Annotations win over the docstring.

        Args:
            a (str): ignored.
        """
        return 0


    def google(count, names=None, box=None):
        """Google style.

        Args:
            count (int): how many.
            names (list of str, optional): labels.
            box (Box): a box.
        """


    def numpy(ratio, order="C"):
        """NumPy style.

        Parameters
        ----------
        ratio : float
        order : {'C', 'F'}
        """


    def rest(size, retries=3):
        """reST style.

        :param int size: how big.
        """


    def checked(value, other):
        if isinstance(value, (int, float)):
            return value
        return other


    class _Unset:
        pass


    def sentinel(value=_Unset()):
        if isinstance(value, _Unset):
            return None
        return value
''')


SOURCE += textwrap.dedent('''

    class Expiring:
        def __init__(self, maxsize, ttu, other):
            self.__ttu = ttu
            self.other = other

        def put(self, key, value):
            return self.__ttu(key, value, 0)


    def apply(hook, value):
        return hook(value)
''')


@pytest.fixture
def catalog(tmp_path: Path) -> dict:
    (tmp_path / f"{MODULE}.py").write_text(SOURCE)
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        yield build_catalog([MODULE])
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(MODULE, None)


def _params(catalog: dict, qualname: str) -> dict[str, dict]:
    op = next(o for o in catalog["operations"] if o["id"] == f"{MODULE}:{qualname}")
    return {p["name"]: p for p in op["params"]}


def test_catalog_annotations(catalog: dict) -> None:
    params = _params(catalog, "annotated")
    assert {n: p["hints"] for n, p in params.items()} == {
        "a": [INT, NONE], "b": [LIST], "c": [STR], "d": [f"{MODULE}.Mode"], "e": [f"{MODULE}.Box"],
        "f": ["?Node", NONE]}
    assert params["b"]["elements"] == {LIST: [[STR]]}
    assert params["c"]["choices"] == [["str", "x"], ["str", "y"]]
    assert "choices" not in params["a"] and "elements" not in params["a"]


def test_catalog_builds_enums_from_their_values(catalog: dict) -> None:
    assert _params(catalog, "Mode") == {"value": {"name": "value", "kind": "POSITIONAL_OR_KEYWORD",
                                                  "has_default": False, "hints": [INT],
                                                  "choices": [["int", 1], ["int", 2]]}}
    assert {n: p["hints"] for n, p in _params(catalog, "Box").items()} == {"width": [INT], "label": [STR]}


def test_catalog_docstring_types(catalog: dict) -> None:
    assert {n: p["hints"] for n, p in _params(catalog, "google").items()} == {
        "count": [INT], "names": [LIST], "box": [f"{MODULE}.Box"]}
    numpy = _params(catalog, "numpy")
    assert numpy["ratio"]["hints"] == [FLOAT] and numpy["order"]["choices"] == [["str", "C"], ["str", "F"]]
    assert {n: p["hints"] for n, p in _params(catalog, "rest").items()} == {"size": [INT], "retries": [INT]}


def test_catalog_isinstance_targets(catalog: dict) -> None:
    params = _params(catalog, "checked")
    assert params["value"]["hints"] == [INT, FLOAT]
    assert params["value"]["hints_from"] == "dispatch"  # other types fall through to `return other`
    assert params["other"]["hints"] == [] and "hints_from" not in params["other"]  # any type
    assert _params(catalog, "sentinel")["value"]["hints"] == []  # testing for its default is no type


def test_catalog_says_where_hints_come_from(catalog: dict) -> None:
    assert {n: p.get("hints_from") for n, p in _params(catalog, "rest").items()} == {
        "size": "docstring", "retries": "default"}
    assert all("hints_from" not in p for p in _params(catalog, "annotated").values())


def test_catalog_returns_and_format(catalog: dict, tmp_path: Path) -> None:
    ops = {o["id"]: o for o in catalog["operations"]}
    assert ops[f"{MODULE}:annotated"]["returns"] == [INT]
    assert ops[f"{MODULE}:google"]["returns"] == []  # not annotated: unknown, not None
    assert json.loads(json.dumps(catalog)) == catalog
    for op in catalog["operations"]:
        protocol = {"dispatches"} if op["id"] in PROTOCOLS else set()  # the dunders it may run
        assert set(op) == {"id", "kind", "owner", "params", "returns", "file", "line", "end"} | protocol
        for param in op["params"]:
            assert {"name", "kind", "has_default", "hints"} <= set(param)
            assert set(param) <= {"name", "kind", "has_default", "hints", "default", "choices", "elements",
                                  "hints_from", "declared"}


def test_called_parameters_in_the_body_and_through_an_instance_attribute() -> None:
    function = textwrap.dedent('''
        def __init__(self, ttu, other, hook, unused):
            self.__ttu = ttu
            self.other = other
            self.result = hook(1)
    ''').splitlines(keepends=True)
    klass = textwrap.dedent('''
        class Cache:
            def expire(self, key):
                return self.__ttu(key, None, 0) + len(self.other)
    ''').splitlines(keepends=True)
    names = {"ttu", "other", "hook", "unused"}
    assert called_parameters(function, names, klass) == {"ttu", "hook"}
    assert called_parameters(function, names) == {"hook"}  # without the class, a stored one is unknown
    assert called_parameters(["def broken(:\n"], names) == set()


def test_catalog_types_a_called_parameter_as_a_callback(catalog: dict) -> None:
    expiring = _params(catalog, "Expiring")
    ttu = expiring["ttu"]
    assert (ttu["hints"], ttu["hints_from"]) == (["collections.abc.Callable"], "called")
    assert expiring["other"]["hints"] == [] and expiring["maxsize"]["hints"] == []
    assert _params(catalog, "apply")["hook"]["hints"] == ["collections.abc.Callable"]


def test_the_classes_an_annotation_declares_are_those_a_class_check_decides() -> None:
    class Shape(typing.Protocol):
        def area(self) -> float: ...

    assert declared_classes(Collection[str]) == ["collections.abc.Collection"]  # the hints say list
    assert declared_classes(Optional[int]) == ["builtins.int", "builtins.NoneType"]
    assert declared_classes(Union[list[int], str]) == ["builtins.list", "builtins.str"]
    if sys.version_info >= (3, 10):  # the same union, by the operator of 3.10
        assert declared_classes(eval("list[int] | str")) == ["builtins.list", "builtins.str"]
    assert declared_classes(Literal["r", "w"]) == ["builtins.str"]
    for open_ended in (Any, TypeVar("T"), Shape, "Node", Union[int, Any]):
        assert declared_classes(open_ended) is None, open_ended

    class Words:
        def __iter__(self) -> Iterator[str]:
            return iter(())

        def __len__(self) -> int:
            return 0

        def __contains__(self, item: object) -> bool:
            return False

    assert "collections.abc.Collection" in protocols_of(Words)
    assert "collections.abc.Iterable" not in protocols_of(int)
