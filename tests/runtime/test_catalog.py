"""Tests for `difforacle.generator.runtime.catalog`: the host's view of the catalog a worker listed."""

from __future__ import annotations

import sys
from pathlib import Path

from support.catalog_samples import CATALOG, MOD, SOURCE, real_catalog

from difforacle.generator.runtime.catalog import Catalog, Operation, Parameter
from difforacle.generator.worker.introspect import build_catalog

# ---------------------------------------------------------------- from_json


def test_from_json_builds_operations_and_parameters() -> None:
    catalog = Catalog.from_json(CATALOG)
    op = next(o for o in catalog.operations if o.id == f"{MOD}:Timer.expired")
    assert op == Operation(f"{MOD}:Timer.expired", "method", f"{MOD}.Timer",
                           (Parameter("x", "POSITIONAL_OR_KEYWORD", False, ("builtins.int",),
                                      (("int", 1), ("int", 2))),),
                           ("builtins.int",), f"/src/{MOD}.py", 3, end=4)
    assert (op.module, op.qualname, op.name) == (MOD, "Timer.expired", "expired")
    assert catalog.import_errors == {"broken": "SyntaxError: invalid syntax"}
    assert [c.id for c in catalog.constructors_of(f"{MOD}.Timer")] == [f"{MOD}:Timer"]
    assert catalog.constructors_of(f"{MOD}.Nope") == []


def test_from_json_of_a_real_worker_catalog(tmp_path: Path) -> None:
    name = "dor_catalog_target"
    catalog = real_catalog(tmp_path, name, SOURCE.replace("durations", name))
    kinds = {op.qualname: op.kind for op in catalog.operations}
    assert kinds["parse_duration"] == "function"
    assert kinds["Timer"] == "constructor" and kinds["Timer.expired"] == "method"
    assert kinds["Clock.zero"] == "static"
    assert "_unit_seconds" not in kinds and "Timer._grace" not in kinds
    assert catalog.classes[f"{name}.Timer"] == {"mro": [f"{name}.Timer"], "abstract": False,
                                                "protocols": ["collections.abc.Hashable"]}


def test_import_errors_on_each_side() -> None:
    catalog = Catalog.from_json(CATALOG, {"import_errors": {"broken": "x", "gone": "ImportError: y"}})
    assert catalog.broken_on_head() == {"gone": "ImportError: y"}  # broken on base already: not head's doing
    assert catalog.importable_on_both(("broken", "gone", MOD)) == {MOD}


HOSTILE_MODULE = '''\
class NoDir(type):
    def __dir__(cls):
        raise RuntimeError("no dir")


class Shy(metaclass=NoDir):
    def hidden(self):
        return 1


def __getattr__(name):
    if name == "lazy":
        raise RuntimeError("lazy attribute")
    raise AttributeError(name)


def kept(x: int) -> int:
    return x


__all__ = ["Shy", "kept", "lazy", 3]
'''


def test_members_whose_listing_raises_are_left_out_not_the_module(tmp_path: Path) -> None:
    """A metaclass's __dir__, a module __getattr__ and a name that is no str in __all__ once
    made the worker's start fail, so the run ended with "could not be imported"."""
    name = "dor_catalog_hostile"
    catalog = real_catalog(tmp_path, name, HOSTILE_MODULE)
    assert catalog.import_errors == {}
    ids = {op.id for op in catalog.operations}
    assert f"{name}:kept" in ids and f"{name}:Shy.hidden" not in ids, ids


def test_classes_and_functions_a_package_rehomes_are_still_their_modules(tmp_path: Path) -> None:
    """A package that sets its public objects' `__module__` to itself (for nicer reprs) still has
    them listed in the module that defines them, named after that module; imports are not."""
    package = tmp_path / "rehomed_pkg"
    package.mkdir()
    (package / "_base.py").write_text(
        "from collections import OrderedDict\n\n\n"
        "class Base:\n    def __init__(self, x=0):\n        self.x = x\n\n"
        "    def double(self):\n        return self._double()\n\n"
        "    def _double(self):\n        return 2 * self.x\n\n\n"
        "def helper(x):\n    return x + 1\n")
    (package / "__init__.py").write_text(
        "from ._base import Base, helper\n\nfor _obj in (Base, helper):\n    _obj.__module__ = __name__\n")
    sys.path.insert(0, str(tmp_path))
    try:
        catalog = Catalog.from_json(build_catalog(["rehomed_pkg._base"]))
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("rehomed_pkg")]:
            del sys.modules[name]
    ids = {op.id for op in catalog.operations}
    assert {"rehomed_pkg._base:Base", "rehomed_pkg._base:Base.double", "rehomed_pkg._base:helper"} <= ids
    assert not any("OrderedDict" in op_id for op_id in ids)  # an import, not the module's own


DECORATED_MODULE = '''
import functools
from os.path import join  # an import: not the module's own


class counted:
    """A decorator class: its object stands in for the function it wraps."""

    def __init__(self, func):
        functools.update_wrapper(self, func)
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return self.__wrapped__(*args)


@functools.lru_cache(maxsize=64)
def slug(text: str) -> str:
    return text.lower()


@counted
def double(number: int) -> int:
    return 2 * number


cached_join = functools.lru_cache(join)  # wraps a function of another module: not its own
'''


def test_a_function_a_decorator_replaced_by_an_object_is_listed_as_the_function(tmp_path: Path) -> None:
    """`functools.lru_cache` and decorator classes return objects, not functions: they were left
    out of the catalog, and with them every cached function of a project."""
    name = "dor_catalog_decorated"
    catalog = real_catalog(tmp_path, name, DECORATED_MODULE)
    by_id = {op.id: op for op in catalog.operations}
    for function, parameter in (("slug", "text"), ("double", "number")):
        op = by_id[f"{name}:{function}"]
        assert op.kind == "function" and [p.name for p in op.params] == [parameter], op
    assert f"{name}:cached_join" not in by_id and f"{name}:join" not in by_id
