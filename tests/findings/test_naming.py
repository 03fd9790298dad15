"""Tests for `difforacle.generator.findings.naming`: variable names after types and roles, test
names after targets."""

from __future__ import annotations

import keyword

import pytest
from hypothesis import given
from hypothesis import strategies as st

from difforacle.generator.findings import naming
from difforacle.generator.findings.naming import Names, snake, usable, variable_name
from difforacle.generator.runtime.catalog import Operation


def op(op_id: str, kind: str, returns: tuple[str, ...] = ()) -> Operation:
    qualname = op_id.partition(":")[2]
    owner = f"pkg.mod.{qualname.rsplit('.', 1)[0]}" if kind in ("constructor", "method", "static") else None
    if kind == "constructor":
        owner = f"pkg.mod.{qualname}"
    return Operation(op_id, kind, owner, (), returns, None, None)


@pytest.mark.parametrize(("name", "expected"), [
    ("LRUCache", "lru_cache"), ("Version", "version"), ("HTTPServer", "http_server"),
    ("parseHTTPDate", "parse_http_date"), ("TTLCache2", "ttl_cache2"), ("__len__", "len"),
    ("already_snake", "already_snake"), ("X", "x"),
])
def test_snake(name: str, expected: str) -> None:
    assert snake(name) == expected


@pytest.mark.parametrize(("op_id", "kind", "returns", "expected"), [
    # constructors: after the class
    ("pkg.mod:LRUCache", "constructor", (), "lru_cache"),
    ("pkg.mod:Version", "constructor", (), "version"),
    ("pkg.mod:Outer.Inner", "constructor", (), "inner"),
    ("pkg.mod:List", "constructor", (), "list_obj"),  # `list` is a builtin
    # class and static methods: factories after the class
    ("pkg.mod:Version.parse", "static", (), "version"),
    ("pkg.mod:Version.from_string", "static", ("pkg.mod.Version",), "version"),
    ("pkg.mod:Version.coerce", "static", ("?Self",), "version"),
    ("pkg.mod:Version.is_valid", "static", (), "valid"),
    ("pkg.mod:Version.compare", "static", ("builtins.int",), "compare"),
    # functions: the name minus a leading verb
    ("pkg.mod:parse_version", "function", (), "version"),
    ("pkg.mod:make_cache", "function", (), "cache"),
    ("pkg.mod:get_user", "function", (), "user"),
    ("pkg.mod:to_json", "function", (), "json"),
    ("pkg.mod:load_config", "function", (), "config"),
    ("pkg.mod:compute_total", "function", (), "total"),
    ("pkg.mod:is_valid", "function", (), "valid"),
    # nothing left, or a builtin: the return annotation, else `result`
    ("pkg.mod:parse", "function", (), "result"),
    ("pkg.mod:parse", "function", ("pkg.mod.Duration",), "duration"),
    ("pkg.mod:parse", "function", ("builtins.int", "builtins.NoneType"), "number"),
    ("pkg.mod:to_dict", "function", (), "result"),
    ("pkg.mod:to_list", "function", ("builtins.list",), "items"),
    ("pkg.mod:get_type", "function", (), "result"),
    ("pkg.mod:seconds", "function", (), "result"),  # the function's own name is imported
    ("pkg.mod:seconds", "function", ("builtins.float",), "number"),
    ("pkg.mod:parse", "function", ("pkg.mod.A", "pkg.mod.B"), "result"),  # ambiguous
    # methods
    ("pkg.mod:Cache.get", "method", (), "value"),
    ("pkg.mod:Cache.pop", "method", (), "value"),
    ("pkg.mod:Cache.get_user", "method", (), "user"),
    ("pkg.mod:Rect.area", "method", (), "area"),
    ("pkg.mod:Cache.clear", "method", (), "result"),
    ("pkg.mod:Cache.update", "method", ("pkg.mod.Cache",), "cache"),
    ("pkg.mod:Cache.__getitem__", "method", (), "item"),
    ("pkg.mod:Cache.__len__", "method", (), "length"),
    ("pkg.mod:Cache.__contains__", "method", (), "contains"),
    ("pkg.mod:Duration.__add__", "method", (), "total"),
    ("pkg.mod:Cache.class", "method", (), "result"),  # a keyword
])
def test_variable_name_rules(op_id: str, kind: str, returns: tuple[str, ...], expected: str) -> None:
    assert variable_name(op_id, op(op_id, kind, returns)) == expected


def test_variable_name_without_catalog_entry() -> None:
    assert variable_name("pkg.mod:parse_version") == "version"
    assert variable_name("pkg.mod:Cache.get") == "value"
    assert variable_name("pkg.mod:parse") == "result"


def test_names_are_unique_and_avoid_reserved_names() -> None:
    names = Names({"parse", "pytest", "version"})
    assert [names.fresh(n) for n in ("version", "version", "result", "result", "pytest")] == [
        "version_2", "version_3", "result", "result_2", "pytest_2"]


@pytest.mark.parametrize("base", ["list", "class", "match", "type", "", "1abc", "a-b"])
def test_fresh_never_gives_a_keyword_or_builtin(base: str) -> None:
    name = Names().fresh(base)
    assert usable(name), name


@given(st.text(max_size=30))
def test_variable_name_is_always_usable(name: str) -> None:
    for kind in ("function", "method", "constructor", "static"):
        qualname = f"Owner.{name}" if kind in ("method", "static") else name
        result = variable_name(f"pkg.mod:{qualname}", op(f"pkg.mod:{qualname}", kind))
        assert usable(result) and result == result.lower(), (kind, name, result)
        assert not keyword.iskeyword(result)


# ---------------------------------------------------------------- test names


@pytest.mark.parametrize(("target", "kind", "pin", "expected"), [
    ("pkg.mod:parse_duration", "return", "base", "test_parse_duration_return_matches_base"),
    ("pkg.mod:parse_duration", "return", "head", "test_parse_duration_return_matches_head"),
    ("pkg.mod:Duration.parse", "exception", "base", "test_duration_parse_exception_matches_base"),
    ("pkg.mod:LRUCache.__getitem__", "state", "head", "test_lru_cache_getitem_state_matches_head"),
    ("pkg.mod:<module>", "exception", "base", "test_mod_exception_matches_base"),
    ("pkg:Résumé.ünïcode", "observer", "base", "test_r_sum_n_code_observer_matches_base"),
])
def test_test_name_format(target: str, kind: str, pin: str, expected: str) -> None:
    assert naming.test_name(target, kind, pin) == expected


@given(st.text(max_size=200), st.sampled_from(["return", "exception", "state", "observer", "api"]),
       st.sampled_from(["base", "head"]))
def test_test_name_is_a_short_identifier(target: str, kind: str, pin: str) -> None:
    name = naming.test_name(target, kind, pin)
    assert name.isidentifier() and name.isascii() and not keyword.iskeyword(name)
    assert name.startswith("test_") and name.endswith(f"_{kind}_matches_{pin}")
    assert len(name) <= naming.MAX_TEST_NAME


def test_long_target_is_cut_to_80_characters() -> None:
    name = naming.test_name("pkg.mod:" + "VeryLongClassName" * 10 + ".method", "observer", "head")
    assert len(name) <= 80 and name.endswith("_observer_matches_head") and "__" not in name


def test_test_name_helper_is_not_collected_as_a_test() -> None:
    assert naming.test_name.__test__ is False  # type: ignore[attr-defined]
