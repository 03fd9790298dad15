"""The generation techniques: one table, the one place a technique is named, described and
switched on by default or not.

Each is a technique from the literature the engine is built on (GRT, Randoop, field coverage
criteria, test carving, JTestCraft); `difforacle diff --disable NAME` switches one off
(repeatable), `--enable NAME` one that is off by default (they cost more than they bring on the
benchmarks), and the ablation benchmark runs with each switched off in turn. A technique that
takes part in the generator's loop names its `Plugin` (see `plugin`): adding one is a module and
an entry here. The others are read as a flag (`switches.NAME`) where they act.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .field_novelty import NoveltyPlugin
from .plugin import Plugin, PluginContext
from .search.candidate_search import SearchPlugin
from .search.divergence import DivergencePlugin
from .search.path_memo import MemoPlugin
from .seeds.corpus import CorpusPlugin
from .seeds.returned_callables import CallablesPlugin


@dataclass(frozen=True)
class Technique:
    name: str  # as `--disable` and `--enable` take it
    description: str
    on: bool = True  # on by default
    # the technique's part in the generator's loop (None: it acts as a flag where it applies)
    plugin: Callable[[PluginContext], Plugin | None] | None = None


TECHNIQUES: tuple[Technique, ...] = (
    Technique("constants", "literals mined from the source, TF-IDF weighted, the PR's hunks first (GRT)"),
    Technique("types",
              "parameter types from annotations, docstrings, names, isinstance checks and runtime feedback"),
    Technique("elephant",
              "pools keyed by exact runtime type, the MRO as the subtype index (GRT elephant brain)"),
    Technique("detective",
              "demand-driven construction of a needed type through its builders (GRT detective)"),
    Technique("impurity", "fuzzed numbers and strings, objects mutated by impure methods before reuse (GRT)"),
    Technique("orienteering", "cheap (fast, short) sequences preferred as inputs (GRT orienteering)"),
    Technique("novelty",
              "sequences kept only when their object graphs add field-coverage triples",
              plugin=NoveltyPlugin),
    Technique("configured",
              "objects configured the way users configure them: the public settable attributes of the "
              "project's classes (properties with a setter, dataclass fields, attributes their __init__ "
              "assigns) as operations, and two to four of them assigned, with values of the types their "
              "setters and __init__ parameters take, before a pooled object is reused, then often one of "
              "its mutators called"),
    Technique("repetition", "an operation sometimes called several times in a row (Randoop)"),
    Technique("volume",
              "an operation that keeps state between calls (a cached function, a method that stores into "
              "its object, a function that writes its module's dict, list or set) sometimes called once "
              "past a usual cache or buffer size (129, 257, 1025 or 4097 times) in a row, its literal "
              "numbers, texts and bytes distinct in each call, so that what evicts, flushes or overflows "
              "there runs (off by default: on the real regressions it found nothing and cost the time its "
              "calls take to run, confirm and shrink)",
              on=False),
    Technique("bloodhound",
              "operations weighted by their uncovered changed lines and branches (GRT bloodhound)"),
    Technique("duck",
              "a parameter with no annotation, docstring, default or type test is typed by the attributes "
              "its function reads or calls on it: the project's classes (at most three) whose objects have "
              "them all"),
    Technique("protocols",
              "copy, deepcopy, hash, format, len, iteration, in, and arithmetic and comparisons with "
              "standard values (plain and reflected) for the classes that define them"),
    Technique("values",
              "a changed module's public constants, tables and objects built at import, and the public "
              "class-level values a changed class body binds, read and compared (a public name head removes "
              "is an API change)"),
    Technique("structured",
              "strings of small languages: format specifications, strftime patterns and ISO-8601 shapes, "
              "Unicode look-alikes (non-ASCII digits, case-folding characters, full-width forms)"),
    Technique("cli",
              "command-line entry points (a main() reading sys.argv, the project's console scripts) run "
              "with argv lists of their option strings and a stdin text; output and exit code compared"),
    Technique("carving",
              "seed sequences recorded from the calls of the project's tests and the PR's tests (Elbaum et "
              "al.'s test carving; Pynguin's seeding from tests)"),
    Technique("examples",
              "the project's examples carved like its tests: the doctests of the changed modules and the "
              "Python code of the README and the documentation (fenced or directive blocks, `>>>` sessions), "
              "run on base in carving's sandbox"),
    Technique("divergence",
              "divergence-directed search: the changed lines' comparisons and truth tests measured on both "
              "commits (branch distance), and the literal arguments of sequences that come closest moved "
              "toward the boundary, one at a time (Korel's alternating variable method; shadow symbolic "
              "execution's and HyDiff's aim without a solver)",
              plugin=DivergencePlugin.make),
    Technique("corpus",
              "the carved seeds that enter changed code as a fuzzer's seed corpus: their literal arguments "
              "mutated in place keeping their shape (a letter's case, a Unicode space or digit, a digit "
              "stepped, a line, token, character or final newline dropped or doubled, a pair of brackets "
              "doubled or dropped, tokens put in brackets, a quoted string emptied, two texts spliced, "
              "a number stepped by one, an item dropped or doubled); mutants that enter changed code "
              "join the corpus (AFL's havoc stage on Pynguin-style seeds)",
              plugin=CorpusPlugin),
    Technique("callables",
              "callables that calls return (a decorator's wrapper, a closure, a bound method) called in "
              "turn, with arguments for their signatures",
              plugin=CallablesPlugin),
    Technique("direct",
              "changed private functions and methods that no code of their module calls by name (reached "
              "only through a table, getattr or a subclass) called directly, as operations of their own; "
              "their differences say so"),
    Technique("subclasses",
              "public classes whose methods changed also built as a subclass with nothing of its own (`class "
              "MyVersion(Version)`), as a user's: a method that builds its own class by name where it "
              "should build `type(self)`, or the other way round, differs only there"),
    Technique("asynchronous",
              "coroutines awaited and asynchronous generators drained (their first items), each call in "
              "an event loop of its own, in the worker and in the rendered tests"),
    Technique("failing",
              "callback arguments that raise ValueError, TypeError or KeyError, so that the code handling a "
              "user function's failure runs"),
    Technique("influence",
              "Candidate Sequence Search: receivers of focus operations prepared by breadth-first sequences "
              "of calls that can influence them (return-argument and field define-use pairs, over callees "
              "and overrides; JTestCraft)",
              plugin=SearchPlugin.make),
    Technique("pruning",
              "dynamic influence check: a candidate of influence search with a call that wrote no field the "
              "method under test read, and returned nothing it used, is not extended (JTestCraft)"),
    Technique("reduction",
              "partial-order reduction: influence search prepends calls that commute (neither can influence "
              "the other, no field written in common) in one order only (JTestCraft)"),
    Technique("solver",
              "inputs for changed functions whose branches stay untaken, found by CrossHair's symbolic "
              "execution (`crosshair cover`) and fed to exploration as seeds (JTestCraft's concolic step; "
              "needs the solver extra)",
              on=False),
    Technique("diffbehavior",
              "inputs on which base's and head's versions of a changed function differ, for those whose "
              "changed lines ran with no difference seen, found by CrossHair's `diffbehavior` and fed to "
              "exploration as seeds (shadow symbolic execution, HyDiff; needs the solver extra)",
              on=False),
    Technique("paths",
              "path memo (JTestCraft's Constraint Tree without a solver): the branches out of changed lines "
              "each sequence takes are counted, sequences on often-seen paths extended less, and those that "
              "reached a line whose other branch is untaken extended more",
              on=False, plugin=MemoPlugin),
)
NAMES = tuple(technique.name for technique in TECHNIQUES)
OFF_BY_DEFAULT = frozenset(technique.name for technique in TECHNIQUES if not technique.on)
DESCRIPTIONS = {technique.name: technique.description for technique in TECHNIQUES}


class Switches:
    """The techniques resolved once: `switches.NAME` is True when technique NAME is on (`on`: the
    names of those on; by default, those on by default)."""

    def __init__(self, on: Iterable[str] | None = None) -> None:
        on = set(NAMES) - OFF_BY_DEFAULT if on is None else set(on)
        unknown = on - set(NAMES)
        if unknown:
            raise ValueError(f"unknown technique(s) {', '.join(sorted(unknown))}")
        self.on = frozenset(on)

    def __getattr__(self, name: str) -> bool:
        if name not in NAMES:
            raise AttributeError(f"no technique named {name!r}")
        return name in self.on

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Switches) and other.on == self.on

    def __hash__(self) -> int:
        return hash(self.on)

    def __repr__(self) -> str:
        return f"Switches({sorted(self.on)})"

    def plugins(self, context: PluginContext) -> list[Plugin]:
        """The plugins of the techniques that are on, in the table's order."""
        made = []
        for technique in TECHNIQUES:
            if technique.plugin is not None and technique.name in self.on:
                plugin = technique.plugin(context)
                if plugin is not None:
                    plugin.technique = technique.name
                    made.append(plugin)
        return made


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
        return Switches((set(NAMES) - OFF_BY_DEFAULT | self.enabled) - self.disabled)


ALL = Components()
DEFAULTS = Switches()  # every technique at its default
