"""The triage rules, in the order they are tried: each is one entry of `RULES`.

A rule has a name (kept on each difference it decides, so that the benchmark can count, rule by
rule, the regressions it explained away and the intended changes it explained), the evidence it
reads, and the verdict it gives. The first rule that accounts for a difference decides it; a
difference no rule accounts for is `unexplained`, a possible regression, and keeps what the rules
found closest (`Missed`), so that a maintainer can see why nothing counted.

Rules run one at a time over every difference not yet decided, so that a rule may read what the
rules before it decided (the pull request's tests assert a change; the same change seen at
another entry point is asserted too).

1. `existing-test-breaks`: a test the pull request leaves unchanged, which calls the difference's
   operation, passes on base and fails on head (`generation.seeds.carving`): the strongest sign of
   a regression, whatever the input that shows it.
2. `pull-request-test-asserts`: a test the pull request adds or changes, which fails on base and
   passes on head (it states the new behaviour), showed this difference through its own calls:
   its carved sequences fell in the difference's group (one operation, one kind, one observed
   path). A regression at another operation, or another kind of change at the same one, is not
   explained by it.
3. `pull-request-rewrites-test`: a test as base had it, which passes on base and fails on head and
   which the pull request rewrites or removes (it states the old behaviour the pull request means
   to leave), showed it through its own calls.
4. `outside-declared-types`: only an input its operation's declared types rule out shows it
   (`findings.declared_types`); listed apart, it fails nothing.
5. `pull-request-adds-it`: the pull request adds the operation (a function, method or class base
   did not define, or the `__init__`/`__new__` a constructor runs), so every behaviour of it is
   what the pull request wrote.
6. `pull-request-deletes-it`: the name is gone on head and the pull request deletes its
   definition (a deletion or a rename; not a move to another module, whose old import path
   breaking may be an oversight).
7. `words-name-it`: the pull request's words name its operation or the changed unit it was seen at
   (`mentions`), and fit it: for a table, they single out each entry that differs (or claim the
   table whole); where the naming line names a type that inputs there pass (or that the pull
   request's tests of new behaviour pass), the input passes one; where it speaks only of inputs
   the change now accepts ("support negative durations", "no longer crash on ...") the input
   raised on base, and where only of inputs it now refuses ("raise ValueError for ...") it raises
   on head (`mentions.outcome_named`): "Support negative durations in parse_duration" does not
   explain `parse_duration("1m")` turning 60 into 600.
8. `pull-request-adds-value`: its input passes a value the pull request writes into its code or
   tests and base has nowhere in those files (`pull_request.added_values`).
9. `words-name-it-in-prose`: as 7, where only text that documents the code names it, by a plain
   word (a changelog line "slugify keeps dots now") or in another unit's changed docstring.
10. `same-change-as-asserted`: an asserted difference's change seen elsewhere: the very exception
   raised on head at the same changed line, or the same operation turning the same value into the
   same other one at the same place of its result but for item positions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from ..changes.model import Unit
from ..findings.declared_types import outside_declared_types
from ..oracle.leaves import leaf_text
from ..report.model import Difference, Statement, Verdict
from ..runtime.catalog import Operation
from ..worker.literals import TYPE_NAMES, parts
from ..worker.protocol import ApiChange, OperationKind, Tag
from .evidence import Evidence, Found, Judgement, Missed, operation_of, units_at
from .mentions import Mention, names_entry, names_of, names_type, outcome_named, readings

ITEM_POSITION = re.compile(r"\[\d+\]")  # `[2]` in an observed path: where an item sits, not what it is
STATEMENT = re.compile(r"^\d+/\d+")  # the statement and variable an observed path starts from
CONSTRUCTORS = ("__init__", "__new__")  # what calling a class runs
DEFINITIONS = ("function", "method", "class")  # the unit kinds that define an operation


@dataclass(frozen=True)
class Rule:
    name: str
    verdict: Verdict
    reads: str  # the evidence it reads, in a few words (for a reader of the report's statistics)
    judge: Callable[[Difference, Evidence], Judgement]


# ---------------------------------------------------------------- tests


def _existing_test_breaks(difference: Difference, evidence: Evidence) -> Judgement:
    breaking = sorted(test for test, called in evidence.broken.items() if difference.target in called)
    if breaking:
        return Found(f"the existing test {_first_of(breaking)}, which calls it, passes on base and fails "
                     "on head")
    return None


def _pull_request_test_asserts(difference: Difference, evidence: Evidence) -> Judgement:
    asserted = sorted(test for test in difference.carved_by if test in evidence.asserting)
    if asserted:
        return Found(f"the pull request's test {_first_of(asserted)}, which fails on base and passes on "
                     "head, shows it through its own calls")
    calling = sorted(test for test, called in evidence.asserting.items() if difference.target in called)
    if calling:
        return Missed(f"the pull request's test {_first_of(calling)} calls it and fails on base, but its "
                      "own calls do not show this difference")
    return Missed("no test the pull request adds or changes, that fails on base, calls it") \
        if evidence.asserting else None


def _pull_request_rewrites_test(difference: Difference, evidence: Evidence) -> Judgement:
    rewritten = sorted(test for test in difference.carved_by if test in evidence.updated)
    if rewritten:
        return Found(f"the pull request rewrites or removes the test {_first_of(rewritten)}, which as base "
                     "has it passes on base, fails on head and shows it through its own calls")
    return None


def _first_of(tests: list[str]) -> str:
    """The first test, and how many more there are: evidence stays one line."""
    return tests[0] + (f" (and {len(tests) - 1} more)" if len(tests) > 1 else "")


# ---------------------------------------------------------------- inputs


def _outside_declared_types(difference: Difference, evidence: Evidence) -> Judgement:
    outside = outside_declared_types([s.to_json() for s in difference.statements], evidence.operations,
                                     evidence.classes)
    if outside is None:
        return None
    return Found(f"only an input outside the declared types shows it: {outside}")


# ---------------------------------------------------------------- definitions


def _pull_request_adds_it(difference: Difference, evidence: Evidence) -> Judgement:
    added = _added(difference, evidence.units) or _added_constructor(difference, evidence)
    return Found(f"the pull request adds it: {added.path}:{added.start}") if added is not None else None


def _added(difference: Difference, units: Sequence[Unit]) -> Unit | None:
    """The unit that defines the difference's operation where base defined none (also when the
    operation is that class's user subclass, `Float<subclass>`); None for an operation base had."""
    operation = operation_of(difference)
    return next((unit for unit in units if unit.status == "added" and unit.target == operation
                 and unit.kind in DEFINITIONS), None)


def _added_constructor(difference: Difference, evidence: Evidence) -> Unit | None:
    """The `__init__` or `__new__` the pull request adds to the class a constructor operation makes,
    or to a class it inherits from, where base inherited one: calling the class runs what the pull
    request wrote (an exception class given an `__init__` that sets its message). A difference seen
    at a line must be seen in that method; None otherwise, and for any other operation."""
    operation = evidence.operations.get(operation_of(difference))
    if operation is None or operation.kind != OperationKind.CONSTRUCTOR or operation.owner is None:
        return None
    mro = evidence.classes.get(operation.owner, {}).get("mro") or [operation.owner]
    seen_at = units_at(difference, evidence.units) if difference.line is not None else evidence.units
    return next((unit for unit in seen_at if unit.status == "added" and _constructor_of(unit) in mro), None)


def _constructor_of(unit: Unit) -> str | None:
    """The type name of the class whose constructor the unit is (`pkg.mod.Class` for
    `Class.__init__`); None for any other unit."""
    owner, _, method = unit.qualname.rpartition(".")
    return f"{unit.module}.{owner}" if owner and method in CONSTRUCTORS else None


def _pull_request_deletes_it(difference: Difference, evidence: Evidence) -> Judgement:
    """The unit base defined and the pull request deletes, when the difference is that name gone
    on head: a deletion or a rename says so in the diff itself. Not when the same name is defined
    anew in another module: a move, whose old import path breaking may be an oversight."""
    if not _removed(difference):
        return None
    module, _, qualname = operation_of(difference).partition(":")
    units = evidence.units
    if any(u.status == "added" and u.qualname == qualname and u.module != module for u in units):
        return Missed(f"the pull request moves {qualname} to another module: its old import path breaking "
                      "may be an oversight")
    deleted = next((u for u in units if u.status == "removed" and u.module == module
                    and u.qualname == qualname and u.kind in DEFINITIONS), None)
    return Found(f"the pull request deletes its definition: {deleted.path}:{deleted.start} on base") \
        if deleted is not None else None


def _removed(difference: Difference) -> bool:
    """Whether the difference is a name that head no longer has (an API change "missing")."""
    missing = leaf_text([Tag.API, ApiChange.MISSING, ""])
    return difference.kind == "api" and difference.head.startswith(missing)


# ---------------------------------------------------------------- words


def _words_name_it(difference: Difference, evidence: Evidence) -> Judgement:
    """A passage that names the difference's operation (or the changed unit it was seen at) and
    fits it: it singles out each table entry that differs, or the table whole; where it names a
    type some inputs there pass, this input passes one. The first such passage decides."""
    if not evidence.text:
        return None
    found, refused = _naming(difference, evidence)
    return _fitting([mention for mention in found if not mention.prose], refused, difference, evidence)


def _words_name_it_in_prose(difference: Difference, evidence: Evidence) -> Judgement:
    """As `_words_name_it`, with the passages that name it only as a plain word in text that
    documents the code (a changelog line, a changed docstring)."""
    if not evidence.text:
        return None
    found, _ = _naming(difference, evidence)
    return _fitting([mention for mention in found if mention.prose], [], difference, evidence)


def _fitting(found: list[Mention], refused: list[tuple[Mention, str]], difference: Difference,
             evidence: Evidence) -> Judgement:
    """The first passage of `found` that fits the difference (or what came closest)."""
    if not found:
        if refused:
            mention, why = refused[0]
            return Missed(f"{mention.source} names it, but {why}: \"{mention.quote}\"")
        return None
    entries = _entries_meant(difference, evidence)
    if entries is None:
        return Missed(f"{found[0].source} names it, but not each of its entries that differ: "
                      f"\"{found[0].quote}\"")
    singled = _types_singled_out(evidence)
    own = set(names_of(difference.target))  # `ArrowFactory` in `ArrowFactory.get`: not an input's type
    passed = _input_types(difference.statements, evidence.operations)
    misses = []
    for named in found:
        types = {t for t in singled.get((operation_of(difference), named.line), set()) - own
                 if names_type(named.line, t)}
        if types and not types & passed:
            misses.append(f"{named.source} names it, but means inputs of another type "
                          f"({', '.join(sorted(types))}): \"{named.quote}\"")
            continue
        outcome = outcome_named(named.line) if named.line else None
        if outcome is not None and not _outcome_fits(difference, outcome):
            misses.append(f"{named.source} names it, but speaks of inputs it now {outcome[:-1]}s, and this "
                          f"difference is no such change: \"{named.quote}\"")
            continue
        return Found(f"named by the pull request, in {named}{entries}")
    return Missed(misses[0])


def _outcome_fits(difference: Difference, outcome: str) -> bool:
    """Whether the difference is the change of outcome a line speaks of: an input that raised on base
    and gives a result on head (`accepts`), or the other way round (`refuses`). A name gone or added
    fits either."""
    if difference.kind == "api":
        return True
    raised_on = "base" if outcome == "accepts" else "head"
    return getattr(difference, raised_on).startswith("raises ")


def _naming(difference: Difference, evidence: Evidence) -> tuple[list[Mention], list[tuple[Mention, str]]]:
    """The passages that name the difference's operation or unit, and those that name it but do
    not count (with why); worked out once per difference."""
    memo = evidence.memo.setdefault("naming", {})
    assert isinstance(memo, dict)
    if id(difference) not in memo:
        assert evidence.text is not None
        targets = [difference.target, *(unit.target for unit in units_at(difference, evidence.units))]
        read = list(readings(evidence.text, targets, removed=_removed(difference)))
        memo[id(difference)] = ([m for m, why in read if not why], [(m, why) for m, why in read if why])
    return memo[id(difference)]


def _entries_meant(difference: Difference, evidence: Evidence) -> str | None:
    """How the words that name a table account for its entries that differ, said for the evidence
    ("" for no table); None when they do not mean them all. They single out entries when they name
    any (then every one must be named), else they claim the table whole."""
    if not difference.entries:
        return ""
    assert evidence.text is not None
    named = [names_entry(evidence.text, entry) is not None for entry in difference.entries]
    if not any(named):
        return f", which names none of its {len(difference.entries)} entries that differ: the whole table"
    if not all(named):
        return None
    shown = ", ".join(entry.entry for entry in difference.entries[:3])
    more = f" and {len(difference.entries) - 3} more" if len(difference.entries) > 3 else ""
    return f"; and each entry that differs: {shown}{more}"


def _types_singled_out(evidence: Evidence) -> Mapping[tuple[str, str], set[str]]:
    """Per (operation, naming line), the types a line may single out there: those the inputs of the
    differences it names pass, and those the pull request's tests of new behaviour pass (`Decimal`
    in "Add support for Decimal input to get" means the Decimal inputs; a difference at `get`
    whose input passes none is not what the line meant). Worked out once, over every difference
    still undecided that some passage names and whose table entries the words account for."""
    if "types" in evidence.memo:
        return evidence.memo["types"]  # type: ignore[return-value]
    meant = set(evidence.stated) & _type_names(evidence.operations)
    at: dict[tuple[str, str], set[str]] = {}
    for difference in evidence.differences:
        if difference.verdict != Verdict.UNEXPLAINED or difference.rule:
            continue
        found, _ = _naming(difference, evidence)
        if not found or _entries_meant(difference, evidence) is None:
            continue
        types = _input_types(difference.statements, evidence.operations)
        for named in found:
            at.setdefault((operation_of(difference), named.line), set(meant)).update(types)
    evidence.memo["types"] = at
    return at


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


def _pull_request_adds_value(difference: Difference, evidence: Evidence) -> Judgement:
    """The first value the pull request adds that the difference's input passes as an argument
    (or an item of one), and where it is added."""
    values = evidence.text.values if evidence.text else {}
    if not values:
        return None
    for part in _passed(difference.statements):
        value = part[1] if part[0] == "str" else bytes.fromhex(part[1]) if part[0] == "bytes" else None
        if value is not None and value in values:
            return Found(f"its input passes {value!r}, a value the pull request adds at {values[value]}")
    return None


# ---------------------------------------------------------------- across differences


def _same_change_as_asserted(difference: Difference, evidence: Evidence) -> Judgement:
    """An asserted difference's change seen elsewhere (see the module)."""
    for signature, where in ((_raised_at, "at the same line, raising the same exception"),
                             (_transition, "as the same change of the same part of its result")):
        asserted = {signature(d): d for d in evidence.differences
                    if d.verdict == Verdict.ASSERTED_BY_PR and signature(d) is not None}
        same = asserted.get(signature(difference))
        if same is not None:
            return Found(f"the change {same.target} shows {where}: {same.evidence}")
    return None


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


RULES: tuple[Rule, ...] = (
    Rule("existing-test-breaks", Verdict.BREAKS_EXISTING_TEST,
         "the project's tests the pull request leaves unchanged that pass on base and fail on head",
         _existing_test_breaks),
    Rule("pull-request-test-asserts", Verdict.ASSERTED_BY_PR,
         "the tests the pull request adds or changes that fail on base and pass on head, and their calls",
         _pull_request_test_asserts),
    Rule("pull-request-rewrites-test", Verdict.ASSERTED_BY_PR,
         "base's copies of the tests the pull request rewrites or removes, and their calls",
         _pull_request_rewrites_test),
    Rule("outside-declared-types", Verdict.OUTSIDE_DECLARED_TYPES,
         "the declared types of the operation's parameters", _outside_declared_types),
    Rule("pull-request-adds-it", Verdict.NAMED_BY_PR, "the definitions the pull request adds",
         _pull_request_adds_it),
    Rule("pull-request-deletes-it", Verdict.NAMED_BY_PR, "the definitions the pull request deletes",
         _pull_request_deletes_it),
    Rule("words-name-it", Verdict.NAMED_BY_PR,
         "the title, body, commit messages, changelog lines and changed docstrings", _words_name_it),
    Rule("pull-request-adds-value", Verdict.NAMED_BY_PR,
         "the string and bytes values the pull request writes into its code and tests",
         _pull_request_adds_value),
    Rule("words-name-it-in-prose", Verdict.NAMED_BY_PR,
         "changelog lines and changed docstrings that name it by a plain word", _words_name_it_in_prose),
    Rule("same-change-as-asserted", Verdict.ASSERTED_BY_PR, "the differences its tests assert",
         _same_change_as_asserted),
)
