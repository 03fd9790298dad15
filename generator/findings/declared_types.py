"""Input realism: whether a case passes a value its operation's declared types rule out.

A maintainer weighs a difference that only `f(None)` shows, for `f(text: str)`, far below one on
an input a caller could pass: such a difference is reported apart, as outside the declared types,
and fails nothing. Confirmation prefers a representative within the declared types, and the
minimizer never turns a case within them into one outside them (it replaces objects by None).

The rule is deliberately narrow, because the catalog's hints are the types the host can *build*
for a declaration (`Iterable[str]` is a list), not the declaration itself. Two arguments are judged:
- `None`, passed directly to a parameter whose annotation or docstring names types, none of them
  `None`, and whose default is not `None`;
- an object a constructor of the sequence made, passed to a parameter whose annotation names
  classes it checks (`declared`: `Collection[str]` names collections.abc.Collection) when the
  object's class is none of them by its MRO or by the standard protocols it satisfies (a
  `Parser` for `escape_sequences: Collection[str]`; a class with `__iter__` is an Iterable).
Every other value counts as within the declared types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..runtime.catalog import Operation, Parameter
from ..runtime.sequence import plain_operation
from ..worker.protocol import Arg, OperationKind, Statement
from ..worker.typeinfo import NONE

DECLARED = ("", "docstring")  # Parameter.hints_from of a declaration (annotation, docstring)
POSITIONAL = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")
BOUND = (OperationKind.FUNCTION, OperationKind.CONSTRUCTOR, OperationKind.METHOD, OperationKind.STATIC)


def outside_declared_types(statements: Sequence[Statement], operations: Mapping[str, Operation],
                           classes: Mapping[str, dict] | None = None) -> str | None:
    """The first argument outside its parameter's declared types, said for a reader
    ("`None` for `text: str` of `pkg.mod:f`"); None when every argument is within them.
    `classes`: the catalog's classes (MRO and protocols), for the objects constructors made."""
    for statement in statements:
        op = operations.get(plain_operation(statement["op"]))
        if op is None or op.kind not in BOUND:
            continue
        for param, arg in _bound(op, statement):
            if _is_none(arg) and not accepts_none(param):
                return f"`None` for `{param.name}: {_declared(param)}` of `{op.id}`"
            made = _made_by_constructor(arg, statements, operations)
            if made is not None and param.declared and not _admits(param.declared, (classes or {}).get(made)):
                declared = " | ".join(name.rpartition(".")[2] for name in param.declared)
                return f"a `{made.rpartition('.')[2]}` for `{param.name}: {declared}` of `{op.id}`"
    return None


def _made_by_constructor(arg: Arg, statements: Sequence[Statement],
                         operations: Mapping[str, Operation]) -> str | None:
    """The class of the object an argument refers to, when a constructor of the sequence made it."""
    ref = arg.get("ref")
    if not isinstance(ref, int) or not 0 <= ref < len(statements):
        return None
    maker = operations.get(statements[ref]["op"])
    return maker.owner if maker is not None and maker.kind == OperationKind.CONSTRUCTOR else None


def _admits(declared: tuple[str, ...], entry: dict | None) -> bool:
    """Whether an instance of the class of catalog entry `entry` is one of the declared classes (a
    class the catalog does not describe is given the benefit of the doubt)."""
    if entry is None:
        return True
    kinds = {*entry.get("mro", ()), *entry.get("protocols", ()), "builtins.object"}
    return any(name in kinds for name in declared)


def accepts_none(param: Parameter) -> bool:
    """Whether the declaration admits None (an undeclared or unconstrained parameter admits all)."""
    if param.hints_from not in DECLARED or not (param.hints or param.choices):
        return True
    return param.default_is_none or NONE in param.hints or ("none",) in param.choices


def _bound(op: Operation, statement: Statement) -> list[tuple[Parameter, Arg]]:
    """(parameter, argument) pairs, as Python binds them; the receiver of a method has none."""
    args = list(statement["args"][1:] if op.kind == OperationKind.METHOD else statement["args"])
    positional = [p for p in op.params if p.kind in POSITIONAL]
    rest = next((p for p in op.params if p.kind == "VAR_POSITIONAL"), None)
    pairs = list(zip(positional, args, strict=False))
    if rest is not None:
        pairs += [(rest, arg) for arg in args[len(positional):]]
    by_name = {p.name: p for p in op.params}
    pairs += [(by_name[name], arg) for name, arg in statement["kwargs"].items() if name in by_name]
    return pairs


def _is_none(arg: Arg) -> bool:
    return "lit" in arg and arg["lit"] == ["none"]


def _declared(param: Parameter) -> str:
    names = [hint.removeprefix("builtins.").removeprefix("?") for hint in param.hints]
    names += [repr(choice[-1]) for choice in param.choices if len(choice) > 1]
    return " | ".join(names)
