"""Each difference's verdict, with the evidence it rests on: the first of these that applies.

1. `breaks-existing-test`: a test the pull request leaves unchanged, which calls the difference's
   operation, passes on base and fails on head (`generation.seeds.carving`); the strongest sign
   of a regression, whatever the input that shows it;
2. `asserted-by-pr`: a test the pull request adds or changes, which fails on base and passes on
   head (it states the new behaviour), or a test as base had it, which passes on base and fails on
   head and which the pull request rewrites or removes (it states the old behaviour the pull request
   means to leave), showed this difference through its own calls: its carved
   sequences fell in the difference's group, which is one operation, one kind and one observed
   path. A regression elsewhere (another operation, or another kind of change at the same one)
   is not explained by it; one at the same operation that shows the same kind of change on other
   inputs is (the group cannot tell them apart);
3. `outside-declared-types`: only an input its operation's declared types rule out shows it
   (`findings.declared_types`); listed apart, it fails nothing;
4. `named-by-pr`: the pull request's words name its operation or the changed unit it was seen at
   (`mentions`; for a module's table, also each entry of it that differs, when they name any; and
   when the naming line names a type some inputs there pass, or the pull request's tests of new
   behaviour pass, `Decimal`, an input of that type), or
   its input passes a value the pull request writes into its code or tests and base has nowhere
   in those files (`pull_request.added_values`), or its code adds the operation:
   a function, method or class base did not define (`Float.__hash__` where base inherited one),
   whose every behaviour is what the pull request wrote (a class's constructor too, when the
   `__init__` or `__new__` it runs is one the pull request adds, to the class or to one it
   inherits from), or it deletes the definition of a name head no longer has (a deletion or a
   rename; not a move to another module, whose old import path breaking may be an oversight);
   an explained difference, listed after the unexplained ones;
5. `unexplained`: nothing in the pull request accounts for it, a possible regression.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping, Sequence

from ..changes.model import Unit
from ..findings.declared_types import outside_declared_types
from ..oracle.leaves import leaf_text
from ..report.model import Difference, Statement, Verdict
from ..runtime.catalog import Operation
from ..worker.literals import TYPE_NAMES, parts
from ..worker.protocol import ApiChange, OperationKind, Tag
from .mentions import Mention, mentions, names_entry, names_of, names_type
from .pull_request import PullRequestText

ITEM_POSITION = re.compile(r"\[\d+\]")  # `[2]` in an observed path: where an item sits, not what it is
STATEMENT = re.compile(r"^\d+/\d+")  # the statement and variable an observed path starts from
CONSTRUCTORS = ("__init__", "__new__")  # what calling a class runs
DEFINITIONS = ("function", "method", "class")  # the unit kinds that define an operation


def triage(differences: list[Difference], operations: Mapping[str, Operation],
           text: PullRequestText | None = None, units: Sequence[Unit] = (),
           broken: Mapping[str, frozenset[str]] | None = None,
           asserting: Mapping[str, frozenset[str]] | None = None,
           updated: Mapping[str, frozenset[str]] | None = None,
           classes: Mapping[str, dict] | None = None,
           stated: Collection[str] = ()) -> list[Difference]:
    """Give each difference its verdict and evidence, in place; the same list, for chaining.
    `broken`: the existing tests that pass on base and fail on head, with the operations they call;
    `asserting`: the pull request's tests that fail on base and pass on head, likewise; `updated`:
    base's copy of the tests the pull request changes that pass on base and fail on head;
    `classes`: the catalog's, for the types of the objects an input passes; `stated`: the names
    the `asserting` tests use, whose types are those of the inputs the pull request means."""
    naming: list[tuple[Difference, list[Mention], str]] = []  # named by words: by which, and its entries
    for difference in differences:
        breaking = sorted(test for test, called in (broken or {}).items() if difference.target in called)
        if breaking:
            difference.verdict = Verdict.BREAKS_EXISTING_TEST
            difference.evidence = (f"the existing test {_first_of(breaking)}, which calls it, passes on base "
                                   "and fails on head")
            continue
        asserted = sorted(test for test in difference.carved_by if test in (asserting or {}))
        if asserted:
            difference.verdict = Verdict.ASSERTED_BY_PR
            difference.evidence = (f"the pull request's test {_first_of(asserted)}, which fails on base and "
                                   "passes on head, shows it through its own calls")
            continue
        rewritten = sorted(test for test in difference.carved_by if test in (updated or {}))
        if rewritten:
            difference.verdict = Verdict.ASSERTED_BY_PR
            difference.evidence = (f"the pull request rewrites or removes the test {_first_of(rewritten)}, "
                                   "which as base has it passes on base, fails on head and shows it through "
                                   "its own calls")
            continue
        outside = outside_declared_types([s.to_json() for s in difference.statements], operations, classes)
        if outside is not None:
            difference.verdict = Verdict.OUTSIDE_DECLARED_TYPES
            difference.evidence = f"only an input outside the declared types shows it: {outside}"
            continue
        added = _added(difference, units) or _added_constructor(difference, operations, units, classes)
        if added is not None:
            difference.verdict = Verdict.NAMED_BY_PR
            difference.evidence = f"the pull request adds it: {added.path}:{added.start}"
            continue
        deleted = _deleted(difference, units)
        if deleted is not None:
            difference.verdict = Verdict.NAMED_BY_PR
            difference.evidence = (f"the pull request deletes its definition: {deleted.path}:{deleted.start} "
                                   "on base")
            continue
        targets = [difference.target, *(unit.target for unit in _units_at(difference, units))]
        found = list(mentions(text, targets, removed=_removed(difference))) if text else []
        entries = _entries_meant(difference, text) if found else None
        if entries is not None:
            naming.append((difference, found, entries))
            difference.verdict = Verdict.NAMED_BY_PR
            continue
        written = _added_value(difference, text.values) if text else None
        if written is not None:
            difference.verdict = Verdict.NAMED_BY_PR
            difference.evidence = _written(*written)
    if text:
        _inputs_singled_out(naming, operations, text, set(stated) & _type_names(operations))
    _same_change_as_asserted(differences)
    return differences


def _entries_meant(difference: Difference, text: PullRequestText) -> str | None:
    """How the words that name a table account for its entries that differ, said for the evidence
    ("" for no table); None when they do not mean them all. They single out entries when they name
    any (then every one must be named), else they claim the table whole."""
    if not difference.entries:
        return ""
    named = [names_entry(text, entry) is not None for entry in difference.entries]
    if not any(named):
        return f", which names none of its {len(difference.entries)} entries that differ: the whole table"
    if not all(named):
        return None
    shown = ", ".join(entry.entry for entry in difference.entries[:3])
    more = f" and {len(difference.entries) - 3} more" if len(difference.entries) > 3 else ""
    return f"; and each entry that differs: {shown}{more}"


def _inputs_singled_out(naming: list[tuple[Difference, list[Mention], str]],
                        operations: Mapping[str, Operation], text: PullRequestText, meant: set[str]) -> None:
    """A line that names an operation and also a type that inputs of its differences pass, or that
    the pull request's tests of new behaviour pass (`meant`), (`Decimal` in "Add support for
    Decimal input to get") speaks of those inputs, as a line naming a table's entry speaks of that
    entry: a difference at that operation whose input passes none of them is not what the line
    meant. It keeps the first naming line that means it, or goes on to the next rule (a value the
    pull request adds), or is unexplained."""
    passed = [_input_types(difference.statements, operations) for difference, _, _ in naming]
    at: dict[tuple[str, str], set[str]] = {}  # (operation, line) -> the types its named inputs pass
    for (difference, found, _), types in zip(naming, passed, strict=True):
        for named in found:
            at.setdefault((_operation_of(difference), named.line), set(meant)).update(types)
    for (difference, found, entries), types in zip(naming, passed, strict=True):
        own = set(names_of(difference.target))  # `ArrowFactory` in `ArrowFactory.get`: not an input's type
        singled = [{t for t in at[_operation_of(difference), named.line] - own if names_type(named.line, t)}
                   for named in found]
        meant = next((named for named, types_named in zip(found, singled, strict=True)
                      if not types_named or types_named & types), None)
        if meant is not None:
            difference.evidence = f"named by the pull request, in {meant}{entries}"
            continue
        written = _added_value(difference, text.values)
        difference.verdict = Verdict.NAMED_BY_PR if written else Verdict.UNEXPLAINED
        difference.evidence = _written(*written) if written else ""


def _input_types(statements: Sequence[Statement], operations: Mapping[str, Operation]) -> set[str]:
    """The names of the types of the values calls pass or make: literals' (`Decimal`, `date`)
    and the classes whose constructors they call (`Meter`)."""
    types = {TYPE_NAMES[part[0]] for part in _passed(statements) if part[0] in TYPE_NAMES}
    for statement in statements:
        operation = operations.get(statement.op.split("<", 1)[0])
        if operation is not None and operation.kind == OperationKind.CONSTRUCTOR and operation.owner:
            types.add(operation.owner.rsplit(".", 1)[-1])
    return types


def _type_names(operations: Mapping[str, Operation]) -> set[str]:
    """The names `_input_types` gives: the standard types of literals, the classes of constructors."""
    return set(TYPE_NAMES.values()) | {operation.owner.rsplit(".", 1)[-1] for operation in operations.values()
                                       if operation.kind == OperationKind.CONSTRUCTOR and operation.owner}


def _passed(statements: Sequence[Statement]) -> Iterator[list]:
    """Every literal the calls pass as an argument, and every one nested in it."""
    for statement in statements:
        for arg in (*statement.args, *(arg for _, arg in statement.kwargs)):
            if "lit" in arg:
                yield from parts(arg["lit"])


def _added_value(difference: Difference, values: Mapping[str | bytes, str]) -> tuple[str | bytes, str] | None:
    """The first value the pull request adds that the difference's input passes as an argument
    (or an item of one), and where it is added; None if none."""
    if not values:
        return None
    for part in _passed(difference.statements):
        value = part[1] if part[0] == "str" else bytes.fromhex(part[1]) if part[0] == "bytes" else None
        if value is not None and value in values:
            return value, values[value]
    return None


def _written(value: str | bytes, where: str) -> str:
    return f"its input passes {value!r}, a value the pull request adds at {where}"


def _first_of(tests: list[str]) -> str:
    """The first test, and how many more there are: evidence stays one line."""
    return tests[0] + (f" (and {len(tests) - 1} more)" if len(tests) > 1 else "")


def _same_change_as_asserted(differences: list[Difference]) -> None:
    """An unexplained difference that is an asserted one's change seen elsewhere is asserted too:
    - the very exception raised on head at the same changed line (`encode` and `decode` both
      reaching the new `raise`); a value changed there on other inputs is not;
    - the same operation turning the same value into the same other one at the same place of its
      result but for item positions (`parse(...)[0].tokens[2]` and `[0].tokens[0]`, both an
      `Identifier` that became a `Token`)."""
    for signature, where in ((_raised_at, "at the same line, raising the same exception"),
                             (_transition, "as the same change of the same part of its result")):
        asserted = {signature(d): d for d in differences
                    if d.verdict == Verdict.ASSERTED_BY_PR and signature(d) is not None}
        for difference in differences:
            same = asserted.get(signature(difference)) if difference.verdict == Verdict.UNEXPLAINED else None
            if same is not None:
                difference.verdict = Verdict.ASSERTED_BY_PR
                difference.evidence = f"the change {same.target} shows {where}: {same.evidence}"


def _transition(difference: Difference) -> tuple:
    """An operation's change of one value into another, at an observed path whatever its item positions."""
    path = ITEM_POSITION.sub("[#]", STATEMENT.sub("#/#", difference.key, count=1))
    return difference.target, difference.kind, path, difference.base, difference.head


def _raised_at(difference: Difference) -> tuple | None:
    """Where a difference raises on head, and what: None for another kind of difference."""
    if difference.kind != "exception" or difference.line is None or not difference.head.startswith("raises "):
        return None
    raised = difference.head.removeprefix("raises ").split(":", 1)[0]
    return difference.path, difference.line, difference.side, raised


def _removed(difference: Difference) -> bool:
    """Whether the difference is a name that head no longer has (an API change "missing")."""
    missing = leaf_text([Tag.API, ApiChange.MISSING, ""])
    return difference.kind == "api" and difference.head.startswith(missing)


def _added(difference: Difference, units: Sequence[Unit]) -> Unit | None:
    """The unit that defines the difference's operation where base defined none (also when the
    operation is that class's user subclass, `Float<subclass>`); None for an operation base had."""
    operation = _operation_of(difference)
    return next((unit for unit in units if unit.status == "added" and unit.target == operation
                 and unit.kind in DEFINITIONS), None)


def _added_constructor(difference: Difference, operations: Mapping[str, Operation], units: Sequence[Unit],
                       classes: Mapping[str, dict] | None) -> Unit | None:
    """The `__init__` or `__new__` the pull request adds to the class a constructor operation makes,
    or to a class it inherits from, where base inherited one: calling the class runs what the pull
    request wrote (an exception class given an `__init__` that sets its message). A difference seen
    at a line must be seen in that method; None otherwise, and for any other operation."""
    operation = operations.get(_operation_of(difference))
    if operation is None or operation.kind != OperationKind.CONSTRUCTOR or operation.owner is None:
        return None
    mro = (classes or {}).get(operation.owner, {}).get("mro") or [operation.owner]
    seen_at = _units_at(difference, units) if difference.line is not None else units
    return next((unit for unit in seen_at if unit.status == "added" and _constructor_of(unit) in mro), None)


def _constructor_of(unit: Unit) -> str | None:
    """The type name of the class whose constructor the unit is (`pkg.mod.Class` for
    `Class.__init__`); None for any other unit."""
    owner, _, method = unit.qualname.rpartition(".")
    return f"{unit.module}.{owner}" if owner and method in CONSTRUCTORS else None


def _deleted(difference: Difference, units: Sequence[Unit]) -> Unit | None:
    """The unit base defined and the pull request deletes, when the difference is that name gone
    on head: a deletion or a rename says so in the diff itself. None when the same name is
    defined anew in another module: a move, whose old import path breaking may be an oversight."""
    if not _removed(difference):
        return None
    module, _, qualname = _operation_of(difference).partition(":")
    if any(u.status == "added" and u.qualname == qualname and u.module != module for u in units):
        return None
    return next((u for u in units if u.status == "removed" and u.module == module and u.qualname == qualname
                 and u.kind in DEFINITIONS), None)


def _operation_of(difference: Difference) -> str:
    """The operation a difference was seen through, without the form it was called in
    (`pkg.items:Float` for `pkg.items:Float<subclass>`)."""
    return difference.target.split("<", 1)[0]


def _units_at(difference: Difference, units: Sequence[Unit]) -> list[Unit]:
    """The changed units whose lines hold the difference's location, on the side it refers to; for
    a difference in importing a module, every changed unit of that module (removing a module
    removes what it defines)."""
    module, _, qualname = difference.target.partition(":")
    if qualname == "<module>":
        return [unit for unit in units if unit.module == module]
    if difference.path is None or difference.line is None:
        return []
    side, line = difference.side or "head", difference.line
    return [unit for unit in units if unit.path == difference.path and unit.start <= line <= unit.end
            and ("base" if unit.status == "removed" else "head") == side]
