"""Running one call sequence and recording what every statement did. Standard library only.

A sequence is a list of statements `{"op", "args", "kwargs"}` whose arguments are literals
or references to earlier statements' values. After each statement the worker records the
return value or the exception, and the state and observers of every object the statement
touched (its receiver, its object arguments, its result). On request, a sequence that ended
normally also carries the field-coverage triples of its last statement's objects (see
`fields`), the generator's novelty criterion.
"""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import literals
from .asynchronous import settled
from .distance import RECORDER
from .fields import graph_triples
from .influence import InfluenceRecorder
from .introspect import returned_callable
from .observe import (
    MAX_ITEMS,
    Observer,
    StatementTimeout,
    exception_leaf,
    primitive_leaf,
    raised_by,
    type_name,
)
from .protocol import (
    ApiChange,
    OperationKind,
    ResultRecord,
    Status,
    Tag,
    digest_key,
    exception_key,
    value_key,
)
from .resolve import Missing, Operation, Resolver, Unbindable, volume_target
from .tracer import ChangeTracer
from .volume import varied, varied_tag

HUGE = 10**12
MODULE_VALUE_ITEMS = 1000  # a module's table is walked whole (up to this): its every entry is behaviour


def _on_alarm(signum: int, frame: Any) -> None:
    raise StatementTimeout()


class SequenceRunner:
    def __init__(self, resolver: Resolver, observer: Observer, tracer: ChangeTracer,
                 call_timeout: float, random_seed: int, asynchronous: bool = True) -> None:
        """`asynchronous`: a call's coroutine is awaited, its asynchronous generator drained."""
        self.resolver = resolver
        self.settle = settled if asynchronous else (lambda value: value)
        self.observer = observer
        self.tracer = tracer
        self.call_timeout = call_timeout
        self.random_seed = random_seed
        self.on_statement: Callable[[int], None] = lambda index: None
        self.distances = False  # record each sequence's branch distances on changed lines (`distance`)
        # a module table's entries the change is in (keys, indices), walked beyond MODULE_VALUE_ITEMS
        self.changed_entries: dict[str, list] = {}
        # Operations that hung earlier in this request: later sequences calling them are
        # skipped, so that one endless loop costs one timeout, not one per sequence.
        self.hanging_ops: set[str] = set()
        signal.signal(signal.SIGALRM, _on_alarm)

    def prepare(self, op_ids: Iterable[str]) -> None:
        """Look up, in this process, what every sequence's children would otherwise look up
        again: each batch runs in a new forked child, which inherits this process's caches but
        cannot fill them. So each operation is resolved with its signature, and the observers
        of its class are found (reading their source for purity), here, once. An operation
        that cannot be resolved, or whose lookup hangs, is left to the children, which
        report it as they always have."""
        for op_id in op_ids:
            signal.setitimer(signal.ITIMER_REAL, self.call_timeout)
            try:
                op = self.resolver.prepare(op_id)
                if isinstance(op.obj, type):  # a constructor's class, a method's owner
                    self.observer.observers_of(op.obj)
            except BaseException:  # the children meet it again and report it
                continue
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)

    def run(self, statements: list[dict], want_callees: bool = False,
            want_fields: bool = False, influence: dict | None = None) -> ResultRecord:
        """Execute `statements`; return status, observations and feedback for the generator.
        `influence`: the candidate's receiver and calls, whose reads and writes are recorded for
        the host's dynamic influence check (see `influence`)."""
        random.seed(self.random_seed)
        literals.forget_clocks()
        self.observer.forget_objects()
        self._nan = float("nan")  # this sequence's one NaN argument (literals.SHARED_NAN)
        started = time.perf_counter()
        values: list[Any] = []
        result: dict[str, Any] = {"status": Status.OK.value, "obs": {}, "types": [], "digests": {},
                                  "reusable": []}
        hanging = next((s["op"] for s in statements if s["op"] in self.hanging_ops), None)
        if hanging is not None:
            result.update(status=Status.SKIPPED.value, n=0, hit=False, skipped_op=hanging)
            return result  # type: ignore[return-value]
        if want_callees:
            result["callees"] = []
        self.tracer.hit = False
        recorder = InfluenceRecorder(influence) if influence is not None else None
        RECORDER.start(self.distances)
        try:
            for index, statement in enumerate(statements):
                self.on_statement(index)
                status = self._step(index, statement, values, result, want_callees, recorder,
                                    len(statements) - 1)
                if status != Status.OK:
                    result["status"] = status.value
                    if status == Status.TIMEOUT:
                        self.hanging_ops.add(statement["op"])
                    break
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            distances, RECORDER.on = RECORDER.record(), False
        if self.distances:
            result["dist"] = distances
        if want_fields and result["status"] == Status.OK.value and values:
            result["fields"] = _fields(statements[-1], values)
        if recorder is not None:
            result["influence"] = recorder.record()
        result["n"] = len(values)
        result["hit"] = self.tracer.hit
        result["ms"] = round((time.perf_counter() - started) * 1000, 3)  # for the host's time planning
        return result  # type: ignore[return-value]

    def _step(self, index: int, statement: dict, values: list, result: dict, want_callees: bool,
              recorder: InfluenceRecorder | None = None, last: int = -1) -> Status:
        obs = result["obs"]
        try:
            op = self.resolver.resolve(statement["op"])
            args = [_argument(a, values, self._nan) for a in statement["args"]]
            kwargs = {k: _argument(a, values, self._nan) for k, a in statement["kwargs"].items()}
            self.resolver.check_binding(op, args, kwargs)
        except Missing as exc:
            obs[exception_key(index)] = [Tag.API, ApiChange.MISSING, str(exc)]
            return Status.MISSING
        except Unbindable as exc:
            obs[exception_key(index)] = [Tag.API, ApiChange.SIGNATURE, str(exc)]
            return Status.UNBINDABLE
        if want_callees:
            result["callees"].append(op.callee(args))
        signal.setitimer(signal.ITIMER_REAL, self.call_timeout)
        try:
            try:
                def call() -> Any:
                    if op.kind == OperationKind.VOLUME:
                        return self._repeated(op, statement, args, kwargs)
                    return self.settle(op.call(args, kwargs))
                value = call() if recorder is None else recorder.around(index, last, values, call)
            except StatementTimeout:
                raise
            except BaseException as exc:  # SystemExit and KeyboardInterrupt from the SUT included
                obs[exception_key(index)] = [*exception_leaf(exc), raised_by(exc)]
                with literals.clocks_rewound():  # what a failed call left behind is behaviour too
                    self._observe_touched(index, statement, values, result)
                return Status.EXCEPTION
            values.append(value)
            table = op.kind == OperationKind.VALUE
            items, also = (MODULE_VALUE_ITEMS, self.changed_entries.get(statement["op"], ())) if table \
                else (MAX_ITEMS, ())
            with literals.clocks_rewound():
                self._observe(index, statement, value, values, result, items, also)
        except StatementTimeout:
            obs[exception_key(index)] = [Tag.RAISED, "Timeout", f"statement exceeded {self.call_timeout:g}s"]
            return Status.TIMEOUT
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        return Status.OK

    def _repeated(self, op: Operation, statement: dict, args: list, kwargs: dict) -> Any:
        """A volume operation's calls, the i-th with its literal numbers, texts and bytes made
        distinct by `i` (`volume.varied`); each result is kept until the last, as the rendered
        test's list keeps them (a cache of weak references sees the same), and the last is the value."""
        count = volume_target(op.op_id)[1]  # type: ignore[index]
        args_varied = [varied_tag(arg) for arg in statement["args"]]
        kwargs_varied = {name: varied_tag(arg) for name, arg in statement["kwargs"].items()}
        results = [self.settle(op.call([varied(tag, value, i) for tag, value in zip(args_varied, args)],
                                       {name: varied(kwargs_varied[name], value, i)
                                        for name, value in kwargs.items()}))
                   for i in range(count)]
        return results[-1]

    def _observe(self, index: int, statement: dict, value: Any, values: list, result: dict,
                 items: int = MAX_ITEMS, also: Sequence[Any] = ()) -> None:
        """`also`: keys or indices of `value` walked besides its first `items` (a table's changed entries)."""
        obs = result["obs"]
        digests = result["digests"]
        digests[digest_key(index, index)] = self.observer.snapshot(obs, value_key(index, index), value,
                                                                   items=items, also=also)
        leaf = primitive_leaf(value)
        huge = leaf is not None and leaf[0] in (Tag.INT, Tag.BIG_INT, Tag.LONG_STR, Tag.LONG_BYTES) and (
            leaf[0] != Tag.INT or abs(value) > HUGE)
        result["types"].append(_mro(value))
        result["reusable"].append(value is not None and not huge)
        params = returned_callable(value)
        if params is not None:  # the host may call it in later statements, with these parameters
            result.setdefault("callables", {})[str(index)] = params
        self._observe_touched(index, statement, values, result)

    def _observe_touched(self, index: int, statement: dict, values: list, result: dict) -> None:
        """The objects statement `index` was passed, after it ran (or raised: a failed update
        that rolls back, or does not, shows here). The receiver (first argument) gets its
        observers too; other object arguments, which calls change far less often, get their
        attributes and container contents."""
        obs = result["obs"]
        touched = [a["ref"] for a in (*statement["args"], *statement["kwargs"].values()) if "ref" in a]
        receiver = statement["args"][0].get("ref") if statement["args"] else None
        for ref in sorted(set(touched)):
            if primitive_leaf(values[ref]) is None:
                result["digests"][digest_key(index, ref)] = self.observer.snapshot(
                    obs, value_key(index, ref), values[ref], with_observers=ref == receiver)


def _fields(statement: dict, values: list) -> list[str]:
    """Triples of the last statement's result and of the objects it was passed, walked as one
    graph. Roots are named by role (`$result`, `$arg<i>`, `$kw.<name>`), never by statement
    number, so the same state reached by a longer sequence gives the same triples."""
    roots: list[tuple[str, Any]] = [("$result", values[-1])]
    roots += [(f"$arg{i}", values[a["ref"]]) for i, a in enumerate(statement["args"]) if "ref" in a]
    roots += [(f"$kw.{k}", values[a["ref"]]) for k, a in sorted(statement["kwargs"].items()) if "ref" in a]
    try:
        return graph_triples(roots)
    except Exception as exc:  # the walk runs no project code; this would be our bug, not a state
        return [f"!{type(exc).__name__}"]


def _argument(arg: dict, values: list, nan: float) -> Any:
    if "ref" in arg:
        return values[arg["ref"]]
    if arg["lit"] == literals.SHARED_NAN:
        return nan
    return literals.decode(arg["lit"])


def _mro(value: Any) -> list[str]:
    return [type_name(k) for k in type(value).__mro__ if k is not object][:8]
