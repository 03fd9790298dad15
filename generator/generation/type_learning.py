"""What the generator learns from results about the operations' parameters and returns.

Python has no declared types to build arguments from, so the calls that ran teach them:
- the literal values a parameter accepted (a call that returned normally), to reuse;
- the runtime types of the objects a parameter accepted: those of a call that returned, and
  those of a call that raised anything but a TypeError or AttributeError (the error is then
  about a value, deeper in, not about the type at the call boundary);
- the factories seen returning an object of a type (Python's stand-in for a declared return
  type), so GRT's detective can build that type through them.
"""

from __future__ import annotations

from collections.abc import Callable

from ..runtime.catalog import Operation
from ..runtime.sequence import CallSequence
from ..worker.protocol import OperationKind, SequenceResult, Statement, Tag, exception_key

WORKED_LIMIT = 16
FACTORY_KINDS = (OperationKind.STATIC, OperationKind.FUNCTION)  # they make a value without a receiver
BOUNDARY_ERRORS = ("TypeError", "AttributeError")  # what a call raises when an argument has the wrong type


class TypeLearning:
    def __init__(self, operations: dict[str, Operation], can_make: Callable[[str], bool]) -> None:
        """`can_make(type name)`: whether the value generator makes that type itself (no need to learn it)."""
        self.operations = operations
        self.can_make = can_make
        self.worked: dict[tuple[str, str], list[list]] = {}  # (op, parameter) -> literals that worked
        self.learned_types: dict[tuple[str, str], list[str]] = {}  # (op, parameter) -> runtime types
        self.returned: dict[str, list[str]] = {}  # type name -> factories seen returning one

    def from_success(self, statements: CallSequence, types: list[list[str]]) -> None:
        """The last call returned: its arguments' values and types worked, and what it returned."""
        self._arguments(statements[-1], types)
        self._return(statements[-1]["op"], types[-1] if len(types) == len(statements) else [])

    def from_exception(self, statements: CallSequence, result: SequenceResult) -> None:
        """A call that raised past its boundary accepted its arguments' types (not their values)."""
        failed = result.executed
        leaf = result.observations.get(exception_key(failed))
        if failed < len(statements) and leaf and leaf[0] == Tag.RAISED and leaf[1] not in BOUNDARY_ERRORS:
            self._arguments(statements[failed], result.types, values=False)

    def _return(self, op_id: str, mro: list[str]) -> None:
        """A factory (no receiver) that returned an object: a builder of its type and supertypes."""
        op = self.operations.get(op_id)
        if op is None or op.kind not in FACTORY_KINDS or not mro or self.can_make(mro[0]):
            return
        for type_name in mro:
            returned = self.returned.setdefault(type_name, [])
            if op_id not in returned and len(returned) < WORKED_LIMIT:
                returned.append(op_id)

    def _arguments(self, statement: Statement, types: list[list[str]], values: bool = True) -> None:
        """Remember what a call was given: literal values that worked (`values`: it ran normally),
        and the runtime types of its object arguments (types learned without static types)."""
        op = self.operations.get(statement["op"])
        if op is None:
            return
        positional = statement["args"][1:] if op.kind == OperationKind.METHOD else statement["args"]
        named = list(zip((p.name for p in op.params), positional, strict=False))
        for name, arg in [*named, *statement["kwargs"].items()]:
            if "lit" in arg and values:
                known = self.worked.setdefault((op.id, name), [])
                if arg["lit"] not in known and len(known) < WORKED_LIMIT:
                    known.append(arg["lit"])
            elif "ref" in arg and arg["ref"] < len(types) and types[arg["ref"]]:
                learned = self.learned_types.setdefault((op.id, name), [])
                if types[arg["ref"]][0] not in learned and len(learned) < WORKED_LIMIT:
                    learned.append(types[arg["ref"]][0])
