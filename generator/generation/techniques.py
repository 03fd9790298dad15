"""The generation techniques that can be switched off one by one, so their effect can be measured.

Each name is a technique from the literature the engine is built on (GRT, Randoop, field
coverage criteria, test carving, JTestCraft); `difforacle diff --disable NAME` switches one off
(repeatable), and the ablation benchmark runs with each switched off in turn. Everything is on by
default except the components of OFF_BY_DEFAULT, which cost more than they bring on the benchmarks
and are switched on with `--enable NAME`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

DESCRIPTIONS = {
    "constants": "literals mined from the source, TF-IDF weighted, the PR's hunks first (GRT)",
    "types": "parameter types from annotations, docstrings, names, isinstance checks and runtime feedback",
    "elephant": "pools keyed by exact runtime type, the MRO as the subtype index (GRT elephant brain)",
    "detective": "demand-driven construction of a needed type through its builders (GRT detective)",
    "impurity": "fuzzed numbers and strings, objects mutated by impure methods before reuse (GRT)",
    "orienteering": "cheap (fast, short) sequences preferred as inputs (GRT orienteering)",
    "novelty": "sequences kept only when their object graphs add field-coverage triples",
    "repetition": "an operation sometimes called several times in a row (Randoop)",
    "bloodhound": "operations weighted by their uncovered changed lines and branches (GRT bloodhound)",
    "protocols": "copy, deepcopy, hash, format, len, iteration, in, and arithmetic and comparisons with "
                 "standard values (plain and reflected) for the classes that define them",
    "values": "a changed module's public constants, tables and objects built at import, read and "
              "compared (a public name head removes is an API change)",
    "structured": "strings of small languages: format specifications, strftime patterns and ISO-8601 "
                  "shapes, Unicode look-alikes (non-ASCII digits, case-folding characters, full-width forms)",
    "cli": "command-line entry points (a main() reading sys.argv, the project's console scripts) run "
           "with argv lists of their option strings and a stdin text; output and exit code compared",
    "carving": "seed sequences recorded from the calls of the project's tests and the PR's tests "
               "(Elbaum et al.'s test carving; Pynguin's seeding from tests)",
    "callables": "callables that calls return (a decorator's wrapper, a closure, a bound method) called "
                 "in turn, with arguments for their signatures",
    "failing": "callback arguments that raise ValueError, TypeError or KeyError, so that the code "
               "handling a user function's failure runs",
    "influence": "Candidate Sequence Search: receivers of focus operations prepared by breadth-first "
                 "sequences of calls that can influence them (return-argument and field define-use "
                 "pairs, over callees and overrides; JTestCraft)",
    "pruning": "dynamic influence check: a candidate of influence search with a call that wrote no field "
               "the method under test read, and returned nothing it used, is not extended (JTestCraft)",
    "reduction": "partial-order reduction: influence search prepends calls that commute (neither can "
                 "influence the other, no field written in common) in one order only (JTestCraft)",
    "solver": "inputs for changed functions whose branches stay untaken, found by CrossHair's symbolic "
              "execution (`crosshair cover`) and fed to exploration as seeds (JTestCraft's concolic "
              "step; needs the solver extra)",
    "paths": "path memo (JTestCraft's Constraint Tree without a solver): the branches out of changed lines "
             "each sequence takes are counted, sequences on often-seen paths extended less, and those "
             "that reached a line whose other branch is untaken extended more",
}
NAMES = tuple(DESCRIPTIONS)
OFF_BY_DEFAULT = frozenset({"solver", "paths"})  # switched on with `--enable NAME`


@dataclass(frozen=True)
class Switches:
    """The components resolved once: one flag per technique, True when it is on."""

    constants: bool = True
    types: bool = True
    elephant: bool = True
    detective: bool = True
    impurity: bool = True
    orienteering: bool = True
    novelty: bool = True
    repetition: bool = True
    bloodhound: bool = True
    protocols: bool = True
    values: bool = True
    structured: bool = True
    cli: bool = True
    carving: bool = True
    callables: bool = True
    failing: bool = True
    influence: bool = True
    pruning: bool = True
    reduction: bool = True
    solver: bool = False
    paths: bool = False


@dataclass(frozen=True)
class Components:
    """Which techniques are on, as given on the command line (`--disable NAME`, `--enable NAME`):
    the defaults, less `disabled`, plus `enabled` (a name in both is off)."""

    disabled: frozenset[str] = frozenset()
    enabled: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = sorted((set(self.disabled) | set(self.enabled)) - set(NAMES))
        if unknown:
            raise ValueError(f"unknown component(s) {', '.join(unknown)}; known: {', '.join(NAMES)}")

    @staticmethod
    def without(names: Iterable[str], enabled: Iterable[str] = ()) -> Components:
        return Components(frozenset(names), frozenset(enabled))

    @property
    def switches(self) -> Switches:
        on = (set(NAMES) - OFF_BY_DEFAULT | self.enabled) - self.disabled
        return Switches(**{name: name in on for name in NAMES})


ALL = Components()
