"""A project's difforacle settings: `[tool.difforacle]` in pyproject.toml, overridden by the action's inputs.

The table and the inputs are checked against one JSON Schema shipped with the package
(`bot/schemas/config-1.json`), so a typo or a wrong type stops the run with one line naming the
key or input instead of being silently ignored. Inputs arrive as strings (GitHub gives every
input as text, an empty string when not set); they are parsed, then held to the same rules.

The settings that decide what the engine tests and compares (`include`, `exclude`,
`ignore-targets`, `float-policy`, and `budget`, `seed`, `allocation`) become its `Options`
(`run_options`): `diff`, the Action and the App apply them before and during the run, never
to the report afterwards. The pattern semantics are the engine's (its `changes.scope`).
"""

from __future__ import annotations

import difflib
import json
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from difforacle.generator import EXACT_ENOUGH, FloatPolicy, Options, Scope

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

TABLE = "[tool.difforacle]"
FAIL_ON = ("never", "difference", "unexplained", "regression", "unverified")
COMMENT_MODES = ("on-difference", "always", "never")  # when the summary comment is posted (config-1.json)

# The configuration keys the action's inputs can set, and the environment variable action.yml
# passes each one in (inputs reach the run only through `env:`, never through the script text).
INPUT_ENV: Mapping[str, str] = {
    "budget": "DIFFORACLE_BUDGET",
    "seed": "DIFFORACLE_SEED",
    "max-comments": "DIFFORACLE_MAX_COMMENTS",
    "fail-on": "DIFFORACLE_FAIL_ON",
    "min-reach": "DIFFORACLE_MIN_REACH",
    "allocation": "DIFFORACLE_ALLOCATION",
    "comment": "DIFFORACLE_COMMENT",
    "include": "DIFFORACLE_INCLUDE",  # one glob per line, as list inputs of actions are written
    "exclude": "DIFFORACLE_EXCLUDE",
}

# What each key must be, in words; enums are spelled out from the schema itself.
_EXPECTED = {
    "budget": "a number greater than 0",
    "seed": "an integer",
    "include": "a list of glob patterns (non-empty strings)",
    "exclude": "a list of glob patterns (non-empty strings)",
    "ignore-targets": "a list of target patterns (non-empty strings)",
    "float-policy": "a table of tolerances 'rel' and 'abs'",
    "float-policy.rel": "a number >= 0",
    "float-policy.abs": "a number >= 0",
    "max-comments": "an integer >= 0",
    "min-reach": "a number from 0 to 1 (the share of changed lines that must run)",
    "install": "a list of shell commands (non-empty strings)",
    "build": "a list of shell commands (non-empty strings)",
    "pass-env": "a list of environment variable names",
}


class ConfigError(Exception):
    """A setting the run cannot use; the message is one line that names the file or input and the key."""


@dataclass(frozen=True)
class Config:
    """The effective settings; every field has the default a project without `[tool.difforacle]` gets."""

    budget: float = 60.0  # seconds for the whole run
    seed: int = 0
    include: tuple[str, ...] = ()  # empty: every path
    exclude: tuple[str, ...] = ()
    ignore_targets: tuple[str, ...] = ()
    float_policy: FloatPolicy = EXACT_ENOUGH
    max_comments: int = 10
    fail_on: str = "never"  # differences alone leave the check neutral unless the project opts in
    min_reach: float = 0.8  # a clean run passes only when this share of the changed lines ran
    allocation: str = "defect"
    comment: str = "on-difference"  # the summary comment: only once something differs, always, or never
    install: tuple[str, ...] = ()  # the App's dependency step; empty: `pip install .` when there is a project
    build: tuple[str, ...] = ()  # builds compiled extensions in each checkout before the run; empty: none
    pass_env: tuple[str, ...] = ()  # variables the project's code may see beside the allow-list


def load_config(project_root: Path) -> Config:
    """The settings in `project_root/pyproject.toml`; defaults when there is no such file or no table."""
    return load_config_file(Path(project_root) / "pyproject.toml")


def load_config_file(path: Path) -> Config:
    """The `[tool.difforacle]` table of a TOML file; defaults when there is no such file or no table."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Config()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        document = tomllib.loads(raw.decode("utf-8-sig"))  # tolerate an editor's BOM
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 (byte {error.start})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(_toml_problem(path, error)) from None
    tool = document.get("tool")
    table = tool.get("difforacle") if isinstance(tool, dict) else None
    if table is None:
        return Config()
    where = f"{path} {TABLE}"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table, not {_show(table)}")
    problem = _problem(table)
    if problem is not None and problem.unknown:
        keys = problem.unknown
        noun = "key" if len(keys) == 1 else "keys"
        raise ConfigError(f"{where}: unknown {noun} {_names(keys)}{_hint(keys)}")
    if problem is not None:
        raise ConfigError(f"{where}: {problem.key!r} must be {problem.expected}, not {_show(problem.value)}")
    return _apply(Config(), table)


def merge(config: Config, overrides: Mapping[str, str | None]) -> Config:
    """`config` with the action's inputs applied; an input that is None or blank is not given.

    `overrides` maps input names (the keys of `INPUT_ENV`) to their text. An input that does not
    parse or breaks the schema's rule raises `ConfigError` naming the input and the text given.
    """
    values: dict[str, Any] = {}
    for name, text in overrides.items():
        if name not in INPUT_ENV:
            raise ValueError(f"{name!r} is not a configuration input; inputs are {_names(INPUT_ENV)}")
        if text is None or not text.strip():
            continue
        values[name] = _parse(name, text.strip())
        problem = _problem({name: values[name]})
        if problem is not None:
            raise ConfigError(f"input {name!r}: must be {problem.expected}, not {text.strip()!r}")
    return _apply(config, values)


def inputs_from_env(environ: Mapping[str, str]) -> dict[str, str | None]:
    """The action's configuration inputs as action.yml passes them (`INPUT_ENV`), ready for `merge`."""
    return {name: environ.get(variable) for name, variable in INPUT_ENV.items()}


def scope_of(config: Config) -> Scope:
    """The engine's scope for these settings (its path and target patterns: `changes.scope`)."""
    return Scope(config.include, config.exclude, config.ignore_targets)


def run_options(config: Config, **more: Any) -> Options:
    """The engine's options for these settings; `more` adds the caller's own (python, progress, ...)."""
    return Options(budget=config.budget, seed=config.seed, allocation=config.allocation,
                   scope=scope_of(config), floats=config.float_policy, build=config.build,
                   pass_env=config.pass_env, **more)


@cache
def schema_validator() -> Draft202012Validator:
    """The validator of the shipped `config-1.json` (the schema itself checked once, then cached)."""
    from jsonschema import Draft202012Validator  # on first use: it takes a while, `--help` needs none

    schema = json.loads((files("difforacle.bot") / "schemas" / "config-1.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@dataclass(frozen=True)
class _Problem:
    """The first thing wrong with a table: unknown keys, or a key whose value breaks its rule."""

    unknown: tuple[str, ...] = ()  # dotted keys
    key: str = ""
    expected: str = ""
    value: Any = None


def _problem(data: Mapping[str, Any]) -> _Problem | None:
    """The first problem in `data` by the schema (unknown keys before anything else), or None.

    Callers word it: the file names the key and shows the TOML value, an input shows its text.
    """
    errors = sorted(schema_validator().iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        if error.validator == "additionalProperties":
            prefix = "".join(f"{part}." for part in error.absolute_path)
            known = error.schema.get("properties", {})
            return _Problem(unknown=tuple(prefix + key for key in error.instance if key not in known))
    if errors:
        key = _key(errors[0].absolute_path)
        return _Problem(key=key, expected=_expected(key), value=_value_at(data, key))
    for key, value in _numbers(data):
        if not math.isfinite(value):
            return _Problem(key=key, expected=_expected(key), value=value)
    return None


def _apply(config: Config, data: Mapping[str, Any]) -> Config:
    """`config` with the already validated `data` (schema keys) replacing its fields."""
    changes: dict[str, Any] = {}
    for key, value in data.items():
        attribute = key.replace("-", "_")
        if key in ("include", "exclude", "ignore-targets", "install", "build", "pass-env"):
            changes[attribute] = tuple(value)
        elif key == "float-policy":
            changes[attribute] = replace(config.float_policy, **{k: float(v) for k, v in value.items()})
        elif key in ("budget", "min-reach"):
            changes[attribute] = float(value)
        elif key in ("seed", "max-comments"):
            changes[attribute] = int(value)  # the schema lets 3.0 count as an integer
        else:
            changes[attribute] = value
    return replace(config, **changes)


def _parse(name: str, text: str) -> Any:
    """An input's text as the value the schema expects; text that does not parse stays text (and fails)."""
    schema = schema_validator().schema
    rule = schema["properties"][name]
    if "$ref" in rule:  # "#/$defs/patterns"
        rule = schema["$defs"][rule["$ref"].rsplit("/", 1)[-1]]
    kind = rule.get("type")
    try:
        if kind == "integer":
            try:
                return int(text)
            except ValueError:
                number = float(text)
                return int(number) if number.is_integer() else number
        if kind == "number":
            return float(text)
        if kind == "array":  # one item per line
            return [line.strip() for line in text.splitlines() if line.strip()]
    except ValueError:
        return text
    return text


def _key(path: Iterable[Any]) -> str:
    """The dotted key a schema error is about, up to the depth `_EXPECTED` words (list items: the list)."""
    parts = [str(part) for part in path if isinstance(part, str)]
    while len(parts) > 1 and ".".join(parts) not in _EXPECTED:
        parts.pop()
    return ".".join(parts)


def _expected(key: str) -> str:
    if key in _EXPECTED:
        return _EXPECTED[key]
    schema: dict[str, Any] = schema_validator().schema
    for part in key.split("."):
        schema = schema["properties"][part]
    return "one of " + ", ".join(repr(choice) for choice in schema["enum"])


def _value_at(data: Mapping[str, Any], key: str) -> Any:
    value: Any = data
    for part in key.split("."):
        value = value[part]
    return value


def _numbers(data: Mapping[str, Any], prefix: str = "") -> Iterable[tuple[str, float]]:
    """Every float in `data` with its dotted key (TOML and float() both accept inf and nan)."""
    for key, value in data.items():
        if isinstance(value, dict):
            yield from _numbers(value, f"{prefix}{key}.")
        elif isinstance(value, float):
            yield prefix + key, value


def _show(value: Any) -> str:
    """A TOML value as the file spells it, for messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_show(item) for item in value) + "]"
    if isinstance(value, dict):
        return "a table"
    return str(value)


def _names(keys: Iterable[str]) -> str:
    return ", ".join(repr(key) for key in keys)


def _hint(keys: tuple[str, ...]) -> str:
    """' (did you mean ...?)' for a single misspelt key, which is the usual mistake."""
    if len(keys) != 1:
        return ""
    prefix, _, last = keys[0].rpartition(".")
    schema: dict[str, Any] = schema_validator().schema
    for part in filter(None, prefix.split(".")):
        schema = schema["properties"][part]
    close = difflib.get_close_matches(last, schema.get("properties", {}), n=1)
    return f" (did you mean {(prefix + '.' if prefix else '') + close[0]!r}?)" if close else ""


def _toml_problem(path: Path, error: tomllib.TOMLDecodeError) -> str:
    """'file:line:column: invalid TOML: reason' from tomllib's message, which ends '(at line L, column C)'."""
    message = str(error).splitlines()[0] if str(error) else "syntax error"
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
    if found is None:
        return f"{path}: invalid TOML: {message}"
    return f"{path}:{found[1]}:{found[2]}: invalid TOML: {message[: found.start()]}"
