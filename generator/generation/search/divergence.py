"""Divergence-directed search: a sequence's literal arguments moved, one at a time, toward the
boundary of a changed condition, so that boundaries are hit on purpose.

Base and head decide differently only on some inputs, and for a boundary change those lie next
to where a changed condition flips (`<` made `<=`: the equal operands; a new `if not items`: the
empty list). The replays measure, for each changed comparison and truth test on either commit,
the least *branch distance* a sequence reached there (`|a - b|`, a size; see `worker.distance`);
zero is the boundary. A sequence that comes closer to a condition than any before is the start
of a search for it, with the moves of Korel's *alternating variable method* (as search-based test
generators use it: EvoSuite's local search, AUSTIN): one variable at a time (an integer or float
argument, the length of a text, bytes or list argument, one character of a text, a number
written inside a text) moved by +1 and -1 (exploratory moves), then, in the directions that came
closest, by doubling strides
(pattern moves) and by the secant step, where the distance would reach zero if it kept falling
at the rate the exploratory move showed (exact when the condition's operand is linear in the
input). A step's distance comes back only with its replay, a round later, so where the method
tries moves one after the other, here each kind is a *generation* run in the same rounds: the
exploratory moves of every variable, then the pattern moves of those that came closer; the
closest point becomes the next. The search ends at distance zero, when no exploratory move comes
closer, or after MAX_STEPS runs. Every step is
an ordinary sequence: it is replayed, and the replay decides whether it shows a difference.
Shadow symbolic execution and HyDiff steer toward the divergence with a solver and with
differential fuzzing; this is the solver-free, search-based form of the same aim.
"""

from __future__ import annotations

import ast
import copy
import math
import re
from collections.abc import Callable, Generator, Sequence
from dataclasses import asdict, dataclass, field

from ...changes.model import ChangeSet, Checkout
from ...changes.syntax import changed_trees, nodes_on, spans_line
from ...runtime.catalog import Operation
from ...runtime.sequence import CallSequence, argument_at, sequence_key
from ...worker.protocol import SequenceResult, Status
from ..plugin import Plugin, PluginContext
from ..seeds.corpus import BYTES_TAGS, TEXT_TAGS, literal_places

PROPOSE_RATIO = 0.5  # of the picks of a focus operation while a search has a step ready
ACTIVE_LIMIT = 2  # searches under way at once
MAX_STEPS = 400  # runs one search may take
SEARCHES_PER_SITE = 3  # searches started toward one condition
WAITING_LIMIT = 200  # starting points kept for later searches
EXPLORATORY = {"float": (1, -1, 2 ** -4, -2 ** -4)}  # per axis; the others move by one
PATTERN_POWERS = {"value": 24, "float": 24, "length": 8, "at": 6}  # doubling strides to 2**(n-1); else 12
PLACES = 32  # positions of a text whose characters a search doubles or drops (spread over longer ones)
PATTERN_LIMIT = 4  # exploratory moves that came closest, followed by pattern moves
STALE_ROUNDS = 5  # replay rounds after which a step never replayed counts as no closer
DIGITS = re.compile(r"\d+")

# a search is a generator: it yields a generation of steps and is sent their distances, in order
Search = Generator[list[CallSequence], list[float], None]


@dataclass(frozen=True)
class Step:
    """One run of a search (a plugin's proposal: the worker records nothing for it)."""

    statements: CallSequence
    request: dict | None = None


@dataclass(frozen=True)
class Variable:
    """One thing a search moves: `axis` of the literal at (statement `index`, argument `place`):
    "value" (a number), "length" (of a text, bytes or list, at its end), "at<k>" (a text's k-th
    character repeated, or it and the ones after it dropped), or "digits<k>" (the k-th number
    written in a text)."""

    index: int
    place: int | str
    axis: str

    def moved(self, statements: CallSequence, step: float) -> CallSequence | None:
        """A copy of `statements` with this variable moved by `step`; None when it cannot move so."""
        before = argument_at(statements[self.index], self.place)["lit"]
        literal = _moved(before, self.axis, step)
        if literal is None or literal == before:
            return None
        moved = copy.deepcopy(statements)
        argument_at(moved[self.index], self.place)["lit"] = literal
        return moved


def changed_conditions(changes: ChangeSet, base: Checkout, head: Checkout) -> bool:
    """Whether a changed line holds a condition the workers would measure (a comparison, or the
    test of an `if`, `while`, `assert`, conditional expression, `and`, `or`, `not`), on either side.
    None does (a changed table entry, a changed message): the workers import the changed modules
    as they are, without rewriting them, which costs a parse and a compile of each."""
    return any(tree is None or any(_condition(node, lines) for node in nodes_on(tree, lines))
               for _, tree, lines in changed_trees(changes, base, head))


def _condition(node: ast.AST, lines: list[int]) -> bool:
    if isinstance(node, (ast.Compare, ast.BoolOp, ast.IfExp)):
        return True
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not)
    test = getattr(node, "test", None) if isinstance(node, (ast.If, ast.While, ast.Assert)) else None
    return test is not None and spans_line(lines, test.lineno, test.end_lineno or test.lineno)


def _moved(literal: list, axis: str, by: float) -> list | None:
    tag, value = literal[0], literal[1] if len(literal) > 1 else None
    if axis == "float":
        number = float(value) + by
        return ["float", repr(number)] if math.isfinite(number) else None
    step = int(by)
    if axis == "value":
        return ["int", int(value) + step]
    if axis.startswith("at"):
        return _at(literal, int(axis[len("at"):]), step)
    if axis == "length":
        if tag in BYTES_TAGS:
            text = _resized(bytes.fromhex(value).decode("latin-1"), step, "a")
            return None if text is None else [tag, text.encode("latin-1").hex()]
        resized = _resized(value, step, "a" if tag in TEXT_TAGS else None)
        return None if resized is None else [tag, resized]
    number = int(axis[len("digits"):])
    runs = list(DIGITS.finditer(value))
    if number >= len(runs):
        return None
    run = runs[number]
    stepped = int(run.group()) + step
    if stepped < 0:
        return None
    return [tag, value[:run.start()] + str(stepped).zfill(len(run.group())) + value[run.end():]]


def _at(literal: list, position: int, step: int) -> list | None:
    """A text with its character at `position` repeated `step` more times, or `-step` characters
    dropped from there."""
    tag, text = literal[0], literal[1]
    if position >= len(text) or position - step > len(text):
        return None
    if step > 0:
        return [tag, text[:position + 1] + text[position] * step + text[position + 1:]]
    return [tag, text[:position] + text[position - step:]]


def _resized(items: str | list | None, step: int, filler: str | None) -> str | list | None:
    """`items` longer by `step` (its last item repeated) or shorter (items dropped from the end)."""
    if items is None or len(items) + step < 0:
        return None
    if step < 0:
        return items[:len(items) + step]
    if not items:
        return None if filler is None else filler * step
    return items + items[-1:] * step


def variables(statements: CallSequence) -> list[Variable]:
    """What a search may move in `statements`, in statement and argument order."""
    found = []
    for index, place in literal_places(statements):
        literal = argument_at(statements[index], place)["lit"]
        tag = literal[0]
        if tag == "int":
            found.append(Variable(index, place, "value"))
        elif tag == "float":
            found.append(Variable(index, place, "float"))
        elif tag in (*TEXT_TAGS, *BYTES_TAGS, "list", "tuple"):
            found.append(Variable(index, place, "length"))
            if tag in TEXT_TAGS:
                numbers = len(DIGITS.findall(literal[1]))
                found += [Variable(index, place, f"digits{k}") for k in range(numbers)]
                found += [Variable(index, place, f"at{k}") for k in _places(len(literal[1]))]
    return found


def _pattern(variable: Variable, direction: float, best: float, near: float) -> list[float]:
    """The pattern moves after an exploratory move `direction` took the distance from `best` to
    `near`: doubling strides that way, and the secant step (where the distance would reach zero
    if it kept falling at that rate) with its neighbours."""
    top = PATTERN_POWERS.get(variable.axis.rstrip("0123456789"), 12)
    moves = [direction * 2 ** power for power in range(1, top)]
    rate = (best - near) / abs(direction)
    if rate > 0:  # (none on a plateau: doubling strides alone)
        secant = direction / abs(direction) * best / rate
        moves += [secant] if variable.axis == "float" else [round(secant) + e for e in (-1, 0, 1)]
    return moves


def _places(length: int) -> list[int]:
    """The positions of a text of `length` characters a search moves: all, or PLACES spread evenly."""
    if length <= PLACES:
        return list(range(length))
    return sorted({k * length // PLACES for k in range(PLACES)})


def alternating_variables(start: CallSequence, distance: float) -> Search:
    """Korel's alternating variable method from `start`, at `distance`, a generation of moves at a
    time (see the module docstring)."""
    current, best = start, distance
    while best > 0:
        exploratory = _moves(current, lambda variable: EXPLORATORY.get(variable.axis, (1, -1)))
        if not exploratory:
            return
        found = yield [moved for _, _, moved in exploratory]
        closer = sorted(((near, *move) for near, move in zip(found, exploratory, strict=True) if near < best),
                        key=lambda move: move[0])
        if closer:
            pattern = [(variable, stride) for near, variable, step, _ in closer[:PATTERN_LIMIT]
                       for stride in _pattern(variable, step, best, near) if stride != step]
        else:  # on a plateau (integer division, rounding), where one step changes nothing: longer ones
            flat = dict.fromkeys(variable for near, (variable, _, _) in zip(found, exploratory, strict=True)
                                 if near == best)  # ordered: a set's order would follow the hash seed
            pattern = [(variable, sign * stride) for variable in flat
                       for stride in _pattern(variable, 1, best, best) for sign in (1, -1)]
        moves = [(moved, stride) for variable, stride in pattern
                 if (moved := variable.moved(current, stride)) is not None]
        further = (yield [moved for moved, _ in moves]) if moves else []
        points = [(near, moved) for near, _, _, moved in closer]
        points += [(near, moved) for near, (moved, _) in zip(further, moves, strict=True)]
        if not points:
            return
        nearest, point = min(points, key=lambda pair: pair[0])
        if nearest >= best:
            return
        current, best = point, nearest


def _moves(current: CallSequence, steps: Callable[[Variable], Sequence[float]]
           ) -> list[tuple[Variable, float, CallSequence]]:
    """Each variable of `current` moved by each of its `steps` (those it can make)."""
    return [(variable, step, moved) for variable in variables(current) for step in steps(variable)
            if (moved := variable.moved(current, step)) is not None]


@dataclass
class DivergenceStats:
    """What the search did: conditions measured and met on their boundary, searches, their steps,
    the searches that reached a boundary."""

    conditions: int = 0  # changed comparisons and truth tests some replay measured
    met: int = 0  # of those, the ones some replay met on their boundary (distance zero)
    searches: int = 0
    steps: int = 0
    boundaries: int = 0  # searches that reached distance zero


@dataclass
class _Under:
    """A search under way toward `site`: its generator, its generation's steps (by sequence key),
    those not run yet, and the distances of those run (infinity until replayed)."""

    site: str
    search: Search
    keys: list[str] = field(default_factory=list)
    pending: set[str] = field(default_factory=set)
    found: list[float] = field(default_factory=list)
    steps: int = 0


@dataclass(eq=False)
class DivergencePlugin(Plugin):
    """Keeps the least distance per changed condition; starts searches from the sequences that come
    closer than any before, and proposes their steps on picks of focus operations."""

    rng_random: Callable[[], float]
    focus: frozenset[str]
    stats: DivergenceStats = field(default_factory=DivergenceStats)
    least: dict[str, float] = field(default_factory=dict)  # site -> least distance replayed
    started: dict[str, int] = field(default_factory=dict)  # site -> searches started toward it
    waiting: list[tuple[float, str, CallSequence]] = field(default_factory=list)  # starting points
    under_way: list[_Under] = field(default_factory=list)
    # Steps by sequence key: those to propose, those proposed (and the replay rounds since), and what
    # each run step's replay measured. Searches toward base's and head's side of one comparison
    # from one start make the same steps, which run once.
    ready: dict[str, CallSequence] = field(default_factory=dict)
    proposed: dict[int, tuple[str, CallSequence]] = field(default_factory=dict)  # id -> key, statements
    rounds: dict[str, int] = field(default_factory=dict)
    measured: dict[str, dict[str, float]] = field(default_factory=dict)
    shapes: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)  # (site, operations) searched from
    closer: int = 0  # times a condition's least distance fell (what early stopping watches)

    def counters(self) -> dict[str, float]:
        return asdict(self.stats)

    @staticmethod
    def make(context: PluginContext) -> DivergencePlugin:
        return DivergencePlugin(context.rng.random, context.focus)

    def propose(self, op: Operation) -> Step | None:
        if op.id not in self.focus:
            return None
        self._start()
        if not self.ready or self.rng_random() >= PROPOSE_RATIO:
            return None
        key = next(iter(self.ready))
        statements = self.ready.pop(key)
        self.proposed[id(statements)] = (key, statements)
        self.rounds[key] = 0
        self.stats.steps += 1
        return Step(statements)

    def found(self) -> int:
        return self.closer

    def searching(self) -> bool:
        """A search under way, or a point waiting to start one."""
        return bool(self.under_way or self.ready) or any(self._startable(site) for _, site, _ in self.waiting)

    def _startable(self, site: str) -> bool:
        """A search toward `site` may still start: it has searches left and is not met yet."""
        return self.started.get(site, 0) < SEARCHES_PER_SITE and self.least.get(site) != 0

    def proposal_ran(self, proposal: Step, result: SequenceResult) -> None:  # type: ignore[override]
        if not result.hit or result.status not in (Status.OK, Status.EXCEPTION):  # it will not be replayed
            self._answer(proposal.statements, {})

    def distances(self, measured: Sequence[tuple[CallSequence, dict[str, float]]]) -> None:
        for key in self.rounds:
            self.rounds[key] += 1
        for statements, found in measured:
            self._answer(statements, found)
            for site, distance in found.items():
                if site not in self.least:
                    self.stats.conditions += 1
                if distance < self.least.get(site, math.inf):
                    self.closer += 1
                    self.stats.met += distance == 0
                    self.least[site] = distance
                    searched = self.started.get(site, 0) >= SEARCHES_PER_SITE
                    if distance > 0 and not searched and variables(statements):
                        self.waiting.append((distance, site, statements))
        for key in [key for key, rounds in self.rounds.items() if rounds > STALE_ROUNDS]:
            self._measured(key, {})  # never replayed (another sequence was the same): no closer
        self.proposed = {ident: (key, s) for ident, (key, s) in self.proposed.items() if key in self.rounds}
        if len(self.waiting) > WAITING_LIMIT:
            self.waiting.sort(key=lambda item: item[0])
            del self.waiting[WAITING_LIMIT:]

    def _answer(self, statements: CallSequence, found: dict[str, float]) -> None:
        proposed = self.proposed.pop(id(statements), None)
        if proposed is not None and proposed[1] is statements:
            self._measured(proposed[0], found)

    def _measured(self, key: str, found: dict[str, float]) -> None:
        """A step ran: its distance goes to each search that made it; a search whose generation has
        all run goes on to the next."""
        self.rounds.pop(key, None)
        self.measured[key] = found
        for search in list(self.under_way):
            if key not in search.pending:
                continue
            search.pending.discard(key)
            distance = found.get(search.site, math.inf)
            search.found[search.keys.index(key)] = distance
            self.stats.boundaries += distance == 0
            if not search.pending:
                self._next_generation(search)

    def _next_generation(self, search: _Under, first: bool = False) -> None:
        """Send the search its generation's distances and take its next generation (steps already
        run answer from memory); the search ends when it has none or has used its steps."""
        while True:
            try:
                generation = next(search.search) if first else search.search.send(search.found)
            except StopIteration:
                break
            first = False
            run = generation[:max(0, MAX_STEPS - search.steps)]  # the steps past its last stay unrun
            if not run:
                break
            search.steps += len(run)
            search.keys = [sequence_key(step) for step in generation]
            search.found = [self.measured.get(key, {}).get(search.site, math.inf) for key in search.keys]
            search.pending = {key for key in search.keys[:len(run)] if key not in self.measured}
            in_flight = {key for key, _ in self.proposed.values()}
            for key, step in zip(search.keys, generation, strict=True):
                if key in search.pending and key not in in_flight:
                    self.ready.setdefault(key, step)
            if search.pending:
                return
        search.search.close()
        self.under_way.remove(search)

    def _start(self) -> None:
        """Start searches from the waiting points: toward a condition no search is under way for,
        the one with the fewest searches, from a sequence of calls no search toward it started
        from (a search that ended short of the boundary often met a local minimum of that shape:
        a value passed through another call), the closest."""
        while len(self.under_way) < ACTIVE_LIMIT:
            busy = {search.site for search in self.under_way}
            self.waiting = [item for item in self.waiting if self._startable(item[1])]
            free = [i for i, item in enumerate(self.waiting) if item[1] not in busy]
            if not free:
                return

            def rank(i: int) -> tuple[int, bool, float]:
                distance, site, statements = self.waiting[i]
                return (self.started.get(site, 0), (site, _shape(statements)) in self.shapes, distance)

            distance, site, statements = self.waiting.pop(min(free, key=rank))
            self.started[site] = self.started.get(site, 0) + 1
            self.shapes.add((site, _shape(statements)))
            self.stats.searches += 1
            search = _Under(site, alternating_variables(statements, distance))
            self.under_way.append(search)
            self._next_generation(search, first=True)


def _shape(statements: CallSequence) -> tuple[str, ...]:
    """The operations a sequence calls, in order: what its searches share whatever the literals."""
    return tuple(statement["op"] for statement in statements)
