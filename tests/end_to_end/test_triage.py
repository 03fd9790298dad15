"""Triage: a difference only an input outside the declared types shows is set apart with its
evidence, fails nothing and exits 0; the same change with a difference on a declared input is a
possible regression, exit 1. The reproduction: an ASCII fast path added at the top of
`width(text: str) -> int`, whose only difference is `width(None)` (`TypeError` on base,
`AttributeError` on head)."""

from __future__ import annotations

import json

import pytest
from support.analysis import run_analyze
from support.command_line import run_cli
from support.repos import RepoBuilder, make_pr

from difforacle.bot.markdown import render_markdown
from difforacle.bot.summary import headline
from difforacle.generator import COUNTED, Verdict, report_to_json, validate_report
from difforacle.generator.report.model import Difference

WIDTH = '''\
import unicodedata


def width(text: str) -> int:
    """Columns `text` takes in a terminal: wide East Asian characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
'''
FAST_PATH = WIDTH.replace("    return sum(",
                          "    if text.isascii():\n        return len(text)\n    return sum(")
# the fast path also counts each tab twice: a difference on a declared input
TABS_TWICE = FAST_PATH.replace("return len(text)\n", "return len(text) + text.count('\\t')\n")
OPTIONAL = WIDTH.replace("text: str", "text: str | None")


def _pr(builder: RepoBuilder, before: str, after: str) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/text.py": before}, {"pkg/text.py": after})


def test_a_difference_only_none_shows_for_a_str_is_set_apart(builder: RepoBuilder) -> None:
    _pr(builder, WIDTH, FAST_PATH)
    report = run_analyze(builder)
    [difference] = report.differences
    assert (difference.kind, difference.severity) == ("exception", "major")  # TypeError -> AttributeError
    assert "width(None)" in difference.test
    assert difference.verdict == Verdict.OUTSIDE_DECLARED_TYPES
    assert difference.evidence == ("only an input outside the declared types shows it: `None` for "
                                   "`text: str` of `pkg.text:width`")
    data = report_to_json(report)
    validate_report(data)
    assert data["differences"][0]["verdict"] == "outside-declared-types"
    text = render_markdown(data)
    assert "No behavioural difference in the 2 changed lines, all of which ran. 1 difference only on " \
           "inputs outside the declared types." in text
    assert "### Outside the declared types" in text and "| exception (outside declared types) |" in text
    assert "Only an input outside the declared types shows it: `None` for `text: str`" in text
    assert headline(data).startswith("difforacle: no behavioural difference in the 2 changed lines")


@pytest.mark.slow
@pytest.mark.parametrize("after", [TABS_TWICE, OPTIONAL.replace("    return sum(", "    if text is None:\n"
                                                                 "        return 0\n    return sum(")],
                         ids=["a-declared-input-differs", "none-is-declared"])
def test_a_difference_on_a_declared_input_is_unexplained(builder: RepoBuilder, after: str) -> None:
    _pr(builder, WIDTH if after is TABS_TWICE else OPTIONAL, after)
    report = run_analyze(builder)
    counted = [d for d in report.differences if d.verdict == Verdict.UNEXPLAINED]
    assert counted and not counted[0].evidence
    if after is TABS_TWICE:
        assert counted[0].kind == "return" and "\\t" in counted[0].test
    else:  # `text: str | None`: None is an input a caller may pass
        assert "width(None)" in counted[0].test


@pytest.mark.slow
def test_the_exit_status_counts_only_declared_inputs(builder: RepoBuilder) -> None:
    _pr(builder, WIDTH, FAST_PATH)
    common = ("diff", "--repo", str(builder.root), "--base", "main", "--head", "feature", "--budget", "10",
              "--max-sequences", "300", "--quiet")
    quiet = run_cli(*common, "--json", str(builder.root.parent / "apart.json"))
    assert quiet.returncode == 0, (quiet.stdout, quiet.stderr)
    data = json.loads((builder.root.parent / "apart.json").read_text())
    assert [d["verdict"] for d in data["differences"]] == ["outside-declared-types"]
    builder.switch("feature")
    builder.commit({"pkg/text.py": TABS_TWICE}, "tabs count twice")
    builder.switch("main")
    loud = run_cli(*common)
    assert loud.returncode == 1, (loud.stdout, loud.stderr)


PRICES = '''\
def round_price(cents: int) -> int:
    """The price rounded down to a multiple of 5 cents."""
    return cents // 5 * 5


def discount(total: int) -> int:
    """The total less 10%."""
    return total - total // 10
'''
NEAREST = PRICES.replace("cents // 5 * 5", "(cents + 2) // 5 * 5")  # meant: what the pull request says
BOTH = NEAREST.replace("total // 10", "total // 9")  # and a regression nothing mentions


def _counted(differences: list[Difference]) -> list[Difference]:
    """Leave out what the report sets apart (`round_price(None)`: a minor wording, outside the types)."""
    return [d for d in differences if d.severity == "major" and d.verdict in COUNTED]


@pytest.mark.slow
def test_a_difference_the_pull_request_names_is_explained_the_other_not(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/prices.py": PRICES}, {"pkg/prices.py": BOTH})
    report = run_analyze(builder, pr_title="Make round_price round to the nearest 5 cents")
    verdicts = {d.target: (d.verdict, d.evidence) for d in _counted(report.differences)}
    assert verdicts == {
        "pkg.prices:round_price": (Verdict.NAMED_BY_PR, 'named by the pull request, in the title: "Make '
                                   'round_price round to the nearest 5 cents"'),
        "pkg.prices:discount": (Verdict.UNEXPLAINED, "")}
    data = report_to_json(report)
    validate_report(data)
    text = render_markdown(data)
    assert ("**2 behavioural differences** in the changed code. 1 possible regression (nothing in the pull "
            "request explains it); 1 the pull request explains.") in text
    unexplained, explained = text.index("discount`"), text.index("### Explained by the pull request")
    assert unexplained < explained < text.index("round_price`", explained)
    assert "<details><summary>Where, and its tests</summary>" in text[explained:]
    assert headline(data).endswith(", 1 explained by the pull request (" + data["base"][:7] + ".."
                                   + data["head"][:7] + ")")


@pytest.mark.slow
def test_a_commit_message_or_a_docstring_explains_too(builder: RepoBuilder) -> None:
    documented = NEAREST.replace("rounded down to a multiple", "rounded to the nearest multiple")
    base, _ = make_pr(builder, {"pkg/__init__.py": "", "pkg/prices.py": PRICES},
                      {"pkg/prices.py": documented})
    [difference] = _counted(run_analyze(builder).differences)
    assert difference.verdict == Verdict.NAMED_BY_PR
    assert difference.evidence == ('named by the pull request, in the docstring of pkg.prices:round_price: '
                                   '"The price rounded to the nearest multiple of 5 cents."')
    builder.switch("feature")
    builder.repo.git.reset("-q", "--hard", base)
    builder.commit({"pkg/prices.py": NEAREST}, "Prices\n\n`round_price` rounds to the nearest 5 cents.")
    builder.switch("main")
    [difference] = _counted(run_analyze(builder).differences)
    assert difference.verdict == Verdict.NAMED_BY_PR and "in commit " in difference.evidence
    assert difference.evidence.endswith(': "`round_price` rounds to the nearest 5 cents."')


@pytest.mark.slow
def test_the_pull_requests_words_reach_the_command_line(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/prices.py": PRICES}, {"pkg/prices.py": NEAREST})
    common = ("diff", "--repo", str(builder.root), "--base", "main", "--head", "feature", "--budget", "10",
              "--max-sequences", "300", "--quiet", "--json", str(builder.root.parent / "named.json"))
    named = run_cli(*common, "--pr-title=Fix round_price", "--pr-body", "- rounds to nearest")
    assert named.returncode == 1, (named.stdout, named.stderr)  # explained, but a difference all the same
    differences = json.loads((builder.root.parent / "named.json").read_text())["differences"]
    [difference] = [d for d in differences if d["severity"] == "major"
                    and d["verdict"] != "outside-declared-types"]
    assert difference["verdict"] == "named-by-pr" and '"Fix round_price"' in difference["evidence"]
    assert "The pull request explains it." in named.stdout


PRICE_TESTS = '''\
from pkg.prices import discount, round_price


def test_discount():
    assert discount(100) == 90


def test_round_price():
    assert round_price(12) == 10
'''


@pytest.mark.slow
def test_an_existing_test_the_change_breaks_makes_its_difference_a_regression(builder: RepoBuilder) -> None:
    # the title names discount, but an unchanged test of it fails on head: the test speaks louder
    make_pr(builder, {"pkg/__init__.py": "", "pkg/prices.py": PRICES, "tests/test_prices.py": PRICE_TESTS},
            {"pkg/prices.py": PRICES.replace("total // 10", "total // 9")})
    report = run_analyze(builder, pr_title="Make discount faithful to the shop's rules")
    [difference] = _counted(report.differences)
    assert (difference.target, difference.verdict) == ("pkg.prices:discount", Verdict.BREAKS_EXISTING_TEST)
    assert difference.evidence == ("the existing test tests/test_prices.py::test_discount, which calls it, "
                                   "passes on base and fails on head")
    assert ("1 existing test(s) that the pull request leaves unchanged pass on base and fail on head (again "
            "when run alone): tests/test_prices.py::test_discount") in report.notes
    text = render_markdown(report_to_json(report))
    assert "**1 behavioural difference** in the changed code." in text  # it leads: nothing explains it


@pytest.mark.slow
def test_a_test_the_pull_request_changes_is_not_an_existing_one(builder: RepoBuilder) -> None:
    updated = PRICE_TESTS.replace("== 90", "== 89")
    make_pr(builder, {"pkg/__init__.py": "", "pkg/prices.py": PRICES, "tests/test_prices.py": PRICE_TESTS},
            {"pkg/prices.py": PRICES.replace("total // 10", "total // 9"), "tests/test_prices.py": updated})
    report = run_analyze(builder)
    [difference] = _counted(report.differences)
    assert difference.target == "pkg.prices:discount" and difference.verdict != Verdict.BREAKS_EXISTING_TEST
    assert not any("existing test" in note for note in report.notes)


@pytest.mark.slow
def test_a_test_the_pull_request_removes_as_the_change_broke_it_explains_what_it_showed(
        builder: RepoBuilder) -> None:
    # test_discount passes on base and fails on head, and the pull request removes it: it meant to
    # leave that behaviour; round_price's change is in no test and no word
    removed = PRICE_TESTS.replace("def test_discount():\n    assert discount(100) == 90\n\n\n", "")
    make_pr(builder, {"pkg/__init__.py": "", "pkg/prices.py": PRICES, "tests/test_prices.py": PRICE_TESTS},
            {"pkg/prices.py": BOTH, "tests/test_prices.py": removed})
    report = run_analyze(builder)
    test_id = "tests/test_prices.py::test_discount"
    assert ("1 test(s) as base has them, in files the pull request changes, pass on base and fail on head "
            f"(the pull request rewrote or removed them): {test_id}") in report.notes
    verdicts = {d.target: (d.verdict, d.evidence) for d in _counted(report.differences)}
    assert verdicts == {
        "pkg.prices:discount": (Verdict.ASSERTED_BY_PR, "the pull request rewrites or removes the test "
                                f"{test_id}, which as base has it passes on base, fails on head and shows it "
                                "through its own calls"),
        "pkg.prices:round_price": (Verdict.UNEXPLAINED, "")}


NEW_ROUNDING_TEST = '''\
from pkg.prices import round_price


def test_round_price_rounds_to_the_nearest():
    assert round_price(13) == 15
'''


@pytest.mark.slow
def test_a_test_the_pull_request_adds_asserts_its_change_not_another(builder: RepoBuilder) -> None:
    # the added test fails on base (10) and passes on head (15): round_price's change is asserted by it;
    # discount's change is in no test and no word of the pull request
    make_pr(builder, {"pkg/__init__.py": "", "pkg/prices.py": PRICES},
            {"pkg/prices.py": BOTH, "tests/test_rounding.py": NEW_ROUNDING_TEST})
    report = run_analyze(builder)
    test_id = "tests/test_rounding.py::test_round_price_rounds_to_the_nearest"
    assert ("1 test(s) the pull request adds or changes fail on base and pass on head (they state the new "
            f"behaviour): {test_id}") in report.notes
    verdicts = {d.target: (d.verdict, d.evidence) for d in _counted(report.differences)}
    assert verdicts == {
        "pkg.prices:round_price": (Verdict.ASSERTED_BY_PR, f"the pull request's test {test_id}, which "
                                   "fails on base and passes on head, shows it through its own calls"),
        "pkg.prices:discount": (Verdict.UNEXPLAINED, "")}
    [asserted] = [d for d in report.differences if d.verdict == Verdict.ASSERTED_BY_PR]
    assert asserted.origin == "carved" and asserted.carved_by == [test_id]
    assert "round_price(13)" in asserted.test  # the test's own input, preferred to a generated one
    data = report_to_json(report)
    validate_report(data)
    assert {d["verdict"] for d in data["differences"]} >= {"asserted-by-pr", "unexplained"}
    text = render_markdown(data)
    assert ("1 possible regression (nothing in the pull request explains it); 1 the pull request "
            "explains.") in text


@pytest.mark.slow
def test_a_pull_request_test_that_passes_on_base_asserts_nothing(builder: RepoBuilder) -> None:
    # round_price(10) is 10 on both sides: the test holds on base too, so it states no change
    make_pr(builder, {"pkg/__init__.py": "", "pkg/prices.py": PRICES},
            {"pkg/prices.py": NEAREST, "tests/test_rounding.py": NEW_ROUNDING_TEST.replace(
                "round_price(13) == 15", "round_price(10) == 10")})
    report = run_analyze(builder)
    assert not any("state the new behaviour" in note for note in report.notes)
    assert [d.verdict for d in _counted(report.differences)] == [Verdict.UNEXPLAINED]


@pytest.mark.slow
def test_a_pull_request_test_whose_id_changes_from_run_to_run_asserts_nothing(builder: RepoBuilder) -> None:
    # the same test, its parametrized id a clock reading: base's run has another id, which is no failure
    stamped = ("import time\n\nimport pytest\n\nfrom pkg.prices import round_price\n\n\n"
               "@pytest.mark.parametrize('value', [10], ids=[f'at-{time.time_ns()}'])\n"
               "def test_round_price_keeps_tens(value):\n    assert round_price(value) == 10\n")
    make_pr(builder, {"pkg/__init__.py": "", "pkg/prices.py": PRICES},
            {"pkg/prices.py": NEAREST, "tests/test_rounding.py": stamped})
    report = run_analyze(builder)
    assert not any("state the new behaviour" in note for note in report.notes)
    assert [d.verdict for d in _counted(report.differences)] == [Verdict.UNEXPLAINED]


@pytest.mark.slow
def test_a_pull_request_test_that_cannot_import_on_base_fails_there(builder: RepoBuilder) -> None:
    # its file imports a function head adds: on base it does not collect, which is a failure there
    added = NEAREST + '\n\ndef ceil_price(cents: int) -> int:\n    return -(-cents // 5) * 5\n'
    tests = NEW_ROUNDING_TEST.replace("import round_price", "import ceil_price, round_price") + (
        "\n\ndef test_ceil_price():\n    assert ceil_price(11) == 15\n")
    make_pr(builder, {"pkg/__init__.py": "", "pkg/prices.py": PRICES},
            {"pkg/prices.py": added, "tests/test_rounding.py": tests})
    report = run_analyze(builder)
    test_id = "tests/test_rounding.py::test_round_price_rounds_to_the_nearest"
    assert any("state the new behaviour" in note and test_id in note for note in report.notes)
    verdicts = {d.target: d.verdict for d in _counted(report.differences)}
    assert verdicts["pkg.prices:round_price"] == Verdict.ASSERTED_BY_PR


FROZEN = '''\
class FrozenMeter:
    """A meter that no longer counts."""

    def __init__(self, total: int) -> None:
        self.total = total
'''


@pytest.mark.slow
def test_a_module_the_pull_request_removes_is_judged_like_any_difference(builder: RepoBuilder) -> None:
    # the module no longer imports on head: a difference found before exploration, judged all the same
    make_pr(builder, {"pkg/__init__.py": "", "pkg/prices.py": PRICES, "pkg/frozen.py": FROZEN},
            {"pkg/frozen.py": None, "pkg/prices.py": NEAREST})
    named = run_analyze(builder, pr_title="Drop FrozenMeter, now that nothing uses it")
    verdicts = {d.target: (d.verdict, d.evidence) for d in _counted(named.differences)}
    expected = 'named by the pull request, in the title: "Drop FrozenMeter, now that nothing uses it"'
    assert verdicts["pkg.frozen:<module>"] == (Verdict.NAMED_BY_PR, expected)
    quiet = {d.target: d.verdict for d in _counted(run_analyze(builder).differences)}
    assert quiet["pkg.frozen:<module>"] == Verdict.UNEXPLAINED



RULES = '''\
KEYWORDS = {
    "SELECT": "keyword",
    "FROM": "keyword",
    "WHERE": "keyword",
    "LIMIT": "keyword",
}
PATTERNS = [
    (r"\\d+", "number"),
    (r"[a-z]\\w*", "name"),
    (r"'[^']*'", "string"),
]
'''
# what the words describe: RETURNING added, a name may be qualified (the quoted text the pattern gains)
MEANT = RULES.replace('    "LIMIT"', '    "RETURNING": "keyword",\n    "LIMIT"').replace(
    '[a-z]\\w*', '[a-z]\\w*(?:\\.\\w+)?')
# and beside it a regression nothing mentions: LIMIT gone from the same table, the string pattern dropped
BROKEN = MEANT.replace('    "LIMIT": "keyword",\n', "").replace('''    (r"'[^']*'", "string"),\n''', "")


@pytest.mark.parametrize(("after", "expected"), [(MEANT, Verdict.NAMED_BY_PR), (BROKEN, Verdict.UNEXPLAINED)])
def test_a_table_the_pull_request_names_is_explained_only_as_far_as_its_entries_are(
        builder: RepoBuilder, after: str, expected: Verdict) -> None:
    """Naming `KEYWORDS` and `PATTERNS` explains the entries the words single out (RETURNING, the
    quoted text the name pattern gains), not a LIMIT removed or a pattern dropped beside them."""
    make_pr(builder, {"pkg/__init__.py": "", "pkg/rules.py": RULES}, {"pkg/rules.py": after})
    report = run_analyze(builder, pr_title="Add RETURNING to KEYWORDS",
                         pr_body="PATTERNS: a name may now be qualified, `(?:\\.\\w+)?`.")
    verdicts = {d.target: d.verdict for d in _counted(report.differences)}
    assert verdicts == {"pkg.rules:KEYWORDS": expected, "pkg.rules:PATTERNS": expected}, [
        (d.target, d.entries, d.evidence) for d in report.differences]
    keywords = next(d for d in report.differences if d.target == "pkg.rules:KEYWORDS")
    changes = {(entry.change, entry.entry) for entry in keywords.entries}
    assert ("added", "['RETURNING']") in changes
    assert (("removed", "['LIMIT']") in changes) is (expected == Verdict.UNEXPLAINED)
    validate_report(report_to_json(report))
