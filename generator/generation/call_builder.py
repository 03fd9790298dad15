"""Building a call: its receiver and arguments, from the pools, from literals, or built on demand.

For each parameter, by what is known of its type (annotations, docstrings, defaults, names,
and what calls taught: `type_learning`): a literal that worked there before, a primitive made
by the value generator (mined constants first), a pooled value of the right runtime type
(`pools`), or, when none is pooled, a fresh one built by one of the type's builders
(GRT's *detective*: constructors, then factories declared or seen to return the type, their
own object arguments built the same way, DETECTIVE_DEPTH levels deep at most). GRT's
*impurity* sometimes perturbs a literal near one that works, or calls a mutator on a pooled
object before it is reused.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ..runtime.catalog import Catalog, Operation, Parameter
from ..worker.command_line import ARGV, STDIN
from ..worker.protocol import Arg, OperationKind
from ..worker.purity import MUTATOR_NAMES, MUTATOR_PREFIXES
from ..worker.resolve import setter_target
from .pools import PoolEntry, Pools, SequenceBuilder
from .type_learning import FACTORY_KINDS, TypeLearning
from .values.fuzz import fuzz_literal
from .values.primitives import ValueGenerator, type_from_name
from .values.structured import speaks_of_urls, url

if TYPE_CHECKING:
    from .techniques import Switches

MAX_LENGTH = 12
NULL_RATIO = 0.05
REUSE_RATIO = 0.3
WORKED_RATIO = 0.3
REUSABLE_TAGS = ("int", "str", "float", "bytes", "tuple")
DISPATCH_ANY_RATIO = 0.3  # a parameter typed only by the body's isinstance branches takes any type
LEARNED_RATIO = 0.5  # an untyped parameter takes a runtime type that worked there before
KEYWORDS_RATIO = 0.5  # of calls with a `**kwargs` whose options the source reads: some of them set
MAX_KEYWORDS = 3
ARITY_RATIO = 0.6  # of calls with a `*args` whose code reads how many values it takes: one of those counts
URL_RATIO = 0.5  # of text arguments of an operation or parameter named for URLs: a URL
FUZZ_RATIO = 0.1  # a primitive argument is perturbed (GRT impurity)
IMPURE_RATIO = 0.1  # a pooled object gets an impure call before reuse (GRT impurity)
CONFIGURE_RATIO = 0.2  # a pooled object with settable attributes gets some set before reuse (configured)
CONFIGURE_SETTINGS = (2, 4)  # how many attributes a configured object gets set, at least and at most
CONFIGURE_MUTATOR_RATIO = 0.5  # a configured object then gets one of its mutators called
DETECTIVE_DEPTH = 3  # levels of objects built on demand for one value: Order(Customer(Address()))


class CallBuilder:
    def __init__(self, catalog: Catalog, operations: list[Operation], values: ValueGenerator,
                 rng: random.Random, pools: Pools, learning: TypeLearning, switches: Switches) -> None:
        self.catalog, self.operations, self.values, self.rng = catalog, operations, values, rng
        self.pools, self.learning, self.switches = pools, learning, switches
        self.by_id = {op.id: op for op in operations}
        self._short_names: dict[str, list[str]] = {}  # "?Name" (a string annotation) -> type names
        for type_name in catalog.classes:
            self._short_names.setdefault("?" + type_name.rsplit(".", 1)[-1], []).append(type_name)
        self._impure: dict[str, list[Operation]] = {}  # type name -> its mutators
        self._settable: dict[str, list[Operation]] = {}  # type name -> its attributes' setters
        self._builders: dict[str, list[Operation]] = {}  # type name -> what makes one (declared)
        self.unbuilt: str | None = None  # the parameter the last failed `call` found no value for

    def call(self, op: Operation, builder: SequenceBuilder, receiver: dict | None,
             depth: int = DETECTIVE_DEPTH, provided: Mapping[str, dict] | None = None) -> dict | None:
        """A call of `op`; object arguments missing from the pools are built `depth` levels deep.
        `provided`: type name -> a reference to a value of that type already in the sequence,
        passed to a parameter of that type (a return-argument pair of influence search)."""
        args: list[Arg] = [receiver] if receiver is not None else []
        kwargs: dict[str, dict] = {}
        skipping = False
        for param in op.params:
            if param.kind == "VAR_KEYWORD":
                if param.keywords and self.switches.types and self.rng.random() < KEYWORDS_RATIO:
                    kwargs.update(self._keyword_options(param, op.id, builder, depth))
                continue
            if param.kind == "VAR_POSITIONAL":
                if not skipping:
                    for _ in range(self._count(param)):
                        value = self._argument(param, builder, op.id, depth, provided)
                        if value is None:
                            break  # fewer values: the call may still be made
                        args.append(value)
                continue
            omit = 0.85 if param.default_is_none and not param.hints else 0.5
            if param.has_default and self.rng.random() < omit:
                skipping = skipping or param.kind != "KEYWORD_ONLY"
                continue
            value = self._argument(param, builder, op.id, depth, provided)
            if value is None:
                self.unbuilt = param.name
                return None
            if param.kind == "KEYWORD_ONLY" or (skipping and param.kind == "POSITIONAL_OR_KEYWORD"):
                kwargs[param.name] = value
            elif skipping:
                self.unbuilt = None
                return None  # a positional-only parameter after a skipped one
            else:
                args.append(value)
        return {"op": op.id, "args": args, "kwargs": kwargs}

    def _count(self, param: Parameter) -> int:
        """How many values a `*args` parameter gets: often a count its code reads it as taking,
        else none, or one now and then."""
        if param.arities and self.rng.random() < ARITY_RATIO:
            return self.rng.choice(param.arities)
        return 1 if self.rng.random() < 0.3 else 0

    def _keyword_options(self, param: Parameter, op_id: str, builder: SequenceBuilder,
                         depth: int) -> dict[str, dict]:
        """A few of the options a `**kwargs` parameter's code reads (`output_format="python"`):
        mostly a value the code compares it with, else a value for its name."""
        rng = self.rng
        chosen = rng.sample(param.keywords, rng.randint(1, min(MAX_KEYWORDS, len(param.keywords))))
        options: dict[str, dict] = {}
        for key, choices in chosen:
            if choices and rng.random() < 0.8:
                options[key] = {"lit": list(rng.choice(choices))}
            elif (value := self._argument(Parameter(key, "KEYWORD_ONLY", True, ()), builder, op_id, depth)):
                options[key] = value
        return options

    def object_of(self, type_name: str, depth: int = DETECTIVE_DEPTH) -> PoolEntry | None:
        """A pooled value of `type_name`, or (GRT's detective) a fresh call of one of its builders
        when none exists, its own object arguments built the same way one level less deep."""
        entry = self.pools.pick([type_name], self.rng)
        if entry is not None and self.rng.random() < 0.9:
            if self.switches.configured and self.rng.random() < CONFIGURE_RATIO and self._setters(type_name):
                return self._configured(entry, type_name)
            if self.switches.impurity and self.rng.random() < IMPURE_RATIO:
                return self._mutated(entry, type_name)
            return entry
        if depth <= 0 or not self.switches.detective:
            return entry
        builders = self._builders_of(type_name)
        if not builders:
            return entry
        builder = SequenceBuilder()
        call = self.call(self.rng.choice(builders), builder, None, depth - 1)
        if call is None:
            return entry
        builder.statements.append(call)
        return builder.entry()

    # ------------------------------------------------------------ arguments

    def _argument(self, param: Parameter, builder: SequenceBuilder, op_id: str, depth: int,
                  provided: Mapping[str, dict] | None = None) -> dict | None:
        rng = self.rng
        if provided:
            given = next((provided[name] for name in self._expanded(param.hints) if name in provided), None)
            if given is not None:
                return given
        if ARGV in param.hints:  # a command line's argv and stdin: their shape is the protocol,
            return {"lit": self.values.argv(param.options)}  # not a type to guess
        if STDIN in param.hints:
            return {"lit": ["str", self.values.text()]}
        typed = self.switches.types
        if not typed:
            param = Parameter(param.name, param.kind, param.has_default, ())  # nothing known about it
        if param.choices and rng.random() < 0.9:
            return {"lit": list(rng.choice(param.choices))}
        # a setting keeps to its attribute's type: users set a width to a number (and every value
        # "works" for an assignment, so what worked there before says nothing)
        setting = bool(param.hints) and setter_target(op_id) is not None
        if rng.random() < NULL_RATIO and not setting:
            return {"lit": ["none"]}
        hints = self._expanded(param.hints)
        if (self.switches.structured and set(hints) <= {"builtins.str"}
                and speaks_of_urls(op_id.partition(":")[2], param.name) and rng.random() < URL_RATIO):
            return self._perturbed({"lit": ["str", url(rng)]})  # `URL.__call__(value: str)`: a URL
        if param.hints_from == "dispatch" and rng.random() < DISPATCH_ANY_RATIO:
            hints = []  # the body only branches on these types; others carry on, so try any
        if typed and not hints:
            learned = self.learning.learned_types.get((op_id, param.name))
            if learned and rng.random() < LEARNED_RATIO:
                hints = list(learned)
            elif (guess := type_from_name(param.name)) and rng.random() < 0.8:
                hints = [guess]
        return self._perturbed(self._value(param, hints, builder, op_id, typed and not setting, depth))

    def _perturbed(self, value: dict | None) -> dict | None:
        """Now and then a literal perturbed (GRT's impurity)."""
        if value is not None and "lit" in value and self.switches.impurity and self.rng.random() < FUZZ_RATIO:
            return {"lit": fuzz_literal(value["lit"], self.rng, self.switches.structured,
                                        self.values.hunk_punctuation)}
        return value

    def _value(self, param: Parameter, hints: list[str], builder: SequenceBuilder, op_id: str,
               typed: bool, depth: int) -> dict | None:
        """A literal or a reference for a parameter with these type hints (none: any type)."""
        rng = self.rng
        worked = self.learning.worked.get((op_id, param.name)) if typed else None
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
            entry = self.object_of(rng.choice(objects), depth)
            if entry is not None:
                return builder.include(entry)
            if not primitives:
                return None
        if primitives:
            if rng.random() < 0.15:
                entry = self.pools.pick(primitives, rng)
                if entry is not None:
                    return builder.include(entry)
            chosen = rng.choice(primitives)
            return {"lit": self.values.make(chosen, param.elements_of(chosen))}
        if rng.random() < 0.25:
            entry = self.pools.pick_any(rng)
            if entry is not None:
                return builder.include(entry)
        return {"lit": self.values.any()}

    def _expanded(self, hints: tuple[str, ...]) -> list[str]:
        """The hints with each string annotation (`?Name`) replaced by the catalog's types of that name."""
        return [name for h in hints for name in self._short_names.get(h, [h])]

    def _fits(self, literal: list, hints: list[str]) -> bool:
        makeable = [h for h in hints if self.values.can_make(h)]
        return not hints or any(self.values.tag_of(h) == literal[0] for h in makeable)

    # ------------------------------------------------------------ objects

    def _builders_of(self, type_name: str) -> list[Operation]:
        """What makes a `type_name` without a receiver: constructors of it and its subclasses,
        then static and class methods and functions whose annotation says they return one, then
        those seen returning one at run time (Python's stand-in for a declared return type)."""
        if type_name not in self._builders:
            def makes(name: str) -> bool:
                names = self._short_names.get(name, [name]) if name.startswith("?") else [name]
                return any(type_name in self.catalog.classes.get(n, {}).get("mro", (n,)) for n in names)

            constructors = [op for op in self.catalog.operations if op.kind == OperationKind.CONSTRUCTOR
                            and type_name in self.catalog.classes.get(op.owner or "", {}).get("mro", ())]
            factories = [op for op in self.operations
                         if op.kind in FACTORY_KINDS and any(map(makes, op.returns))]
            self._builders[type_name] = constructors + factories
        known = {op.id for op in self._builders[type_name]}
        learned = [self.by_id[op_id] for op_id in self.learning.returned.get(type_name, ())
                   if op_id not in known]
        return self._builders[type_name] + learned

    def _mutated(self, entry: PoolEntry, type_name: str) -> PoolEntry:
        """GRT's object fuzzing: the pooled object after one call of an impure method of its
        class (by name: a mutator such as `add`, `set_x`, `__setitem__`), before it is reused."""
        methods = self._impure_methods(type_name)
        if not methods:
            return entry
        builder = SequenceBuilder()
        receiver = builder.include(entry)
        call = self.call(self.rng.choice(methods), builder, receiver)
        if call is None or len(builder.statements) >= MAX_LENGTH:
            return entry
        builder.statements.append(call)
        return PoolEntry(tuple(builder.statements), entry.index, entry.cost)

    def _configured(self, entry: PoolEntry, type_name: str) -> PoolEntry:
        """The pooled object configured the way users configure one before using it: two to four
        of its settable attributes assigned (`renderer.width = 40`), then, often, one of its
        mutators called."""
        setters = self._setters(type_name)
        builder = SequenceBuilder()
        receiver = builder.include(entry)
        count = min(len(setters), self.rng.randint(*CONFIGURE_SETTINGS))
        chosen = self.rng.sample(setters, count)
        mutators = self._impure_methods(type_name)
        if mutators and self.rng.random() < CONFIGURE_MUTATOR_RATIO:
            chosen.append(self.rng.choice(mutators))
        for op in chosen:
            call = self.call(op, builder, receiver)
            if call is None or len(builder.statements) >= MAX_LENGTH:
                break
            builder.statements.append(call)
        return PoolEntry(tuple(builder.statements), entry.index, entry.cost)

    def _setters(self, type_name: str) -> list[Operation]:
        """The operations assigning a settable attribute of `type_name` (its classes' in its MRO)."""
        if type_name not in self._settable:
            self._settable[type_name] = self._of_class(type_name, lambda op: setter_target(op.id) is not None)
        return self._settable[type_name]

    def _impure_methods(self, type_name: str) -> list[Operation]:
        if type_name not in self._impure:
            self._impure[type_name] = self._of_class(
                type_name, lambda op: op.kind == OperationKind.METHOD and is_mutator(op.name))
        return self._impure[type_name]

    def _of_class(self, type_name: str, keep: Callable[[Operation], bool]) -> list[Operation]:
        """The operations of `type_name`'s classes (those of its MRO) that `keep` keeps."""
        owners = set(self.catalog.classes.get(type_name, {}).get("mro", (type_name,)))
        return [op for op in self.operations if op.owner in owners and keep(op)]


def is_mutator(name: str) -> bool:
    if name in MUTATOR_NAMES:
        return True
    return not name.startswith("_") and name.startswith(MUTATOR_PREFIXES)
