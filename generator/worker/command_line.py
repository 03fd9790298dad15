"""Command-line entry points: the functions a program's command line runs, called as it runs them.

A `main()` that reads `sys.argv` (directly, through argparse's `parse_args()`, optparse,
getopt or docopt, or through another such function of its module), a click or typer command,
and the targets of the project's `[project.scripts]` and `[project.entry-points.console_scripts]`
tables (pyproject.toml) or setup.cfg's `console_scripts` are operations of kind "command"
(id `pkg.cli:main<argv>`). Their arguments are an argv list and a stdin text; what they do is
observed as one value, `{"stdout", "stderr", "exit", "returned"}`. Option strings are read
from the module's source (argparse and optparse's `add_argument`/`add_option`, click's
`option`, getopt's option specs, argparse's `add_parser` subcommands, click's group commands)
for the host to build command lines from. Standard library only.
"""

from __future__ import annotations

import ast
import configparser
import contextlib
import inspect
import os
import re
import types
from collections.abc import Callable, Iterator
from typing import Any

from .protocol import OperationKind

COMMAND_SUFFIX = "<argv>"  # `pkg.cli:main<argv>`: main called as its command line runs it
ARGV = "difforacle.Argv"  # parameter hints the host builds a command line and a stdin text for
STDIN = "difforacle.Stdin"
ARGV_READERS = frozenset({"parse_args", "parse_known_args", "parse_intermixed_args",
                          "parse_known_intermixed_args"})  # argparse and optparse: sys.argv when not given
# argparse's, optparse's, click's and typer's
OPTION_CALLS = frozenset({"add_argument", "add_option", "option", "Option"})
FLAG_ACTIONS = frozenset({"store_true", "store_false", "store_const", "count", "help", "version",
                          "append_const", "BooleanOptionalAction"})
COMMAND_DECORATORS = frozenset({"command", "group"})  # click's (and typer's) `@cli.command()`
COMMAND_LIBRARIES = frozenset({"click", "typer"})
OPTION_PATTERN = re.compile(r"--?[A-Za-z][\w-]*\Z")
TOP_LEVEL_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]", re.MULTILINE)  # a top-level function begins a line
PROJECT_FILES_UP = 6  # folders walked up from a module for its project's pyproject.toml or setup.cfg


def command_id(target: str) -> str:
    """The operation id of `target` (`pkg.cli:main`) called as a command line."""
    return target + COMMAND_SUFFIX


def command_target(op_id: str) -> str | None:
    """`pkg.cli:main` for `pkg.cli:main<argv>`; None for any other operation."""
    return op_id[: -len(COMMAND_SUFFIX)] if op_id.endswith(COMMAND_SUFFIX) else None


def run_command_line(main: Callable[[], object], argv: list[str], stdin: str = "") -> dict:
    """Run `main()` as its command line would and return what it did: stdout, stderr, the
    exit code (a `SystemExit`'s, None without one) and the return value. `sys.argv` is
    `["prog", *argv]` (a fixed program name: the real one varies with the install), stdin
    reads `stdin`, help is 80 columns wide, output is kept up to a million characters each;
    all of it is put back afterwards. Self-contained: a test of a command line carries it."""
    import io
    import os
    import sys

    class Output(io.StringIO):
        def write(self, text: str) -> int:  # the first million characters are kept
            super().write(text[: max(0, 1_000_000 - self.tell())])
            return len(text)

    # a handler that `logging.basicConfig` adds in `main` writes to this call's stderr: dropped after
    logging = sys.modules.get("logging")
    handlers = list(logging.root.handlers) if logging else []
    streams, columns = (sys.argv, sys.stdin, sys.stdout, sys.stderr), os.environ.get("COLUMNS")
    out, err = Output(), Output()
    sys.argv, sys.stdin, sys.stdout, sys.stderr = ["prog", *argv], io.StringIO(stdin), out, err
    os.environ["COLUMNS"] = "80"
    try:
        try:
            returned, code = main(), None
        except SystemExit as exc:
            returned, code = None, exc.code
    finally:
        sys.argv, sys.stdin, sys.stdout, sys.stderr = streams
        if columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = columns
        if logging:
            logging.root.handlers[:] = handlers
    return {"stdout": out.getvalue(), "stderr": err.getvalue(), "exit": code, "returned": returned}


def check_arguments(args: list, kwargs: dict) -> str | None:
    """Why a command line's arguments are no (argv, stdin) pair, or None when they are."""
    if kwargs or not 1 <= len(args) <= 2:
        return "a command line takes an argv list and a stdin text"
    argv, stdin = args[0], args[1] if len(args) > 1 else ""
    if not isinstance(argv, list) or not all(isinstance(word, str) for word in argv):
        return "argv is a list of str"
    return None if isinstance(stdin, str) else "stdin is a str"


# ---------------------------------------------------------------- discovery


def commands_of(module: types.ModuleType) -> list[dict]:
    """The catalog operations of `module`'s command-line entry points (see the module docstring)."""
    path = getattr(module, "__file__", None)
    scripts = _scripts_in(module.__name__, path)
    try:
        source = inspect.getsource(module)
        # what reads the command line is a top-level function (`def` at the line's start): a module
        # without one (a generated table) is not parsed
        tree = ast.parse(source) if scripts or TOP_LEVEL_DEF.search(source) else None
    except (OSError, TypeError, SyntaxError, ValueError):
        return []
    targets = (_argv_readers(tree) if tree is not None else set()) | scripts
    if tree is None or not targets:  # most modules: their option strings (a walk of the tree) are not needed
        return []
    options = [list(option) for option in option_strings(tree)]
    definitions = {node.name: node for node in tree.body
                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    found = []
    for qualname in sorted(targets):
        target = _lookup(module, qualname)
        if target is None or not _callable_without_arguments(target):
            continue
        node = definitions.get(qualname.split(".")[0])
        target_id = f"{module.__name__}:{qualname}"
        found.append({
            "id": command_id(target_id), "kind": OperationKind.COMMAND, "owner": None,
            "params": [{"name": "argv", "kind": "POSITIONAL_OR_KEYWORD", "has_default": False,
                        "hints": [ARGV], "options": options},
                       {"name": "stdin", "kind": "POSITIONAL_OR_KEYWORD", "has_default": True,
                        "default": ["str", ""], "hints": [STDIN]}],
            "returns": ["builtins.dict"], "file": path,
            "line": node.lineno if node else None, "end": node.end_lineno if node else None,
            "dispatches": [target_id]})
    return found


def _lookup(module: types.ModuleType, qualname: str) -> Any:
    """The object `qualname` names in `module` (`App.run` included), or None."""
    target: Any = module
    try:
        for part in qualname.split("."):
            target = getattr(target, part)
    except Exception:  # a module `__getattr__` or a descriptor that raises
        return None
    return target


def _callable_without_arguments(target: Any) -> bool:
    """A command line calls its entry point with no arguments: every parameter has a default."""
    if not callable(target) or isinstance(target, type):
        return False
    if type(target).__module__.split(".")[0] in COMMAND_LIBRARIES:
        return True  # a click or typer command parses sys.argv itself
    try:
        parameters = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters)


def _argv_readers(tree: ast.Module) -> set[str]:
    """Public top-level functions that read the command line, or call one that does (by name),
    and click/typer commands (`@cli.command()`)."""
    functions = {node.name: node for node in tree.body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    argv_names = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                  and node.module == "sys" for alias in node.names if alias.name == "argv"}
    reading = {name for name, node in functions.items()
               if _decorated_as_command(node) or _reads_argv(node, argv_names)}
    calls = {name: {call.func.id for call in ast.walk(node)
                    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)}
             for name, node in functions.items()}
    grown = True
    while grown:  # `main()` calling `parse_options()` that calls `parser.parse_args()`
        more = {name for name, called in calls.items() if name not in reading and called & reading}
        reading |= more
        grown = bool(more)
    return {name for name in reading if not name.startswith("_")}


def _decorated_as_command(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in node.decorator_list:
        func = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in COMMAND_DECORATORS:
            return True
    return False


def _reads_argv(node: ast.FunctionDef | ast.AsyncFunctionDef, argv_names: set[str]) -> bool:
    """`sys.argv`, an imported `argv`, `parser.parse_args()` with no list (or a parameter that
    defaults to None, which argparse replaces with sys.argv), `docopt(doc)` without argv."""
    optional = _none_defaults(node)
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and inner.attr == "argv" and _named(inner.value, "sys"):
            return True
        if isinstance(inner, ast.Name) and inner.id in argv_names:
            return True
        if not isinstance(inner, ast.Call):
            continue
        func = inner.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        given = [*inner.args, *(k.value for k in inner.keywords if k.arg in ("args", "argv"))]
        if name in ARGV_READERS and _defaults_to_argv(given[:1], optional):
            return True
        if name == "docopt" and _defaults_to_argv(given[1:2], optional):
            return True
    return False


def _defaults_to_argv(given: list[ast.expr], optional: set[str]) -> bool:
    """No argument list, None, or a parameter that defaults to None."""
    if not given:
        return True
    value = given[0]
    return (isinstance(value, ast.Constant) and value.value is None) or (
        isinstance(value, ast.Name) and value.id in optional)


def _none_defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
             *((a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d)]
    return {arg.arg for arg, default in pairs if isinstance(default, ast.Constant) and default.value is None}


def _named(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def option_strings(tree: ast.Module) -> list[tuple[str, bool, list[str]]]:
    """The command line's words, each (text, takes a value, the value's choices): options of
    argparse, optparse and click (`--count`, `-v`; a store_true action or a click flag takes
    no value), getopt's specs (`"ab:"`, `["beta="]`), subcommands (argparse's `add_parser`,
    click's group commands), then any other literal spelled like an option (`if arg == "-q"`)."""
    found: dict[str, tuple[str, bool, list[str]]] = {}

    def add(text: str, takes_value: bool, choices: list[str]) -> None:
        found.setdefault(text, (text, takes_value, choices))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for text, takes_value, choices in _call_options(node):
                add(text, takes_value, choices)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for name in _subcommand_names(node):
                add(name, False, [])
    for node in ast.walk(tree):
        spelled = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if spelled and OPTION_PATTERN.match(node.value):
            add(node.value, False, [])
    return list(found.values())


def _call_options(call: ast.Call) -> Iterator[tuple[str, bool, list[str]]]:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    texts = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    if name in OPTION_CALLS:
        takes_value = not _is_flag(keywords)
        choices = _literal_strings(keywords.get("choices"))
        for text in texts:
            if not text.startswith("-"):  # a positional argument: its choices are words of their own
                yield from ((choice, False, []) for choice in choices)
            for part in text.split("/"):  # click's "--shout/--no-shout"
                if part.startswith("-"):
                    yield part.strip(), takes_value and "/" not in text, choices
    elif name == "add_parser" and texts:
        yield texts[0], False, []
    elif name in ("getopt", "gnu_getopt"):
        specs = [*call.args[1:], *(keywords[k] for k in ("shortopts", "longopts") if k in keywords)]
        for spec in specs:
            yield from _getopt_options(spec)


def _is_flag(keywords: dict[str, ast.expr]) -> bool:
    action = keywords.get("action")
    action_name = (action.value if isinstance(action, ast.Constant)
                   else getattr(action, "attr", getattr(action, "id", None)))
    flags = [keywords.get("is_flag"), keywords.get("count")]  # click's
    nargs = keywords.get("nargs")
    return (action_name in FLAG_ACTIONS or any(isinstance(f, ast.Constant) and f.value is True for f in flags)
            or (isinstance(nargs, ast.Constant) and nargs.value == 0))


def _literal_strings(node: ast.expr | None) -> list[str]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [str(e.value) for e in node.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, (str, int))]
    return []


def _getopt_options(spec: ast.expr) -> Iterator[tuple[str, bool, list[str]]]:
    """getopt's `"ab:"` (`-a`, and `-b` taking a value) and `["alpha", "beta="]`."""
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        letters = spec.value
        for at, letter in enumerate(letters):
            if letter != ":":
                yield f"-{letter}", letters[at + 1: at + 2] == ":", []
    for word in _literal_strings(spec):
        yield f"--{word.rstrip('=')}", word.endswith("="), []


def _subcommand_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[str]:
    """A click group's command: `@cli.command("name")`, or the function's name, dashed."""
    for decorator in node.decorator_list:
        if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr == "command"):
            continue
        given = [a.value for a in decorator.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        yield given[0] if given else node.name.replace("_", "-")


# ---------------------------------------------------------------- the project's scripts tables


def _scripts_in(module_name: str, path: str | None) -> set[str]:
    """Qualnames in `module_name` that the project's scripts tables name."""
    found = set()
    for target in _script_targets(path):
        module, _, qualname = target.partition(":")
        if module.strip() == module_name and qualname.strip():
            found.add(qualname.strip())
    return found


def _script_targets(path: str | None) -> list[str]:
    """`module:qualname` targets of the console scripts of the project holding the file `path`: the
    nearest pyproject.toml or setup.cfg up from it."""
    folder = os.path.dirname(os.path.abspath(path)) if isinstance(path, str) else None
    for _ in range(PROJECT_FILES_UP if folder else 0):
        pyproject, setup_cfg = os.path.join(folder, "pyproject.toml"), os.path.join(folder, "setup.cfg")
        targets = [*_pyproject_scripts(pyproject), *_setup_cfg_scripts(setup_cfg)]
        if targets or os.path.exists(pyproject) or os.path.exists(setup_cfg):
            return targets
        folder = os.path.dirname(folder)
    return []


def _pyproject_scripts(path: str) -> list[str]:
    try:
        import tomllib  # novm: Python 3.11+; older interpreters find their commands from the source alone
    except ImportError:
        return []
    try:
        with open(path, "rb") as file:
            project = tomllib.load(file).get("project", {})
    except (OSError, ValueError):
        return []
    tables = [project.get("scripts", {}), project.get("entry-points", {}).get("console_scripts", {})]
    return [_callable_part(value) for table in tables if isinstance(table, dict)
            for value in table.values() if isinstance(value, str)]


def _setup_cfg_scripts(path: str) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    with contextlib.suppress(OSError, configparser.Error):
        parser.read(path, encoding="utf-8")
    text = parser.get("options.entry_points", "console_scripts", fallback="")
    return [_callable_part(line.partition("=")[2]) for line in text.splitlines() if "=" in line]


def _callable_part(value: str) -> str:
    """`pkg.cli:main [extra]` -> `pkg.cli:main`."""
    return value.split("[", 1)[0].strip()
