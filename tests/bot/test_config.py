"""Tests of `difforacle.bot.config`: `[tool.difforacle]`, the action's inputs over it, the engine's options.

Every error must be one line naming the file or input and the key, so a user can fix it without
reading difforacle's source.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from difforacle.bot.config import (
    FAIL_ON,
    INPUT_ENV,
    Config,
    ConfigError,
    FloatPolicy,
    inputs_from_env,
    load_config,
    merge,
    run_options,
    schema_validator,
    scope_of,
)
from difforacle.generator import Scope
from difforacle.generator.oracle.leaves import ABS_TOL, REL_TOL
from difforacle.generator.planning.plan import ALLOCATIONS

FULL = """\
[project]
name = "example"

[tool.difforacle]
budget = 90.5
seed = 7
include = ["src/**"]
exclude = ["src/pkg/vendored", "**/test_*.py"]
ignore-targets = ["pkg.clock:*", "*:Timer.now"]
float-policy = { rel = 1e-6, abs = 0 }
max-comments = 3
fail-on = "regression"
allocation = "uniform"
build = ["python setup.py build_ext --inplace"]
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    return tmp_path


def config_error(tmp_path: Path, table: str) -> str:
    """The message `load_config` gives for a pyproject.toml with `table` under [tool.difforacle]."""
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, "[tool.difforacle]\n" + table))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / 'pyproject.toml'} [tool.difforacle]: ")
    return message.split("[tool.difforacle]: ", 1)[1]


def input_error(**inputs: str) -> str:
    with pytest.raises(ConfigError) as caught:
        merge(Config(), {name.replace("_", "-"): text for name, text in inputs.items()})
    assert "\n" not in str(caught.value)
    return str(caught.value)


# --- defaults and a full table ---------------------------------------------------------------

def test_defaults_without_pyproject(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config == Config()
    assert (config.budget, config.seed, config.max_comments, config.fail_on, config.allocation) == (
        60.0, 0, 10, "never", "defect")
    assert (config.include, config.exclude, config.ignore_targets) == ((), (), ())
    assert config.float_policy == FloatPolicy(rel=REL_TOL, abs=ABS_TOL)


@pytest.mark.parametrize("text", ["", "[project]\nname = 'x'\n", "[tool.ruff]\nline-length = 100\n",
                                  "[tool.difforacle]\n"])
def test_defaults_without_table_or_keys(tmp_path: Path, text: str) -> None:
    assert load_config(write(tmp_path, text)) == Config()


def test_full_table(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, FULL))
    assert config == Config(
        budget=90.5, seed=7, include=("src/**",), exclude=("src/pkg/vendored", "**/test_*.py"),
        ignore_targets=("pkg.clock:*", "*:Timer.now"), float_policy=FloatPolicy(rel=1e-6, abs=0.0),
        max_comments=3, fail_on="regression", allocation="uniform",
        build=("python setup.py build_ext --inplace",))
    assert isinstance(config.budget, float) and isinstance(config.float_policy.abs, float)


def test_partial_float_policy_keeps_the_engines_other_tolerance(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "[tool.difforacle.float-policy]\nrel = 0.01\n"))
    assert config.float_policy == FloatPolicy(rel=0.01, abs=ABS_TOL)


def test_integer_budget_and_integral_float_seed(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "[tool.difforacle]\nbudget = 30\nseed = 4.0\n"))
    assert (config.budget, config.seed) == (30.0, 4)
    assert isinstance(config.budget, float) and isinstance(config.seed, int)


def test_enums_match_the_engine() -> None:
    properties = schema_validator().schema["properties"]
    assert tuple(properties["fail-on"]["enum"]) == FAIL_ON
    assert tuple(properties["allocation"]["enum"]) == ALLOCATIONS


# --- errors in the file -----------------------------------------------------------------------

def test_unknown_key_is_named_with_a_suggestion(tmp_path: Path) -> None:
    assert config_error(tmp_path, "budgett = 3\n") == "unknown key 'budgett' (did you mean 'budget'?)"


def test_unknown_keys_are_all_named(tmp_path: Path) -> None:
    assert config_error(tmp_path, "colour = 1\nshape = 2\n") == "unknown keys 'colour', 'shape'"


def test_unknown_nested_key_is_named_with_its_table(tmp_path: Path) -> None:
    message = config_error(tmp_path, "float-policy = { rell = 0.1 }\n")
    assert message == "unknown key 'float-policy.rell' (did you mean 'float-policy.rel'?)"


def test_unknown_key_is_reported_before_a_wrong_type(tmp_path: Path) -> None:
    assert config_error(tmp_path, "budget = 'x'\nzzz = 1\n") == "unknown key 'zzz'"


@pytest.mark.parametrize(("table", "expected"), [
    ("budget = 'abc'", "'budget' must be a number greater than 0, not 'abc'"),
    ("budget = 0", "'budget' must be a number greater than 0, not 0"),
    ("budget = -1.5", "'budget' must be a number greater than 0, not -1.5"),
    ("budget = inf", "'budget' must be a number greater than 0, not inf"),
    ("budget = nan", "'budget' must be a number greater than 0, not nan"),
    ("budget = true", "'budget' must be a number greater than 0, not true"),
    ("seed = 1.5", "'seed' must be an integer, not 1.5"),
    ("seed = '1'", "'seed' must be an integer, not '1'"),
    ("include = 'src'", "'include' must be a list of glob patterns (non-empty strings), not 'src'"),
    ("exclude = ['a', 3]", "'exclude' must be a list of glob patterns (non-empty strings), not ['a', 3]"),
    ("exclude = ['']", "'exclude' must be a list of glob patterns (non-empty strings), not ['']"),
    ("ignore-targets = [1]",
     "'ignore-targets' must be a list of target patterns (non-empty strings), not [1]"),
    ("float-policy = 0.1", "'float-policy' must be a table of tolerances 'rel' and 'abs', not 0.1"),
    ("float-policy = { rel = -1 }", "'float-policy.rel' must be a number >= 0, not -1"),
    ("float-policy = { abs = 'tiny' }", "'float-policy.abs' must be a number >= 0, not 'tiny'"),
    ("max-comments = -1", "'max-comments' must be an integer >= 0, not -1"),
    ("fail-on = 'always'", "'fail-on' must be one of 'never', 'difference', 'unexplained', 'regression', "
                           "'unverified', not 'always'"),
    ("min-reach = 1.5",
     "'min-reach' must be a number from 0 to 1 (the share of changed lines that must run), not 1.5"),
    ("allocation = 'random'", "'allocation' must be one of 'defect', 'uniform', not 'random'"),
    ("build = 'make'", "'build' must be a list of shell commands (non-empty strings), not 'make'"),
])
def test_wrong_value_is_named(tmp_path: Path, table: str, expected: str) -> None:
    assert config_error(tmp_path, table + "\n") == expected


def test_every_schema_key_has_a_worded_rule(tmp_path: Path) -> None:
    # A key added to the schema without a phrase in bot.config would fail with a KeyError here.
    for key in schema_validator().schema["properties"]:
        assert config_error(tmp_path, f"{key} = true\n").startswith(f"'{key}' must be ")


def test_table_that_is_not_a_table(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[tool\.difforacle\]: must be a table, not 3$"):
        load_config(write(tmp_path, "[tool]\ndifforacle = 3\n"))


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    write(tmp_path, "[project]\nname = 'x'\n\n[tool.difforacle]\nbudget = \n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'pyproject.toml'}:5:")
    assert "invalid TOML" in message and "\n" not in message


def test_toml_error_at_end_of_document(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"pyproject\.toml: invalid TOML: .*end of document"):
        load_config(write(tmp_path, "name = 'unterminated"))


def test_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_bytes(b"[tool.difforacle]\nseed = 1 # \xff\n")
    with pytest.raises(ConfigError, match=r"pyproject\.toml: not UTF-8"):
        load_config(tmp_path)


# --- the action's inputs ----------------------------------------------------------------------

def test_inputs_override_the_file(tmp_path: Path) -> None:
    inputs = {"budget": " 120 ", "seed": "-3", "max-comments": "0", "fail-on": "difference",
              "allocation": "defect"}
    config = merge(load_config(write(tmp_path, FULL)), inputs)
    assert (config.budget, config.seed, config.max_comments, config.fail_on, config.allocation) == (
        120.0, -3, 0, "difference", "defect")
    assert config.include == ("src/**",) and config.float_policy.rel == 1e-6  # not inputs: kept


@pytest.mark.parametrize("text", ["", "   ", None])
def test_blank_or_missing_input_is_not_given(tmp_path: Path, text: str | None) -> None:
    config = load_config(write(tmp_path, FULL))
    assert merge(config, dict.fromkeys(INPUT_ENV, text)) == config
    assert merge(config, {}) == config


def test_integral_seed_text() -> None:
    assert merge(Config(), {"seed": "5.0"}).seed == 5
    assert merge(Config(), {"budget": "1e2"}).budget == 100.0


@pytest.mark.parametrize(("inputs", "expected"), [
    ({"budget": "abc"}, "input 'budget': must be a number greater than 0, not 'abc'"),
    ({"budget": "0"}, "input 'budget': must be a number greater than 0, not '0'"),
    ({"budget": "inf"}, "input 'budget': must be a number greater than 0, not 'inf'"),
    ({"budget": "nan"}, "input 'budget': must be a number greater than 0, not 'nan'"),
    ({"seed": "1.5"}, "input 'seed': must be an integer, not '1.5'"),
    ({"seed": "seven"}, "input 'seed': must be an integer, not 'seven'"),
    ({"max_comments": "-1"}, "input 'max-comments': must be an integer >= 0, not '-1'"),
    ({"max_comments": "many"}, "input 'max-comments': must be an integer >= 0, not 'many'"),
    ({"fail_on": "Never"},
     "input 'fail-on': must be one of 'never', 'difference', 'unexplained', 'regression', "
     "'unverified', not 'Never'"),
    ({"allocation": "x"}, "input 'allocation': must be one of 'defect', 'uniform', not 'x'"),
])
def test_bad_input_is_named(inputs: dict[str, str], expected: str) -> None:
    assert input_error(**inputs) == expected


def test_not_an_input_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="'python' is not a configuration input"):
        merge(Config(), {"python": "/usr/bin/python3"})


def test_inputs_from_env() -> None:
    environ = {"DIFFORACLE_BUDGET": "30", "DIFFORACLE_FAIL_ON": "", "UNRELATED": "x"}
    inputs = inputs_from_env(environ)
    assert inputs == {"budget": "30", "seed": None, "max-comments": None, "fail-on": "", "min-reach": None,
                      "allocation": None, "comment": None, "include": None, "exclude": None}
    assert merge(Config(), inputs) == Config(budget=30.0)


def test_list_inputs_are_one_item_per_line_and_every_input_is_checked() -> None:
    inputs = {"include": "src/**\n\n  tools/*.py  \n", "exclude": "src/vendored", "comment": "never",
              "min-reach": "0.5"}
    assert merge(Config(), inputs) == Config(include=("src/**", "tools/*.py"), exclude=("src/vendored",),
                                             comment="never", min_reach=0.5)
    for name, text in (("comment", "sometimes"), ("min-reach", "2"), ("min-reach", "most")):
        with pytest.raises(ConfigError, match=f"input '{name}'"):
            merge(Config(), {name: text})


def test_config_is_frozen() -> None:
    with pytest.raises(AttributeError):
        Config().budget = 1.0  # type: ignore[misc]
    assert math.isclose(Config().float_policy.rel, REL_TOL)


def test_the_settings_become_the_engines_options() -> None:
    config = Config(budget=12.0, seed=3, allocation="uniform", include=("src",), exclude=("src/vendor",),
                    ignore_targets=("pkg.clock:*",), float_policy=FloatPolicy(rel=1e-6, abs=0.0),
                    build=("make ext",))
    options = run_options(config, python="python3")
    assert options.build == ("make ext",)
    assert (options.budget, options.seed, options.allocation) == (12.0, 3, "uniform")
    assert options.python == "python3"
    assert options.scope == Scope(("src",), ("src/vendor",), ("pkg.clock:*",))
    assert options.floats == FloatPolicy(rel=1e-6, abs=0.0)
    assert scope_of(Config()) == Scope()



def test_pass_env_names_variables_and_reaches_the_engine(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.difforacle]\npass-env = ["MYPKG_DATA_DIR"]\n')
    assert run_options(load_config(tmp_path)).pass_env == ("MYPKG_DATA_DIR",)
    (tmp_path / "pyproject.toml").write_text('[tool.difforacle]\npass-env = ["NOT A NAME"]\n')
    with pytest.raises(ConfigError, match="pass-env"):
        load_config(tmp_path)
