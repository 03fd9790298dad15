"""Returned callables are called: a decorator factory's product and its wrapper, a closure, a bound
method. The worker types a returned callable from its signature and calls it (the CALL
operation); the generator pools callables by the operation they came from and calls them; the
renderer writes the call. End to end, a change that lives only in a returned callable's code is
found with the `callables` component and not without it."""

from __future__ import annotations

import functools
import random
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.bot.cli import build_parser
from difforacle.generator.findings.render import render_test
from difforacle.generator.generation.seeds.returned_callables import ReturnedCallables
from difforacle.generator.generation.techniques import Components
from difforacle.generator.generation.values.constants import Constants
from difforacle.generator.generation.values.primitives import ValueGenerator
from difforacle.generator.oracle.compare import Mismatch
from difforacle.generator.runtime.sequence import call_path, origin, path_origin
from difforacle.generator.worker import literals
from difforacle.generator.worker.introspect import returned_callable
from difforacle.generator.worker.protocol import SequenceResult, Status
from difforacle.generator.worker.resolve import CALL, Resolver, Unbindable, code_name
from difforacle.generator.worker.tracer import ChangeTracer, _wrap_function

MEMO = '''\
import functools


def memo(cache: dict):
    """Memoize a function's results in `cache`, keyed by its arguments."""
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            key = args + tuple(sorted(kwargs.items()))
            if key not in cache:
                cache[key] = func(*args, **kwargs)
            return cache[key]
        return wrapper
    return decorator
'''
SCALER = '''\
def make_scaler(factor: int):
    """A function that multiplies its argument by `factor`."""
    def scale(value: int) -> int:
        return value * factor
    return scale
'''
GREETER = '''\
class Greeter:
    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    def formatter(self, loud: bool):
        """The method that greets a name, shouting or not."""
        return self._shout if loud else self._say

    def _say(self, name: str) -> str:
        return f"{self.greeting}, {name}"

    def _shout(self, name: str) -> str:
        return f"{self.greeting.upper()}, {name}!"
'''
CACHEDMETHOD = '''\
import functools


def cachedmethod(cache):
    """Decorate a method to keep its results in the mapping that `cache(self)` returns."""
    def decorator(method):
        @functools.wraps(method)
        def wrapper(self, *args):
            store = cache(self)
            key = args
            if key not in store:
                store[key] = method(self, *args)
            return store[key]
        return wrapper
    return decorator
'''
# direct calls of private code are off in both: they would call a private method (`_say`) directly
ON, OFF = Components.without(["direct"]), Components.without(["callables", "direct"])


# ---------------------------------------------------------------- the worker


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """A small module of functions that return callables, imported from a temporary folder."""
    sources = [MEMO, CACHEDMETHOD, SCALER, GREETER]
    (tmp_path / "dor_returned.py").write_text("\n\n".join(sources) + textwrap.dedent('''

        class Plain:
            pass


        def local_class():
            class Point:
                def __init__(self, x: int, y: int = 0) -> None:
                    self.x, self.y = x, y
            return Point
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    import dor_returned

    yield dor_returned
    sys.modules.pop("dor_returned", None)


def _names(params: list[dict] | None) -> list[tuple[str, str]]:
    assert params is not None
    return [(p["name"], p["kind"]) for p in params]


def test_a_closure_is_typed_from_its_annotations(module) -> None:
    params = returned_callable(module.make_scaler(2))
    assert _names(params) == [("value", "POSITIONAL_OR_KEYWORD")]
    assert params[0]["hints"] == ["builtins.int"]


def test_a_decorator_takes_a_callback_and_its_wrapper_the_wrapped_signature(module) -> None:
    decorator = module.memo({})
    [func] = returned_callable(decorator)
    assert func["name"] == "func" and func["hints"] == ["collections.abc.Callable"]  # its body calls it
    wrapper = decorator(lambda number, *, scale=1: number * scale)
    assert _names(returned_callable(wrapper)) == [("number", "POSITIONAL_OR_KEYWORD"),
                                                  ("scale", "KEYWORD_ONLY")]


def test_a_wrapper_of_a_callback_that_takes_anything_has_its_own_signature(module) -> None:
    wrapper = module.cachedmethod(lambda owner: {})(literals.decode(["counter", 0]))
    assert _names(returned_callable(wrapper)) == [("self", "POSITIONAL_OR_KEYWORD"),
                                                  ("args", "VAR_POSITIONAL")]


def test_a_bound_method_drops_self_and_a_local_class_is_constructed(module) -> None:
    method = module.Greeter("hi").formatter(False)
    assert _names(returned_callable(method)) == [("name", "POSITIONAL_OR_KEYWORD")]
    assert _names(returned_callable(module.local_class())) == [("x", "POSITIONAL_OR_KEYWORD"),
                                                               ("y", "POSITIONAL_OR_KEYWORD")]


@pytest.mark.parametrize("value", [3, "text", None, len, str.upper, "a".upper, "Plain",
                                   literals.decode(["counter", 1]), literals.decode(["fn", ["int", 2]])])
def test_no_call_for_values_builtins_callbacks_and_classes_the_catalog_constructs(module, value) -> None:
    assert returned_callable(module.Plain if value == "Plain" else value) is None


def test_call_runs_the_callable_with_the_other_arguments() -> None:
    op = Resolver().resolve(CALL)
    assert op.call([lambda a, b=0: a - b, 5], {"b": 2}) == 3


def test_call_checks_the_callable_and_its_signature() -> None:
    resolver = Resolver()
    op = resolver.resolve(CALL)
    resolver.check_binding(op, [lambda a: a, 1], {})
    with pytest.raises(Unbindable):
        resolver.check_binding(op, [lambda a: a, 1, 2], {})
    with pytest.raises(Unbindable):
        resolver.check_binding(op, [3, 1], {})


def test_the_callee_of_a_call_is_the_code_that_runs(module) -> None:
    op = Resolver().resolve(CALL)
    wrapper = module.memo({})(len)  # functools.wraps names it `len`: its code says memo's wrapper
    assert op.callee([wrapper, "ab"]) == "dor_returned:memo"
    assert op.callee([module.make_scaler(2), 1]) == "dor_returned:make_scaler"
    assert op.callee([module.Greeter("hi").formatter(True), "x"]) == "dor_returned:Greeter._shout"
    assert op.callee([len, "ab"]) == CALL  # no Python code: the operation itself
    cached = functools.lru_cache(maxsize=2)(module.make_scaler(2))  # written in C: what it wraps
    assert op.callee([cached, 1]) == "dor_returned:make_scaler"
    assert _names(returned_callable(cached)) == [("value", "POSITIONAL_OR_KEYWORD")]


def test_a_hit_wrapper_is_named_after_the_function_it_wraps(module) -> None:
    traced = _wrap_function(module.Greeter._say, ChangeTracer())
    assert code_name(traced) == "dor_returned:Greeter._say"


def test_a_callback_can_hand_out_the_same_mapping_on_every_call() -> None:
    store = literals.decode(["fn", ["dict", []]])
    assert store(1) is store(2) == {}
    rendered = eval(literals.source(["fn", ["dict", []]]))
    assert rendered("self") is rendered(key=1) == {}
    drawn = [ValueGenerator(random.Random(seed), Constants()).callback() for seed in range(100)]
    assert ["fn", ["dict", []]] in drawn
    plain = [ValueGenerator(random.Random(seed), Constants(), stores=False).callback() for seed in range(100)]
    assert ["fn", ["dict", []]] not in plain


def test_a_counting_clock_renders_as_a_lambda_that_takes_keywords() -> None:
    ticks = eval(literals.source(["counter", 3]), {"itertools": __import__("itertools")})
    assert (ticks(1), ticks(key="a")) == (3, 4)


# ---------------------------------------------------------------- the host


MAKE = {"op": "m:memo", "args": [{"lit": ["dict", []]}], "kwargs": {}}
DECORATE = {"op": CALL, "args": [{"ref": 0}, {"lit": ["counter", 0]}], "kwargs": {}}
CALL_WRAPPER = {"op": CALL, "args": [{"ref": 1}, {"lit": ["int", 1]}], "kwargs": {}}


def test_a_call_comes_from_the_operation_that_made_its_callable() -> None:
    statements = [MAKE, DECORATE, CALL_WRAPPER]
    assert [origin(statements, i) for i in range(3)] == ["m:memo"] * 3
    assert [call_path(statements, i) for i in range(3)] == ["m:memo", "m:memo()", "m:memo()()"]
    assert {path_origin(call_path(statements, i)) for i in range(3)} == {"m:memo"}


def _result(callables: dict[int, list[dict]], count: int) -> SequenceResult:
    return SequenceResult(Status.OK, {}, executed=count, callables=callables,
                          types=[["builtins.function"]] * count, reusable=[True] * count)


def test_callables_are_pooled_by_origin_and_called_with_their_parameters() -> None:
    pool = ReturnedCallables(random.Random(0))
    args = {"name": "args", "kind": "VAR_POSITIONAL", "has_default": False, "hints": []}
    kwargs = {"name": "kwargs", "kind": "VAR_KEYWORD", "has_default": False, "hints": []}
    pool.learn([MAKE, DECORATE, CALL_WRAPPER], _result({1: [args, kwargs]}, 3), 1.0)
    [pooled] = pool.by_origin["m:memo"]  # the wrapper, as its call left it (a filled cache)
    assert (pooled.entry.index, len(pooled.entry.statements)) == (1, 3)
    operation = pooled.operation(random.Random(0))
    assert operation.id == CALL
    assert [p.kind for p in operation.params] == ["VAR_POSITIONAL", "KEYWORD_ONLY"]  # one keyword, optional
    assert operation.params[1].has_default
    picks = [pool.pick("m:memo") for _ in range(200)]
    assert pool.pick("m:other") is None
    assert 40 < sum(p is pooled for p in picks) < 160 and None in picks  # the operation itself too


def test_a_call_renders_as_a_call_of_the_variable() -> None:
    statements = [MAKE, DECORATE, {**CALL_WRAPPER, "kwargs": {"key": {"lit": ["str", "a"]}}}]
    source = render_test(statements, {}, Mismatch("2/2", ["i", 1], ["i", 0]), "test_memo")
    assert "function = memo({})" in source
    assert "function_2 = function(lambda *args, _ticks=itertools.count(0), **kwargs: next(_ticks))" in source
    assert "result = function_2(1, key=\"a\")" in source


# ---------------------------------------------------------------- end to end


def _run(builder: RepoBuilder, before: str, after: str, components: Components = ON,
         sequences: int = 300, seeds: range = range(1)):
    """The report of one seed, or, over several, the list of each seed's report."""
    make_pr(builder, {"pkg/__init__.py": "", "pkg/core.py": before}, {"pkg/core.py": after})
    reports = [run_analyze(builder, max_sequences=sequences, components=components, seed=seed)
               for seed in seeds]
    return reports[0] if len(reports) == 1 else reports


def _found(report, target: str) -> list:
    return [d for d in report.differences if d.target == target and d.kind == "return"]


# A wrapper that forgets keyword arguments in its key: `f(1)` and `f(1, key="a")` share a result.
MISKEYED = MEMO.replace("key = args + tuple(sorted(kwargs.items()))", "key = args")


@pytest.mark.slow
def test_a_decorator_factory_whose_wrapper_changed(builder: RepoBuilder) -> None:
    report = _run(builder, MEMO, MISKEYED)
    [difference] = _found(report, "pkg.core:memo")
    assert difference.reproduced  # the test passes on base and fails on head, under pytest
    assert (difference.path, difference.line) == ("pkg/core.py", 9)
    assert "function = memo({})" in difference.test and "itertools.count(" in difference.test


def test_a_decorator_factory_without_callables(builder: RepoBuilder) -> None:
    assert not _run(builder, MEMO, MISKEYED, OFF).differences


@pytest.mark.slow
def test_a_closure_whose_code_changed(builder: RepoBuilder) -> None:
    report = _run(builder, SCALER, SCALER.replace("value * factor", "value * factor + 1"), sequences=200)
    [difference] = _found(report, "pkg.core:make_scaler")
    assert difference.reproduced and "function = make_scaler(" in difference.test


def test_a_closure_without_callables(builder: RepoBuilder) -> None:
    changed = SCALER.replace("value * factor", "value * factor + 1")
    assert not _run(builder, SCALER, changed, OFF, sequences=200).differences


@pytest.mark.slow
@pytest.mark.parametrize("components", [ON, OFF], ids=["on", "off"])
def test_a_returned_bound_method_whose_code_changed(builder: RepoBuilder, components: Components) -> None:
    changed = GREETER.replace('f"{self.greeting}, {name}"', 'f"{self.greeting}: {name}"')
    report = _run(builder, GREETER, changed, components, sequences=200)
    found = _found(report, "pkg.core:Greeter._say")
    if components == OFF:
        assert not found
        return
    [difference] = found
    assert difference.reproduced and ".formatter(False)" in difference.test


# A method cache that keys its mapping by the instance too: the second call, on another object, misses.
CACHED_PER_OBJECT = CACHEDMETHOD.replace("            key = args\n", "            key = (self,) + args\n")


@pytest.mark.slow
@pytest.mark.parametrize("components", [ON, OFF], ids=["on", "off"])
def test_a_method_cache_decorator_whose_wrapper_changed(builder: RepoBuilder, components: Components) -> None:
    # Two objects must share one store and call with equal arguments: a draw most seeds make within
    # 400 sequences, not every one, so the claim is over six seeds (without callables, none).
    reports = _run(builder, CACHEDMETHOD, CACHED_PER_OBJECT, components, sequences=400, seeds=range(6))
    found = [[d for d in report.differences if d.target == "pkg.core:cachedmethod"] for report in reports]
    if components == OFF:
        assert not any(found) and not any(r.coverage.changed_lines_covered for r in reports)  # never ran
        return
    assert sum(bool(differences) for differences in found) >= 4
    assert all(d.reproduced for differences in found for d in differences)
    assert all("function = cachedmethod(lambda *args, _value={}, **kwargs: _value)" in d.test
               for differences in found for d in differences)


def test_the_command_line_switches_the_component_off() -> None:
    args = build_parser().parse_args(["diff", "--base", "a", "--head", "b", "--disable", "callables"])
    assert not Components.without(args.disable).switches.callables
    assert ON.switches.callables


def test_some_constant_callbacks_return_none() -> None:
    nothing = literals.decode(["fn", ["none"]])
    assert nothing() is None and nothing(1, key="a") is None
    assert eval(literals.source(["fn", ["none"]]))("self") is None
    drawn = [ValueGenerator(random.Random(seed), Constants()).callback() for seed in range(200)]
    assert ["fn", ["none"]] in drawn
    assert sum(c == ["fn", ["none"]] for c in drawn) < sum(c[0] == "fn" for c in drawn) / 4


HOOKED = '''\
def run_hook(hook, value):
    """The hook's result, or the value itself when the hook returns nothing."""
    result = hook(value)
    if result is None:
        return value
    return result
'''


@pytest.mark.slow
def test_the_branch_for_a_hook_that_returns_nothing_is_reached(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/hooks.py": HOOKED},
            {"pkg/hooks.py": HOOKED.replace("        return value\n", "        return [value]\n")})
    report = run_analyze(builder, max_sequences=400)
    found = [d for d in report.differences if d.target == "pkg.hooks:run_hook"]
    assert found, [d.target for d in report.differences]
    assert found[0].reproduced and "lambda *args, **kwargs: None" in found[0].test


VALIDATORS = '''\
import re


class Pattern:
    """A validator made once and called on each value (a form library's style)."""

    def __init__(self, regex: str) -> None:
        self.regex = regex

    def __call__(self, value: str) -> str:
        if re.fullmatch(self.regex, value) is None:
            raise ValueError(f"{value!r} does not match {self.regex!r}")
        return value


def pattern(regex: str) -> Pattern:
    """The validator of `regex`."""
    return Pattern(regex)
'''


@pytest.mark.slow
def test_a_validator_objects_call_is_named_after_the_project_never_the_tracer(builder: RepoBuilder) -> None:
    """The changed `__call__` runs through the worker's hit wrapper: the finding still names the
    project's method, and nothing of the worker's tracing appears in what is reported."""
    make_pr(builder, {"pkg/__init__.py": "", "pkg/validators.py": VALIDATORS},
            {"pkg/validators.py": VALIDATORS.replace("does not match", "is not matched by")})
    report = run_analyze(builder, max_sequences=600)
    assert report.differences
    for difference in report.differences:
        assert difference.target == "pkg.validators:Pattern.__call__", difference.target
        shown = difference.target + difference.test + (difference.pin_head or "")
        assert "_difforacle" not in shown and "tracer" not in shown and "_wrap_function" not in shown
