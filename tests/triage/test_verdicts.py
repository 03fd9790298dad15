"""The order of the verdicts (`difforacle.generator.triage.verdicts`): a broken existing test first,
then an input outside the declared types, then the pull request's words; unexplained otherwise."""

from __future__ import annotations

from support.report_samples import sample_difference

from difforacle.generator.changes.model import Unit
from difforacle.generator.report.model import Statement, TableEntry, Verdict
from difforacle.generator.runtime.catalog import Operation, Parameter
from difforacle.generator.triage.pull_request import Passage, PullRequestText
from difforacle.generator.triage.verdicts import triage

TEXT = Parameter("text", "POSITIONAL_OR_KEYWORD", False, ("builtins.str",))
OPERATIONS = {"pkg.mod:width": Operation("pkg.mod:width", "function", None, (TEXT,), (), None, None)}


def _width(arg: dict, **fields: object) -> object:
    return sample_difference(1, target="pkg.mod:width", path="pkg/mod.py", line=7, side="head",
                             statements=[Statement("pkg.mod:width", (arg,))], **fields)


NONE, WORD = {"lit": ["none"]}, {"lit": ["str", "ab"]}


def test_the_verdicts_in_order() -> None:
    said = PullRequestText([Passage("the title", "Make width count tabs")])
    broken = {"tests/test_mod.py::test_width": frozenset({"pkg.mod:width"})}
    cases = [
        (_width(WORD), None, None, Verdict.UNEXPLAINED),
        (_width(WORD), said, None, Verdict.UNEXPLAINED),  # `width`: a plain word, not marked as code
        (_width(WORD), PullRequestText([Passage("the title", "Make `width` count tabs")]), None,
         Verdict.NAMED_BY_PR),
        (_width(NONE), PullRequestText([Passage("the title", "Make `width` count tabs")]), None,
         Verdict.OUTSIDE_DECLARED_TYPES),
        (_width(NONE), None, broken, Verdict.BREAKS_EXISTING_TEST),
    ]
    for difference, text, tests, expected in cases:
        [judged] = triage([difference], OPERATIONS, text, (), tests)
        assert judged.verdict == expected, (judged, expected)
        assert bool(judged.evidence) is (expected != Verdict.UNEXPLAINED)


def test_a_changed_helper_at_the_differences_line_is_named_too() -> None:
    helper = Unit("pkg.mod", "_count_cells", "function", "modified", "pkg/mod.py", 5, 9)
    said = PullRequestText([Passage("commit 1a2b3c4", "_count_cells treats tabs as 8 cells")])
    [judged] = triage([_width(WORD)], OPERATIONS, said, [helper])
    assert (judged.verdict, judged.evidence) == (Verdict.NAMED_BY_PR, 'named by the pull request, in commit '
                                                 '1a2b3c4: "_count_cells treats tabs as 8 cells"')
    elsewhere = Unit("pkg.mod", "_count_cells", "function", "modified", "pkg/mod.py", 20, 30)
    assert triage([_width(WORD)], OPERATIONS, said, [elsewhere])[0].verdict == Verdict.UNEXPLAINED


ASSERTING = {"tests/test_mod.py::test_new": frozenset({"pkg.mod:width"})}


def _raising(target: str, head: str, kind: str = "exception", carved_by: tuple[str, ...] = (), line: int = 7):
    return sample_difference(1, target=target, kind=kind, path="pkg/mod.py", line=line, side="head",
                             base="raises ValueError: bad", head=head, carved_by=list(carved_by),
                             statements=[Statement(target, (WORD,))])


def test_a_pull_request_test_that_shows_the_difference_asserts_it() -> None:
    [asserted, other] = triage([_raising("pkg.mod:width", "raises KeyError: 'ab'",
                                         carved_by=("tests/test_mod.py::test_new",)),
                                _raising("pkg.mod:height", "raises KeyError: 'ab'", kind="return")],
                               OPERATIONS, asserting=ASSERTING)
    assert asserted.verdict == Verdict.ASSERTED_BY_PR
    assert asserted.evidence == ("the pull request's test tests/test_mod.py::test_new, which fails on base "
                                 "and passes on head, shows it through its own calls")
    assert other.verdict == Verdict.UNEXPLAINED  # not in the test's calls: another operation
    [carved_by_another] = triage([_raising("pkg.mod:width", "raises KeyError: 'ab'",
                                           carved_by=("tests/test_mod.py::test_old",))],
                                 OPERATIONS, asserting=ASSERTING)
    assert carved_by_another.verdict == Verdict.UNEXPLAINED  # a test that does not assert a change


def test_the_asserted_exception_raised_at_the_same_line_through_another_entry_point_is_asserted() -> None:
    shown = ("tests/test_mod.py::test_new",)
    judged = triage([_raising("pkg.mod:width", "raises KeyError: 'ab'", carved_by=shown),
                     _raising("pkg.api:measure", "raises KeyError: 'xyz'"),
                     _raising("pkg.api:other", "raises TypeError: no"),  # another exception
                     _raising("pkg.api:moved", "raises KeyError: 'xyz'", line=9),  # another line
                     _raising("pkg.api:value", "'ab'", kind="return")],  # a value, not the raise
                    OPERATIONS, asserting=ASSERTING)
    asserted, unexplained = Verdict.ASSERTED_BY_PR, Verdict.UNEXPLAINED
    assert [d.verdict for d in judged] == [asserted, asserted, unexplained, unexplained, unexplained]
    assert judged[1].evidence.startswith("the change pkg.mod:width shows at the same line, raising the same "
                                         "exception: the pull request's test tests/test_mod.py::test_new")


def test_the_asserted_change_of_a_value_at_another_item_position_is_asserted() -> None:
    def changed(key: str, base: str = "<pkg.sql.Identifier object>", target: str = "pkg.mod:width",
                carved_by: tuple[str, ...] = ()) -> object:
        return sample_difference(1, target=target, key=key, base=base, head="<pkg.sql.Token object>",
                                 carved_by=list(carved_by), statements=[Statement(target, (WORD,))])
    judged = triage([changed("0/0[0].tokens[2]", carved_by=("tests/test_mod.py::test_new",)),
                     changed("2/2[0].tokens[0]"),  # the same change, at another item of another call
                     changed("0/0[0].tokens[0].value"),  # another part of the result
                     changed("0/0[0].tokens[0]", base="<pkg.sql.Comment object>"),  # from another value
                     changed("0/0[0].tokens[0]", target="pkg.mod:height")],  # another operation
                    OPERATIONS, asserting=ASSERTING)
    asserted, unexplained = Verdict.ASSERTED_BY_PR, Verdict.UNEXPLAINED
    assert [d.verdict for d in judged] == [asserted, asserted, unexplained, unexplained, unexplained]
    assert judged[1].evidence.startswith("the change pkg.mod:width shows as the same change of the same part "
                                         "of its result: the pull request's test tests/test_mod.py::test_new")


def test_a_removed_module_is_named_by_what_it_defined() -> None:
    removed = Unit("pkg.frozen", "FrozenBidict", "class", "removed", "pkg/frozen.py", 3, 40)
    def gone() -> object:
        return sample_difference(1, target="pkg.frozen:<module>", path=None, line=1, side="head",
                                 base="imports", head="raises ModuleNotFoundError: No module named 'pkg'",
                                 statements=[Statement("pkg.frozen:<module>", ())])
    said = PullRequestText([Passage("the title", "Drop FrozenBidict")])
    assert triage([gone()], OPERATIONS, said, [removed])[0].verdict == Verdict.NAMED_BY_PR
    other = Unit("pkg.other", "FrozenBidict", "class", "removed", "pkg/other.py", 3, 40)
    assert triage([gone()], OPERATIONS, said, [other])[0].verdict == Verdict.UNEXPLAINED  # another module's


def test_a_name_gone_on_head_is_explained_by_the_rename_that_names_it() -> None:
    gone = sample_difference(1, target="pkg:HookOpts<export>", kind="api", path="pkg/__init__.py", line=3,
                             side="head", base="returns normally",
                             head="API change (missing): pkg has no HookOpts",
                             statements=[Statement("pkg:HookOpts<export>", ())])
    said = PullRequestText([Passage("the title", "Rename `HookOpts` -> `HookOptions`")])
    assert triage([gone], OPERATIONS, said)[0].verdict == Verdict.NAMED_BY_PR
    changed = sample_difference(1, target="pkg:HookOpts", kind="return", path="pkg/__init__.py", line=3,
                                side="head", statements=[Statement("pkg:HookOpts", ())])
    assert triage([changed], OPERATIONS, said)[0].verdict == Verdict.UNEXPLAINED  # a rename keeps the rest


def _hashing() -> object:
    return sample_difference(1, target="pkg.items:Float.__hash__", path="pkg/items.py", line=31, side="head",
                             base="raises TypeError: unhashable type: 'Float'", head="returns normally",
                             statements=[Statement("pkg.items:Float.__hash__", (WORD,))])


def test_an_operation_the_pull_request_adds_is_explained_by_its_definition() -> None:
    # `Float.__hash__` defined on head where base inherited `__hash__ = None`: all it does is new
    added = Unit("pkg.items", "Float.__hash__", "method", "added", "pkg/items.py", 30, 32)
    [judged] = triage([_hashing()], OPERATIONS, None, [added])
    assert (judged.verdict, judged.evidence) == (Verdict.NAMED_BY_PR,
                                                 "the pull request adds it: pkg/items.py:30")
    # a changed definition base had, or an added helper it calls, explains nothing by itself
    modified = Unit("pkg.items", "Float.__hash__", "method", "modified", "pkg/items.py", 30, 32)
    helper = Unit("pkg.items", "_hash_of", "function", "added", "pkg/items.py", 30, 32)
    for units in ([modified], [helper]):
        assert triage([_hashing()], OPERATIONS, None, units)[0].verdict == Verdict.UNEXPLAINED


def _gone(name: str) -> object:
    return sample_difference(1, target=f"pkg.fields:{name}", kind="api", path=None, line=None, side="head",
                             base="returns normally", head=f"API change (missing): pkg.fields has no {name}",
                             statements=[Statement(f"pkg.fields:{name}", ())])


def test_a_name_whose_definition_the_pull_request_deletes_is_explained_by_the_deletion() -> None:
    deleted = Unit("pkg.fields", "StringEnum", "class", "removed", "pkg/fields.py", 1920, 1921)
    renamed = Unit("pkg.fields", "StringEnumValue", "class", "added", "pkg/fields.py", 1920, 1921)
    [judged] = triage([_gone("StringEnum")], OPERATIONS, None, [deleted, renamed])
    assert (judged.verdict, judged.evidence) == (
        Verdict.NAMED_BY_PR, "the pull request deletes its definition: pkg/fields.py:1920 on base")
    # another name gone, a definition only changed, or one moved to another module: not explained
    changed = Unit("pkg.fields", "StringEnum", "class", "modified", "pkg/fields.py", 1920, 1921)
    moved = Unit("pkg.enums", "StringEnum", "class", "added", "pkg/enums.py", 1, 2)
    for difference, units in ((_gone("IntegerEnum"), [deleted]), (_gone("StringEnum"), [changed]),
                              (_gone("StringEnum"), [deleted, moved])):
        assert triage([difference], OPERATIONS, None, units)[0].verdict == Verdict.UNEXPLAINED
    # a value that changed, not a name gone, is not explained by a deletion of the same name
    value = sample_difference(1, target="pkg.fields:StringEnum", kind="return", path=None, line=None,
                              side="head", statements=[Statement("pkg.fields:StringEnum", ())])
    assert triage([value], OPERATIONS, None, [deleted])[0].verdict == Verdict.UNEXPLAINED


def test_a_constructor_that_runs_an_init_the_pull_request_adds_is_explained_by_it() -> None:
    # `FrozenError` given an `__init__` (head lines 17-20) where base inherited AttributeError's
    names = ("FrozenError", "FrozenInstanceError", "Other")
    operations = {f"pkg.errors:{name}": Operation(f"pkg.errors:{name}", "constructor", f"pkg.errors.{name}",
                                                  (), (), "pkg/errors.py", 5) for name in names}
    frozen = ["pkg.errors.FrozenError", "builtins.AttributeError"]
    classes = {"pkg.errors.FrozenError": {"mro": frozen},
               "pkg.errors.FrozenInstanceError": {"mro": ["pkg.errors.FrozenInstanceError", *frozen]},
               "pkg.errors.Other": {"mro": ["pkg.errors.Other", "builtins.ValueError"]}}
    init = Unit("pkg.errors", "FrozenError.__init__", "method", "added", "pkg/errors.py", 17, 20)

    def made(target: str, line: int | None, kind: str = "return") -> object:
        return sample_difference(1, target=target, kind=kind, path="pkg/errors.py" if line else None,
                                 line=line, side="head" if line else None, statements=[Statement(target, ())])

    explained = [made("pkg.errors:FrozenError", 18), made("pkg.errors:FrozenInstanceError", 18),
                 made("pkg.errors:FrozenError<subclass>", 19), made("pkg.errors:FrozenError", None, "api")]
    for judged in triage(explained, operations, None, [init], classes=classes):
        assert (judged.verdict, judged.evidence) == (Verdict.NAMED_BY_PR,
                                                     "the pull request adds it: pkg/errors.py:17")
    # seen elsewhere than in the added method; a class that does not inherit it; a changed `__init__`
    unexplained = [made("pkg.errors:FrozenError", 30), made("pkg.errors:Other", 18)]
    for judged in triage(unexplained, operations, None, [init], classes=classes):
        assert judged.verdict == Verdict.UNEXPLAINED
    changed = Unit("pkg.errors", "FrozenError.__init__", "method", "modified", "pkg/errors.py", 17, 20)
    assert triage([made("pkg.errors:FrozenError", 18)], operations, None, [changed],
                  classes=classes)[0].verdict == Verdict.UNEXPLAINED


def test_an_input_that_passes_a_value_the_pull_request_adds_is_named_by_it() -> None:
    """`names = ["hi", "hi-in"]`: the lookup of "hi-in" succeeding is what the pull request wrote."""
    written = PullRequestText(values={"hi-in": "pkg/locales.py:12", b"xn--abc": "tests/test_mod.py:4"})
    [named] = triage([_width({"lit": ["str", "hi-in"]})], OPERATIONS, written)
    assert (named.verdict, named.evidence) == (
        Verdict.NAMED_BY_PR, "its input passes 'hi-in', a value the pull request adds at pkg/locales.py:12")
    in_a_list = _width({"lit": ["list", [["str", "x"], ["bytes", b"xn--abc".hex()]]]})
    assert triage([in_a_list], OPERATIONS, written)[0].verdict == Verdict.NAMED_BY_PR
    for other in ({"lit": ["str", "hi"]}, {"lit": ["str", "hi-in "]}, {"ref": 0}):  # another value: nothing
        assert triage([_width(other)], OPERATIONS, written)[0].verdict == Verdict.UNEXPLAINED, other


VALUE = Parameter("value", "POSITIONAL_OR_KEYWORD", False, ())
SECONDS = {"pkg.mod:to_seconds": Operation("pkg.mod:to_seconds", "function", None, (VALUE,), (), None, None)}


def _seconds(lit: list, number: int = 1) -> object:
    return sample_difference(number, target="pkg.mod:to_seconds", path="pkg/mod.py", line=7, side="head",
                             statements=[Statement("pkg.mod:to_seconds", ({"lit": lit},))])


def test_a_line_that_names_a_type_of_input_means_the_inputs_of_that_type_only() -> None:
    """"Read Decimal in to_seconds": the Decimal input's difference is meant; an int's that changed
    beside it is not, unless another line names `to_seconds` without singling out inputs."""
    title = PullRequestText([Passage("the title", "Read Decimal in to_seconds")])
    decimal, whole = _seconds(["decimal", "1.5"], 1), _seconds(["int", 90], 2)
    triage([decimal, whole], SECONDS, title)
    assert (decimal.verdict, whole.verdict) == (Verdict.NAMED_BY_PR, Verdict.UNEXPLAINED)
    assert whole.evidence == ""
    # alone, the int's difference has no input of the type the line names beside it: the line names
    # `to_seconds` and nothing it can tell apart
    assert triage([_seconds(["int", 90])], SECONDS, title)[0].verdict == Verdict.NAMED_BY_PR
    # unless the pull request's tests of new behaviour use a Decimal: the line then means Decimal
    # inputs, found or not; names of theirs that are no type (`to_seconds`, `value`) do not count
    stated = frozenset({"Decimal", "to_seconds", "value"})
    assert triage([_seconds(["int", 90])], SECONDS, title, stated=stated)[0].verdict == Verdict.UNEXPLAINED
    untyped = frozenset({"to_seconds", "value", "Read"})
    assert triage([_seconds(["int", 90])], SECONDS, title, stated=untyped)[0].verdict == Verdict.NAMED_BY_PR
    more = PullRequestText([*title.passages, Passage("the body", "to_seconds also rounds half up now")])
    decimal, whole = _seconds(["decimal", "1.5"], 1), _seconds(["int", 90], 2)
    triage([decimal, whole], SECONDS, more)
    assert (decimal.verdict, whole.verdict) == (Verdict.NAMED_BY_PR, Verdict.NAMED_BY_PR)
    assert whole.evidence == 'named by the pull request, in the body: "to_seconds also rounds half up now"'
    # the line does not mean it, but the input passes a value the pull request writes: the next rule
    written = PullRequestText(title.passages, values={"90 min": "pkg/mod.py:3"})
    decimal, spoken = _seconds(["decimal", "1.5"], 1), _seconds(["str", "90 min"], 2)
    triage([decimal, spoken], SECONDS, written)
    assert (spoken.verdict, spoken.evidence) == (
        Verdict.NAMED_BY_PR, "its input passes '90 min', a value the pull request adds at pkg/mod.py:3")
    # a plain type name counts only marked as code: "a date" in prose is English
    prose = PullRequestText([Passage("the title", "Let to_seconds take a date as well")])
    day, whole = _seconds(["date", "2020-01-02"], 1), _seconds(["int", 90], 2)
    assert [d.verdict for d in triage([day, whole], SECONDS, prose)] == [Verdict.NAMED_BY_PR] * 2
    code = PullRequestText([Passage("the title", "Let to_seconds take a `date` as well")])
    day, whole = _seconds(["date", "2020-01-02"], 1), _seconds(["int", 90], 2)
    assert [d.verdict for d in triage([day, whole], SECONDS, code)] == [Verdict.NAMED_BY_PR,
                                                                        Verdict.UNEXPLAINED]


KEYWORDS = {"pkg.rules:KEYWORDS": Operation("pkg.rules:KEYWORDS", "value", None, (), (), None, None)}


def _table(*entries: TableEntry) -> object:
    return sample_difference(1, target="pkg.rules:KEYWORDS", path="pkg/rules.py", line=3, side="head",
                             statements=[Statement("pkg.rules:KEYWORDS")], entries=list(entries))


def test_words_that_name_a_table_mean_the_entries_they_name_or_else_the_whole_table() -> None:
    added, removed = TableEntry("added", "['RETURNING']", ("RETURNING",)), TableEntry("removed", "['LIMIT']",
                                                                                     ("LIMIT",))
    some = PullRequestText([Passage("the title", "Add RETURNING to KEYWORDS")])
    whole = PullRequestText([Passage("the title", "Regenerate KEYWORDS from the grammar")])
    assert triage([_table(added)], KEYWORDS, some)[0].verdict == Verdict.NAMED_BY_PR
    assert triage([_table(added, removed)], KEYWORDS, some)[0].verdict == Verdict.UNEXPLAINED
    [judged] = triage([_table(added, removed)], KEYWORDS, whole)
    assert (judged.verdict, judged.evidence) == (
        Verdict.NAMED_BY_PR, 'named by the pull request, in the title: "Regenerate KEYWORDS from the '
        'grammar", which names none of its 2 entries that differ: the whole table')
    [judged] = triage([_table(added)], KEYWORDS, some)
    assert judged.evidence == ('named by the pull request, in the title: "Add RETURNING to KEYWORDS"; and '
                               "each entry that differs: ['RETURNING']")


def test_none_in_a_line_names_a_value_not_a_type_of_input() -> None:
    """"Return None from to_seconds on an empty text": None there is what it returns."""
    said = PullRequestText([Passage("the title", "Return None from to_seconds on an empty text")])
    nothing, whole = _seconds(["none"], 1), _seconds(["int", 90], 2)
    assert [d.verdict for d in triage([nothing, whole], SECONDS, said)] == [Verdict.NAMED_BY_PR] * 2


def test_each_verdict_names_the_rule_that_gave_it() -> None:
    from difforacle.generator.triage.rules import RULES
    assert len({rule.name for rule in RULES}) == len(RULES)
    named = PullRequestText([Passage("the title", "Make `width` count tabs")])
    broken = {"tests/test_mod.py::test_width": frozenset({"pkg.mod:width"})}
    for difference, text, tests, rule in [(_width(WORD), named, None, "words-name-it"),
                                          (_width(NONE), named, None, "outside-declared-types"),
                                          (_width(NONE), None, broken, "existing-test-breaks"),
                                          (_width(WORD), None, None, "")]:
        [judged] = triage([difference], OPERATIONS, text, (), tests)
        assert judged.rule == rule
        assert rule == "" or next(r for r in RULES if r.name == rule).verdict == judged.verdict


def test_an_unexplained_difference_says_what_came_closest() -> None:
    """A passage that names the operation but claims to keep behaviour, a test of the pull request
    that calls it but shows another difference, a line that means inputs of another type: each is
    said, so that a maintainer sees why nothing counted."""
    keeps = PullRequestText([Passage("commit 1a2b3c4", "Speed up `width`\n\nNo functional change.")])
    [judged] = triage([_width(WORD)], OPERATIONS, keeps, asserting=ASSERTING)
    assert judged.verdict == Verdict.UNEXPLAINED and judged.evidence == ""
    assert judged.closest == [
        "the pull request's test tests/test_mod.py::test_new calls it and fails on base, but its own calls "
        "do not show this difference",
        'commit 1a2b3c4 names it, but says its change keeps behaviour: "Speed up `width`"']
    title = PullRequestText([Passage("the title", "Read Decimal in to_seconds")])
    decimal, whole = _seconds(["decimal", "1.5"], 1), _seconds(["int", 90], 2)
    triage([decimal, whole], SECONDS, title)
    assert whole.closest == ['the title names it, but means inputs of another type (Decimal): '
                             '"Read Decimal in to_seconds"']
    assert decimal.closest == [] and decimal.rule == "words-name-it"
    assert triage([_width(WORD)], OPERATIONS, None)[0].closest == []  # nothing came close


def test_a_plain_name_in_a_changelog_line_explains_by_its_own_rule() -> None:
    changelog = PullRequestText([Passage("CHANGES.rst", "- width counts tabs as eight cells")])
    [judged] = triage([_width(WORD)], OPERATIONS, changelog)
    assert (judged.verdict, judged.rule) == (Verdict.NAMED_BY_PR, "words-name-it-in-prose")
    assert judged.evidence == ('named by the pull request, in CHANGES.rst: "- width counts tabs as eight '
                               'cells"')
    prefix = PullRequestText([Passage("the title", "width: count tabs as eight cells")])
    assert triage([_width(WORD)], OPERATIONS, prefix)[0].rule == "words-name-it"


def test_a_line_that_speaks_of_inputs_now_accepted_or_refused_means_that_change_of_outcome() -> None:
    """"Support negative durations in to_seconds": an input that raised on base and gives a result on
    head is meant; `to_seconds("1m")` turning 60 into 600 beside it is not (the regression hidden
    next to an intended change). "Raise ValueError for empty text in to_seconds" means the inputs
    that now raise."""
    def changed(base: str, head: str, number: int) -> object:
        return sample_difference(number, target="pkg.mod:to_seconds", kind="exception", path="pkg/mod.py",
                                 line=7, side="head", base=base, head=head,
                                 statements=[Statement("pkg.mod:to_seconds", ({"lit": ["str", "x"]},))])
    supports = PullRequestText([Passage("the title", "Support negative durations in to_seconds")])
    negative, minute = changed("raises ValueError: bad", "-3600", 1), changed("60", "600", 2)
    triage([negative, minute], SECONDS, supports)
    assert (negative.verdict, minute.verdict) == (Verdict.NAMED_BY_PR, Verdict.UNEXPLAINED)
    assert minute.closest == ['the title names it, but speaks of inputs it now accepts, and this difference '
                              'is no such change: "Support negative durations in to_seconds"']
    refuses = PullRequestText([Passage("the title", "Raise ValueError for empty text in to_seconds")])
    empty, minute = changed("0", "raises ValueError: empty", 1), changed("60", "600", 2)
    assert [d.verdict for d in triage([empty, minute], SECONDS, refuses)] == [Verdict.NAMED_BY_PR,
                                                                               Verdict.UNEXPLAINED]
    # "no longer raise" is acceptance; a line that says neither (or both) means any change
    for line, verdicts in (
            ("to_seconds no longer raises on negative values", ["named-by-pr", "unexplained"]),
            ("Fix to_seconds for negative values", ["named-by-pr", "named-by-pr"]),
            ("to_seconds accepts negatives and rejects empty text", ["named-by-pr", "named-by-pr"])):
        negative, minute = changed("raises ValueError: bad", "-3600", 1), changed("60", "600", 2)
        judged = triage([negative, minute], SECONDS, PullRequestText([Passage("the title", line)]))
        assert [str(d.verdict) for d in judged] == verdicts, line
