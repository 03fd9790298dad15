"""Keyword options: the keys a function's code reads from its `**kwargs` (there, or in the
function it hands them to), with the values it compares them with, are passed now and then; and
a `*args` gets the counts of values its code reads it as taking."""

from __future__ import annotations

import random

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.worker.keywords import arities, keyword_options

VALIDATE = '''\
def validate(opts):
    style = opts.get("style")
    if style not in [None, "plain", "shout"]:
        raise ValueError(f"unknown style {style!r}")
    if "width" in opts and opts["width"] < 1:
        raise ValueError("width")
    return opts
'''
RENDER = '''\
from fmt import options


def render(text: str, **opts) -> str:
    opts = options.validate(opts)
    if opts.get("style") == "shout":
        return text.upper()
    return text
'''


def test_keys_and_their_values_read_through_a_validator(tmp_path, monkeypatch) -> None:
    (tmp_path / "fmt").mkdir()
    (tmp_path / "fmt" / "__init__.py").write_text(RENDER)
    (tmp_path / "fmt" / "options.py").write_text(VALIDATE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import fmt

    found = keyword_options(fmt.render, "opts")
    assert found == {"style": [["none"], ["str", "plain"], ["str", "shout"]], "width": []}


def test_no_options_from_code_that_does_not_read_them() -> None:
    def passes_on(*args, **kwargs):
        return print(*args, **kwargs)  # a builtin: no source to read

    assert keyword_options(passes_on, "kwargs") == {}
    assert keyword_options(random.random, "kwargs") == {}


@pytest.mark.slow
def test_an_option_only_a_validator_names_reaches_the_change(builder: RepoBuilder) -> None:
    make_pr(builder, {"fmt/__init__.py": RENDER, "fmt/options.py": VALIDATE},
            {"fmt/__init__.py": RENDER.replace("return text.upper()", "return text.upper() + '!'")})
    differences = run_analyze(builder, max_sequences=300).differences
    [found] = [d for d in differences if d.target == "fmt:render"]
    assert "style=" in found.test and "shout" in found.test


ROW = '''\
def row(is_header, *args):
    if len(args) == 2:
        widths, aligns = args
        return "[" + ",".join(str(w) for w in widths) + "]"
    elif len(args) == 3:
        cells, widths, aligns = args
        return "|" + "|".join(str(c) for c in cells)
    raise ValueError("row() takes two or three arguments")


def parts(*values):
    if len(values) > 1:
        return values[4]
    return values


def anything(*values):
    return values
'''


def test_the_counts_a_function_reads_its_args_as_taking(tmp_path, monkeypatch) -> None:
    (tmp_path / "rows.py").write_text(ROW)
    monkeypatch.syspath_prepend(str(tmp_path))
    import rows

    assert arities(rows.row, "args") == [2, 3]  # compared with len(args), and unpacked
    assert arities(rows.parts, "values") == [1, 2, 5]  # past `> 1`, and an index read
    assert arities(rows.anything, "values") == []


@pytest.mark.slow
def test_a_change_only_three_positional_values_reach_is_found(builder: RepoBuilder) -> None:
    make_pr(builder, {"rows.py": ROW}, {"rows.py": ROW.replace('"|" + "|".join', '"| " + "|".join')})
    differences = run_analyze(builder, max_sequences=300).differences
    assert any(d.target == "rows:row" for d in differences)
