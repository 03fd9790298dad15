"""The one record every triage rule reads: what the run and the pull request offer as evidence.

A rule reads the parts of it it needs (the tests that broke, the pull request's tests, its words,
its definitions, its values, the declared types) and says what it found for one difference
(`Found`), or what came closest when it found nothing that accounts for it (`Missed`). The record
also holds the run's differences, since some evidence is read across them: which types a naming
line singles out among the inputs shown, which differences the pull request's tests assert.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ..changes.model import Unit
from ..report.model import Difference
from ..runtime.catalog import Operation
from .pull_request import PullRequestText


@dataclass
class Evidence:
    """Everything the rules may read, for all the differences of one run."""

    differences: Sequence[Difference]
    operations: Mapping[str, Operation]
    text: PullRequestText | None = None  # the pull request's words and the values it writes
    units: Sequence[Unit] = ()  # the changed units, with their status (added, modified, removed)
    # the existing tests that pass on base and fail on head, with the operations they call
    broken: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # the pull request's tests that fail on base and pass on head, likewise
    asserting: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # base's copies of the tests the pull request changes, that pass on base and fail on head
    updated: Mapping[str, frozenset[str]] = field(default_factory=dict)
    classes: Mapping[str, dict] = field(default_factory=dict)  # the catalog's, by type name
    stated: Collection[str] = ()  # the names the asserting tests use (the types they mean among them)
    # filled in as the rules run: what a rule worked out once for every difference it reads
    memo: dict[str, object] = field(default_factory=dict)


class Found(NamedTuple):
    """The rule accounts for the difference: its verdict holds, resting on `evidence`."""

    evidence: str


class Missed(NamedTuple):
    """The rule found evidence that nearly counted, and says what and why not (for a reader of an
    unexplained difference: "the title names `slugify`, but not this input")."""

    closest: str


Judgement = Found | Missed | None


def operation_of(difference: Difference) -> str:
    """The operation a difference was seen through, without the form it was called in
    (`pkg.items:Float` for `pkg.items:Float<subclass>`)."""
    return difference.target.split("<", 1)[0]


def units_at(difference: Difference, units: Sequence[Unit]) -> list[Unit]:
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
