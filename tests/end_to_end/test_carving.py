"""Carving: the calls of the project's own tests (and the pull request's) seed exploration."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from support.analysis import run_analyze
from support.parts_project import CODES_BROKEN, PARTS
from support.repos import RepoBuilder, make_pr

from difforacle.generator import Options, analyze
from difforacle.generator.changes.checkout import checkouts, open_repo
from difforacle.generator.changes.importers import importers
from difforacle.generator.changes.units import compute_changes
from difforacle.generator.generation.seeds.carving import carve, importing_test_files, with_object_prefixes
from difforacle.generator.generation.techniques import Components
from difforacle.generator.runtime.sequence import sequence_key

# The tests build their inputs (literals alone, which constants mining reads, do not spell them).
CODES_TEST = """\
from parts.codes import describe


def test_known():
    code = "-".join(["XK", str(4400 + 71)])
    assert describe(code) == code + ": left valve"
"""

# A register whose interesting state takes several calls with known items to build.
REGISTER = """\
import json
from pathlib import Path


def _prices() -> dict[str, int]:
    return json.loads((Path(__file__).parent / "prices.json").read_text())


class Register:
    def __init__(self, currency: str) -> None:
        self.currency = currency
        self.items: list[str] = []

    def add(self, item: str) -> None:
        _prices()[item]  # an unknown item raises KeyError, and is not added
        self.items.append(item)

    def total(self) -> int:
        prices = _prices()
        cents = sum(prices.get(item, 0) for item in self.items)
        return cents * 9 // 10 if len(set(self.items)) >= 2 else cents
"""
REGISTER_BROKEN = REGISTER.replace(">= 2", ">= 3")
PRICES = '{"apple-gala": 120, "pear-conference": 80, "plum-victoria": 5}\n'
REGISTER_TESTS = """\
import pytest

from shop.register import Register


@pytest.fixture
def register():
    return Register("EUR")


def test_total(register):
    register.add("-".join(["apple", "gala"]))
    register.add("-".join(["pear", "conference"]))
    assert register.total() == 180


def test_bad_entry(register):
    with pytest.raises(KeyError):
        register.add("x")
    register.add("-".join(["plum", "victoria"]))
"""
SHOP = {"shop/__init__.py": "", "shop/register.py": REGISTER, "shop/prices.json": PRICES,
        "tests/test_register.py": REGISTER_TESTS}


def _carve(builder: RepoBuilder) -> tuple[list[list[dict]], object]:
    repo = open_repo(builder.root)
    with checkouts(repo, "main", "feature") as (base, head):
        changes = compute_changes(repo, repo.git.rev_parse("main"), repo.git.rev_parse("feature"), base, head)
        carving = carve(changes, base, head, Options().python, 30.0)
    return carving.sequences, carving


@pytest.mark.slow
def test_the_projects_tests_reach_what_random_inputs_do_not(builder: RepoBuilder) -> None:
    make_pr(builder, {**PARTS, "tests/test_codes.py": CODES_TEST}, {"parts/codes.py": CODES_BROKEN})
    carved = run_analyze(builder, budget=20.0, max_sequences=200)
    [difference] = carved.differences
    assert difference.target == "parts.codes:describe"
    assert 'describe("XK-4471")' in difference.test
    carving = carved.stats.techniques["carving"]
    assert carving["sequences"] >= 1 and carving["seconds"] > 0
    assert carving["explored_before_seeds"] == 0  # a reproducible run carves before it explores
    without = run_analyze(builder, budget=20.0, max_sequences=200, components=Components.without(["carving"]))
    assert without.differences == []
    assert "carving" not in without.stats.techniques


@pytest.mark.slow
def test_a_run_bound_by_time_explores_while_it_carves(builder: RepoBuilder) -> None:
    make_pr(builder, {**PARTS, "tests/test_codes.py": CODES_TEST}, {"parts/codes.py": CODES_BROKEN})
    report = run_analyze(builder, budget=20.0, max_sequences=None)
    # exploring began at once (pytest takes longer to start than a batch to run), and the seeds
    # carved meanwhile still joined it: only they reach the code the difference needs
    carving = report.stats.techniques["carving"]
    assert carving["explored_before_seeds"] > 0
    assert carving["sequences"] >= 1 and carving["explored_before_seeds"] < report.stats.sequences
    [difference] = report.differences
    assert 'describe("XK-4471")' in difference.test


@pytest.mark.slow
def test_tests_the_pull_request_adds_run_on_head(builder: RepoBuilder) -> None:
    new_test = CODES_TEST.replace('"XK", str(4400 + 71)', '"QZ", "0" + str(900 + 82)').replace(
        "left", "right").replace('": ', '" - ')
    make_pr(builder, PARTS, {"parts/codes.py": CODES_BROKEN, "tests/test_new.py": new_test})
    report = run_analyze(builder, budget=20.0, max_sequences=200)
    [difference] = report.differences
    assert 'describe("QZ-0982")' in difference.test


def test_objects_and_fixtures_become_statements(builder: RepoBuilder) -> None:
    make_pr(builder, SHOP, {"shop/register.py": REGISTER_BROKEN})
    sequences, carving = _carve(builder)
    ops = [[statement["op"] for statement in sequence] for sequence in sequences]
    total = ["shop.register:Register", "shop.register:Register.add", "shop.register:Register.add",
             "shop.register:Register.total"]
    assert total in ops
    full = sequences[ops.index(total)]
    assert full[0]["args"] == [{"lit": ["str", "EUR"]}]  # the fixture's construction is part of it
    assert full[1]["args"] == [{"ref": 0}, {"lit": ["str", "apple-gala"]}]
    assert full[3]["args"] == [{"ref": 0}]
    # the call that raised ends a sequence of its own; the test's recording goes on without it
    added = [sequence[1]["args"][1] for sequence, names in zip(sequences, ops, strict=True)
             if names == ["shop.register:Register", "shop.register:Register.add"]]
    assert added == [{"lit": ["str", "x"]}, {"lit": ["str", "plum-victoria"]}]
    assert carving.tests == 4 and carving.test_files == 1  # its two tests on base, then on head
    # the change breaks one of them: it passed on base, fails on head, and again when run alone
    assert carving.broken == {"tests/test_register.py::test_total": frozenset(
        {"shop.register:Register", "shop.register:Register.add", "shop.register:Register.total"})}


@pytest.mark.slow
def test_the_difference_a_carved_state_shows_is_reported(builder: RepoBuilder) -> None:
    make_pr(builder, SHOP, {"shop/register.py": REGISTER_BROKEN})
    report = run_analyze(builder, budget=20.0, max_sequences=100)
    [difference] = report.differences  # total() differs, as a result or observed after add()
    assert difference.target in ("shop.register:Register.total", "shop.register:Register.add")
    assert "apple-gala" in difference.test and "pear-conference" in difference.test
    without = run_analyze(builder, budget=20.0, max_sequences=100, components=Components.without(["carving"]))
    assert without.differences == []


def test_prefixes_that_build_used_objects_come_first() -> None:
    sequence = [{"op": "m:C", "args": [], "kwargs": {}},
                {"op": "m:C.f", "args": [{"ref": 0}, {"lit": ["int", 1]}], "kwargs": {}},
                {"op": "m:g", "args": [], "kwargs": {"c": {"ref": 1}}}]
    prefixes = with_object_prefixes([sequence, sequence[:1]])
    assert prefixes == [sequence[:1], sequence[:2], sequence]  # sequence[:1] again is no new seed
    assert json.dumps(prefixes)  # plain statements, ready for the worker


def test_only_tests_that_import_a_changed_module_are_run(builder: RepoBuilder) -> None:
    builder.write({**PARTS, "other/__init__.py": "",
                   "tests/test_codes.py": "import parts.codes\n", "tests/test_other.py": "import other\n",
                   "tests/test_pkg.py": "from parts import codes\n", "tests/helpers.py": "import parts\n",
                   "tests/broken_test.py": "def (:\n", "test.py": "import parts.codes\n"})
    # a small project's one test module, `test.py`, is a test file too
    assert importing_test_files(builder.root, ["parts.codes"]) == ["tests/test_codes.py", "test.py",
                                                                   "tests/test_pkg.py"]


def test_tests_that_do_not_collect_cost_a_note(builder: RepoBuilder) -> None:
    conftest = "def pytest_generate_tests(metafunc):\n    raise FileNotFoundError('a missing submodule')\n"
    make_pr(builder, {**PARTS, "tests/test_codes.py": CODES_TEST, "tests/conftest.py": conftest},
            {"parts/codes.py": CODES_BROKEN})
    report = run_analyze(builder, budget=20.0, max_sequences=50)
    assert ("None of the 1 test file(s) run on base for carving ran a test (pytest could not collect them: "
            "tests/test_codes.py - FileNotFoundError: a missing submodule): nothing was carved from them."
            in report.notes), report.notes
    assert report.stats.techniques["carving"]["sequences"] == 0


UNREBUILT_TEST = """\
from parts.codes import describe


class Code(str):
    \"\"\"The test's own kind of string: a value carving cannot write as code.\"\"\"


def test_known():
    assert describe(Code("XK-4471")) == "XK-4471: left valve"
"""
UNCALLED_TEST = """\
import parts.codes


def test_module_is_there():
    assert parts.codes.__name__ == "parts.codes"
"""


def test_tests_that_are_carved_into_nothing_say_why(builder: RepoBuilder) -> None:
    make_pr(builder, {**PARTS, "tests/test_codes.py": UNREBUILT_TEST}, {"parts/codes.py": CODES_BROKEN})
    _, carving = _carve(builder)
    assert carving.sequences == []
    assert ("The 1 test(s) run on base for carving called the changed code's operations (1 of them did), but "
            "with arguments that cannot be rebuilt from code (objects of the tests' own classes or helpers): "
            "nothing was carved from them.") in carving.notes


def test_tests_that_call_no_operation_say_so(builder: RepoBuilder) -> None:
    make_pr(builder, {**PARTS, "tests/test_codes.py": UNCALLED_TEST}, {"parts/codes.py": CODES_BROKEN})
    _, carving = _carve(builder)
    assert ("The 1 test(s) run on base for carving called no operation of the changed modules or of those "
            "built on them (they reach the changed code through other code only): nothing was carved from "
            "them.") in carving.notes, carving.notes


@pytest.mark.slow
def test_the_nearest_tests_run_before_a_long_collection_of_the_others(builder: RepoBuilder) -> None:
    """pytest collects a run's every file before its first test: six other test files whose imports
    take 1.5 s each would spend the whole share. The nearest file runs alone first."""
    slow = "import time\n\nimport parts.codes\n\ntime.sleep(1.5)\n\n\ndef test_nothing():\n    pass\n"
    others = {f"tests/test_a{n}.py": slow for n in range(6)}
    make_pr(builder, {**PARTS, "tests/test_codes.py": CODES_TEST, **others}, {"parts/codes.py": CODES_BROKEN})
    repo = open_repo(builder.root)
    with checkouts(repo, "main", "feature") as (base, head):
        changes = compute_changes(repo, repo.git.rev_parse("main"), repo.git.rev_parse("feature"), base, head)
        assert importing_test_files(base.root, list(changes.modules))[0] == "tests/test_codes.py"  # nearest
        carving = carve(changes, base, head, Options().python, 6.0)
    assert carving.tests >= 1 and carving.sequences, carving.notes


def test_a_project_whose_tests_do_not_start_costs_a_note(builder: RepoBuilder) -> None:
    conftest = "raise SystemExit('the test environment is broken')\n"
    make_pr(builder, {**PARTS, "tests/test_codes.py": CODES_TEST, "conftest.py": conftest},
            {"parts/codes.py": CODES_BROKEN})
    report = analyze(builder.root, "main", "feature", Options(budget=20.0, max_sequences=50))
    assert any("nothing was carved" in note for note in report.notes), report.notes
    assert report.stats.techniques["carving"]["sequences"] == 0


# A function users call, in the package's root, built on a changed private module.
FRONT = "from ._impl import escape\n\n\ndef render(text: str) -> str:\n    return '<' + escape(text) + '>'\n"
IMPL = "def escape(text: str) -> str:\n    return text.replace('&', '&amp;')\n"
FRONT_TEST = "import fmt\n\n\ndef test_render():\n    assert fmt.render('a&b') == '<a&amp;b>'\n"


def test_calls_to_the_modules_built_on_a_changed_one_are_carved_with_their_test(builder: RepoBuilder) -> None:
    make_pr(builder, {"fmt/__init__.py": FRONT, "fmt/_impl.py": IMPL, "tests/test_fmt.py": FRONT_TEST},
            {"fmt/_impl.py": IMPL.replace("'&amp;'", "'&#38;'")})
    repo = open_repo(builder.root)
    with checkouts(repo, "main", "feature") as (base, head):
        changes = compute_changes(repo, repo.git.rev_parse("main"), repo.git.rev_parse("feature"), base, head)
        changes = replace(changes, importers=importers(base, changes))
        carving = carve(changes, base, head, Options().python, 30.0)
    [render] = [s for s in carving.sequences if s[-1]["op"] == "fmt:render"]
    assert render[-1]["args"] == [{"lit": ["str", "a&b"]}]
    assert carving.sources[sequence_key(render)] == {"tests/test_fmt.py::test_render"}


WIDTH = "def width(text: str) -> int:\n    return len(text)\n"
LONG_TEST = """\
from fmt.size import width


def test_long():
    for number in range(70):
        width(str(number))
    assert width("the last") == 8


def test_short():
    assert width("0") == 1
"""


def test_a_long_tests_later_calls_of_literals_and_a_sequence_two_tests_make_keep_their_tests(
        builder: RepoBuilder) -> None:
    make_pr(builder, {"fmt/__init__.py": "", "fmt/size.py": WIDTH, "tests/test_size.py": LONG_TEST},
            {"fmt/size.py": WIDTH.replace("len(text)", "len(text.strip())")})
    _, carving = _carve(builder)
    last = [{"op": "fmt.size:width", "args": [{"lit": ["str", "the last"]}], "kwargs": {}}]
    assert last in carving.sequences  # beyond the 60 calls of the test's sequence: alone
    assert carving.sources[sequence_key(last)] == {"tests/test_size.py::test_long"}
    first = [{"op": "fmt.size:width", "args": [{"lit": ["str", "0"]}], "kwargs": {}}]
    assert carving.sources[sequence_key(first)] == {"tests/test_size.py::test_long",
                                                     "tests/test_size.py::test_short"}
