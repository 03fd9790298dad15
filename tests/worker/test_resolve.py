"""Tests for `difforacle.generator.worker.resolve`: operation ids to callables, on the commit the
worker imported."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from difforacle.generator.worker.resolve import Missing, Resolver, Unbindable

MODULE = "dor_resolve_target"
SOURCE = textwrap.dedent('''
    LIMIT = 3


    def double(x, y=1):
        return x * 2 * y


    def only_kw(*, flag):
        return flag


    class Version:
        def __init__(self, major, minor=0):
            self.major = major
            self.minor = minor

        def bump(self, by=1):
            return Version(self.major, self.minor + by)

        def label(self):
            return "base"

        @staticmethod
        def parse(text):
            major, _, minor = text.partition(".")
            return Version(int(major), int(minor or 0))

        @classmethod
        def zero(cls):
            return cls(0)

        def __lt__(self, other):
            if not isinstance(other, Version):
                return NotImplemented
            return (self.major, self.minor) < (other.major, other.minor)

        def __getitem__(self, index):
            return (self.major, self.minor)[index]

        def __eq__(self, other):
            return isinstance(other, Version) and (self.major, self.minor) == (other.major, other.minor)

        def __hash__(self):
            return hash((self.major, self.minor))

        class Part:
            def __init__(self, name):
                self.name = name

            def upper(self):
                return self.name.upper()


    class Patched(Version):
        def label(self):
            return "patched"


    class Inherits(Version):
        pass


    class Threshold:
        """Compares with Versions from the right-hand side (reflected __gt__)."""

        def __init__(self, major):
            self.major = major

        def __gt__(self, other):
            return self.major > other.major


    def _private():
        return 1


    class Final:
        def __init_subclass__(cls, **kwargs):
            raise TypeError("Final cannot be subclassed")
''')


@pytest.fixture
def module(tmp_path: Path) -> Iterator[str]:
    (tmp_path / f"{MODULE}.py").write_text(SOURCE)
    sys.path.insert(0, str(tmp_path))
    try:
        yield MODULE
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(MODULE, None)


@pytest.fixture
def mod(module: str):
    resolver = Resolver()
    resolver.resolve(f"{module}:double")
    return sys.modules[module]


@pytest.mark.parametrize("qualname, kind", [
    ("double", "function"),
    ("_private", "function"),
    ("Version", "constructor"),
    ("Version.bump", "method"),
    ("Version.__lt__", "method"),
    ("Version.parse", "static"),
    ("Version.zero", "static"),
    ("Version.Part", "constructor"),
    ("Version.Part.upper", "method"),
    ("Patched.zero", "static"),
    ("Inherits.bump", "method"),
])
def test_resolve_kinds(module: str, qualname: str, kind: str) -> None:
    op = Resolver().resolve(f"{module}:{qualname}")
    assert op.kind == kind
    assert op.op_id == f"{module}:{qualname}"
    assert op.name == qualname.rsplit(".", 1)[-1]


def test_calls_of_each_kind(module: str) -> None:
    resolver = Resolver()
    assert resolver.resolve(f"{module}:double").call([3], {"y": 2}) == 12
    version = resolver.resolve(f"{module}:Version").call([1], {"minor": 2})
    assert (version.major, version.minor) == (1, 2)
    bumped = resolver.resolve(f"{module}:Version.bump").call([version, 3], {})
    assert (bumped.major, bumped.minor) == (1, 5)
    parsed = resolver.resolve(f"{module}:Version.parse").call(["4.5"], {})
    assert (parsed.major, parsed.minor) == (4, 5)
    zero = resolver.resolve(f"{module}:Patched.zero").call([], {})
    assert type(zero).__name__ == "Patched"
    part = resolver.resolve(f"{module}:Version.Part").call(["ab"], {})
    assert resolver.resolve(f"{module}:Version.Part.upper").call([part], {}) == "AB"


def test_resolution_is_cached(module: str) -> None:
    resolver = Resolver()
    assert resolver.resolve(f"{module}:double") is resolver.resolve(f"{module}:double")


@pytest.mark.parametrize("op_id", [
    f"{MODULE}:missing",
    f"{MODULE}:Version.missing",
    f"{MODULE}:Nope.method",
    "dor_no_such_module_here:f",
])
def test_absent_names_and_modules_are_missing(module: str, op_id: str) -> None:
    with pytest.raises(Missing):
        Resolver().resolve(op_id)


def test_a_module_value_is_read_not_called(module: str) -> None:
    resolver = Resolver()
    limit = resolver.resolve(f"{module}:LIMIT")
    assert (limit.kind, limit.call([], {})) == ("value", 3)
    resolver.check_binding(limit, [], {})
    with pytest.raises(Unbindable):
        resolver.check_binding(limit, [1], {})  # a value takes no arguments


def test_check_binding_accepts_matching_calls(module: str) -> None:
    resolver = Resolver()
    version = resolver.resolve(f"{module}:Version").call([1], {})
    for op_id, args, kwargs in [
        ("double", [1], {}), ("double", [1, 2], {}), ("double", [1], {"y": 3}), ("only_kw", [], {"flag": 1}),
        ("Version", [1], {}), ("Version", [1, 2], {}), ("Version.bump", [version], {}),
        ("Version.bump", [version, 2], {}), ("Version.parse", ["1.2"], {}), ("Version.zero", [], {}),
        ("Version.__lt__", [version, version], {}),
    ]:
        resolver.check_binding(resolver.resolve(f"{module}:{op_id}"), args, kwargs)


@pytest.mark.parametrize("op_id, args, kwargs", [
    ("double", [], {}),
    ("double", [1, 2, 3], {}),
    ("double", [1], {"z": 3}),
    ("only_kw", [1], {}),
    ("Version", [], {}),
    ("Version", [1, 2, 3], {}),
    ("Version.parse", [], {}),
    ("Version.zero", [1], {}),
])
def test_check_binding_rejects_wrong_arity(module: str, op_id: str, args: list, kwargs: dict) -> None:
    resolver = Resolver()
    with pytest.raises(Unbindable):
        resolver.check_binding(resolver.resolve(f"{module}:{op_id}"), args, kwargs)


def test_check_binding_of_methods_counts_the_receiver(mod) -> None:
    resolver = Resolver()
    op = resolver.resolve(f"{MODULE}:Version.bump")
    version = mod.Version(1)
    with pytest.raises(Unbindable):
        resolver.check_binding(op, [version, 1, 2], {})
    with pytest.raises(Unbindable):
        resolver.check_binding(op, [version], {"step": 1})


def test_check_binding_of_a_method_the_receiver_lacks_is_missing(mod) -> None:
    resolver = Resolver()
    op = resolver.resolve(f"{MODULE}:Version.Part.upper")
    with pytest.raises(Missing):
        resolver.check_binding(op, [mod.Version(1)], {})


# ---------------------------------------------------------------- dunders through operators


def test_lt_goes_through_the_operator(mod) -> None:
    op = Resolver().resolve(f"{MODULE}:Version.__lt__")
    assert op.call([mod.Version(1), mod.Version(2)], {}) is True
    assert op.call([mod.Version(2), mod.Version(1)], {}) is False


def test_lt_returning_notimplemented_falls_back_to_the_reflected_operator(mod) -> None:
    op = Resolver().resolve(f"{MODULE}:Version.__lt__")
    assert op.call([mod.Version(1), mod.Threshold(5)], {}) is True  # Threshold(5) > Version(1)
    assert op.call([mod.Version(9), mod.Threshold(5)], {}) is False
    with pytest.raises(TypeError):
        op.call([mod.Version(1), "text"], {})  # NotImplemented both ways: TypeError, as in user code


def test_getitem_goes_through_the_operator(mod) -> None:
    op = Resolver().resolve(f"{MODULE}:Version.__getitem__")
    version = mod.Version(3, 4)
    assert op.call([version, 0], {}) == 3
    assert op.call([version, -1], {}) == 4
    with pytest.raises(IndexError):
        op.call([version, 2], {})


def test_eq_and_hash_go_through_builtins(mod) -> None:
    resolver = Resolver()
    assert resolver.resolve(f"{MODULE}:Version.__eq__").call([mod.Version(1), mod.Version(1)], {}) is True
    assert resolver.resolve(f"{MODULE}:Version.__eq__").call([mod.Version(1), 1], {}) is False
    assert resolver.resolve(f"{MODULE}:Version.__hash__").call([mod.Version(1, 2)], {}) == hash((1, 2))


# ---------------------------------------------------------------- dynamic dispatch


def test_method_calls_dispatch_to_the_receivers_override(mod) -> None:
    op = Resolver().resolve(f"{MODULE}:Version.label")
    assert op.call([mod.Version(1)], {}) == "base"
    assert op.call([mod.Patched(1)], {}) == "patched"


def test_callee_follows_dynamic_dispatch(mod) -> None:
    resolver = Resolver()
    op = resolver.resolve(f"{MODULE}:Version.label")
    assert op.callee([mod.Version(1)]) == f"{MODULE}:Version.label"
    assert op.callee([mod.Patched(1)]) == f"{MODULE}:Patched.label"
    assert op.callee([mod.Inherits(1)]) == f"{MODULE}:Version.label"
    assert resolver.resolve(f"{MODULE}:double").callee([1]) == f"{MODULE}:double"
    assert resolver.resolve(f"{MODULE}:Version.zero").callee([]) == f"{MODULE}:Version.zero"


def test_a_classs_subclass_is_built_as_the_class_is_and_made_once(module: str) -> None:
    resolver = Resolver()
    op = resolver.resolve(f"{module}:Version<subclass>")
    assert op.kind == "constructor" and op.obj.__name__ == "MyVersion"
    made = op.call([2], {})
    assert type(made).__mro__[1] is sys.modules[module].Version and made.major == 2
    assert type(made.bump()) is sys.modules[module].Version  # the method builds its class by name
    assert Resolver().resolve(f"{module}:Version<subclass>").obj is op.obj  # one subclass per process


@pytest.mark.parametrize("qualname", ["Final", "double", "Absent"])
def test_a_class_that_refuses_subclasses_or_no_class_is_missing(module: str, qualname: str) -> None:
    with pytest.raises(Missing):
        Resolver().resolve(f"{module}:{qualname}<subclass>")


def test_a_setter_assigns_the_attribute_and_checks_its_arity(module: str) -> None:
    resolver = Resolver()
    setter = resolver.resolve(f"{module}:Version.minor<set>")
    assert (setter.kind, setter.name) == ("setter", "minor")
    version = resolver.resolve(f"{module}:Version").call([1], {})
    resolver.check_binding(setter, [version, 7], {})
    assert setter.call([version, 7], {}) is None and version.minor == 7
    assert setter.callee([version, 7]) == f"{module}:Version.minor<set>"  # a plain attribute: no code runs
    for args, kwargs in (([version], {}), ([version, 1, 2], {}), ([version, 1], {"x": 1})):
        with pytest.raises(Unbindable):
            resolver.check_binding(setter, args, kwargs)
    with pytest.raises(Missing):
        resolver.resolve(f"{module}:Nothing.minor<set>")
    with pytest.raises(Missing):
        resolver.resolve(f"{module}:double.minor<set>")  # not a class
