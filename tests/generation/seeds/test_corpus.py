"""The seed corpus (`difforacle.generator.generation.seeds.corpus`): shape-keeping mutations of the
literals of seeds that entered changed code, proposed in place of a pick of an operation they call."""

from __future__ import annotations

import random
from dataclasses import replace
from types import SimpleNamespace

import pytest

from difforacle.generator.generation.seeds import corpus
from difforacle.generator.generation.seeds.corpus import (
    CorpusPlugin,
    literal_places,
    mutate_literal,
    mutate_text,
)
from difforacle.generator.runtime.catalog import Operation
from difforacle.generator.worker.literals import SUBCLASS_TAGS
from difforacle.generator.worker.protocol import SequenceResult, Status

RNG_SEEDS = range(200)
BRACKET_KINDS = (("(", ")"), ("[", "]"), ("{", "}"))


@pytest.mark.parametrize(("mutation", "text", "possible"), [
    (corpus._flip_case, "2024-01-05T10:20", {"2024-01-05t10:20"}),  # the only letter
    (corpus._step_digit, "a1", {"a2", "a0"}),
    (corpus._step_digit, "a9", {"a0", "a8"}),
    (corpus._final_newline, "x\n", {"x"}),
    (corpus._final_newline, "x", {"x\n"}),
    (corpus._line, "a\nb\n", {"b\n", "a\n", "a\na\nb\n", "a\nb\nb\n"}),
    (corpus._token, "1h 30m", {" 30m", "1h1h 30m", "1h30m", "1h  30m", "1h ", "1h 30m30m"}),
    (corpus._character, "ab", {"b", "a", "aab", "abb"}),
    (corpus._brackets, "x and (a or [b])", {"x and ((a or [b]))", "x and a or [b]", "x and (a or [[b]])",
                                            "x and (a or b)"}),
    (corpus._wrap, "a desc", {form.format(o, c) for o, c in BRACKET_KINDS
                              for form in ("{}a{} desc", "{}a desc{}", "a {}desc{}")}),
    # a span's brackets balance; four tokens at most
    (corpus._wrap, "[a] b", {form.format(o, c) for o, c in BRACKET_KINDS
                             for form in ("{}[a]{} b", "[{}a{}] b", "[a] {}b{}")}),
    (corpus._empty_quotes, "['a'] = \"b\"", {"[''] = \"b\"", "['a'] = \"\""}),
    (corpus._line_break, "a\nb", {f"a{mark}b" for mark in corpus.LINE_BREAKS}),
    (corpus._junk, "1h", {f"1h{junk}" for junk in corpus.JUNK}),
    (corpus._one_step_further, "user.name", {"user.name.name", "user.name.x", "user.name.0"}),
    (corpus._one_step_further, "/a/b", {"/a/b/b", "/a/b/x", "/a/b/0"}),
])
def test_each_text_mutation_keeps_the_shape(mutation, text: str, possible: set[str]) -> None:
    made = {mutation(text, random.Random(seed)) for seed in RNG_SEEDS}
    assert made == possible


def test_a_mutation_that_does_not_apply_says_so() -> None:
    rng = random.Random(0)
    assert corpus._flip_case("2024", rng) is None
    assert corpus._step_digit("abc", rng) is None
    assert corpus._line("one line", rng) is None
    assert corpus._token("word", rng) is None
    assert corpus._brackets("a) (b", rng) is None  # no balanced pair
    assert corpus._empty_quotes("'' and \"\"", rng) is None  # nothing to empty
    assert corpus._line_break("one line", rng) is None
    assert corpus._junk("", rng) is None  # no value to follow
    assert corpus._one_step_further("name", rng) is None  # no path of keys


def test_a_space_becomes_a_unicode_space_or_a_character_a_variant() -> None:
    made = {corpus._unicode("1 h", random.Random(seed)) for seed in RNG_SEEDS}
    assert {"1\u00a0h", "1\u3000h", "1\th", "1\x85h", "1\u2028h"} <= made  # each whitespace class
    assert all(len(text) in (3, 4) and text != "1 h" for text in made)


def test_mutate_text_always_edits_and_sometimes_splices() -> None:
    made = [mutate_text("1h 30m", random.Random(seed), ["PT5M"]) for seed in RNG_SEEDS]
    assert all(text != "1h 30m" for text in made)
    assert any("PT5M"[1:] in text or text.endswith("M") for text in made)  # a splice with the other text
    assert mutate_text("", random.Random(0), []) == "\n"  # the only edit of an empty text


@pytest.mark.parametrize(("literal", "tag"), [
    (["str", "1h"], "str"), (["bytes", "6162"], "bytes"), (["int", 5], "int"), (["float", "1.5"], "float"),
    (["bool", True], "bool"), (["list", [["int", 1], ["int", 2]]], "list"),
    (["dict", [[["str", "a"], ["int", 1]]]], "dict"),
    (["date", "2024-01-05"], "date"),  # a step away (GRT's fuzzing of dates)
])
def test_a_literal_keeps_its_kind(literal: list, tag: str) -> None:
    """Its tag, or for a container a subclass of its type."""
    for seed in range(30):
        mutated = mutate_literal(literal, random.Random(seed), [])
        assert SUBCLASS_TAGS.get(mutated[0], (mutated[0],))[0] == tag and mutated != literal


def test_a_containers_items_are_sometimes_passed_in_a_subclass_of_its_type() -> None:
    counts = [[["str", "a"], ["int", 1]]]
    made = {mutate_literal(["dict", counts], random.Random(seed), [])[0] for seed in RNG_SEEDS}
    assert {"dict", "ordereddict", "defaultdict", "tally", "subdict"} == made
    # a Counter holds counts only
    names = [[["str", "a"], ["str", "b"]]]
    assert "tally" not in {mutate_literal(["dict", names], random.Random(seed), [])[0] for seed in RNG_SEEDS}
    lists = {mutate_literal(["list", [["int", 1]]], random.Random(seed), [])[0] for seed in RNG_SEEDS}
    assert "sublist" in lists
    # a subclass's items are edited as its base's, the subclass kept
    edited = {str(mutate_literal(["sublist", [["int", 1], ["int", 2]]], random.Random(seed), []))
              for seed in RNG_SEEDS}
    assert "['sublist', [['int', 2]]]" in edited and all(text.startswith("['sublist'") for text in edited)


def test_numbers_step_to_their_neighbours() -> None:
    made = {mutate_literal(["int", 5], random.Random(seed), [])[1] for seed in RNG_SEEDS}
    assert made == {4, 6, -5, 0, 10}


def test_a_container_loses_doubles_or_changes_one_item() -> None:
    made = {str(mutate_literal(["list", [["int", 1], ["int", 2]]], random.Random(seed), [])[1])
            for seed in RNG_SEEDS}
    assert "[['int', 2]]" in made and "[['int', 1]]" in made  # one dropped
    assert "[['int', 1], ['int', 1], ['int', 2]]" in made  # one doubled
    assert "[['int', 0], ['int', 2]]" in made  # one changed


STAMP = "pkg.stamps:minutes"
STRICT = {"strict": {"lit": ["bool", True]}}
SEED = [{"op": "pkg.stamps:Clock", "args": [{"lit": ["str", "UTC"]}], "kwargs": {}},
        {"op": STAMP, "args": [{"ref": 0}, {"lit": ["str", "2024-01-05T10:20"]}], "kwargs": STRICT}]
HIT = SequenceResult(Status.OK, {}, executed=2, hit=True)


def _plugin(seeds: set[int] | None = None, focus: frozenset[str] = frozenset({STAMP})) -> CorpusPlugin:
    """The plugin with what it takes of a generator's context (`seeds`: ids of the seeds; None: all)."""
    def is_seed(statements: list) -> bool:
        return seeds is None or id(statements) in seeds
    return CorpusPlugin(SimpleNamespace(rng=random.Random(0), focus=focus, is_seed=is_seed))  # type: ignore[arg-type]


def _op(op_id: str = STAMP) -> Operation:
    return Operation(op_id, "function", None, (), (), None, None)


def test_the_literal_places_of_a_sequence() -> None:
    assert literal_places(SEED) == [(0, 0), (1, 1), (1, "strict")]


def test_a_seed_that_entered_changed_code_is_mutated_in_place() -> None:
    plugin = _plugin()
    plugin.learn(SEED, HIT)
    proposals = [plugin.propose(_op()) for _ in range(100)]
    made = [proposal for proposal in proposals if proposal is not None]
    assert 20 <= len(made) <= 60  # PROPOSE_RATIO of the picks
    for mutant in made:
        assert [s["op"] for s in mutant.statements] == [s["op"] for s in SEED]  # the same calls
        assert mutant.statements[1]["args"][0] == {"ref": 0}  # references kept
        changed = [place for place in literal_places(SEED)
                   if _arg(mutant.statements, place) != _arg(SEED, place)]
        assert 1 <= len(changed) <= 2 and mutant.depth == 1
    assert SEED[1]["args"][1] == {"lit": ["str", "2024-01-05T10:20"]}  # the seed itself untouched
    assert any(_arg(m.statements, (1, 1)) == {"lit": ["str", "2024-01-05t10:20"]} for m in made)


def _arg(statements: list, place: tuple) -> dict:
    index, at = place
    return statements[index]["args"][at] if isinstance(at, int) else statements[index]["kwargs"][at]


def test_only_seeds_that_entered_changed_code_and_pass_literals_join() -> None:
    made = [{"op": STAMP, "args": [{"lit": ["str", "x"]}], "kwargs": {}}]
    plugin = _plugin(seeds=set())
    plugin.learn(made, HIT)  # generated, not a seed
    plugin.learn(SEED, replace(HIT, hit=False))  # did not enter changed code
    plugin.learn(SEED, replace(HIT, status=Status.CRASH))  # lost
    plugin.learn([{"op": STAMP, "args": [], "kwargs": {}}], HIT)  # nothing to mutate
    assert plugin.corpus == [] and plugin.propose(_op()) is None


def test_an_operation_out_of_focus_or_no_seed_calls_gets_no_mutant() -> None:
    plugin = _plugin(focus=frozenset({"pkg.stamps:other"}))
    plugin.learn(SEED, HIT)
    # out of focus, and no seed ends with it: a call that builds a receiver, not one that entered
    assert all(plugin.propose(_op("pkg.stamps:Clock")) is None for _ in range(50))
    assert all(plugin.propose(_op("pkg.stamps:other")) is None for _ in range(50))  # no seed calls it


def test_the_call_a_seed_ends_with_gets_mutants_out_of_focus_too() -> None:
    plugin = _plugin(focus=frozenset({"pkg.stamps:other"}))  # no static reach found it
    plugin.learn(SEED, HIT)  # but the seed's last call entered the change
    assert any(plugin.propose(_op()) is not None for _ in range(50))


def test_mutants_that_enter_changed_code_join_up_to_the_depth_limit() -> None:
    plugin = _plugin()
    plugin.learn(SEED, HIT)
    mutant = next(p for p in iter(lambda: plugin.propose(_op()), 0) if p is not None)
    plugin.proposal_ran(mutant, replace(HIT, hit=False))
    assert len(plugin.corpus) == 1  # it did not enter changed code
    plugin.proposal_ran(mutant, HIT)
    assert len(plugin.corpus) == 2 and plugin.corpus[1][1] == 1
    deep = replace(mutant, depth=corpus.MAX_DEPTH)
    plugin.proposal_ran(deep, HIT)
    assert len(plugin.corpus) == 2


def test_a_full_corpus_replaces_an_entry_and_keeps_its_index() -> None:
    plugin = _plugin()
    for number in range(corpus.CORPUS_LIMIT + 5):
        plugin.learn([{"op": STAMP, "args": [{"lit": ["int", number]}], "kwargs": {}}], HIT)
    assert len(plugin.corpus) == corpus.CORPUS_LIMIT
    assert sorted(plugin.by_op[STAMP]) == list(range(corpus.CORPUS_LIMIT))
