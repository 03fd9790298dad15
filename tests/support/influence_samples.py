"""The Monitor sample: a small class family (a constructor whose receiver later calls read and
write, a property, an override, a function returning what a method takes), its catalog, and the
influence map and candidate search built on it, as the engine builds them. Shared by the tests of
the influence criteria, of candidate sequence search and of the path memo."""

from __future__ import annotations

import random
import textwrap

from difforacle.generator.generation.call_builder import CallBuilder
from difforacle.generator.generation.pools import Pools
from difforacle.generator.generation.search.candidate_search import CandidateSearch
from difforacle.generator.generation.search.influence import InfluenceMap, influence_map
from difforacle.generator.generation.techniques import ALL
from difforacle.generator.generation.type_learning import TypeLearning
from difforacle.generator.generation.values.constants import Constants
from difforacle.generator.generation.values.primitives import ValueGenerator
from difforacle.generator.runtime.catalog import Catalog, Operation, Parameter

SOURCE = textwrap.dedent('''\
    class Reading:
        def __init__(self, value: int) -> None:
            self.value = value


    class Monitor:
        def __init__(self) -> None:
            self.enabled = False
            self.temperature = 0
            self.history = []

        def set_enabled(self) -> None:
            self.enabled = True

        def update(self, reading: "Reading") -> None:
            self._store(reading.value)

        def _store(self, value: int) -> None:
            self.temperature = value
            self.history.append(value)

        def rename(self, name: str) -> None:
            self.name = name

        @property
        def hot(self) -> bool:
            return self.temperature > 80

        def warning(self) -> bool:
            return self.enabled and self.hot

        def check(self) -> bool:
            return self.limit()

        def limit(self) -> bool:
            return False


    class Strict(Monitor):
        def limit(self) -> bool:
            return len(self.history) > 3


    def make_reading(value: int) -> Reading:
        return Reading(value)
''')


def _op(qualname: str, kind: str = "method", owner: str | None = "pkg.mon.Monitor",
        params: tuple[Parameter, ...] = (), returns: tuple[str, ...] = ()) -> Operation:
    return Operation(f"pkg.mon:{qualname}", kind, owner, params, returns, None, None)


READING = Parameter("reading", "POSITIONAL_OR_KEYWORD", False, ("pkg.mon.Reading",))
VALUE = Parameter("value", "POSITIONAL_OR_KEYWORD", False, ("builtins.int",))
OPERATIONS = [
    _op("Reading", "constructor", "pkg.mon.Reading", (VALUE,)),
    _op("Monitor", "constructor"),
    _op("Monitor.set_enabled"),
    _op("Monitor.update", params=(READING,)),
    _op("Monitor.rename", params=(Parameter("name", "POSITIONAL_OR_KEYWORD", False, ("builtins.str",)),)),
    _op("Monitor.warning", returns=("builtins.bool",)),
    _op("Monitor.check", returns=("builtins.bool",)),
    _op("Strict", "constructor", "pkg.mon.Strict"),
    _op("make_reading", "function", None, (VALUE,), ("pkg.mon.Reading",)),
]
CLASSES = {"pkg.mon.Reading": {"mro": ["pkg.mon.Reading"]}, "pkg.mon.Monitor": {"mro": ["pkg.mon.Monitor"]},
           "pkg.mon.Strict": {"mro": ["pkg.mon.Strict", "pkg.mon.Monitor"]}}
CATALOG = Catalog(OPERATIONS, CLASSES, {})
BY_ID = {op.id: op for op in OPERATIONS}


def monitor_influence() -> InfluenceMap:
    return influence_map({"pkg.mon": SOURCE}, CATALOG)


def monitor_search(prune: bool = True, reduce: bool = True) -> CandidateSearch:
    rng = random.Random(0)
    pools = Pools(rng=random.Random(1))
    values = ValueGenerator(random.Random(2), Constants())
    learning = TypeLearning({op.id: op for op in OPERATIONS}, values.can_make)
    calls = CallBuilder(CATALOG, OPERATIONS, values, rng, pools, learning, ALL.switches)
    return CandidateSearch(monitor_influence(), calls, OPERATIONS, prune=prune, reduce=reduce)


def calls_on(receiver: int, count: int) -> list[dict]:
    """`count` calls of an operation `m` on the value of statement `receiver`."""
    return [{"op": "m", "args": [{"ref": receiver}], "kwargs": {}} for _ in range(count)]
