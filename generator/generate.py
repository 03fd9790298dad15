"""Randoop's feedback-directed generation loop, on the host side of the worker boundary.

Sequences are built bottom-up: pick an operation (focus operations most often: among
them, those reaching the unit whose share of the budget is most behind; within a tier,
by GRT's Bloodhound coverage weights, see `guidance`), fill its receiver and arguments
from pools of earlier sequences whose values have the right runtime type (MRO-indexed),
or from seeded primitives and mined constants, and append the call. Duplicates are
discarded before execution. After execution, sequences that ended normally and whose
object graphs add a field-coverage triple (`novelty`; state equality with that component
off) extend the pools; sequences that raised are never extended (but are still kept as
regression tests by the engine).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field

from .catalog import Catalog, Operation, Parameter
from .components import ALL, Components
from .fuzz import fuzz_literal
from .guidance import Bloodhound, UnitQuota
from .novelty import FieldNovelty
from .values import ValueGenerator, type_from_name
from .worker.protocol import SequenceResult, Status, digest_key, exception_key
from .worker.purity import MUTATOR_NAMES, MUTATOR_PREFIXES

MAX_LENGTH = 12
TIER_SHARES = (0.5, 0.3, 0.2)  # focus, related (same class hierarchy), other builders
NULL_RATIO = 0.05
REPEAT_RATIO = 0.05
MAX_REPEAT = 6
POOL_LIMIT = 400  # values per type; older entries are replaced at random past this
MAX_TIMEOUTS = 2
REUSE_RATIO = 0.3
WORKED_RATIO = 0.3
WORKED_LIMIT = 16
REUSABLE_TAGS = ("int", "str", "float", "bytes", "tuple")
DISPATCH_ANY_RATIO = 0.3  # a parameter typed only by the body's isinstance branches takes any type
LEARNED_RATIO = 0.5  # an untyped parameter takes a runtime type that worked there before
FUZZ_RATIO = 0.1  # a primitive argument is perturbed (GRT impurity)
IMPURE_RATIO = 0.1  # a pooled object gets an impure call before reuse (GRT impurity)
DETECTIVE_DEPTH = 3  # levels of objects built on demand for one value: Order(Customer(Address()))
FACTORY_KINDS = ("static", "function")  # operations that make a value without a receiver
BOUNDARY_ERRORS = ("TypeError", "AttributeError")  # what a call raises when an argument has the wrong type


@dataclass(eq=False)
class PoolEntry:
    """A sequence and the index of the statement whose value (or mutated receiver) it offers.

    `cost` is what running the sequence took (milliseconds; 1 when runs must be reproducible)
    and `picks` how often it was chosen as an input: orienteering prefers cheap entries.
    """

    statements: tuple[dict, ...]
    index: int
    cost: float = 1.0
    picks: int = 0

    def weight(self) -> float:
        """GRT's orienteering weight, as Randoop computes it: 1 / (k * t * sqrt(size))."""
        return 1.0 / ((self.picks + 1) * max(self.cost, 1e-3) * math.sqrt(len(self.statements)))


@dataclass
class Pools:
    by_type: dict[str, list[PoolEntry]] = field(default_factory=dict)
    seen_states: set[str] = field(default_factory=set)
    rng: random.Random = field(default_factory=random.Random)
    by_mro: bool = True  # elephant brain: a value also serves every supertype of its runtime type
    orienteering: bool = True  # cheap entries first (else uniformly)

    def add(self, entry: PoolEntry, mro: list[str], digest: str | None) -> bool:
        """Add `entry` under every type of its MRO unless an equal state is already pooled
        (`digest` None: the caller has judged it new by field coverage)."""
        if digest is not None:
            key = f"{mro[0] if mro else '?'}:{digest}"
            if key in self.seen_states:
                return False
            self.seen_states.add(key)
        for name in mro if self.by_mro else mro[:1]:
            bucket = self.by_type.setdefault(name, [])
            if len(bucket) < POOL_LIMIT:
                bucket.append(entry)
            else:
                bucket[self.rng.randrange(POOL_LIMIT)] = entry
        return True

    def pick(self, type_names: tuple[str, ...] | list[str], rng: random.Random) -> PoolEntry | None:
        buckets = [self.by_type[t] for t in type_names if self.by_type.get(t)]
        if not buckets:
            return None
        bucket = rng.choice(buckets)
        if not self.orienteering:
            return bucket[rng.randrange(len(bucket))]
        entry = rng.choices(bucket, [e.weight() for e in bucket])[0]
        entry.picks += 1
        return entry

    def pick_any(self, rng: random.Random) -> PoolEntry | None:
        names = [t for t, bucket in self.by_type.items() if bucket and not t.startswith("builtins.")]
        return self.pick([rng.choice(names)], rng) if names else None


class _Builder:
    """Assembles one candidate: concatenated pool sequences plus the new call."""

    def __init__(self) -> None:
        self.statements: list[dict] = []
        self._included: list[tuple[PoolEntry, int]] = []  # (entry, offset); identity, not equality

    def include(self, entry: PoolEntry) -> dict:
        """Splice `entry`'s statements in (once) and return a reference to its value."""
        offset = next((o for e, o in self._included if e is entry), None)
        if offset is None:
            offset = len(self.statements)
            self._included.append((entry, offset))
            self.statements.extend(_shift(s, offset) for s in entry.statements)
        return {"ref": entry.index + offset}


def _related_types(catalog: Catalog) -> set[str]:
    """Classes in the same hierarchy as the classes that own focus operations."""
    owners = {op.owner for op in catalog.operations if op.id in catalog.focus and op.owner}
    related = set(owners)
    for type_name, info in catalog.classes.items():
        mro = set(info.get("mro", ()))
        if mro & owners:
            related.add(type_name)
    for owner in owners:
        related.update(t for t in catalog.classes.get(owner, {}).get("mro", ()) if t in catalog.classes)
    return related


def _shift(statement: dict, offset: int) -> dict:
    if offset == 0:
        return statement

    def move(arg: dict) -> dict:
        return {"ref": arg["ref"] + offset} if "ref" in arg else arg

    return {"op": statement["op"], "args": [move(a) for a in statement["args"]],
            "kwargs": {k: move(a) for k, a in statement["kwargs"].items()}}


class Explorer:
    """Generates candidate sequences and learns from their execution results."""

    def __init__(self, catalog: Catalog, values: ValueGenerator, rng: random.Random,
                 components: Components = ALL, timed: bool = True) -> None:
        """`timed`: orienteering may weigh entries by their measured time (not in reproducible runs)."""
        self.catalog = catalog
        self.components = components
        self.timed = timed
        self.values = values
        self.rng = rng
        self.pools = Pools(rng=random.Random(rng.random()), by_mro="elephant" in components,
                           orienteering="orienteering" in components)
        self.seen: set[str] = set()
        self.operations = [op for op in catalog.operations if op.kind != "constructor" or
                           not catalog.classes.get(op.owner or "", {}).get("abstract")]
        related = _related_types(catalog)
        others = [op for op in self.operations if op.id not in catalog.focus]
        self.focus = [op for op in self.operations if op.id in catalog.focus]
        self.related = [op for op in others if op.owner in related]
        self.builders = [op for op in others if op.owner not in related]
        self.duplicates = 0
        self._short_names: dict[str, list[str]] = {}
        for type_name in catalog.classes:
            self._short_names.setdefault("?" + type_name.rsplit(".", 1)[-1], []).append(type_name)
        self._timeouts: dict[str, int] = {}
        self._worked: dict[tuple[str, str], list[list]] = {}
        self._learned_types: dict[tuple[str, str], list[str]] = {}  # (op, parameter) -> runtime types
        self._impure: dict[str, list[Operation]] = {}  # type name -> its mutators
        self._builders: dict[str, list[Operation]] = {}  # type name -> what makes one (declared)
        self._returned: dict[str, list[str]] = {}  # type name -> factories seen returning one
        # field-coverage novelty replaces state equality as the redundancy filter
        self.novelty = FieldNovelty() if "novelty" in components else None
        self._by_id = {op.id: op for op in self.operations}
        self.bloodhound = Bloodhound(len(self.operations))
        self._uncovered: Callable[[], Mapping[str, float]] = dict
        self._quota: UnitQuota | None = None
        self._unit_operations: dict = {}
        self._units_of: dict[str, list] = {}  # operation -> the units it reaches

    def aim(self, quota: UnitQuota, unit_operations: Mapping[Hashable, set[str]],
            uncovered: Callable[[], Mapping[str, float]]) -> None:
        """Share the focus picks over units by `quota`, and weight operations by `uncovered()`:
        per operation, the fraction of its changed lines and branches not yet covered.

        A focus operation that reaches no unit (the constructor of a class whose methods
        changed) becomes a related one: it builds states but takes no unit's share.
        """
        self._uncovered = uncovered
        self.bloodhound.refresh(uncovered())
        if not quota:
            return
        self._quota, self._unit_operations = quota, dict(unit_operations)
        for unit, op_ids in self._unit_operations.items():
            for op_id in op_ids:
                self._units_of.setdefault(op_id, []).append(unit)
        aimed = set().union(*self._unit_operations.values())
        self.related = [op for op in self.focus if op.id not in aimed] + self.related
        self.focus = [op for op in self.focus if op.id in aimed]

    def candidates(self, count: int, attempts: int = 20) -> Iterator[list[dict]]:
        """Up to `count` new, distinct sequences."""
        made = 0
        for _ in range(count * attempts):
            if made == count:
                return
            statements = self._candidate()
            if statements is None:
                continue
            key = json.dumps(statements, separators=(",", ":"))
            if key in self.seen:
                self.duplicates += 1
                continue
            self.seen.add(key)
            made += 1
            yield statements

    def feedback(self, statements: list[dict], result: SequenceResult) -> None:
        """Pool the values of a normally-ended sequence whose states are new.

        An operation that hangs or kills its process a few times is dropped: each such
        sequence costs a whole timeout, and Randoop treats them as illegal anyway.
        """
        if result.status in (Status.TIMEOUT, Status.CRASH, Status.SKIPPED) and statements:
            op_id = result.skipped_operation or statements[min(result.executed, len(statements) - 1)]["op"]
            self._timeouts[op_id] = self._timeouts.get(op_id, 0) + 1
            op = self._by_id.get(op_id)
            if self._timeouts[op_id] == (1 if op is not None and not op.params else MAX_TIMEOUTS):
                tiers = (self.focus, self.related, self.builders)
                self.focus, self.related, self.builders = ([op for op in t if op.id != op_id] for t in tiers)
        if self.timed and self._quota is not None and statements and result.milliseconds is not None:
            for unit in self._units_of.get(statements[-1]["op"], ()):
                self._quota.observe(unit, float(result.milliseconds))
        if result.status == Status.EXCEPTION and statements:
            self._learn_past_the_boundary(statements, result)
        if result.status != Status.OK or not statements:
            return
        if self.bloodhound.success(statements[-1]["op"]):
            self.bloodhound.refresh(self._uncovered())
        types = result.types
        self._learn_arguments(statements[-1], types)
        self._learn_return(statements[-1]["op"], types[-1] if len(types) == len(statements) else [])
        novelty = self.novelty is not None
        if novelty and not self.novelty.add(result.fields or ()):
            return  # no new (field, source, target) triple: redundant, not extended
        last = len(statements) - 1
        entry_statements = tuple(statements)
        digests = result.digests
        cost = float(result.milliseconds if result.milliseconds is not None else 1.0) if self.timed else 1.0
        if result.reusable and result.reusable[-1] and len(types) > last:
            digest = None if novelty else digests.get(digest_key(last, last), "")
            self.pools.add(PoolEntry(entry_statements, last, cost), types[last], digest)
        for arg in statements[-1]["args"]:
            ref = arg.get("ref")
            if ref is not None and ref < len(types) and digest_key(last, ref) in digests:
                digest = None if novelty else digests[digest_key(last, ref)]
                self.pools.add(PoolEntry(entry_statements, ref, cost), types[ref], digest)

    def _learn_return(self, op_id: str, mro: list[str]) -> None:
        """A factory (no receiver) that returned an object: a builder of its type and supertypes."""
        op = self._by_id.get(op_id)
        if op is None or op.kind not in FACTORY_KINDS or not mro or self.values.can_make(mro[0]):
            return
        for type_name in mro:
            returned = self._returned.setdefault(type_name, [])
            if op_id not in returned and len(returned) < WORKED_LIMIT:
                returned.append(op_id)

    def _learn_past_the_boundary(self, statements: list[dict], result: SequenceResult) -> None:
        """A call that raised anything but a TypeError or AttributeError accepted its arguments'
        types at the call boundary (the error is about a value, deeper in): learn those types,
        not the values."""
        failed = result.executed
        leaf = result.observations.get(exception_key(failed))
        if failed < len(statements) and leaf and leaf[0] == "E" and leaf[1] not in BOUNDARY_ERRORS:
            self._learn_arguments(statements[failed], result.types, values=False)

    def _learn_arguments(self, statement: dict, types: list[list[str]], values: bool = True) -> None:
        """Remember what a call was given: literal values that worked (`values`: it ran normally),
        and the runtime types of its object arguments (types learned without static types)."""
        op = self._by_id.get(statement["op"])
        if op is None:
            return
        positional = statement["args"][1:] if op.kind == "method" else statement["args"]
        named = list(zip((p.name for p in op.params), positional, strict=False))
        for name, arg in [*named, *statement["kwargs"].items()]:
            if "lit" in arg and values:
                known = self._worked.setdefault((op.id, name), [])
                if arg["lit"] not in known and len(known) < WORKED_LIMIT:
                    known.append(arg["lit"])
            elif "ref" in arg and arg["ref"] < len(types) and types[arg["ref"]]:
                learned = self._learned_types.setdefault((op.id, name), [])
                if types[arg["ref"]][0] not in learned and len(learned) < WORKED_LIMIT:
                    learned.append(types[arg["ref"]][0])

    # ------------------------------------------------------------ building candidates

    def _choose_operation(self) -> Operation | None:
        """Focus operations most often, then their classes' other operations (which build the
        states the changed methods see), then everything else."""
        tiers = [(share, tier) for share, tier in zip(TIER_SHARES, (self.focus, self.related, self.builders),
                                                      strict=True) if tier]
        if not tiers:
            return None
        roll = self.rng.random() * sum(share for share, _ in tiers)
        chosen = tiers[-1][1]
        for share, tier in tiers:
            roll -= share
            if roll < 0:
                chosen = tier
                break
        if chosen is self.focus and self._quota is not None:
            chosen = self._aimed_operations() or chosen
        if "bloodhound" not in self.components:
            return self.rng.choice(chosen)
        return self._by_id[self.bloodhound.choose([op.id for op in chosen], self.rng)]

    def _aimed_operations(self) -> list[Operation]:
        """The focus operations that reach the unit whose turn it is (by the budget quota)."""
        assert self._quota is not None
        alive = {op.id for op in self.focus}
        unit = self._quota.next({u for u, ops in self._unit_operations.items() if ops & alive})
        if unit is None:
            return []
        return [op for op in self.focus if op.id in self._unit_operations[unit]]

    def _candidate(self) -> list[dict] | None:
        op = self._choose_operation()
        if op is None:
            return None
        builder = _Builder()
        receiver = None
        if op.kind == "method":
            entry = self._object_of(op.owner or "", DETECTIVE_DEPTH)
            if entry is None:
                return None
            receiver = builder.include(entry)
        repeating = "repetition" in self.components and self.rng.random() < REPEAT_RATIO
        repeat = self.rng.randint(2, MAX_REPEAT) if repeating else 1
        for _ in range(repeat):
            call = self._call(op, builder, receiver)
            if call is None:
                return None
            builder.statements.append(call)
        if len(builder.statements) > MAX_LENGTH:
            return None
        return builder.statements

    def _call(self, op: Operation, builder: _Builder, receiver: dict | None,
              depth: int = DETECTIVE_DEPTH) -> dict | None:
        """A call of `op`; object arguments missing from the pools are built `depth` levels deep."""
        args: list[dict] = [receiver] if receiver is not None else []
        kwargs: dict[str, dict] = {}
        skipping = False
        for param in op.params:
            if param.kind == "VAR_KEYWORD":
                continue
            if param.kind == "VAR_POSITIONAL":
                if not skipping and self.rng.random() < 0.3:
                    args.append(self._argument(param, builder, op.id, depth))
                continue
            omit = 0.85 if param.default_is_none and not param.hints else 0.5
            if param.has_default and self.rng.random() < omit:
                skipping = skipping or param.kind != "KEYWORD_ONLY"
                continue
            value = self._argument(param, builder, op.id, depth)
            if value is None:
                return None
            if param.kind == "KEYWORD_ONLY" or (skipping and param.kind == "POSITIONAL_OR_KEYWORD"):
                kwargs[param.name] = value
            elif skipping:
                return None  # a positional-only parameter after a skipped one
            else:
                args.append(value)
        return {"op": op.id, "args": args, "kwargs": kwargs}

    def _argument(self, param: Parameter, builder: _Builder, op_id: str, depth: int) -> dict | None:
        rng = self.rng
        typed = "types" in self.components
        if not typed:
            param = Parameter(param.name, param.kind, param.has_default, ())  # nothing known about it
        if param.choices and rng.random() < 0.9:
            return {"lit": list(rng.choice(param.choices))}
        if rng.random() < NULL_RATIO:
            return {"lit": ["none"]}
        hints = [name for h in param.hints for name in self._short_names.get(h, [h])]
        if param.hints_from == "dispatch" and rng.random() < DISPATCH_ANY_RATIO:
            hints = []  # the body only branches on these types; others carry on, so try any
        if typed and not hints:
            learned = self._learned_types.get((op_id, param.name))
            if learned and rng.random() < LEARNED_RATIO:
                hints = list(learned)
            elif (guess := type_from_name(param.name)) and rng.random() < 0.8:
                hints = [guess]
        value = self._value(param, hints, builder, op_id, typed, depth)
        if (value is not None and "lit" in value and "impurity" in self.components
                and rng.random() < FUZZ_RATIO):
            return {"lit": fuzz_literal(value["lit"], rng)}  # near a value that works: GRT's impurity
        return value

    def _value(self, param: Parameter, hints: list[str], builder: _Builder, op_id: str,
               typed: bool, depth: int) -> dict | None:
        """A literal or a reference for a parameter with these type hints (none: any type)."""
        rng = self.rng
        worked = self._worked.get((op_id, param.name)) if typed else None
        if worked and rng.random() < WORKED_RATIO:
            if not hints and rng.random() < 0.5:  # a new value of a type that worked here
                tag = rng.choice(worked)[0]
                if self.values.can_make(f"builtins.{tag}"):
                    return {"lit": self.values.make(f"builtins.{tag}")}
            return {"lit": rng.choice(worked)}
        if rng.random() < REUSE_RATIO:
            # The same primitive again (the key just stored, the name just registered): the
            # primitive counterpart of Randoop reusing a value already in the sequence.
            used = [a["lit"] for s in builder.statements for a in (*s["args"], *s["kwargs"].values())
                    if "lit" in a and a["lit"][0] in REUSABLE_TAGS and self._fits(a["lit"], hints)]
            if used:
                return {"lit": rng.choice(used)}
        objects = [h for h in hints if not self.values.can_make(h)]
        primitives = [h for h in hints if self.values.can_make(h)]
        if objects and (not primitives or rng.random() < 0.6):
            entry = self._object_of(rng.choice(objects), depth)
            if entry is not None:
                return builder.include(entry)
            if not primitives:
                return None
        if primitives:
            if rng.random() < 0.15:
                entry = self.pools.pick(primitives, rng)
                if entry is not None:
                    return builder.include(entry)
            return {"lit": self.values.make(rng.choice(primitives))}
        if rng.random() < 0.25:
            entry = self.pools.pick_any(rng)
            if entry is not None:
                return builder.include(entry)
        return {"lit": self.values.any()}

    def _fits(self, literal: list, hints: list[str]) -> bool:
        makeable = [h for h in hints if self.values.can_make(h)]
        return not hints or any(self.values.tag_of(h) == literal[0] for h in makeable)

    def _object_of(self, type_name: str, depth: int) -> PoolEntry | None:
        """A pooled value of `type_name`, or (GRT's detective) a fresh call of one of its builders
        when none exists, its own object arguments built the same way one level less deep."""
        entry = self.pools.pick([type_name], self.rng)
        if entry is not None and self.rng.random() < 0.9:
            if "impurity" in self.components and self.rng.random() < IMPURE_RATIO:
                return self._mutated(entry, type_name)
            return entry
        if depth <= 0 or "detective" not in self.components:
            return entry
        builders = self._builders_of(type_name)
        if not builders:
            return entry
        builder = _Builder()
        call = self._call(self.rng.choice(builders), builder, None, depth - 1)
        if call is None:
            return entry
        builder.statements.append(call)
        return PoolEntry(tuple(builder.statements), len(builder.statements) - 1)

    def _builders_of(self, type_name: str) -> list[Operation]:
        """What makes a `type_name` without a receiver: constructors of it and its subclasses,
        then static and class methods and functions whose annotation says they return one, then
        those seen returning one at run time (Python's stand-in for a declared return type)."""
        if type_name not in self._builders:
            def makes(name: str) -> bool:
                names = self._short_names.get(name, [name]) if name.startswith("?") else [name]
                return any(type_name in self.catalog.classes.get(n, {}).get("mro", (n,)) for n in names)

            constructors = [op for op in self.catalog.operations if op.kind == "constructor"
                            and type_name in self.catalog.classes.get(op.owner or "", {}).get("mro", ())]
            factories = [op for op in self.operations
                         if op.kind in FACTORY_KINDS and any(map(makes, op.returns))]
            self._builders[type_name] = constructors + factories
        known = {op.id for op in self._builders[type_name]}
        learned = [self._by_id[op_id] for op_id in self._returned.get(type_name, ()) if op_id not in known]
        return self._builders[type_name] + learned

    def _mutated(self, entry: PoolEntry, type_name: str) -> PoolEntry:
        """GRT's object fuzzing: the pooled object after one call of an impure method of its
        class (by name: a mutator such as `add`, `set_x`, `__setitem__`), before it is reused."""
        methods = self._impure_methods(type_name)
        if not methods:
            return entry
        builder = _Builder()
        receiver = builder.include(entry)
        call = self._call(self.rng.choice(methods), builder, receiver)
        if call is None or len(builder.statements) >= MAX_LENGTH:
            return entry
        builder.statements.append(call)
        return PoolEntry(tuple(builder.statements), entry.index, entry.cost)

    def _impure_methods(self, type_name: str) -> list[Operation]:
        if type_name not in self._impure:
            owners = set(self.catalog.classes.get(type_name, {}).get("mro", (type_name,)))
            self._impure[type_name] = [op for op in self.operations
                                       if op.kind == "method" and op.owner in owners and _is_mutator(op.name)]
        return self._impure[type_name]


def _is_mutator(name: str) -> bool:
    if name in MUTATOR_NAMES:
        return True
    return not name.startswith("_") and name.startswith(MUTATOR_PREFIXES)

