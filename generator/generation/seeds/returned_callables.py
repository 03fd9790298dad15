"""Returned callables are called: a decorator factory's product, a closure, a bound method.

Code behind a callable that an operation returns (the wrapper `cached(cache)(func)` makes, a
closure a factory builds) runs only when that callable is called, which no operation of the
catalog does. The worker says which statements' values are such callables, with their
parameters typed as an operation's (`returned_callable` in the worker's introspect); they are
pooled here by the operation they came from (their *origin*: `cached` for the decorator
`cached(cache)` and for the wrapper that decorator returns). When the selector picks an
operation whose callables are pooled, the candidate sometimes calls one of them instead: a
statement of the worker's CALL operation, whose receiver is the callable and whose arguments
are built for its parameters like any call's. The focus, the unit quota and Bloodhound thus
weigh a callable's calls as those of the operation it came from, whose unit holds its lines.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ...runtime.catalog import Operation, Parameter
from ...runtime.sequence import CallSequence, origin, references
from ...worker.protocol import OperationKind, SequenceResult, Status
from ...worker.resolve import CALL
from ..plugin import Plugin, PluginContext, Substitute
from ..pools import PoolEntry

CALL_RATIO = 0.5  # of the picks of an operation with pooled callables: one of them is called instead
POOL_LIMIT = 100  # callables per origin; older ones are replaced at random past this
KEYWORD_NAMES = ("key", "value", "name")  # a keyword argument for a `**kwargs` parameter



@dataclass(frozen=True)
class ReturnedCallable:
    """A pooled callable: the sequence that made it (or last called it), and its parameters."""

    entry: PoolEntry
    params: tuple[Parameter, ...]

    def operation(self, rng: random.Random) -> Operation:
        """The CALL operation with this callable's parameters; a `**kwargs` parameter becomes one
        optional keyword argument (a wrapper's cache key may treat keywords differently)."""
        params = tuple(Parameter(rng.choice(KEYWORD_NAMES), "KEYWORD_ONLY", True, ())
                       if p.kind == "VAR_KEYWORD" else p for p in self.params)
        return Operation(CALL, OperationKind.CALL, None, params, (), None, None)


class ReturnedCallables:
    """The callables results returned, by origin operation."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.by_origin: dict[str, list[ReturnedCallable]] = {}

    def pick(self, op_id: str) -> ReturnedCallable | None:
        """A callable that `op_id` returned to call instead of `op_id` (CALL_RATIO of the time when
        there are some), or None."""
        pooled = self.by_origin.get(op_id)
        if not pooled or self.rng.random() >= CALL_RATIO:
            return None
        return self.rng.choice(pooled)

    def learn(self, statements: CallSequence, result: SequenceResult, cost: float) -> None:
        """Pool the callables of a sequence that ended normally: its last value, and the callables
        its last statement was given, in the state that call left them (a wrapper's filled cache)."""
        last = len(statements) - 1
        for index in dict.fromkeys([last, *references(statements[last])]):
            params = result.callables.get(index)
            if params is None:
                continue
            pooled = ReturnedCallable(PoolEntry(tuple(statements), index, cost),
                                      tuple(Parameter.from_json(p) for p in params))
            bucket = self.by_origin.setdefault(origin(statements, index), [])
            if len(bucket) < POOL_LIMIT:
                bucket.append(pooled)
            else:
                bucket[self.rng.randrange(POOL_LIMIT)] = pooled


class CallablesPlugin(Plugin):
    """The technique `callables`: a pick of an operation that returned callables sometimes calls
    one of them instead (CALL_RATIO of the time); the callables of sequences that ended normally
    are pooled by origin (before novelty judges them: a callable's state, a filled cache, has no
    fields)."""

    def __init__(self, context: PluginContext) -> None:
        self.rng, self.cost = context.rng, context.cost
        self.callables = ReturnedCallables(context.rng)

    def substitute(self, op: Operation) -> Substitute | None:
        returned = self.callables.pick(op.id)
        return None if returned is None else Substitute(returned.operation(self.rng), returned.entry)

    def learn(self, statements: CallSequence, result: SequenceResult) -> None:
        if result.status == Status.OK:
            self.callables.learn(statements, result, self.cost(result))
