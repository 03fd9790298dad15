"""The project's test inputs as a seed corpus, mutated the way a fuzzer mutates its seeds.

A change often shows only on a small edit of an input the project's tests already use: the case
of one letter in a date-time, one non-ASCII space, one missing final newline, one more item. The
changed lines run thousands of times on random and mined values without meeting it, and the
test's own input runs them without a difference. So the sequences carved from the tests (and the
solver's, and any other seed) that entered changed code form a corpus; when the selector picks an
operation of the focus that a corpus sequence calls, or one a corpus sequence ends with (a call
that entered the change where no static reach says so), the candidate is sometimes that sequence
with one or two of its
literal arguments mutated in place, its other calls and arguments (the options, the receiver's
construction) kept as the test had them. The mutations keep an input's shape, as a fuzzer's
do on a seed corpus (AFL's havoc stage, libFuzzer's mutators): flip the case of a letter, put a
Unicode variant for a space (one of each whitespace class), a digit or a letter, step a digit, drop
or duplicate a line, a token, a character or the final newline, write a line break another way,
double or drop a pair of brackets, put a few tokens in brackets, empty a quoted string, append
junk, run a path of keys one step further, insert the comment syntax or an escape of the format
the text is in (`format_syntax`), splice two of the corpus's texts; step a number by one; drop,
duplicate or mutate one item of a container, or pass its items in a subclass of its type (an
OrderedDict, a defaultdict, a Counter, a user's dict or list). A mutant that enters changed code joins the
corpus in turn (up to MAX_DEPTH mutations from its seed), as coverage-guided fuzzers keep theirs.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from ...runtime.catalog import Operation
from ...runtime.sequence import CallSequence, argument_at, arguments
from ...worker.literals import container_tag
from ...worker.protocol import SequenceResult, Status
from ..plugin import Plugin, PluginContext
from ..values.format_syntax import format_edit
from ..values.fuzz import fuzz_literal
from ..values.structured import unicode_variant

FORMAT_RATIO = 0.25  # of a text's edits: one its format's grammar allows, where it is in one
SUBCLASS_RATIO = 0.2  # of a dict's or list's edits: the same items in a subclass of its type
PROPOSE_RATIO = 0.4  # of the picks of an operation some corpus sequence calls: a mutant of one
SECOND_MUTATION = 0.3  # a mutant gets a second mutation this often (stacked, as havoc does)
MAX_DEPTH = 3  # mutations between a seed and a mutant the corpus keeps
CORPUS_LIMIT = 400  # sequences; past this a new one replaces one at random
TEXTS_LIMIT = 200  # texts kept for splicing
# a space's stand-ins, one or more of each Unicode whitespace class: the space separators (no-break,
# thin, narrow no-break, ideographic, Ogham, medium mathematical), the control characters str.split
# takes for space (tab, vertical tab, form feed, the information separators, next line) and the line
# and paragraph separators
UNICODE_SPACES = ("\u00a0\u2009\u202f\u3000\u1680\u205f" "\t\x0b\x0c\x1c\x1f\x85" "\u2028\u2029")
LINE_BREAKS = ("\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
# what follows a well-formed value by mistake: a space, a separator, a stray character, a NUL
JUNK = (" ", "\t", ";", ",", ".", "x", "0", "#", "\\", "\x00", " x")
TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
BRACKETS = {"(": ")", "[": "]", "{": "}"}
CLOSING = {closing: opening for opening, closing in BRACKETS.items()}
ANY_BRACKET_RATIO = 0.3  # of tokens put in brackets: of any kind, not only those the text uses
QUOTED = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"")
TEXT_TAGS = ("str", "textio", "path")
BYTES_TAGS = ("bytes", "bytesio")


@dataclass(frozen=True)
class Mutant:
    """A corpus sequence with mutated literals (a plugin's proposal: the worker records nothing)."""

    statements: CallSequence
    depth: int
    request: dict | None = None


# ---------------------------------------------------------------- text mutations


def _flip_case(text: str, rng: random.Random) -> str | None:
    letters = [i for i, char in enumerate(text) if char.lower() != char.upper()]
    if not letters:
        return None
    i = rng.choice(letters)
    return text[:i] + text[i].swapcase() + text[i + 1:]


def _unicode(text: str, rng: random.Random) -> str | None:
    spaces = [i for i, char in enumerate(text) if char == " "]
    if spaces and rng.random() < 0.5:
        i = rng.choice(spaces)
        return text[:i] + rng.choice(UNICODE_SPACES) + text[i + 1:]
    return unicode_variant(text, rng) if text else None


def _line_break(text: str, rng: random.Random) -> str | None:
    """One line break written another way (CRLF, CR, a Unicode line or paragraph separator, the
    characters `str.splitlines` also breaks at)."""
    breaks = [i for i, char in enumerate(text) if char == "\n"]
    if not breaks:
        return None
    i = rng.choice(breaks)
    return text[:i] + rng.choice(LINE_BREAKS) + text[i + 1:]


def _junk(text: str, rng: random.Random) -> str | None:
    """Trailing junk after the value (`1h` -> `1h;`): what a parser should refuse or ignore."""
    return text + rng.choice(JUNK) if text else None


def _one_step_further(text: str, rng: random.Random) -> str | None:
    """A path of keys run one step past its end (`a.b` -> `a.b.b`, `/x/y` -> `/x/y/y`): a dotted,
    slashed or colon-separated name asked for a part below what exists."""
    match = re.search(r"[\w-]+(?:([./:])[\w-]+)+$", text)
    if match is None:
        return None
    separator, last = match.group(1), re.split(r"[./:]", match.group(0))[-1]
    return text + separator + rng.choice((last, "x", "0"))


def _step_digit(text: str, rng: random.Random) -> str | None:
    digits = [i for i, char in enumerate(text) if "0" <= char <= "9"]
    if not digits:
        return None
    i = rng.choice(digits)
    return text[:i] + str((int(text[i]) + rng.choice((1, -1))) % 10) + text[i + 1:]


def _line(text: str, rng: random.Random) -> str | None:
    lines = text.splitlines(keepends=True)
    if len(lines) < 2:
        return None
    i = rng.randrange(len(lines))
    return "".join(lines[:i] + ([] if rng.random() < 0.5 else [lines[i], lines[i]]) + lines[i + 1:])


def _token(text: str, rng: random.Random) -> str | None:
    tokens = TOKEN.findall(text)
    if len(tokens) < 2:
        return None
    i = rng.randrange(len(tokens))
    return "".join(tokens[:i] + ([] if rng.random() < 0.5 else [tokens[i], tokens[i]]) + tokens[i + 1:])


def _character(text: str, rng: random.Random) -> str | None:
    if not text:
        return None
    i = rng.randrange(len(text))
    return text[:i] + ("" if rng.random() < 0.5 else text[i] * 2) + text[i + 1:]


def _final_newline(text: str, rng: random.Random) -> str | None:
    return text[:-1] if text.endswith("\n") else text + "\n"


def _brackets(text: str, rng: random.Random) -> str | None:
    """One balanced pair of brackets doubled (`(a or b)` -> `((a or b))`) or dropped: nesting is
    the structure a grammar's parser and printer handle in the most places."""
    pairs = _bracket_pairs(text)
    if not pairs:
        return None
    start, end = rng.choice(pairs)
    if rng.random() < 0.5:
        return text[:start] + text[start] + text[start:end + 1] + text[end] + text[end + 1:]
    return text[:start] + text[start + 1:end] + text[end + 1:]


def _wrap(text: str, rng: random.Random) -> str | None:
    """A run of one to four tokens (not starting or ending in space) put in brackets, mostly of a
    kind the text already uses: `order by a desc` -> `order by (a desc)`."""
    tokens = TOKEN.findall(text)
    spans = [(i, j) for i in range(len(tokens)) if not tokens[i].isspace()
             for j in range(i, min(i + 4, len(tokens)))
             if not tokens[j].isspace() and _balanced("".join(tokens[i:j + 1]))]
    if not spans:
        return None
    i, j = rng.choice(spans)
    kinds = [pair for pair in BRACKETS.items() if pair[0] in text]
    if not kinds or rng.random() < ANY_BRACKET_RATIO:  # `{x}` in a value a message is formatted with
        kinds = list(BRACKETS.items())
    opening, closing = rng.choice(kinds)
    return "".join(tokens[:i]) + opening + "".join(tokens[i:j + 1]) + closing + "".join(tokens[j + 1:])


def _empty_quotes(text: str, rng: random.Random) -> str | None:
    """One quoted string's contents emptied (`['a']` -> `['']`): the empty name, key or value."""
    spans = [match.span(match.lastindex or 0) for match in QUOTED.finditer(text)
             if match.group(match.lastindex or 0)]
    if not spans:
        return None
    start, end = rng.choice(spans)
    return text[:start] + text[end:]


def _balanced(text: str) -> bool:
    """Every bracket of `text` is closed, in order, within it: each is in one of its pairs."""
    brackets = sum(char in BRACKETS or char in CLOSING for char in text)
    return brackets == 2 * len(_bracket_pairs(text))


def _bracket_pairs(text: str) -> list[tuple[int, int]]:
    """The (opening, closing) positions of the balanced bracket pairs of `text`."""
    pairs: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    for position, char in enumerate(text):
        if char in BRACKETS:
            stack.append((char, position))
        elif char in CLOSING:
            if stack and stack[-1][0] == CLOSING[char]:
                pairs.append((stack.pop()[1], position))
            else:
                stack.clear()  # unbalanced from here: no pair spans it
    return pairs


TEXT_MUTATIONS: tuple[Callable[[str, random.Random], str | None], ...] = (
    _flip_case, _unicode, _step_digit, _line, _token, _character, _final_newline, _brackets, _wrap,
    _empty_quotes, _line_break, _junk, _one_step_further, format_edit)


def mutate_text(text: str, rng: random.Random, texts: list[str]) -> str:
    """One shape-keeping edit of `text` (or a splice with one of `texts`); `text` itself when no
    edit applies. A text in a format its syntax gives away gets one of its format's edits more often
    (FORMAT_RATIO): what its grammar allows is what real inputs in it differ by."""
    if texts and rng.random() < 1 / (len(TEXT_MUTATIONS) + 1):
        other = rng.choice(texts)
        return text[:rng.randint(0, len(text))] + other[rng.randint(0, len(other)):]
    if rng.random() < FORMAT_RATIO and (edited := format_edit(text, rng)) is not None:
        return edited
    for mutation in rng.sample(TEXT_MUTATIONS, len(TEXT_MUTATIONS)):
        mutated = mutation(text, rng)
        if mutated is not None and mutated != text:
            return mutated
    return text


# ---------------------------------------------------------------- literal mutations


def mutate_literal(literal: list, rng: random.Random, texts: list[str], attempts: int = 5) -> list:
    """A copy of a tagged literal with one shape-keeping edit (`["str", "1h"]` -> `["str", "1H"]`,
    `["int", 5]` -> `["int", 6]`, a list with one item dropped), tried again when an edit gave the
    same value back (0 doubled, a splice that rebuilt the text); a literal nothing edits, unchanged."""
    mutated = literal
    for _ in range(attempts):
        mutated = _mutate_once(literal, rng, texts)
        if mutated != literal:
            break
    return mutated


def _mutate_once(literal: list, rng: random.Random, texts: list[str]) -> list:
    tag = literal[0]
    if tag in TEXT_TAGS:
        return [tag, mutate_text(literal[1], rng, texts)]
    if tag in BYTES_TAGS:
        text = bytes.fromhex(literal[1]).decode("latin-1")
        return [tag, mutate_text(text, rng, []).encode("latin-1", "replace").hex()]
    if tag == "int":
        value = int(literal[1])
        return ["int", rng.choice((value + 1, value - 1, -value, 0, value * 2))]
    if tag == "float":
        value = float(literal[1])
        return ["float", repr(rng.choice((value + 1, value - 1, -value, 0.0, value / 2)))]
    if tag == "bool":
        return ["bool", not literal[1]]
    if tag in ("dict", "list") and rng.random() < SUBCLASS_RATIO:
        return [_subclass_tag(tag, literal[1], rng), literal[1]]
    base = container_tag(tag)  # a subclass's items, edited as its base's
    if base in ("list", "tuple", "set", "frozenset"):
        return [tag, _mutate_items(literal[1], rng, texts, duplicates=base in ("list", "tuple"))]
    if base == "dict":
        return [tag, _mutate_pairs(literal[1], rng, texts)]
    return fuzz_literal(literal, rng)  # dates, durations and the like: a step away


def _subclass_tag(tag: str, items: list, rng: random.Random) -> str:
    """A subclass of the container `tag` names, for the same items: an OrderedDict, a defaultdict, a
    Counter (of counts only) or a user's dict; a user's list."""
    if tag == "list":
        return "sublist"
    counts = all(value[0] == "int" for _, value in items)
    return rng.choice(("ordereddict", "defaultdict", "subdict", *(("tally",) if counts else ())))


def _mutate_items(items: list, rng: random.Random, texts: list[str], duplicates: bool) -> list:
    if not items:
        return items
    i = rng.randrange(len(items))
    edit = rng.randrange(3 if duplicates else 2)
    if edit == 0:
        return items[:i] + items[i + 1:]
    if edit == 1:
        return [*items[:i], mutate_literal(items[i], rng, texts), *items[i + 1:]]
    return [*items[:i + 1], copy.deepcopy(items[i]), *items[i + 1:]]


def _mutate_pairs(pairs: list, rng: random.Random, texts: list[str]) -> list:
    if not pairs:
        return pairs
    i = rng.randrange(len(pairs))
    if rng.random() < 0.3:
        return pairs[:i] + pairs[i + 1:]
    key, value = pairs[i]
    return [*pairs[:i], [key, mutate_literal(value, rng, texts)], *pairs[i + 1:]]


# ---------------------------------------------------------------- the corpus


def literal_places(statements: CallSequence) -> list[tuple[int, int | str]]:
    """Where `statements` pass a literal: (statement index, argument position or keyword name)."""
    return [(index, place) for index, statement in enumerate(statements)
            for place, arg in arguments(statement) if "lit" in arg]


class CorpusPlugin(Plugin):
    """The seeds that entered changed code, and their mutants that did too, mutated on pick."""

    def __init__(self, context: PluginContext) -> None:
        self.rng = context.rng
        self.focus = context.focus
        self.is_seed = context.is_seed
        self.corpus: list[tuple[CallSequence, int]] = []  # a sequence and its mutations from its seed
        self.by_op: dict[str, list[int]] = {}  # operation id -> indexes into `corpus` of its callers
        self.entering: set[str] = set()  # the operations corpus sequences end with (calls that entered)
        self.texts: list[str] = []

    def learn(self, statements: CallSequence, result: SequenceResult) -> None:
        if _entered(result) and self.is_seed(statements):  # the cheap test first: every result comes here
            self._add(statements, 0)

    def propose(self, op: Operation) -> Mutant | None:
        callers = self.by_op.get(op.id)
        # an operation of the focus, or one whose call entered the change though no static reach
        # says so (`sqlparse.parse` runs the changed grouping through a filter stack's methods)
        wanted = op.id in self.focus or op.id in self.entering
        if not callers or not wanted or self.rng.random() >= PROPOSE_RATIO:
            return None
        seed, depth = self.corpus[self.rng.choice(callers)]
        statements = copy.deepcopy(seed)
        places = literal_places(statements)
        mutations = 2 if self.rng.random() < SECOND_MUTATION else 1
        while mutations > 0 or (statements == seed and mutations > -3):  # a second edit may undo the first
            index, place = self.rng.choice(places)
            arg = argument_at(statements[index], place)
            arg["lit"] = mutate_literal(arg["lit"], self.rng, self.texts)
            mutations -= 1
        return Mutant(statements, depth + 1)

    def proposal_ran(self, proposal: Mutant, result: SequenceResult) -> None:  # type: ignore[override]
        if proposal.depth < MAX_DEPTH and _entered(result):
            self._add(proposal.statements, proposal.depth)

    def _add(self, statements: CallSequence, depth: int) -> None:
        if not literal_places(statements):
            return
        if len(self.corpus) < CORPUS_LIMIT:
            index = len(self.corpus)
            self.corpus.append((statements, depth))
        else:
            index = self.rng.randrange(CORPUS_LIMIT)
            for op in {statement["op"] for statement in self.corpus[index][0]}:
                self.by_op[op].remove(index)
            self.corpus[index] = (statements, depth)
        for op in {statement["op"] for statement in statements}:
            self.by_op.setdefault(op, []).append(index)
        self.entering.add(statements[-1]["op"])
        for _, arg in (pair for statement in statements for pair in arguments(statement)):
            lit = arg.get("lit")
            if lit and lit[0] == "str" and lit[1] and len(self.texts) < TEXTS_LIMIT:
                self.texts.append(lit[1])


def _entered(result: SequenceResult) -> bool:
    """Whether a run entered changed code and ended as a sequence can (not lost, not cut short)."""
    return bool(result.hit) and result.status in (Status.OK, Status.EXCEPTION)
