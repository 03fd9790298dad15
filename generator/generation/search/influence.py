"""Static influence between operations: JTestCraft's criteria (§4.3.1), read from the base sources.

An operation A *can influence* an operation B when one of the thesis's criteria holds:

* return-argument pair: A returns a type of the project that B takes as a parameter;
* define-use pair on fields: A writes a field of its receiver (`self.x = ...`, `self.x += ...`,
  `self.x[k] = ...`, `self.x.append(...)`) that B reads (`self.x`), both acting on one object
  (A's class is in the MRO of B's receiver type).

Reads and writes are checked transitively over the callees a method reaches through `self`
(`self.helper()`, a property read `self.total`, `super().m()`), with every overriding
implementation of a called method among the parsed classes included, as the thesis does for
polymorphism. A constructor writes every field its `__init__` (or a dataclass's annotated body)
defines and reads nothing: the object does not exist before it. Only the changed modules'
sources are parsed (as `impact` reads them); a class defined elsewhere contributes no fields.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...changes.syntax import parsed
from ...planning.impact import name_of
from ...runtime.catalog import Catalog, Operation
from ...worker.protocol import OperationKind
from ...worker.purity import MUTATOR_NAMES, MUTATOR_PREFIXES


@dataclass(frozen=True)
class MethodFacts:
    """What one function body does to its `self`, before callees are followed."""

    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    self_calls: frozenset[str] = frozenset()  # `self.m(...)`, and names read that may be properties
    super_calls: frozenset[str] = frozenset()  # `super().m(...)`


@dataclass(frozen=True)
class ClassFacts:
    methods: dict[str, MethodFacts]
    bases: tuple[str, ...]  # base names as written (last component), for classes the catalog lacks
    annotated: frozenset[str] = frozenset()  # names annotated in the class body (dataclass fields)


NO_FACTS = ClassFacts({}, ())  # a class defined outside the parsed sources


@dataclass(frozen=True)
class Effects:
    """An operation's reads and writes of its receiver's fields, callees followed."""

    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()


@dataclass
class InfluenceMap:
    """Which operations can influence which, by the static criteria; each question cached."""

    catalog: Catalog
    classes: dict[str, ClassFacts]  # type name ("pkg.mod.Class") -> facts
    _effects: dict[str, Effects] = field(default_factory=dict)
    _influencers: dict[str, tuple[Operation, ...]] = field(default_factory=dict)
    _commuting: dict[frozenset[str], bool] = field(default_factory=dict)

    def mro(self, type_name: str) -> tuple[str, ...]:
        """The type's MRO as the worker listed it, else by the source's base names."""
        listed = self.catalog.classes.get(type_name, {}).get("mro")
        if listed:
            return tuple(listed)
        found, pending = [], [type_name]
        while pending:
            name = pending.pop(0)
            if name in found:
                continue
            found.append(name)
            module = name.rsplit(".", 1)[0]
            pending += [f"{module}.{base}" for base in self._facts(name).bases]
        return tuple(found)

    def effects(self, op: Operation) -> Effects:
        """What `op` reads and writes on its receiver (a constructor: on the object it makes)."""
        if op.id not in self._effects:
            self._effects[op.id] = self._compute_effects(op)
        return self._effects[op.id]

    def influences(self, first: Operation, then: Operation) -> bool:
        """Whether a call of `first` can influence a later call of `then` (§4.3.1)."""
        if first.id == then.id and first.kind != OperationKind.METHOD:
            return False
        if self._returns_argument(first, then):
            return True
        if then.kind == OperationKind.METHOD and then.owner and self.makes_receiver(first, then.owner):
            return True  # the receiver is an argument too
        if (first.kind not in (OperationKind.METHOD, OperationKind.CONSTRUCTOR)
                or then.kind != OperationKind.METHOD or not then.owner):
            return False
        if first.owner not in self.mro(then.owner):
            return False  # cannot act on the object `then` is called on
        return bool(self.effects(first).writes & self.effects(then).reads)

    def influencers(self, op: Operation) -> tuple[Operation, ...]:
        """Every operation of the catalog that can influence `op` (the cached static check)."""
        if op.id not in self._influencers:
            self._influencers[op.id] = tuple(other for other in self.catalog.operations
                                             if other.kind in INVOKABLE_KINDS and self.influences(other, op))
        return self._influencers[op.id]

    def commute(self, first: Operation, then: Operation) -> bool:
        """Whether calls of the two operations, one right after the other, leave the same state and
        values in either order by these facts (Mazurkiewicz independence), so that partial-order
        reduction (§4.3.4) may explore one order only: neither can influence the other, they write
        no field in common on what may be one object, and no object one returns or takes can be one
        the other returns or takes (which of two returned values a later call gets depends on the
        order, and either call may change an argument they share). Module globals and fields of
        arguments are outside these facts, as they are outside the influence criteria."""
        key = frozenset((first.id, then.id))
        if key not in self._commuting:
            self._commuting[key] = not (self.influences(first, then) or self.influences(then, first)
                                        or self._write_in_common(first, then)
                                        or self._objects(first) & self._objects(then))
        return self._commuting[key]

    def makes_receiver(self, op: Operation, type_name: str) -> bool:
        """A call that makes a fresh `type_name` without needing one: a constructor of it or of a
        subclass, or a function or static method that returns one."""
        if op.kind not in (OperationKind.CONSTRUCTOR, OperationKind.FUNCTION, OperationKind.STATIC):
            return False
        return any(type_name in self.mro(made) for made in self.returned_types(op))

    # ------------------------------------------------------------ the criteria

    def _returns_argument(self, first: Operation, then: Operation) -> bool:
        made = {name for returned in self.returned_types(first) for name in self.mro(returned)}
        return any(hint in made for param in then.params for hint in param.hints)

    def _write_in_common(self, first: Operation, then: Operation) -> bool:
        """Both may write one field of one object: the later write is the one that stays."""
        if not (first.owner and then.owner and (first.owner in self.mro(then.owner)
                                                 or then.owner in self.mro(first.owner))):
            return False
        return bool(self.effects(first).writes & self.effects(then).writes)

    def _objects(self, op: Operation) -> set[str]:
        """The project types of the objects a call of `op` returns or takes, with their bases."""
        named = [*self.returned_types(op), *(hint for param in op.params for hint in param.hints)]
        return {base for name in named if name in self.catalog.classes for base in self.mro(name)
                if base in self.catalog.classes}

    def returned_types(self, op: Operation) -> tuple[str, ...]:
        """The project types a call of `op` returns (reference types only, as in the thesis)."""
        if op.kind == OperationKind.CONSTRUCTOR and op.owner:
            return (op.owner,)
        return tuple(name for name in op.returns
                     if name in self.catalog.classes and not name.startswith(PRIMITIVE_MODULE))

    def _facts(self, type_name: str) -> ClassFacts:
        return self.classes.get(type_name, NO_FACTS)

    def _compute_effects(self, op: Operation) -> Effects:
        if not op.owner or op.kind not in (OperationKind.METHOD, OperationKind.CONSTRUCTOR):
            return Effects()
        mro = self.mro(op.owner)
        if op.kind == OperationKind.CONSTRUCTOR:
            reads, writes = self._follow(mro, "__init__", set())
            defined = {name for klass in mro for name in self._facts(klass).annotated}
            return Effects(frozenset(), frozenset(writes | defined))
        reads, writes = self._follow(mro, op.name, set())
        return Effects(frozenset(reads), frozenset(writes))

    def _follow(self, mro: tuple[str, ...], name: str, seen: set[tuple[str, str]],
                after: str | None = None) -> tuple[set[str], set[str]]:
        """Reads and writes of `name` called on an object of MRO `mro`, transitively: the
        implementation the MRO finds (searching after class `after` for `super()`), and every
        subclass's override of it among the parsed classes."""
        reads: set[str] = set()
        writes: set[str] = set()
        search = mro[mro.index(after) + 1:] if after in mro else mro
        found = next(((klass, self._facts(klass).methods[name]) for klass in search
                      if name in self._facts(klass).methods), None)
        implementations = [found] if found else []
        if after is None:
            implementations += [(klass, facts.methods[name]) for klass, facts in self.classes.items()
                                if name in facts.methods and mro[0] in self.mro(klass) and klass != mro[0]]
        for klass, facts in implementations:
            if (klass, name) in seen:
                continue
            seen.add((klass, name))
            reads |= facts.reads
            writes |= facts.writes
            for callee in facts.self_calls:
                more_reads, more_writes = self._follow(mro, callee, seen)
                reads |= more_reads
                writes |= more_writes
            for callee in facts.super_calls:
                more_reads, more_writes = self._follow(mro, callee, seen, after=klass)
                reads |= more_reads
                writes |= more_writes
        return reads, writes


INVOKABLE_KINDS = (OperationKind.FUNCTION, OperationKind.CONSTRUCTOR, OperationKind.METHOD,
                   OperationKind.STATIC)
PRIMITIVE_MODULE = "builtins."  # values the value generator makes: literals, not influencing calls


def influence_map(sources: dict[str, str], catalog: Catalog) -> InfluenceMap:
    """The influence map of the catalog's operations, from the sources of the changed modules."""
    classes: dict[str, ClassFacts] = {}
    for module, source in sources.items():
        classes.update(class_facts(module, source))
    return InfluenceMap(catalog, classes)


# ---------------------------------------------------------------- reading the source


def class_facts(module: str, source: str) -> dict[str, ClassFacts]:
    """type name -> the facts of every class the module defines (nested ones too)."""
    tree = parsed(source)
    if tree is None:
        return {}
    found: dict[str, ClassFacts] = {}

    def visit(body: Iterable[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                methods = {item.name: method_facts(item) for item in node.body
                           if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
                annotated = frozenset(item.target.id for item in node.body if isinstance(item, ast.AnnAssign)
                                      and isinstance(item.target, ast.Name))
                bases = tuple(name_of(base) for base in node.bases if name_of(base))
                found[f"{module}.{prefix}{node.name}"] = ClassFacts(methods, bases, annotated)
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.If, ast.Try)):
                visit([*node.body, *node.orelse, *getattr(node, "finalbody", [])], prefix)

    visit(tree.body, "")
    return found


def method_facts(function: ast.FunctionDef | ast.AsyncFunctionDef) -> MethodFacts:
    """The fields of `self` (the first parameter) a method body reads and writes, and the
    methods it calls on `self`; a static method has no `self`."""
    decorators = {name_of(d) for d in function.decorator_list}
    positional = [*function.args.posonlyargs, *function.args.args]
    if "staticmethod" in decorators or not positional:
        return MethodFacts()
    me = positional[0].arg
    reads: set[str] = set()
    writes: set[str] = set()
    calls: set[str] = set()
    supers: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if _is_name(owner, me):
                calls.add(node.func.attr)
            elif isinstance(owner, ast.Call) and _is_name(owner.func, "super"):
                supers.add(node.func.attr)
            elif _self_field(owner, me) and _mutates(node.func.attr):
                writes.add(_self_field(owner, me) or "")  # self.items.append(x)
        elif isinstance(node, ast.Attribute) and _is_name(node.value, me):
            if isinstance(node.ctx, ast.Load):
                reads.add(node.attr)
                calls.add(node.attr)  # a property's getter runs on a read; a plain field resolves to nothing
            else:
                writes.add(node.attr)
        elif isinstance(node, ast.AugAssign) and _self_field(node.target, me):
            reads.add(_self_field(node.target, me) or "")
            writes.add(_self_field(node.target, me) or "")
        elif isinstance(node, (ast.Subscript,)) and not isinstance(node.ctx, ast.Load):
            name = _self_field(node.value, me)
            if name:
                writes.add(name)  # self.table[key] = value
        elif (isinstance(node, ast.Call) and _is_name(node.func, "setattr") and len(node.args) > 1
              and _is_name(node.args[0], me) and isinstance(node.args[1], ast.Constant)):
            writes.add(str(node.args[1].value))
    return MethodFacts(frozenset(reads), frozenset(writes), frozenset(calls), frozenset(supers))


def _self_field(node: ast.expr, me: str) -> str | None:
    """`x` for `self.x` (and for `self.x[...]`, the field whose contents change)."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute) and _is_name(node.value, me):
        return node.attr
    return None


def _mutates(method: str) -> bool:
    """A call that changes the object it is called on, by name (`append`, `popleft`, `set_x`)."""
    return method in MUTATOR_NAMES or method.startswith(MUTATOR_PREFIXES)


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
