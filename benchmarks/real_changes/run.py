"""Real-changes benchmark: difforacle on merged commits of real libraries (see README.md here).

    python benchmarks/real_changes/run.py --mirrors DIR [--difforacle CMD] [--budget 60] [--seed 0]
        [--out results.json] [--markdown results.md] [--only ID_OR_REPO,...] [--work DIR]
        [--reports DIR] [--compare OLD.json] [--report-only] [--labels-only]

Per repository (in manifest order): find its bare mirror under --mirrors (a missing one is
skipped with one line), clone it, make a virtual environment with its dependencies, check
every case's label (a `change` witness must print differently on parent and commit; a `same`
commit must pass the library's tests on both), then run `difforacle diff` on each good case.
Results are saved after every case and a rerun resumes; the Markdown table is written at the
end. Exit status 0, or 2 with one line on stderr for bad input.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

HERE = Path(__file__).resolve().parent
MANIFEST_SCHEMA = "difforacle.real-changes/1"
RESULTS_SCHEMA = "difforacle.real-changes-results/1"
LABELS = ("change", "same", "regression", "unintended", "mixed")
# `change` cases are the `intended` label of the triage figures; `regression` cases are real commits
# that brought a bug in, found from the commit that fixed it (SZZ); `unintended` cases put a real fix
# back (a regression, for the detection figures only), `mixed` ones hold a change and a reverted fix
# in one pull request
WITNESSED = ("change", "regression", "unintended")  # labels with a witness, needs and category of their own
CATEGORIES = (
    "structured-string",
    "stateful-sequence",
    "dunder-protocol",
    "module-level",
    "removed-name",
    "error-message",
    "plain-value",
)
WITNESS_TIMEOUT_S = 60
TEST_TIMEOUT_S = 600
INSTALL_TIMEOUT_S = 900
OUTPUT_CHARS = 600  # witness outputs and differences' values are kept this long in the results
COMMIT_RE = re.compile(r"[0-9a-f]{40}")
JUDGED = ("ok", "tool-error")  # an engine error counts: a missed change, a quiet same case
CTOR_METHODS = ("__init__", "__new__", "__post_init__", "__attrs_post_init__", "__init_subclass__")


class BenchError(Exception):
    """Bad input or environment: reported as one line, exit status 2."""


# ---------------------------------------------------------------- manifest


@dataclass(frozen=True)
class Repository:
    name: str  # owner/name, as on GitHub
    source: str  # folder of the checkout that goes on PYTHONPATH ("." or "src")
    packages: tuple[str, ...]  # top-level import packages: where changed units and callers are looked for
    dependencies: tuple[str, ...]
    test_command: str  # run from the checkout's root with the venv's bin first on PATH
    half: str = ""  # "tuning" or "checking" (`half_of`): rules fitted on the one, figures from the other


@dataclass(frozen=True)
class Case:
    id: str
    repository: str
    commit: str  # mixed cases: the change case's commit
    label: str
    note: str
    category: str = ""  # change and unintended cases
    needs: str = ""  # change, unintended: the input or state that shows the change, in a few words
    witness: str = ""  # change, unintended: prints something that differs; mixed: the change case's
    dependencies: tuple[str, ...] = ()  # added to the repository's, replacing the same project's
    test_command: str = ""  # same cases: overrides the repository's
    change: str = ""  # mixed cases: id of the change case
    fix: str = ""  # mixed cases: id of the unintended case
    fix_commit: str = ""  # unintended: = commit; mixed: the fix case's commit; regression: its fix
    fix_says: str = ""  # regression cases: what the fix's message, changelog or issue says broke
    source: str = ""  # overrides the repository's source folder (a layout of other years)
    half: str = ""  # its repository's half of the split (`half_of`)
    fix_witness: str = ""  # mixed cases: the fix case's witness
    same_module: bool | None = None  # mixed cases, informational


@dataclass(frozen=True)
class Manifest:
    repositories: dict[str, Repository]
    cases: list[Case]
    digest: str


HALVES = ("tuning", "checking")


def half_of(name: str) -> str:
    """The half a library belongs to, by a rule that knows nothing of results: the first byte of
    the SHA-256 of its lower-cased owner/name, even for the tuning half, odd for the checking half.
    Triage rules are written and adjusted against the tuning half; the checking half's figures count."""
    return HALVES[hashlib.sha256(name.lower().encode()).digest()[0] % 2]


def repository_of(manifest: Manifest, case: Case) -> Repository:
    """How to run a case's code: its repository's settings, with the case's own source folder."""
    repo = manifest.repositories[case.repository]
    return replace(repo, source=case.source) if case.source else repo


def _require(table: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in table:
        raise BenchError(f"{where}: missing field {key!r}")
    value = table[key]
    if not isinstance(value, kind):
        raise BenchError(f"{where}: field {key!r} must be a {kind.__name__}")
    return value


def _strings(table: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise BenchError(f"{where}: field {key!r} must be a list of strings")
    return tuple(value)


def load_manifest(path: Path) -> Manifest:
    """Read and validate the manifest; any problem is a BenchError naming the case and field."""
    try:
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except OSError as error:
        raise BenchError(f"cannot read manifest {path}: {error.strerror}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise BenchError(f"manifest {path} is not valid TOML: {error}") from None
    if data.get("schema") != MANIFEST_SCHEMA:
        raise BenchError(f"manifest {path}: schema must be {MANIFEST_SCHEMA!r}")
    repositories: dict[str, Repository] = {}
    for name, table in _require(data, "repositories", dict, str(path)).items():
        where = f"repository {name}"
        if not isinstance(table, dict) or name.count("/") != 1:
            raise BenchError(f"{where}: must be a table keyed by owner/name")
        repositories[name] = Repository(
            name=name,
            source=_require(table, "source", str, where),
            packages=_strings(table, "packages", where),
            dependencies=_strings(table, "dependencies", where),
            test_command=_require(table, "test_command", str, where),
            half=table.get("half", ""),
        )
        if "half" not in table:
            raise BenchError(f"{where}: missing field 'half' (the split's rule gives {half_of(name)!r})")
        if repositories[name].half != half_of(name):
            raise BenchError(f"{where}: field 'half' must be {half_of(name)!r}, as the split's rule gives it")
        if not repositories[name].packages:
            raise BenchError(f"{where}: field 'packages' must name at least one import package")
    cases: list[Case] = []
    seen: set[str] = set()
    for index, table in enumerate(_require(data, "case", list, str(path)), start=1):
        where = f"case {table.get('id', f'#{index}')}"
        case_id = _require(table, "id", str, where)
        if case_id in seen:
            raise BenchError(f"{where}: duplicate id")
        seen.add(case_id)
        label = _require(table, "label", str, where)
        if label not in LABELS:
            raise BenchError(
                f"{where}: unknown label {label!r} (use {', '.join(LABELS[:-1])} or {LABELS[-1]})"
            )
        repository = _require(table, "repository", str, where)
        if repository not in repositories:
            raise BenchError(f"{where}: repository {repository!r} has no [repositories] entry")
        if label == "mixed":  # its commits and witnesses are its two cases': resolved below
            commit = ""
            for key in ("change", "fix"):
                _require(table, key, str, where)
            if not isinstance(table.get("same_module", False), bool):
                raise BenchError(f"{where}: field 'same_module' must be a bool")
        else:
            commit = _require(table, "commit", str, where)
            if not COMMIT_RE.fullmatch(commit):
                raise BenchError(f"{where}: commit must be a full 40-hex commit id")
        if label == "regression":
            if not COMMIT_RE.fullmatch(_require(table, "fix", str, where)):
                raise BenchError(f"{where}: fix must be a full 40-hex commit id")
            if table["fix"] == commit:
                raise BenchError(f"{where}: fix must be another commit than the one that brought the bug in")
            _require(table, "fix_says", str, where)
        if "title" in table:
            raise BenchError(
                f"{where}: field 'title' is retired: a pull request's words are its commits' own")
        case = Case(
            id=case_id,
            repository=repository,
            commit=commit,
            label=label,
            note=_require(table, "note", str, where) if label != "mixed" else table.get("note", ""),
            category=table.get("category", ""),
            needs=table.get("needs", ""),
            witness=table.get("witness", ""),
            dependencies=_strings(table, "dependencies", where),
            test_command=table.get("test_command", ""),
            change=table.get("change", ""),
            fix=table.get("fix", "") if label == "mixed" else "",
            fix_commit=commit if label == "unintended" else table["fix"] if label == "regression" else "",
            fix_says=table.get("fix_says", ""),
            source=_require(table, "source", str, where) if "source" in table else "",
            same_module=table.get("same_module"),
            half=repositories[repository].half,
        )
        if label in WITNESSED:
            _require(table, "witness", str, where)
            _require(table, "needs", str, where)
            if _require(table, "category", str, where) not in CATEGORIES:
                raise BenchError(
                    f"{where}: unknown category {case.category!r} (use one of {', '.join(CATEGORIES)})"
                )
        cases.append(case)
    cases = [_resolve_mixed(case, cases) if case.label == "mixed" else case for case in cases]
    return Manifest(repositories, cases, hashlib.sha256(raw).hexdigest()[:16])


def _resolve_mixed(case: Case, cases: list[Case]) -> Case:
    """A mixed case takes its commits, witnesses and dependencies from the two cases it names."""
    by_id = {other.id: other for other in cases}
    parts: dict[str, Case] = {}
    for key, label in (("change", "change"), ("fix", "unintended")):
        named = getattr(case, key)
        other = by_id.get(named)
        if other is None:
            raise BenchError(f"case {case.id}: field {key!r} names no case {named!r}")
        if other.label != label:
            raise BenchError(
                f"case {case.id}: field {key!r} must name a {label!r} case, not a {other.label!r} one"
            )
        if other.repository != case.repository:
            raise BenchError(
                f"case {case.id}: field {key!r} names a case of {other.repository}, not {case.repository}"
            )
        parts[key] = other
    change, fix = parts["change"], parts["fix"]
    return replace(
        case,
        commit=change.commit,
        witness=change.witness,
        fix_commit=fix.commit,
        fix_witness=fix.witness,
        dependencies=merge_dependencies(merge_dependencies(change.dependencies, fix.dependencies),
                                        case.dependencies),
    )


# ---------------------------------------------------------------- processes and git


@dataclass(frozen=True)
class Completed:
    returncode: int  # -1 on time-out
    stdout: str
    stderr: str
    seconds: float


def run(
    command: Sequence[str | Path],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    stdin: bytes | None = None,
) -> Completed:
    """Run a command to completion; a time-out kills its whole process group and returns -1."""
    start = time.monotonic()
    process = subprocess.Popen(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(stdin, timeout=timeout)
        code = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        out, err = process.communicate()
        code = -1
    return Completed(
        code, out.decode(errors="replace"), err.decode(errors="replace"), round(time.monotonic() - start, 2)
    )


def git(repo: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> str:
    """Output of one git command in `repo`; a failure is a BenchError with git's last line.

    `env`: added to this process's environment (a temporary index, a fixed identity)."""
    result = run(
        ["git", "-C", repo, *args],
        timeout=300,
        env={**os.environ, **env} if env else None,
        stdin=stdin.encode() if stdin is not None else None,
    )
    if result.returncode != 0:
        raise BenchError(f"git {' '.join(args[:2])} failed: {tail(result.stderr)}")
    return result.stdout


def tail(text: str, lines: int = 1) -> str:
    """The last non-empty lines of a process's output, for a one-line reason."""
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " | ".join(kept[-lines:]) if kept else "(no output)"


def is_git_dir(folder: Path) -> bool:
    return (folder / "HEAD").is_file() and (folder / "objects").is_dir()


def find_mirror(root: Path, repository: str) -> Path | None:
    """The bare git directory of `owner/name` under `root`, in any of the documented layouts.

    `root/owner+name/` (as the fetch tool leaves it: the git dir is the folder itself or one
    below it, such as `repo/`), `root/owner/name[.git]`, `root/name[.git]`.
    """
    owner, name = repository.split("/")
    for candidate in (
        root / f"{owner}+{name}",
        root / owner / f"{name}.git",
        root / owner / name,
        root / f"{name}.git",
        root / name,
    ):
        if not candidate.is_dir():
            continue
        if is_git_dir(candidate):
            return candidate
        for child in sorted(candidate.iterdir()):
            if child.is_dir() and is_git_dir(child):
                return child
        if is_git_dir(candidate / ".git"):
            return candidate / ".git"
    return None


def export_tree(repo: Path, commit: str, target: Path) -> Path:
    """Write one commit's files into `target` (git archive), for running code of either side."""
    result = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", commit], capture_output=True, check=False
    )
    if result.returncode != 0:
        raise BenchError(f"git archive {commit[:12]} failed: {tail(result.stderr.decode(errors='replace'))}")
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(result.stdout)) as archive:
        archive.extractall(target, filter="data")
    return target


# ---------------------------------------------------------------- synthetic pull requests

# The synthetic commits' identity and dates are fixed, so a rerun (or another clone) makes the same ids.
SYNTHETIC_IDENTITY = {
    **{f"GIT_{who}_NAME": "difforacle real-changes benchmark" for who in ("AUTHOR", "COMMITTER")},
    **{f"GIT_{who}_EMAIL": "bench@difforacle.invalid" for who in ("AUTHOR", "COMMITTER")},
    **{f"GIT_{who}_DATE": "2000-01-01T00:00:00+0000" for who in ("AUTHOR", "COMMITTER")},
}
TEST_PART = re.compile(r"^(tests?|testing)$|^test_.*\.py$|_tests?\.py$|^conftest\.py$")


class LabelError(BenchError):
    """The case's pull request cannot be made as its label says: the case is broken, not the input."""


@dataclass(frozen=True)
class PullRequest:
    """The commits difforacle compares, and the pull request's words (`--pr-title`, `--pr-body`)."""

    base: str
    head: str
    title: str
    body: str


def is_source(path: str, repo: Repository) -> bool:
    """A module of the listed packages that is not a test (tests shipped inside a package are not
    what a fix puts right: they go with its other non-source changes)."""
    return module_of(path, repo) is not None and not any(
        TEST_PART.search(part) for part in PurePosixPath(path).parts
    )


def parent_of(clone: Path, commit: str, merges: bool = False) -> str:
    """The only parent of `commit`; a merge or a root commit cannot stand for one change. With
    `merges`, a merge's first parent: a pull request merged as a merge commit is the change from
    the branch it was merged into."""
    parents = git(clone, "rev-list", "--parents", "-n", "1", commit).split()[1:]
    if merges and parents:
        return parents[0]
    if len(parents) != 1:
        raise LabelError(f"commit {commit[:12]} has {len(parents)} parents, not one")
    return parents[0]


def split_message(message: str) -> tuple[str, str]:
    """A commit message as a pull request's title (its subject line) and body (the rest)."""
    subject, _, rest = message.strip().partition("\n")
    return subject.strip(), rest.strip()


def commit_message(clone: Path, commit: str) -> str:
    """The raw message of a commit, as git stored it."""
    return git(clone, "cat-file", "commit", commit).partition("\n\n")[2]


def _synthetic_commit(clone: Path, tree: str, parent: str, message: str) -> str:
    return git(
        clone, "commit-tree", "--no-gpg-sign", tree, "-p", parent, "-F", "-",
        env=SYNTHETIC_IDENTITY, stdin=message,
    ).strip()


def _tree_with(clone: Path, start: str, edit: Any) -> str:
    """The tree of `start` after `edit(env)` changed a temporary index (GIT_INDEX_FILE in env)."""
    with tempfile.TemporaryDirectory(prefix="index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(clone, "read-tree", start, env=env)
        edit(env)
        return git(clone, "write-tree", env=env).strip()


def _reverse_apply(clone: Path, fix: str, paths: Sequence[str], env: dict[str, str]) -> None:
    """`git apply -R --3way` of the fix's diff (only `paths`) to the index; a conflict breaks the case."""
    if not paths:
        return
    patch = git(clone, "diff", "--binary", "--full-index", "--no-renames", f"{fix}^", fix, "--", *paths)
    result = run(
        ["git", "-C", clone, "apply", "--cached", "-R", "--3way", "-"],
        env={**os.environ, **env},
        stdin=patch.encode(),
        timeout=300,
    )
    if result.returncode != 0:
        conflicts = [line[2:] for line in result.stderr.splitlines() if line.startswith("U ")]
        why = f"conflicts in {', '.join(conflicts)}" if conflicts else tail(result.stderr)
        raise LabelError(f"the fix {fix[:12]} does not reverse-apply: {why}")


def fix_paths(clone: Path, fix: str, repo: Repository) -> tuple[list[str], list[str]]:
    """The fix's changed paths: (source files of the packages, everything else: tests, changelog, docs)."""
    names = git(clone, "diff", "--name-only", "--no-renames", f"{fix}^", fix).split("\n")
    names = [name for name in names if name]
    source = [name for name in names if is_source(name, repo)]
    if not source:
        raise LabelError(f"the fix changes no source file of {', '.join(repo.packages)}")
    return source, [name for name in names if name not in source]


def unintended_pr(clone: Path, case: Case, repo: Repository) -> PullRequest:
    """A pull request that puts a fixed bug back: base = the fix's parent plus the fix's source
    changes, head = the fix's parent (the fix's tests, changelog and docs are on neither side)."""
    parent = parent_of(clone, case.fix_commit)
    source, _ = fix_paths(clone, case.fix_commit, repo)

    def take_fixed_sources(env: dict[str, str]) -> None:  # ls-tree lines are --index-info lines
        fixed = {line.partition("\t")[2]: line for line in
                 git(clone, "ls-tree", "--full-tree", case.fix_commit, "--", *source).splitlines()}
        lines = [fixed.get(path, f"0 {'0' * 40}\t{path}") for path in source]  # mode 0: the fix removed it
        git(clone, "update-index", "--index-info", env=env, stdin="".join(line + "\n" for line in lines))

    base = _synthetic_commit(
        clone, _tree_with(clone, parent, take_fixed_sources), parent,
        f"Base of {case.id}: {parent[:12]} with the source changes of {case.fix_commit[:12]}\n",
    )
    # no words: a pull request that puts a bug back says nothing the benchmark could honestly write
    head = _synthetic_commit(clone, git(clone, "rev-parse", f"{parent}^{{tree}}").strip(), base, "")
    return PullRequest(base, head, "", "")


def mixed_pr(clone: Path, case: Case, repo: Repository) -> PullRequest:
    """A pull request holding a change C and a reverted fix F: base = C's parent without F's
    non-source changes, head = C without any of F's changes; its words are C's message."""
    change_parent = parent_of(clone, case.commit)
    parent_of(clone, case.fix_commit)
    ancestor = run(["git", "-C", clone, "merge-base", "--is-ancestor", case.fix_commit, change_parent])
    if ancestor.returncode != 0:
        raise LabelError(f"the fix {case.fix_commit[:12]} is not an ancestor of the change's parent")
    source, other = fix_paths(clone, case.fix_commit, repo)
    base_tree = _tree_with(clone, change_parent,
                           lambda env: _reverse_apply(clone, case.fix_commit, other, env))
    head_tree = _tree_with(clone, case.commit,
                           lambda env: _reverse_apply(clone, case.fix_commit, [*source, *other], env))
    base = _synthetic_commit(
        clone, base_tree, change_parent,
        f"Base of {case.id}: {change_parent[:12]} without the non-source changes of {case.fix_commit[:12]}\n",
    )
    message = commit_message(clone, case.commit)
    head = _synthetic_commit(clone, head_tree, base, message)
    return PullRequest(base, head, *split_message(message))


def pull_request(clone: Path, case: Case, repo: Repository) -> PullRequest:
    """The commits a case compares and its pull request's words: a change case is its commit
    against its parent, with its message; the others are synthetic commits kept under
    refs/difforacle-bench/<id>/ (so that no garbage collection drops them)."""
    if case.label in ("change", "same", "regression"):
        return PullRequest(parent_of(clone, case.commit, merges=case.label == "regression"), case.commit,
                           *split_message(commit_message(clone, case.commit)))
    made = (unintended_pr if case.label == "unintended" else mixed_pr)(clone, case, repo)
    for side in ("base", "head"):
        git(clone, "update-ref", f"refs/difforacle-bench/{case.id}/{side}", getattr(made, side))
    return made


# ---------------------------------------------------------------- environments


def ensure_venv(work: Path, python: str, dependencies: Sequence[str]) -> Path:
    """A virtual environment holding `dependencies`, reused across runs (keyed by their hash)."""
    key = hashlib.sha256("\n".join([python, *sorted(dependencies)]).encode()).hexdigest()[:12]
    folder = work / "venvs" / key
    interpreter = folder / "bin" / "python"
    if (folder / ".complete").is_file():
        return interpreter
    shutil.rmtree(folder, ignore_errors=True)
    created = run([python, "-m", "venv", *([] if dependencies else ["--without-pip"]), folder], timeout=300)
    if created.returncode != 0:
        raise BenchError(f"cannot create a venv with {python}: {tail(created.stderr)}")
    if dependencies:
        installed = run([interpreter, "-m", "pip", "install", "-q", *dependencies], timeout=INSTALL_TIMEOUT_S)
        if installed.returncode != 0:
            raise BenchError(f"pip install {' '.join(dependencies)} failed: {tail(installed.stderr)}")
    (folder / ".complete").write_text("\n".join(dependencies) + "\n")
    return interpreter


def merge_dependencies(common: Sequence[str], own: Sequence[str]) -> tuple[str, ...]:
    """The repository's requirements, with a case's own replacing those of the same project."""

    def project(requirement: str) -> str:
        return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")

    replaced = {project(requirement) for requirement in own}
    return (*(r for r in common if project(r) not in replaced), *own)


def code_env(interpreter: Path, import_root: Path) -> dict[str, str]:
    """Environment for the library's code: its checkout on PYTHONPATH, the venv first on PATH."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(
        PYTHONPATH=str(import_root),
        PYTHONHASHSEED="0",
        PYTHONDONTWRITEBYTECODE="1",
        PATH=f"{interpreter.parent}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(interpreter.parent.parent),
    )
    return env


# ---------------------------------------------------------------- label check


def check_label(case: Case, repo: Repository, clone: Path, interpreter: Path, work: Path) -> dict[str, Any]:
    """Is the label true? `ok` with evidence, or `ok: False` with the reason the case is broken.

    A synthetic pull request (unintended, mixed) is made first: a fix that does not reverse-apply,
    or is no ancestor of the change, breaks the case; a mixed case needs both witnesses to differ."""
    try:
        made = pull_request(clone, case, repo)
    except LabelError as error:
        return {"ok": False, "reason": str(error)}
    if not changed_python_files(clone, made.base, made.head, repo):
        return {"ok": False, "reason": f"commit changes no Python file of {', '.join(repo.packages)}"}
    if case.label == "regression":
        return _check_regression(case, repo, clone, made, interpreter, work)
    names = ("parent", "commit") if case.label in ("change", "same") else ("base", "head")
    with tempfile.TemporaryDirectory(prefix="label-", dir=work) as tmp:
        sides = {
            side: export_tree(clone, commit, Path(tmp) / side)
            for side, commit in zip(names, (made.base, made.head), strict=True)
        }
        if case.label == "same":
            return _check_tests(case, repo, sides, interpreter)
        if case.label == "change":
            return _check_witness(case.witness, repo, sides, interpreter, Path(tmp))
        shas = {"commits": {"base": made.base, "head": made.head}}
        if case.label == "unintended":
            return _check_witness(case.witness, repo, sides, interpreter, Path(tmp)) | shas
        checks = {part: _check_witness(witness, repo, sides, interpreter, Path(tmp))
                  for part, witness in (("change", case.witness), ("fix", case.fix_witness))}
        for part, check in checks.items():
            if not check["ok"]:
                return {"ok": False, "reason": f"the {part}'s {check['reason']}"}
        return {"ok": True, **checks, **shas}


def _check_regression(case: Case, repo: Repository, clone: Path, made: PullRequest, interpreter: Path,
                      work: Path) -> dict[str, Any]:
    """SZZ's claim, checked: the witness prints X on the parent, Y on the commit and X again on the
    fix (a descendant of the commit). What it prints on the fix's parent is kept: the bug still
    there just before the fix is the usual case, not a requirement (another commit may have
    changed the output since)."""
    if run(["git", "-C", clone, "merge-base", "--is-ancestor", case.commit, case.fix_commit]).returncode != 0:
        return {"ok": False, "reason": f"the fix {case.fix_commit[:12]} does not descend from the commit"}
    commits = {"parent": made.base, "commit": made.head, "fix": case.fix_commit,
               "fix_parent": parent_of(clone, case.fix_commit, merges=True)}
    with tempfile.TemporaryDirectory(prefix="label-", dir=work) as tmp:
        sides = {side: export_tree(clone, commit, Path(tmp) / side) for side, commit in commits.items()}
        outputs = _witness_outputs(case.witness, repo, sides, interpreter, Path(tmp))
    if isinstance(outputs, str):
        return {"ok": False, "reason": outputs}
    shown = {side: clip(output) for side, output in outputs.items()}
    if outputs["parent"] == outputs["commit"]:
        return {"ok": False, "reason": "witness prints the same on parent and commit", **shown}
    if outputs["fix"] != outputs["parent"]:
        return {"ok": False, "reason": "witness prints on the fix what it does not print on the parent",
                **shown}
    return {"ok": True, **shown, "still_broken_before_fix": outputs["fix_parent"] == outputs["commit"],
            "commits": {"base": made.base, "head": made.head}}


def _witness_outputs(witness: str, repo: Repository, sides: dict[str, Path], interpreter: Path,
                     tmp: Path) -> dict[str, str] | str:
    """What the witness prints on each side (keyed as `sides`), or why it failed on one."""
    outputs: dict[str, str] = {}
    empty = Path(tempfile.mkdtemp(prefix="cwd-", dir=tmp))  # nothing importable in its working directory
    for side, root in sides.items():
        result = run(
            [interpreter, "-c", witness],
            cwd=empty,
            env=code_env(interpreter, root / repo.source),
            timeout=WITNESS_TIMEOUT_S,
        )
        if result.returncode != 0:
            why = (
                "timed out" if result.returncode == -1 else f"exit {result.returncode}: {tail(result.stderr)}"
            )
            return f"witness fails on {side} ({why})"
        outputs[side] = result.stdout
    return outputs


def _check_witness(
    witness: str, repo: Repository, sides: dict[str, Path], interpreter: Path, tmp: Path
) -> dict[str, Any]:
    """The witness must exit 0 on both sides (named by `sides`' keys) and print differently."""
    outputs = _witness_outputs(witness, repo, sides, interpreter, tmp)
    if isinstance(outputs, str):
        return {"ok": False, "reason": outputs}
    first, second = sides
    if outputs[first] == outputs[second]:
        return {
            "ok": False,
            "reason": f"witness prints the same on {first} and {second}",
            first: clip(outputs[first]),
        }
    return {"ok": True, **{side: clip(output) for side, output in outputs.items()}}


def _check_tests(case: Case, repo: Repository, sides: dict[str, Path], interpreter: Path) -> dict[str, Any]:
    command = case.test_command or repo.test_command
    seconds: dict[str, float] = {}
    for side, root in sides.items():
        result = run(
            ["sh", "-c", command],
            cwd=root,
            env=code_env(interpreter, root / repo.source),
            timeout=TEST_TIMEOUT_S,
        )
        if result.returncode != 0:
            why = (
                "timed out"
                if result.returncode == -1
                else f"exit {result.returncode}: {tail(result.stdout + result.stderr)}"
            )
            return {"ok": False, "reason": f"tests fail on {side} ({why})"}
        seconds[side] = result.seconds
    return {"ok": True, "tests": command, "seconds": seconds}


def clip(text: str) -> str:
    """Witness outputs and reported values are kept short in the results."""
    return text if len(text) <= OUTPUT_CHARS else text[:OUTPUT_CHARS] + "..."


# ---------------------------------------------------------------- changed units and their callers


Unit = tuple[str, str]  # (dotted module, qualname or "<module>")


def module_of(path: str, repo: Repository) -> str | None:
    """Dotted module of a repository path under the import root and inside the package, else None."""
    pure = PurePosixPath(path)
    root = PurePosixPath(repo.source)
    parts = pure.parts if root == PurePosixPath(".") else pure.parts[len(root.parts) :]
    if root != PurePosixPath(".") and pure.parts[: len(root.parts)] != root.parts:
        return None
    if not parts or PurePosixPath(parts[0]).stem not in repo.packages or pure.suffix != ".py":
        return None
    names = [*parts[:-1], pure.stem] if pure.stem != "__init__" else list(parts[:-1])
    return ".".join(names) if all(name.isidentifier() for name in names) else None


def changed_python_files(clone: Path, base: str, head: str, repo: Repository) -> list[str]:
    """Repository paths of the library's modules that the commit touches."""
    names = git(clone, "diff", "--name-only", "--no-renames", base, head).split("\n")
    return [name for name in names if name and module_of(name, repo)]


HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def changed_lines(diff: str) -> tuple[set[int], set[int]]:
    """Lines of the old and the new file that a -U0 diff touches (an insertion marks the line before it)."""
    old: set[int] = set()
    new: set[int] = set()
    for match in HUNK_RE.finditer(diff):
        old_start, old_count = int(match[1]), int(match[2] if match[2] is not None else 1)
        new_start, new_count = int(match[3]), int(match[4] if match[4] is not None else 1)
        old.update(range(old_start, old_start + old_count) if old_count else [max(old_start, 1)])
        new.update(range(new_start, new_start + new_count) if new_count else [max(new_start, 1)])
    return old, new


Use = tuple[str | None, str]  # (receiver, name): (None, "f") for `f`, ("self", "m") for `self.m`


@dataclass
class ModuleIndex:
    """What one module's syntax tree says: unit spans, bound names, references, class bases, imports."""

    spans: list[tuple[int, int, str, ast.AST]] = field(default_factory=list)  # (start, end, qualname, node)
    statements: list[ast.stmt] = field(default_factory=list)  # top-level statements
    references: dict[str, set[Use]] = field(default_factory=dict)  # function qualname -> names it uses
    bases: dict[str, set[str]] = field(default_factory=dict)  # class qualname -> base names
    imports: dict[str, str] = field(default_factory=dict)  # local name -> the dotted name it is bound to
    members: dict[str, set[str]] = field(default_factory=dict)  # class qualname -> names its body defines

    @classmethod
    def parse(cls, source: str, module: str = "") -> ModuleIndex:
        """`module`: the module's dotted name, which relative imports are read against."""
        index = cls()
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return index
        index.statements = list(tree.body)
        index._walk(tree.body, "")
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    index.imports[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                package = module.split(".")[: len(module.split(".")) - node.level] if node.level else []
                source_module = ".".join([*package, *([node.module] if node.module else [])])
                for alias in node.names:
                    index.imports[alias.asname or alias.name] = f"{source_module}.{alias.name}"
        return index

    def _walk(self, body: Iterable[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qualname = f"{prefix}{node.name}"
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                self.spans.append((start, node.end_lineno or node.lineno, qualname, node))
                if prefix:
                    self.members.setdefault(prefix[:-1], set()).add(node.name)
                if isinstance(node, ast.ClassDef):
                    self.bases[qualname] = {_last_name(base) for base in node.bases} - {""}
                    self.references[qualname] = _names_used([s for s in node.body if not _is_def(s)])
                    self._walk(node.body, f"{qualname}.")
                else:
                    self.references[qualname] = _names_used(node.body)
            elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                # `__neg__ = wrap_method(int.__neg__)`, `loads = parse`: a unit made by a call or an alias
                for name in _names_bound(node):
                    self.references[f"{prefix}{name}"] = _names_used([node])
                    if prefix:
                        self.members.setdefault(prefix[:-1], set()).add(name)
            elif isinstance(node, ast.If | ast.Try | ast.With):  # defs under `if TYPE_CHECKING`, try/except
                self._walk(
                    [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)], prefix
                )

    def unit_at(self, line: int) -> tuple[str, ast.AST | None]:
        """Innermost function or class holding `line`, else the module."""
        best: tuple[int, str, ast.AST | None] = (-1, "<module>", None)
        for start, end, qualname, node in self.spans:
            if start <= line <= end and start > best[0]:
                best = (start, qualname, node)
        return best[1], best[2]

    def bound_at(self, line: int, unit: ast.AST | None) -> set[str]:
        """Names bound by the module- or class-level statement holding `line` (a table, an import)."""
        body = self.statements if unit is None else getattr(unit, "body", [])
        for statement in body:
            if statement.lineno <= line <= (statement.end_lineno or statement.lineno) and not _is_def(
                statement
            ):
                return _names_bound(statement)
        return set()


def _is_def(node: ast.AST) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)


def _last_name(node: ast.AST) -> str:
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _names_used(body: Iterable[ast.stmt]) -> set[Use]:
    """The names the statements use, each with what it is read from: a bare name (`f`), an attribute
    of a name or dotted name (`self.m`, `pkg.mod.f`), of `super()`, or of anything else (`?`)."""
    used: set[Use] = set()
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name):
                used.add((None, node.id))
            elif isinstance(node, ast.Attribute):
                used.add((_dotted(node.value), node.attr))
    return used


def _dotted(node: ast.AST) -> str:
    """`pkg.mod` for the receiver `pkg.mod` of `pkg.mod.f`, `super()` for `super().f`, else `?`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return "?" if inner in ("?", "super()") else f"{inner}.{node.attr}"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super":
        return "super()"
    return "?"


def _names_bound(statement: ast.stmt) -> set[str]:
    bound: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return bound


@dataclass
class ChangeMap:
    """The units a commit changed and the static callers that reach them, for the detection rule."""

    changed: set[Unit]
    related: set[Unit]
    bases: dict[str, set[str]]  # class name -> base class names, over the package on both sides
    lines: dict[str, list[int]]  # repository path -> changed lines on the commit side (old side if removed)
    # the units that read a name a changed module- or class-level statement binds (a table, a pattern)
    readers: set[Unit] = field(default_factory=set)
    # the version metadata the commit changes, each (base's text, head's text): `__version__ = "1.2"`
    versions: list[tuple[str, str]] = field(default_factory=list)

    def is_metadata(self, difference: dict[str, Any]) -> bool:
        """A difference in version metadata: a version name itself (`pkg:__version__`,
        `pkg.about:VERSION_INFO`), or a value that differs only by a changed version's text (a user
        agent or a table built from `__version__`). A release's number is not a behaviour."""
        name = str(difference.get("target", "")).rpartition(":")[2].rsplit(".", 1)[-1]
        if VERSION_NAME.fullmatch(name):
            return True
        base, head = str(difference.get("base")), str(difference.get("head"))
        return any(old in base and base.replace(old, new) == head for old, new in self.versions)

    def to_json(self) -> dict[str, Any]:
        return {"changed": sorted(f"{m}:{q}" for m, q in self.changed), "related_count": len(self.related)}

    def counts(self, target: str) -> bool:
        """Does a reported difference at `target` (`pkg.mod:Qual.name`) belong to this change? An
        operation's form suffix (`pkg.cli:main<argv>`, `pkg:Name<export>`) names the same unit."""
        module, _, qualname = re.sub(r"(?<=\w)<\w+>$", "", target).partition(":")
        if not qualname:
            return False
        if qualname == "<module>":  # importing the module runs the changed module-level code
            return any(m == module or m.startswith(module + ".") for m, _ in self.changed)
        head, _, method = qualname.rpartition(".")
        owners = {qualname, *self._ancestors(qualname)} if not head else set()
        inherited = (
            {f"{base}.{method}" for base in self._ancestors(head.rsplit(".", 1)[-1])} if head else set()
        )
        for unit_module, unit_qualname in self.related:
            owner = unit_qualname.rpartition(".")[0].rpartition(".")[2]
            if owner in owners or unit_qualname in inherited:
                return True  # a class whose methods (own or inherited) its constructor or observers run
            if not _same_module(module, unit_module):
                continue
            if unit_qualname == qualname:
                return True
            if (unit_module, unit_qualname) in self.changed and qualname.startswith(unit_qualname + "."):
                return True  # a method of a class whose statement or body changed
            if (unit_module, unit_qualname) in self.changed and head and self._nested_in(unit_qualname, head):
                return True  # a method of a class whose body holds a changed nested class
        return False

    def _nested_in(self, unit: str, owner: str) -> bool:
        """`unit` (`URL.RegexMemoizer._regex_generator`) lies in a class nested in `owner` (`URL`)."""
        if not unit.startswith(owner + "."):
            return False
        nested = unit[len(owner) + 1:].split(".")[0]
        return nested in self.bases

    def _ancestors(self, name: str) -> set[str]:
        seen: set[str] = set()
        todo = [name]
        while todo:
            for base in self.bases.get(todo.pop(), ()):
                if base not in seen:
                    seen.add(base)
                    todo.append(base)
        return seen


def _same_module(target: str, defined: str) -> bool:
    """A target's module is where the unit is defined or a package re-exporting it."""
    return target == defined or defined.startswith(target + ".") or target.startswith(defined + ".")


Changed = tuple[str, str, str]  # (module, name, owner): what a caller uses; owner "" at module level
# the names of version metadata: `__version__`, `VERSION`, `version_info`, `__date__`, `RELEASE`
VERSION_NAME = re.compile(r"_*(version|version_?info|version_?tuple|release|date|build_?date|revision|"
                          r"timestamp)_*", re.IGNORECASE)


def _versions(old: ModuleIndex | None, new: ModuleIndex | None, old_lines: set[int],
              new_lines: set[int]) -> list[tuple[str, str]]:
    """The texts of the version metadata a commit changes in one module: the literal values bound
    to version names by changed module-level statements, paired base's with head's."""
    def values(index: ModuleIndex | None, touched: set[int]) -> dict[str, str]:
        found: dict[str, str] = {}
        for statement in index.statements if index else []:
            if not isinstance(statement, ast.Assign | ast.AnnAssign) or statement.value is None:
                continue
            end = statement.end_lineno or statement.lineno
            if not any(statement.lineno <= line <= end for line in touched):
                continue
            try:
                value = ast.literal_eval(statement.value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            for name in _names_bound(statement):
                if VERSION_NAME.fullmatch(name) and isinstance(value, str | int | float | tuple):
                    found[name] = value if isinstance(value, str) else repr(value)
        return found
    before, after = values(old, old_lines), values(new, new_lines)
    return [(before[name], after[name]) for name in before
            if name in after and before[name] != after[name] and len(before[name]) >= 3]
# what the standard types' values have: a method of this name read from an unknown object may be theirs
BUILTIN_ATTRIBUTES = frozenset(name for kind in (str, bytes, int, float, list, dict, set, tuple, object, type,
                                                  BaseException, IOError)
                               for name in dir(kind))


def _called_as(module: str, qualname: str) -> Changed:
    """The name a caller uses for a changed function, method or class, and the class it belongs to:
    a constructor is called through its class, anything else by its own name."""
    parts = qualname.split(".")
    if parts[-1] in CTOR_METHODS and len(parts) > 1:
        parts = parts[:-1]
    return module, parts[-1], parts[-2] if len(parts) > 1 else ""


def change_map(clone: Path, base: str, head: str, repo: Repository) -> ChangeMap:
    """Changed units from the diff (both sides), then their direct callers over the package, by
    resolved name: a caller uses the changed name itself (from its module, or imported from the
    package), or a member of the changed class through `self`, `cls`, `super()` or the class, or
    through any object when no standard type and no other class of the package has a member of
    that name (every caller of any `.get` is not a caller of a changed `get`)."""
    indexes: dict[str, dict[str, ModuleIndex]] = {}  # side -> module -> index
    changed: set[Unit] = set()
    names: set[Changed] = set()
    data: set[Changed] = set()  # the names module- and class-level changed statements bind
    lines: dict[str, list[int]] = {}
    versions: list[tuple[str, str]] = []
    for side, commit in (("base", base), ("head", head)):
        indexes[side] = {}
        for path in git(clone, "ls-tree", "-r", "--name-only", commit).split("\n"):
            module = module_of(path, repo) if path else None
            if module:
                indexes[side][module] = ModuleIndex.parse(git(clone, "show", f"{commit}:{path}"), module)
    for path in changed_python_files(clone, base, head, repo):
        module = module_of(path, repo)
        assert module is not None
        old, new = changed_lines(git(clone, "diff", "-U0", "--no-renames", base, head, "--", path))
        lines[path] = sorted(new or old)
        for side, touched in (("base", old), ("head", new)):
            index = indexes[side].get(module)
            if index is None:
                continue
            for line in touched:
                qualname, node = index.unit_at(line)
                changed.add((module, qualname))
                if node is None:
                    versions += _versions(indexes["base"].get(module), indexes["head"].get(module), old, new)
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(_called_as(module, qualname))
                else:  # module or class level: a table, a constant, an import, the class itself
                    owner = qualname.rsplit(".", 1)[-1] if node is not None else ""
                    bound = {(module, name, owner) for name in index.bound_at(line, node)}
                    data |= bound
                    names |= bound
                    if node is not None:
                        names.add(_called_as(module, qualname))
    bases: dict[str, set[str]] = {}
    members: dict[str, int] = {}  # a member's name -> how many classes of the package define it
    for side in indexes.values():
        for index in side.values():
            for qualname, class_bases in index.bases.items():
                bases.setdefault(qualname.rsplit(".", 1)[-1], set()).update(class_bases)
    for index in {**indexes["base"], **indexes["head"]}.values():
        for class_members in index.members.values():
            for name in class_members:
                members[name] = members.get(name, 0) + 1
    resolver = _Resolver(repo.packages, bases, members)
    related = set(changed)
    readers: set[Unit] = set()
    for side in indexes.values():  # the direct callers (not callers of callers)
        for module, index in side.items():
            for qualname, used in index.references.items():
                if resolver.uses(module, index, qualname, used, names):
                    related.add((module, qualname))
                if resolver.uses(module, index, qualname, used, data):
                    readers.add((module, qualname))
    return ChangeMap(changed, related, bases, lines, readers, list(dict.fromkeys(versions)))


@dataclass
class _Resolver:
    """Whether a unit's uses name one of the changed names (see `change_map`)."""

    packages: tuple[str, ...]
    bases: dict[str, set[str]]  # class name -> base names
    members: dict[str, int]  # member name -> classes of the package defining one

    def uses(self, module: str, index: ModuleIndex, qualname: str, used: set[Use],
             changed: set[Changed]) -> bool:
        by_name: dict[str, list[Changed]] = {}
        for item in changed:
            by_name.setdefault(item[1], []).append(item)
        caller_class = qualname.rsplit(".", 1)[0].rsplit(".", 1)[-1] if "." in qualname else ""
        for receiver, name in used:
            bound = index.imports.get(name, "") if receiver is None else ""  # `from .util import slug as s`
            for item in by_name.get(name, []) + by_name.get(bound.rsplit(".", 1)[-1], []):
                if self._means(module, index, caller_class, receiver, name, item):
                    return True
        return False

    def _means(self, module: str, index: ModuleIndex, caller_class: str, receiver: str | None, name: str,
               changed: Changed) -> bool:
        """Whether the use (`receiver`.`name`, or `name`) in `module` is of the changed name."""
        defined, changed_name, owner = changed
        if not owner:  # a module-level name: itself in its module, imported, or read from its module
            if receiver is None:
                return module == defined or self._imported(index.imports.get(name), changed_name)
            first = receiver.split(".")[0]
            return self._module(index.imports.get(first, first), receiver, defined)
        if receiver is None:
            return False
        if receiver in ("self", "cls", "super()"):
            return bool(caller_class) and caller_class in self._family(owner)
        head = receiver.rsplit(".", 1)[-1]
        if head == owner or index.imports.get(receiver, "").rsplit(".", 1)[-1] == owner:
            return True
        return name not in BUILTIN_ATTRIBUTES and self.members.get(name, 0) <= 1

    def _imported(self, target: str | None, name: str) -> bool:
        """`from pkg.mod import f` (or from a package re-exporting it) binds the changed `f`."""
        return target is not None and target.split(".")[0] in self.packages and target.endswith("." + name)

    def _module(self, bound: str, receiver: str, defined: str) -> bool:
        """`mod.f`, `pkg.mod.f`: the receiver is the defining module, or a package above it."""
        path = receiver.replace(receiver.split(".")[0], bound, 1)
        return path.split(".")[0] in self.packages and (defined == path or defined.startswith(path + "."))

    def _family(self, owner: str) -> set[str]:
        """The class, its ancestors and its descendants, by bare name."""
        family, todo = {owner}, [owner]
        while todo:
            name = todo.pop()
            for other in [*self.bases.get(name, ()), *(c for c, b in self.bases.items() if name in b)]:
                if other not in family:
                    family.add(other)
                    todo.append(other)
        return family


# ---------------------------------------------------------------- running difforacle


def run_difforacle(
    command: Sequence[str],
    clone: Path,
    base: str,
    head: str,
    interpreter: Path,
    budget: float,
    seed: int,
    changes: ChangeMap,
    keep: Path | None = None,
    words: tuple[str, str] | None = None,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """One `difforacle diff` run, judged: detected only by a difference at a changed unit or a caller;
    and the full report (None when there is none).

    `keep`: where to copy the full report (the results keep a summary of it). `words`: the pull
    request's title and body (`--pr-title`, `--pr-body`), the evidence a reviewer would have.
    """
    with tempfile.TemporaryDirectory(prefix="difforacle-report-") as tmp:
        report_path = Path(tmp) / "report.json"
        result = run(
            [
                *command,
                "diff",
                "--repo",
                clone,
                "--base",
                base,
                "--head",
                head,
                "--budget",
                f"{budget:g}",
                "--seed",
                str(seed),
                "--json",
                report_path,
                "--python",
                interpreter,
                "--quiet",
                *(["--pr-title", words[0], "--pr-body", words[1]] if words else []),
            ],
            cwd=clone,
            timeout=2 * budget + 300,
        )
        entry: dict[str, Any] = {"exit": result.returncode, "seconds": result.seconds}
        if result.returncode not in (0, 1):
            why = "timed out" if result.returncode == -1 else tail(result.stderr, 2)
            reason = f"difforacle exit {result.returncode}: {why}"
            return {**entry, "status": "tool-error", "reason": reason}, None
        try:
            report = json.loads(report_path.read_text())
        except (OSError, ValueError) as error:
            return {**entry, "status": "tool-error", "reason": f"unreadable report: {error}"}, None
        if keep is not None:
            keep.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(report_path, keep)
    return {**entry, **summarize_report(report, changes)}, report


# A worktree of a run (difforacle checks base and head out as `difforacle-XXXX/base` and `.../head`):
# a value that holds one differs because of where the commit is checked out, not what it does.
CHECKOUT_PATH = re.compile(r"difforacle-\w+[/\\](?:base|head)\b")


def apart(difference: dict[str, Any]) -> bool:
    """A difference that counts for nothing: one the report sets apart (minor, an exception's wording
    from outside the project; or shown only by an input outside the declared types), or one in
    version metadata (`ChangeMap.is_metadata`, marked by `mark`)."""
    return bool(difference.get("minor") or difference.get("outside_declared_types")
                or difference.get("metadata"))


def at_the_change(difference: dict[str, Any], changes: ChangeMap) -> bool:
    """A difference detects the change: the report does not set it apart, its target is a changed
    unit or a direct caller of one, and its values hold no checkout path."""
    return (not apart(difference) and changes.counts(str(difference.get("target", "")))
            and not CHECKOUT_PATH.search(f"{difference.get('base')} {difference.get('head')}"))


def summarize_report(report: dict[str, Any], changes: ChangeMap) -> dict[str, Any]:
    """What the results keep of a report: each difference judged, the coverage, the notes."""
    differences = []
    for difference in report.get("differences", []):
        target = str(difference.get("target", ""))
        differences.append(
            {
                "kind": difference.get("kind"),
                "target": target,
                "path": difference.get("path"),
                "line": difference.get("line"),
                "base": clip(str(difference.get("base"))),
                "head": clip(str(difference.get("head"))),
                "minor": difference.get("severity") == "minor",
                "outside_declared_types": difference.get("verdict") == "outside-declared-types",
                "verdict": difference.get("verdict", "unexplained"),
                "rule": difference.get("rule", ""),
                "closest": [clip(str(text)) for text in difference.get("closest") or []],
            }
        )
        differences[-1]["related"] = at_the_change(differences[-1], changes)
    coverage = report.get("coverage", {})
    return {
        "status": "ok",
        "differences": differences,
        # a difference set apart (minor wording, or an input outside the declared types) is what
        # the report calls no behavioural difference: it neither detects nor alarms
        "related": sum(1 for difference in differences if difference["related"]),
        "coverage": {
            key: coverage.get(key)
            for key in ("changed_lines", "changed_lines_covered", "uncovered", "sides", "measured_by")
        },
        "engine_seconds": report.get("stats", {}).get("seconds"),
        "notes": report.get("notes", []),
    }


def change_maps(clone: Path, case: Case, repo: Repository) -> dict[str, ChangeMap]:
    """What a difference may be attributed to: the change (C^..C), the fix (F^..F), as the case has them."""
    maps: dict[str, ChangeMap] = {}
    if case.label != "unintended":
        maps["change"] = change_map(clone, parent_of(clone, case.commit, merges=case.label == "regression"),
                                    case.commit, repo)
    if case.label in ("unintended", "mixed"):  # a regression case's fix is judged by replay, not by place
        maps["fix"] = change_map(clone, parent_of(clone, case.fix_commit), case.fix_commit, repo)
    return maps


def attribute(difference: dict[str, Any], maps: dict[str, ChangeMap]) -> str | None:
    """The part (`change`, `fix`) a difference counts for, `both`, or None (elsewhere, or set apart).

    A mixed case's difference whose test, replayed on a commit holding one part only, shows that part
    alone causes it counts for that part (`caused_by`, see `replay_parts`). Otherwise by where it
    shows: one at both (a unit one part changed and the other's caller, or a caller of both) goes to
    the part whose changed unit it is, when only one is; else it is `both`."""
    caused = [part for part in difference.get("caused_by", ()) if part in maps]
    if caused:
        return caused[0] if len(caused) == 1 else "both"
    at = [part for part, changes in maps.items() if at_the_change(difference, changes)]
    if not at:
        at = [part for part in maps if part in difference.get("ran_parts", ())]  # by what its test ran
    if len(at) > 1:
        closer = [part for part in at if at_the_change(difference, _changed_only(maps[part]))]
        at = closer if len(closer) == 1 else at
    return at[0] if len(at) == 1 else ("both" if at else None)


def _changed_only(changes: ChangeMap) -> ChangeMap:
    """The same change without its callers: a unit it changed is closer to it than a caller is."""
    return ChangeMap(changes.changed, set(changes.changed), changes.bases, changes.lines)


# ---------------------------------------------------------------- traced attribution

# Run inside the case's venv: the test module is imported untraced (importing the library runs any
# module-level line), then each `test_*` function is called under a tracer that notes whether a
# changed line of this side ran, a reader of a name a changed module- or class-level statement binds
# ran (a parser reading a changed pattern, which ran at import), or a method ran with `self` or `cls`
# of a class whose class-level statements changed (a locale's `timeframes`, read by an inherited
# method). Readers by name, not callers: a call of a changed function runs its changed lines.
TRACER = r"""
import importlib.util, json, sys, threading
spec = importlib.util.spec_from_file_location("traced_test", sys.argv[1])
wanted = json.loads(open(sys.argv[2]).read())
lines = {path: set(numbers) for path, numbers in wanted["lines"].items()}
classes = {tuple(pair) for pair in wanted["classes"]}
units = {tuple(pair) for pair in wanted.get("units", ())}
ran = []

def changed_class(value):
    kind = value if isinstance(value, type) else type(value)
    try:
        return any((k.__module__, k.__qualname__) in classes for k in kind.__mro__)
    except Exception:
        return False

def local(frame, event, arg):
    if event == "line" and frame.f_lineno in lines.get(frame.f_code.co_filename, ()):
        ran.append(frame.f_lineno)
    return local

def called(frame, event, arg):
    code = frame.f_code
    if ran:
        return None
    qualname = getattr(code, "co_qualname", code.co_name)
    if (frame.f_globals.get("__name__"), qualname) in units:
        ran.append(0)
    elif classes and code.co_argcount and code.co_varnames[0] in ("self", "cls"):
        if changed_class(frame.f_locals.get(code.co_varnames[0])):
            ran.append(0)
    return local(frame, "line", arg) if code.co_filename in lines else None

try:
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
except BaseException:
    print(json.dumps({"ran": False, "why": "import"}))
    raise SystemExit(0)
for name in [name for name in vars(module) if name.startswith("test_")]:
    sys.settrace(called)
    threading.settrace(called)
    try:
        getattr(module, name)()
    except BaseException:
        pass
    finally:
        sys.settrace(None)
        threading.settrace(None)
print(json.dumps({"ran": bool(ran)}))
"""
TRACE_LIMIT = 5  # differences elsewhere traced per case: enough to find one that runs the change
TRACE_TIMEOUT_S = 60


def trace_elsewhere(
    entry: dict[str, Any],
    report: dict[str, Any],
    maps: dict[str, ChangeMap],
    case: Case,
    made: PullRequest,
    clone: Path,
    repo: Repository,
    interpreter: Path,
    work: Path,
) -> None:
    """Mark `ran_parts` on differences no static rule attributes: the parts (`change`, `fix`) whose
    change their test, run on each side, ran: a changed line, a reader of a changed table or
    constant, or a method of a changed class. A caller's caller is not at the change by name, or any unit
    of a package would be; by what ran, it is. A mixed case's lines are told apart by diffing its
    sides against the commits that hold one part only (see `_part_diffs`)."""
    tests = [difference.get("test") for difference in report.get("differences", [])]
    todo = [
        (difference, test)
        for difference, test in zip(entry.get("differences", []), tests, strict=False)
        if isinstance(test, str) and not apart(difference) and attribute(difference, maps) is None
        and not CHECKOUT_PATH.search(f"{difference.get('base')} {difference.get('head')}")
    ][:TRACE_LIMIT]
    if not todo:
        return
    try:
        parts = _part_diffs(clone, case, made, repo)
    except BenchError:  # the fix does not reverse-apply to the mixed case's base: no tracing
        return
    with tempfile.TemporaryDirectory(prefix="trace-", dir=work) as tmp:
        root = Path(tmp).resolve()
        sides = {side: export_tree(clone, commit, root / side)
                 for side, commit in (("base", made.base), ("head", made.head))}
        for part, diffs in parts.items():
            readers = sorted([module, qualname] for module, qualname in maps[part].readers)
            for side, what in _changed_on_sides(clone, repo, sides, diffs).items():
                (root / f"{part}-{side}.json").write_text(json.dumps({**what, "units": readers}))
        (root / "tracer.py").write_text(TRACER)
        for difference, test in todo:
            (root / "test_difference.py").write_text(test)
            difference["ran_parts"] = [
                part for part in maps
                if any(_ran(interpreter, root, f"{part}-{side}", sides[side] / repo.source) for side in sides)
            ]


Diffs = dict[str, tuple[str, str, int]]  # side -> (from, to, 0 for the old end's lines, 1 for the new's)


def _without_fix(clone: Path, case: Case, made: PullRequest, repo: Repository) -> str:
    """X: a mixed case's base without the fix's source changes too, the fix reverted alone."""
    source, _ = fix_paths(clone, case.fix_commit, repo)
    return _synthetic_commit(
        clone, _tree_with(clone, made.base, lambda env: _reverse_apply(clone, case.fix_commit, source, env)),
        made.base, f"{case.id}: base without the fix\n")


def _part_diffs(clone: Path, case: Case, made: PullRequest, repo: Repository) -> dict[str, Diffs]:
    """Per part, the diffs whose lines are that part's on each side. A case of one part: base..head.
    A mixed case (base = C^ without F's other changes, head = C without F): with X = base without
    F's source changes too, the fix is X..base on base and C..head on head; the change is base..C
    on base and X..head on head."""
    if case.label != "mixed":
        part = "fix" if case.label == "unintended" else "change"
        return {part: {"base": (made.base, made.head, 0), "head": (made.base, made.head, 1)}}
    without_fix = _without_fix(clone, case, made, repo)
    return {"fix": {"base": (without_fix, made.base, 1), "head": (case.commit, made.head, 1)},
            "change": {"base": (made.base, case.commit, 0), "head": (without_fix, made.head, 1)}}


def _changed_on_sides(clone: Path, repo: Repository, sides: dict[str, Path],
                      diffs: Diffs) -> dict[str, dict[str, Any]]:
    """Per side, the absolute paths of the changed modules with their changed lines (from that
    side's diff), and the classes (module, qualname) whose class-level statements changed."""
    wanted: dict[str, dict[str, Any]] = {side: {"lines": {}, "classes": []} for side in sides}
    for side, (old, new, end) in diffs.items():
        for path in changed_python_files(clone, old, new, repo):
            module = module_of(path, repo)
            touched = changed_lines(git(clone, "diff", "-U0", "--no-renames", old, new, "--", path))[end]
            file = sides[side] / path
            if not touched or not file.is_file():
                continue
            wanted[side]["lines"][str(file)] = sorted(touched)
            index = ModuleIndex.parse(file.read_text(errors="replace"))
            for line in touched:
                qualname, node = index.unit_at(line)
                if isinstance(node, ast.ClassDef):
                    wanted[side]["classes"].append([module, qualname])
    return wanted


def _ran(interpreter: Path, root: Path, side: str, import_root: Path) -> bool:
    empty = root / "cwd"
    empty.mkdir(exist_ok=True)
    result = run(
        [interpreter, root / "tracer.py", root / "test_difference.py", root / f"{side}.json"],
        cwd=empty, env=code_env(interpreter, import_root), timeout=TRACE_TIMEOUT_S,
    )
    try:
        return result.returncode == 0 and bool(json.loads(result.stdout.strip().splitlines()[-1])["ran"])
    except (ValueError, IndexError, KeyError, TypeError):
        return False


REPLAY_LIMIT = 12  # differences replayed per mixed case


def _replayable(entry: dict[str, Any], report: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """The kept differences that count, each with its test from the full report (at most REPLAY_LIMIT)."""
    tests = [difference.get("test") for difference in report.get("differences", [])]
    return [(difference, test) for difference, test in zip(entry.get("differences", []), tests, strict=False)
            if isinstance(test, str) and not apart(difference)][:REPLAY_LIMIT]


def replay_parts(entry: dict[str, Any], report: dict[str, Any], case: Case, made: PullRequest, clone: Path,
                 repo: Repository, interpreter: Path, work: Path) -> None:
    """Mark `caused_by` on a mixed case's differences: the parts whose commit alone (C: the change
    with the fix kept; X: the fix reverted without the change) makes the difference's test fail,
    as it does on head, where it passes on base. What a difference is labelled with is then what
    causes it, not where it shows: both parts often touch the one function. A test that does not
    pass on base here, or that fails on neither part alone (the parts together cause it), is left
    to the rules by place."""
    if case.label != "mixed":
        return
    todo = _replayable(entry, report)
    if not todo:
        return
    try:
        commits = {"change": case.commit, "fix": _without_fix(clone, case, made, repo)}
    except BenchError:  # the fix does not reverse-apply to the mixed case's base
        return
    with tempfile.TemporaryDirectory(prefix="replay-", dir=work) as tmp:
        root = Path(tmp).resolve()
        trees = {name: export_tree(clone, commit, root / name) / repo.source
                 for name, commit in (("base", made.base), *commits.items())}
        for difference, test in todo:
            (root / "test_difference.py").write_text(test)
            difference.pop("caused_by", None)
            if _passes(interpreter, root, trees["base"]):
                difference["caused_by"] = [part for part in commits
                                           if not _passes(interpreter, root, trees[part])]


def replay_fix(entry: dict[str, Any], report: dict[str, Any], case: Case, clone: Path, repo: Repository,
               interpreter: Path, work: Path) -> None:
    """Mark `restored` on a regression case's differences: whether the fix put back what the commit
    changed. A difference's test passes on base (the commit's parent) and fails on head (the
    commit); it is the regression's when it fails on the fix's parent and passes on the fix, as the
    witness does. One that also passes before the fix was put right by something else; one that
    still fails on the fix is another change of the commit (often the one its message means).
    `restored` is None for a test that does not pass on base here (it cannot be replayed)."""
    if case.label != "regression":
        return
    todo = _replayable(entry, report)
    if not todo:
        return
    commits = {"base": parent_of(clone, case.commit, merges=True),
               "fix_parent": parent_of(clone, case.fix_commit, merges=True), "fix": case.fix_commit}
    with tempfile.TemporaryDirectory(prefix="replay-", dir=work) as tmp:
        root = Path(tmp).resolve()
        trees = {name: export_tree(clone, commit, root / name) / repo.source
                 for name, commit in commits.items()}
        for difference, test in todo:
            (root / "test_difference.py").write_text(test)
            passes = {name: lambda name=name: _passes(interpreter, root, trees[name]) for name in trees}
            difference["restored"] = (not passes["fix_parent"]() and passes["fix"]()
                                      if passes["base"]() else None)


def _passes(interpreter: Path, root: Path, import_root: Path) -> bool:
    """Whether root/test_difference.py passes under pytest with `import_root` first on the path."""
    empty = root / "cwd"
    empty.mkdir(exist_ok=True)
    command = [interpreter, "-m", "pytest", "-q", "-p", "no:cacheprovider", root / "test_difference.py"]
    result = run(command, cwd=empty, env=code_env(interpreter, import_root), timeout=TRACE_TIMEOUT_S)
    return result.returncode == 0


def mark(entry: dict[str, Any], maps: dict[str, ChangeMap]) -> None:
    """Attribute every kept difference to the case's parts (first pass and --rejudge alike)."""
    for difference in entry.get("differences", []):
        difference["metadata"] = any(changes.is_metadata(difference) for changes in maps.values())
        difference["at"] = attribute(difference, maps)
        difference["related"] = difference["at"] is not None
    entry["related"] = sum(1 for difference in entry.get("differences", []) if difference["related"])
    parts = {part: changes.to_json() for part, changes in maps.items()}
    entry["changed"] = parts["change"] if set(parts) == {"change"} else parts  # a change case: as before


# ---------------------------------------------------------------- what a case holds (the engine holds none)

LITERALS_FILE = HERE / "case_literals.json"
LITERALS_SCHEMA = "difforacle.real-changes-literals/1"
SHORTEST_LITERAL = 8  # shorter strings are words and names any code has


def case_literals(clone: Path, case: Case, repo: Repository) -> list[str]:
    """What a case's pull request holds that the engine must not: the string constants of the
    changed lines of its source files that the other side's file lacks (not a plain word such as
    "function": any code has those), and its title. Kept as SHA-256 hashes (no code of the
    libraries is committed)."""
    made = pull_request(clone, case, repo)
    found: set[str] = {made.title} if len(made.title) >= SHORTEST_LITERAL else set()
    for path in changed_python_files(clone, made.base, made.head, repo):
        old, new = changed_lines(git(clone, "diff", "-U0", "--no-renames", made.base, made.head, "--", path))
        sides = {commit: _constants(clone, commit, path) for commit in (made.base, made.head)}
        for commit, touched, other in ((made.base, old, made.head), (made.head, new, made.base)):
            found |= {value for value, line in sides[commit] if line in touched
                      and len(value) >= SHORTEST_LITERAL and not value.isalpha()} - {
                value for value, _ in sides[other]}
    return sorted(hashlib.sha256(value.encode()).hexdigest() for value in found)


def _constants(clone: Path, commit: str, path: str) -> list[tuple[str, int]]:
    """The string constants of a file at a commit, with their lines (none if it is missing there)."""
    try:
        tree = ast.parse(git(clone, "show", f"{commit}:{path}"))
    except (BenchError, SyntaxError, ValueError):
        return []
    return [(node.value, node.lineno) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def write_case_literals(path: Path, manifest: Manifest, mirrors: Path, work: Path) -> None:
    """Every case's `case_literals`, by case id, written to `path` (a case whose pull request
    cannot be made, or whose mirror is missing, is left out with one line saying so)."""
    cases: dict[str, list[str]] = {}
    for name in dict.fromkeys(case.repository for case in manifest.cases):
        mirror = find_mirror(mirrors, name)
        if mirror is None:
            say(f"skip {name}: no mirror under {mirrors}")
            continue
        clone = clone_mirror(mirror, work / "repos" / name.replace("/", "+"))
        for case in (case for case in manifest.cases if case.repository == name):
            try:
                cases[case.id] = case_literals(clone, case, repository_of(manifest, case))
            except BenchError as error:
                say(f"skip {case.id}: {error}")
    text = json.dumps({"schema": LITERALS_SCHEMA, "cases": cases}, indent=1, sort_keys=True)
    path.write_text(text + "\n")


# ---------------------------------------------------------------- results


def read_results(path: Path) -> dict[str, Any]:
    """A results file as written by this script."""
    try:
        results = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise BenchError(f"cannot read results {path}: {error}") from None
    if not isinstance(results, dict) or results.get("schema") != RESULTS_SCHEMA:
        raise BenchError(f"{path} is not a {RESULTS_SCHEMA} file")
    return results


def load_results(path: Path, settings: dict[str, Any]) -> dict[str, Any]:
    """The results so far (resuming), refusing a file made with other settings."""
    if not path.exists():
        return {"schema": RESULTS_SCHEMA, "settings": settings, "cases": {}}
    results = read_results(path)
    old = {key: results["settings"].get(key) for key in ("budget", "seed", "difforacle")}
    new = {key: settings.get(key) for key in old}
    if old != new:
        raise BenchError(f"{path} was made with {old}, not {new}: pass another --out")
    results["settings"].update(settings)
    return results


def save_results(path: Path, results: dict[str, Any]) -> None:
    """Atomic write, so an interrupted run leaves the previous complete file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    partial.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    partial.replace(path)


def same_commits(entry: dict[str, Any], case: Case) -> bool:
    """The entry was made for the case's commits and label (a mended case is run again)."""
    return (entry.get("commit") == case.commit and entry.get("label") == case.label
            and entry.get("fix_commit", "") == case.fix_commit)


def is_done(entry: dict[str, Any] | None, case: Case) -> bool:
    """A case is not run again once judged (or found broken) at the same commits and label."""
    return bool(entry) and same_commits(entry, case) and entry.get("status") in (*JUDGED, "broken")


REGRESSION_PARTS = ("fix", "both")  # a difference at both parts of a mixed case must not be explained away


def judge(entry: dict[str, Any], case: Case) -> None:
    """Detected (change, unintended; mixed: its regression, and `detected_change` its intended
    change) or false alarm (same), from the judged differences.

    An engine error or time-out is what a user gets instead of a report: a miss, not an alarm.
    """
    if entry.get("status") == "tool-error":
        entry["false_alarm" if case.label == "same" else "detected"] = False
        if case.label == "mixed":
            entry["detected_change"] = False
        return
    if entry.get("status") != "ok":
        return
    if case.label == "mixed":
        entry["detected"] = any(d.get("at") in REGRESSION_PARTS for d in entry["differences"])
        entry["detected_change"] = any(d.get("at") == "change" for d in entry["differences"])
    elif case.label == "regression":  # the bug itself, not just some change of the commit
        entry["detected"] = any(d.get("restored") and not apart(d) for d in entry["differences"])
        entry["detected_change"] = entry["related"] > 0
    elif case.label != "same":
        entry["detected"] = entry["related"] > 0
    else:
        major = [d for d in entry["differences"] if not apart(d)]
        entry["false_alarm"] = bool(major) or (entry["exit"] == 1 and not entry["differences"])


# ---------------------------------------------------------------- the run


@dataclass
class Settings:
    manifest: Path
    mirrors: Path | None
    difforacle: list[str]
    budget: float
    seed: int
    out: Path
    markdown: Path | None
    work: Path
    python: str
    only: set[str]
    labels_only: bool
    reports: Path | None = None  # keep every full report here, as <case id>.json


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_benchmark(settings: Settings, manifest: Manifest) -> dict[str, Any]:
    """Every selected case, repository by repository; the results file is saved after each case."""
    results = load_results(
        settings.out,
        {
            "budget": settings.budget,
            "seed": settings.seed,
            "difforacle": " ".join(settings.difforacle),
            "manifest": manifest.digest,
            "cpus": os.cpu_count(),
        },
    )
    cases = [
        case
        for case in manifest.cases
        if not settings.only or case.id in settings.only or case.repository in settings.only
    ]
    settings.work.mkdir(parents=True, exist_ok=True)
    for name in dict.fromkeys(case.repository for case in cases):
        todo = [
            case
            for case in cases
            if case.repository == name
            and not is_done(results["cases"].get(case.id), case)
            and not (settings.labels_only and "label_check" in results["cases"].get(case.id, {})
                     and same_commits(results["cases"][case.id], case))
        ]
        if not todo:
            continue
        mirror = find_mirror(settings.mirrors, name) if settings.mirrors else None
        if mirror is None:
            print(f"skip {name}: no mirror under {settings.mirrors} ({len(todo)} cases)", flush=True)
            for case in todo:
                results["cases"][case.id] = _entry(case, status="skipped", reason="no mirror")
            save_results(settings.out, results)
            continue
        try:
            clone = clone_mirror(mirror, settings.work / "repos" / name.replace("/", "+"))
        except BenchError as error:
            print(f"skip {name}: {error}", flush=True)
            continue
        interpreters: dict[str, Path] = {}
        for case in todo:  # every label first: a broken case is reported before any run
            repo = repository_of(manifest, case)
            entry = results["cases"].get(case.id) or {}
            if not same_commits(entry, case):
                entry = {}
            results["cases"][case.id] = entry | _entry(case)
            _check_case(settings, results["cases"][case.id], case, repo, clone, interpreters)
            save_results(settings.out, results)
        if settings.labels_only:
            continue
        for case in todo:
            repo = repository_of(manifest, case)
            entry = results["cases"][case.id]
            if entry.get("status") in ("broken", "setup-error"):
                continue
            try:
                made = pull_request(clone, case, repo)  # the same commits as the label check's
                maps = change_maps(clone, case, repo)
                say(f"{case.id}: difforacle, budget {settings.budget:g} s")
                summary, report = run_difforacle(
                    settings.difforacle,
                    clone,
                    made.base,
                    made.head,
                    interpreters[case.id],
                    settings.budget,
                    settings.seed,
                    maps.get("change") or maps["fix"],
                    settings.reports / f"{case.id}.json" if settings.reports else None,
                    (made.title, made.body),
                )
                entry.update(load=round(os.getloadavg()[0], 2), **summary)
                if report is not None:
                    trace_elsewhere(entry, report, maps, case, made, clone, repo, interpreters[case.id],
                                    settings.work)
                    replay_parts(entry, report, case, made, clone, repo, interpreters[case.id], settings.work)
                    replay_fix(entry, report, case, clone, repo, interpreters[case.id], settings.work)
                mark(entry, maps)
                judge(entry, case)
                say(f"{case.id}: {_verdict(entry)}")
            except BenchError as error:
                entry.update(status="setup-error", reason=str(error))
                say(f"{case.id}: setup error ({error})")
            save_results(settings.out, results)
    return results


def rejudge(settings: Settings, manifest: Manifest, results: dict[str, Any]) -> dict[str, Any]:
    """Judge the kept differences again with the current detection rule, running no engine."""
    for case in manifest.cases:
        entry = results["cases"].get(case.id)
        if (settings.only and case.id not in settings.only and case.repository not in settings.only) or (
            not entry or entry.get("status") not in JUDGED or not same_commits(entry, case)
        ):
            continue
        if entry["status"] == "tool-error":
            judge(entry, case)
            continue
        mirror = find_mirror(settings.mirrors, case.repository) if settings.mirrors else None
        if mirror is None:
            print(f"skip {case.id}: no mirror of {case.repository} under {settings.mirrors}", flush=True)
            continue
        clone = clone_mirror(mirror, settings.work / "repos" / case.repository.replace("/", "+"))
        repo = repository_of(manifest, case)
        maps = change_maps(clone, case, repo)
        kept = settings.reports / f"{case.id}.json" if settings.reports else None
        if kept is not None and kept.is_file():  # the full report: summarize and trace it again
            report = json.loads(kept.read_text())
            entry.update(summarize_report(report, maps.get("change") or maps["fix"]))
            interpreter = ensure_venv(settings.work, settings.python,
                                      merge_dependencies(repo.dependencies, case.dependencies))
            made = pull_request(clone, case, repo)
            trace_elsewhere(entry, report, maps, case, made, clone, repo, interpreter, settings.work)
            replay_parts(entry, report, case, made, clone, repo, interpreter, settings.work)
            replay_fix(entry, report, case, clone, repo, interpreter, settings.work)
        mark(entry, maps)
        judge(entry, case)
    save_results(settings.out, results)
    return results


def _check_case(
    settings: Settings,
    entry: dict[str, Any],
    case: Case,
    repo: Repository,
    clone: Path,
    interpreters: dict[str, Path],
) -> None:
    """The case's venv and label check (kept in the entry, so that a rerun does not repeat it)."""
    try:
        interpreters[case.id] = ensure_venv(
            settings.work, settings.python, merge_dependencies(repo.dependencies, case.dependencies)
        )
        if "label_check" not in entry:
            say(f"{case.id}: checking the label")
            entry["label_check"] = check_label(case, repo, clone, interpreters[case.id], settings.work)
    except BenchError as error:
        entry.update(status="setup-error", reason=str(error))
        say(f"{case.id}: setup error ({error})")
        return
    if not entry["label_check"]["ok"]:
        entry.update(status="broken", reason=entry["label_check"]["reason"])
        say(f"{case.id}: broken ({entry['label_check']['reason']})")
    elif entry.get("status") in ("broken", "setup-error"):  # mended since the last run
        del entry["status"], entry["reason"]


def _entry(case: Case, **extra: Any) -> dict[str, Any]:
    return {
        "repository": case.repository,
        "commit": case.commit,
        **({"fix_commit": case.fix_commit} if case.fix_commit else {}),
        "label": case.label,
        "category": case.category or case.label,  # same and mixed cases have none: their label
        **extra,
    }


def clone_mirror(mirror: Path, target: Path) -> Path:
    """A working clone of the mirror (hard-linked objects, no checkout): difforacle adds worktrees to it."""
    if not (target / ".git").is_dir():
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        result = run(["git", "clone", "--quiet", "--no-checkout", mirror, target], timeout=600)
        if result.returncode != 0:
            raise BenchError(f"cannot clone {mirror}: {tail(result.stderr)}")
    return target


def _verdict(entry: dict[str, Any]) -> str:
    if entry.get("status") != "ok":
        return f"{entry.get('status')} ({entry.get('reason', '')})"
    lines = f"lines {_lines(entry)}"
    return (
        f"{_result_word(entry)}, {len(entry['differences'])} differences ({entry['related']} at the change), "
        f"{lines}, {entry['seconds']:.0f} s"
    )


def _result_word(entry: dict[str, Any]) -> str:
    """A judged case's result in a word or two (a mixed case's for each part)."""
    if entry["label"] == "same":
        return "false alarm" if entry["false_alarm"] else "quiet"
    word = "detected" if entry["detected"] else "missed"
    if entry["label"] == "mixed":
        return f"regression {word}, change {'detected' if entry['detected_change'] else 'missed'}"
    return word


# ---------------------------------------------------------------- tables


def _measured(entry: dict[str, Any]) -> bool:
    """The report measured changed-line coverage (an engine error has none; coverage.py may fail)."""
    coverage = entry.get("coverage")
    return bool(coverage) and coverage.get("measured_by") != "not measured"


def _lines(entry: dict[str, Any]) -> str:
    if not _measured(entry):
        return "n/m"
    return f"{entry['coverage'].get('changed_lines_covered')}/{entry['coverage'].get('changed_lines')}"


def _ratio(part: int, whole: int) -> str:
    return f"{part}/{whole}" + (f" ({100 * part / whole:.0f}%)" if whole else "")


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.0f}" if values else "-"


def summary_rows(results: dict[str, Any], cases: list[Case]) -> list[tuple[str, str, str, str, str]]:
    """(group, detected/change, false alarms/same, lines covered, median s) per category and overall."""
    entries = {case.id: results["cases"].get(case.id) for case in cases}
    groups = [*CATEGORIES, "same", "overall"]
    rows = []
    for group in groups:
        members = [
            case
            for case in cases
            if group == "overall"
            or (case.label == "change" and case.category == group)
            or (group == "same" and case.label == "same")
        ]
        judged = [entries[case.id] for case in members if (entries[case.id] or {}).get("status") in JUDGED]
        if not members:
            continue
        change = [entry for entry in judged if entry["label"] == "change"]
        same = [entry for entry in judged if entry["label"] == "same"]
        measured = [entry for entry in judged if _measured(entry)]
        covered = sum(entry["coverage"].get("changed_lines_covered") or 0 for entry in measured)
        total = sum(entry["coverage"].get("changed_lines") or 0 for entry in measured)
        rows.append(
            (
                group,
                _ratio(sum(entry["detected"] for entry in change), len(change)) if change else "-",
                _ratio(sum(entry["false_alarm"] for entry in same), len(same)) if same else "-",
                _ratio(covered, total),
                _median([entry["seconds"] for entry in judged]),
            )
        )
    return rows


def render_markdown(results: dict[str, Any], manifest: Manifest, only: set[str]) -> str:
    """The table per category and overall, then per repository, then every case and the broken ones."""
    cases = [case for case in manifest.cases if not only or case.id in only or case.repository in only]
    settings = results["settings"]
    entries = results["cases"]
    judged = [entries[case.id] for case in cases if (entries.get(case.id) or {}).get("status") in JUDGED]
    loads = [entry["load"] for entry in judged if "load" in entry]
    out = [
        f"# Real-changes benchmark: budget {settings['budget']:g} s, seed {settings['seed']}",
        "",
        f"difforacle: `{settings['difforacle']}`; manifest {settings['manifest']}; "
        f"{len(judged)} cases judged of {len(cases)}; {settings.get('cpus')} CPUs, "
        f"1-minute load when a case started: median {_median(loads)} (max {max(loads, default=0):.1f}).",
        "",
        "| category | change detected | false alarms (same) | changed lines covered | median s |",
        "|---|---|---|---|---|",
    ]
    plain = [case for case in cases if case.label in ("change", "same")]  # the tables before triage
    out += [f"| {' | '.join(row)} |" for row in summary_rows(results, plain)]
    out += ["", _same_runs(results, cases), "", *_triage(results, cases)]
    out += [
        "",
        "| repository | change detected | false alarms (same) | changed lines covered | median s |",
        "|---|---|---|---|---|",
    ]
    for name in dict.fromkeys(case.repository for case in plain):
        rows = summary_rows(results, [case for case in plain if case.repository == name])
        out.append(f"| {name} | {' | '.join(rows[-1][1:])} |")
    out += [
        "",
        "| case | label | category | result | differences (at the change) | lines covered | s |",
        "|---|---|---|---|---|---|---|",
    ]
    for case in cases:
        entry = entries.get(case.id) or {}
        if entry.get("status") in JUDGED:
            result = _result_word(entry)
            if entry["status"] == "tool-error":
                result += " (engine error)"
            out.append(
                f"| {case.id} | {case.label} | {case.category or '-'} | {result} | "
                f"{len(entry.get('differences', []))} ({_at_parts(entry, case)}) | "
                f"{_lines(entry)} | "
                f"{entry['seconds']:.0f} |"
            )
        else:
            out.append(
                f"| {case.id} | {case.label} | {case.category or '-'} | "
                f"{entry.get('status', 'not run')} | - | - | - |"
            )
    missed = [case for case in cases if (entries.get(case.id) or {}).get("detected") is False
              and case.label in WITNESSED]
    if missed:
        out += [
            "",
            "Missed `change` and `unintended` cases: what they needed, and whether the changed lines "
            "were reached.",
            "",
        ]
        for case in missed:
            out.append(f"- {case.id} ({case.category}): needs {case.needs}; {_reach(entries[case.id])}")
    mixed = [case for case in cases
             if case.label == "mixed" and (entries.get(case.id) or {}).get("status") in JUDGED
             and not (entries[case.id]["detected"] and entries[case.id]["detected_change"])]
    if mixed:
        out += ["", "Mixed cases with a part missed:", ""]
        out += [f"- {case.id} ({case.fix} in {case.change}): {_result_word(entries[case.id])}; "
                f"{_reach(entries[case.id])}" for case in mixed]
    elsewhere = [case for case in cases
                 if case.label in ("unintended", "mixed") and _elsewhere(entries.get(case.id))]
    if elsewhere:
        out += ["", "Differences elsewhere (at neither the fix nor the change, not set apart):", ""]
        for case in elsewhere:
            found = _elsewhere(entries[case.id])
            out.append(f"- {case.id}: {len(found)}, first {found[0]['kind']} at {found[0]['target']} "
                       f"({found[0].get('verdict', 'unexplained')})")
    alarms = [case for case in cases if (entries.get(case.id) or {}).get("false_alarm")]
    if alarms:
        out += ["", "False alarms on `same` cases:", ""]
        for case in alarms:
            first = entries[case.id]["differences"][:1]
            what = (
                f"{first[0]['kind']} at {first[0]['target']}" if first else f"exit {entries[case.id]['exit']}"
            )
            out.append(f"- {case.id}: {len(entries[case.id]['differences'])} differences, first {what}")
    apart_only = [case for case in cases if _apart_only(entries.get(case.id) or {})]
    if apart_only:
        out += ["", "Reports with only differences set apart (minor: an exception's wording from outside "
                "the project; or only an input outside the declared types; neither a detection nor an "
                "alarm):", ""]
        for case in apart_only:
            found = entries[case.id]["differences"]
            minor = sum(1 for d in found if d.get("minor"))
            out.append(f"- {case.id} ({case.label}): {minor} minor, {len(found) - minor} outside the "
                       f"declared types, first {found[0]['kind']} at {found[0]['target']}")
    errors = [case for case in cases if (entries.get(case.id) or {}).get("status") == "tool-error"]
    if errors:
        out += ["", "Engine errors (counted as missed, or as quiet on `same` cases):", ""]
        out += [f"- {case.id}: {entries[case.id]['reason']}" for case in errors]
    bad = [case for case in cases if (entries.get(case.id) or {}).get("status") not in (*JUDGED, None)]
    if bad:
        out += ["", "Not counted:", ""]
        out += [
            f"- {case.id}: {entries[case.id]['status']} ({entries[case.id].get('reason', '')})"
            for case in bad
        ]
    return "\n".join(out) + "\n"


def _apart_only(entry: dict[str, Any]) -> bool:
    differences = entry.get("differences") or []
    return entry.get("status") == "ok" and bool(differences) and all(map(apart, differences))


def _at_parts(entry: dict[str, Any], case: Case) -> str:
    """How many differences count, for the every-case table (a mixed case's per part)."""
    if case.label != "mixed":
        return str(entry.get("related", 0))
    found = [d.get("at") for d in entry.get("differences", [])]
    return ", ".join(f"{part} {found.count(part)}" for part in ("fix", "change", "both"))


def _elsewhere(entry: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A judged case's differences that count for no part and that the report does not set apart."""
    if not entry or entry.get("status") != "ok":
        return []
    return [d for d in entry["differences"] if not d.get("related") and not apart(d)]


# The report's verdicts: those that explain a difference (the pull request meant it), and those that
# keep it a possible regression. A regression must stay in the second; an intended change in the first.
EXPLAINED_VERDICTS = ("asserted-by-pr", "named-by-pr")
REGRESSION_VERDICTS = ("unexplained", "breaks-existing-test")
VERDICT_COLUMNS = ("breaks-existing-test", "unexplained", "asserted-by-pr", "named-by-pr")
# (label, part, row name): a regression case's `intended` part is the commit's differences its fix
# did not undo (often what its message describes; not scored); intended = the change cases
TRIAGE_PARTS = (
    ("regression", "regression", "`regression`: the bug"),
    ("regression", "intended", "`regression`: the commit's other differences"),
    ("change", "intended", "intended (`change`)"),
    ("unintended", "regression", "`unintended`: a fix put back, without words"),
    ("mixed", "regression", "`mixed`: the reverted fix"),
    ("mixed", "intended", "`mixed`: the change"),
)
# the issue's figures: detected regressions, of those every difference kept; intended changes
# explained; mixed cases right, of all; false alarms
TARGETS = {"regression": 0.70, "kept": 0.90, "intended": 0.75, "mixed": 0.60, "same": 0.0}
SCOPES = (*HALVES, "all")
# why a naming passage did not count, as the report's `closest` says it (`triage.mentions`)
REFUSALS = {"keeps-behaviour": "says its change keeps behaviour",
            "other-inputs": "means inputs of another type", "entries": "not each of its entries",
            "other-outcome": "speaks of inputs it now"}


def part_differences(entry: dict[str, Any], part: str) -> list[dict[str, Any]]:
    """The counted differences of one part of a judged case: `intended` (the change) or `regression`
    (the bug). A mixed case's difference at both parts is the regression's: it must not be explained
    away. A regression case's bug is what its fix undid (`restored`); its other differences at the
    commit are its `intended` part."""
    differences = entry.get("differences") or []
    if entry["label"] == "mixed":
        wanted = REGRESSION_PARTS if part == "regression" else ("change",)
        return [d for d in differences if d.get("at") in wanted]
    if entry["label"] == "regression":
        if part == "regression":
            return [d for d in differences if d.get("restored") and not apart(d)]
        return [d for d in differences if d.get("related") and not d.get("restored")]
    return [d for d in differences if d.get("related")]


def part_detected(entry: dict[str, Any], part: str) -> bool:
    """The judge's word on one part: a mixed or regression case's other part is `detected_change`,
    anything else `detected`."""
    other = entry["label"] in ("mixed", "regression") and part == "intended"
    return bool(entry.get("detected_change" if other else "detected"))


def _verdict_of(difference: dict[str, Any]) -> str:
    return str(difference.get("verdict", "unexplained"))


def _all_in(differences: list[dict[str, Any]], verdicts: tuple[str, ...]) -> bool:
    return all(_verdict_of(d) in verdicts for d in differences)


def _part_figure(detected: list[dict[str, Any]], part: str, verdicts: tuple[str, ...],
                 target: float) -> dict[str, Any]:
    """Of the detected cases, those whose every difference of `part` got one of `verdicts`; and of
    those differences, how many did."""
    found = [d for entry in detected for d in part_differences(entry, part)]
    return {
        "cases": _share(sum(_all_in(part_differences(e, part), verdicts) for e in detected), len(detected)),
        "differences": _share(sum(_verdict_of(d) in verdicts for d in found), len(found)),
        "target": target,
    }


def _share(part: int, whole: int) -> dict[str, Any]:
    return {"count": part, "of": whole, "share": round(part / whole, 3) if whole else None}


def _in_scope(case: Case, scope: str) -> bool:
    return scope == "all" or case.half == scope


def triage_summary(results: dict[str, Any], cases: list[Case]) -> dict[str, Any]:
    """Per label and part: detected / measured, the detected cases' counted differences by verdict,
    those elsewhere and set apart; the issue's figures and the rules' tallies for each half of the
    libraries and for all of them (kept in the results JSON)."""
    entries = results["cases"]

    def judged(label: str, scope: str = "all") -> list[dict[str, Any]]:
        return [entries[case.id] for case in cases
                if case.label == label and _in_scope(case, scope)
                and (entries.get(case.id) or {}).get("status") in JUDGED]

    rows = []
    for label, part, name in TRIAGE_PARTS:
        measured = judged(label)
        if not measured:
            continue
        detected = [entry for entry in measured if part_detected(entry, part)]
        verdicts: dict[str, int] = {}
        for entry in detected:
            for difference in part_differences(entry, part):
                verdicts[_verdict_of(difference)] = verdicts.get(_verdict_of(difference), 0) + 1
        rows.append({
            "label": label, "part": part, "name": name, "measured": len(measured), "detected": len(detected),
            "differences": sum(verdicts.values()), "verdicts": dict(sorted(verdicts.items())),
            "elsewhere": sum(len(_elsewhere(entry)) for entry in measured),
            "set_apart": sum(1 for entry in measured for d in entry.get("differences") or [] if apart(d)),
        })
    figures = {scope: _figures(lambda label, scope=scope: judged(label, scope), cases, entries, scope)
               for scope in SCOPES}
    rules = {scope: _rule_tallies(lambda label, scope=scope: judged(label, scope)) for scope in SCOPES}
    return {"rows": rows, "figures": figures, "rules": rules}


def _figures(judged: Any, cases: list[Case], entries: dict[str, Any], scope: str) -> dict[str, Any]:
    """The issue's figures over one scope's judged cases (`judged(label)`)."""
    figures: dict[str, Any] = {}
    regressions = judged("regression")
    if regressions:
        found = [entry for entry in regressions if entry.get("detected")]
        figures["regression"] = {
            "detected": _share(len(found), len(regressions)), "target": TARGETS["regression"],
            "kept": _part_figure(found, "regression", REGRESSION_VERDICTS, TARGETS["kept"])}
    if judged("change"):
        found = [entry for entry in judged("change") if entry.get("detected")]
        figures["intended"] = {"detected": _share(len(found), len(judged("change"))),
                               **_part_figure(found, "intended", EXPLAINED_VERDICTS, TARGETS["intended"])}
    if judged("unintended"):  # detection only: the pull request has no words
        found = [entry for entry in judged("unintended") if entry.get("detected")]
        figures["unintended"] = {"detected": _share(len(found), len(judged("unintended")))}
    if judged("same"):
        figures["same"] = {"false_alarms": _share(sum(bool(e.get("false_alarm")) for e in judged("same")),
                                                  len(judged("same"))), "target": TARGETS["same"]}
    mixed = judged("mixed")
    if mixed:
        def kept(entry: dict[str, Any]) -> bool:  # the regression found and never explained away
            found = part_differences(entry, "regression")
            return bool(found) and _all_in(found, REGRESSION_VERDICTS)

        def explained(entry: dict[str, Any]) -> bool:  # vacuous when the change showed nothing
            return _all_in(part_differences(entry, "intended"), EXPLAINED_VERDICTS)

        both = [entry for entry in mixed if entry.get("detected") and entry.get("detected_change")]
        good = [entry for entry in mixed if kept(entry) and explained(entry)]
        same_module = {case.id for case in cases if case.label == "mixed" and case.same_module
                       and _in_scope(case, scope)}
        near = [entry for case_id, entry in entries.items() if case_id in same_module and entry in mixed]
        figures["mixed"] = {
            "of_all": _share(len(good), len(mixed)),
            "of_same_module": _share(sum(kept(e) and explained(e) for e in near), len(near)),
            "of_both_detected": _share(sum(kept(e) and explained(e) for e in both), len(both)),
            "regression_detected": sum(bool(entry.get("detected")) for entry in mixed),
            "change_detected": sum(bool(entry.get("detected_change")) for entry in mixed),
            "of_all_with_change_missed": sum(not entry.get("detected_change") for entry in good),
            "target": TARGETS["mixed"],
        }
    return figures


def _rule_tallies(judged: Any) -> dict[str, dict[str, int]]:
    """Per triage rule, the differences it explained that were a regression's (its false
    explanations) and those that were an intended change's; per reason a naming passage was
    refused (`closest`), the regressions it kept unexplained and the intended changes it left so.
    Regressions: the bug of a `regression` case, the fix of an `unintended` one and of a `mixed` one;
    intended: a `change` case's and a `mixed` case's change."""
    parts = {"regression": [("regression", "regression"), ("unintended", "regression"),
                            ("mixed", "regression")],
             "intended": [("change", "intended"), ("mixed", "intended")]}
    tallies: dict[str, dict[str, int]] = {}
    for side, labels in parts.items():
        for label, part in labels:
            for entry in judged(label):
                if not part_detected(entry, part):
                    continue
                for difference in part_differences(entry, part):
                    if _verdict_of(difference) in EXPLAINED_VERDICTS:
                        rule = difference.get("rule") or "(unnamed)"
                        tallies.setdefault(rule, {"regression": 0, "intended": 0})[side] += 1
                    elif _verdict_of(difference) == "unexplained":
                        for name, words in REFUSALS.items():
                            if any(words in closest for closest in difference.get("closest") or []):
                                key = f"refused: {name}"
                                tallies.setdefault(key, {"regression": 0, "intended": 0})[side] += 1
    return dict(sorted(tallies.items()))


def _pct(share: dict[str, Any]) -> str:
    return _ratio(share["count"], share["of"])


def _triage(results: dict[str, Any], cases: list[Case]) -> list[str]:
    """The triage table per label and part, then the issue's figures per half, and the rules' tallies."""
    summary = triage_summary(results, cases)
    if not summary["rows"]:
        return ["Triage: no `change`, `regression`, `unintended` or `mixed` case judged."]
    out = [
        "Triage per label: detected / measured; of the detected, their counted differences by verdict; "
        "differences elsewhere (counted for no part) and set apart (minor, or outside the declared types: "
        "never a detection) over every measured case.",
        "",
        f"| label | detected | differences | {' | '.join(VERDICT_COLUMNS)} | other | elsewhere | set apart |",
        "|---|---|---|" + "---|" * len(VERDICT_COLUMNS) + "---|---|---|",
    ]
    for row in summary["rows"]:
        other = row["differences"] - sum(row["verdicts"].get(v, 0) for v in VERDICT_COLUMNS)
        out.append(f"| {row['name']} | {_ratio(row['detected'], row['measured'])} | {row['differences']} | "
                   + " | ".join(str(row["verdicts"].get(v, 0)) for v in VERDICT_COLUMNS)
                   + f" | {other} | {row['elsewhere']} | {row['set_apart']} |")
    out += ["", "The figures, per half of the libraries (rules are tuned on the tuning half; the checking "
            "half's figures count):", "",
            "| figure | target | tuning | checking | all |", "|---|---|---|---|---|"]
    for name, target, read in _FIGURE_ROWS:
        cells = []
        for scope in SCOPES:
            try:
                cells.append(read(summary["figures"][scope]))
            except KeyError:
                cells.append("-")
        if any(cell != "-" for cell in cells):
            out.append(f"| {name} | {target} | {' | '.join(cells)} |")
    tallies = summary["rules"]
    names = sorted({name for scope in SCOPES for name in tallies[scope]})
    if names:
        out += ["", "Per triage rule: the differences it explained that were a regression's (false "
                "explanations) / an intended change's; for a refusal of a naming passage, the regressions it "
                "kept unexplained / the intended changes it left unexplained.", "",
                "| rule | tuning | checking | all |", "|---|---|---|---|"]
        for name in names:
            cells = [f"{t['regression']} / {t['intended']}" if (t := tallies[scope].get(name)) else "-"
                     for scope in SCOPES]
            out.append(f"| {name} | {' | '.join(cells)} |")
    return out


_FIGURE_ROWS: tuple[tuple[str, str, Any], ...] = (
    ("`regression` detected (the bug's difference found)", ">= 70%",
     lambda f: _pct(f["regression"]["detected"])),
    ("of them, every difference of the bug unexplained or breaking a test", ">= 90%",
     lambda f: _pct(f["regression"]["kept"]["cases"])),
    ("... over differences", "", lambda f: _pct(f["regression"]["kept"]["differences"])),
    ("`change` detected", "", lambda f: _pct(f["intended"]["detected"])),
    ("of them, every counted difference explained", ">= 75%", lambda f: _pct(f["intended"]["cases"])),
    ("... over differences", "", lambda f: _pct(f["intended"]["differences"])),
    ("`mixed` right (regression kept, change explained), of all", ">= 60%",
     lambda f: _pct(f["mixed"]["of_all"])),
    ("`mixed` right, of those with both parts detected", "", lambda f: _pct(f["mixed"]["of_both_detected"])),
    ("`same`: false alarms", "0", lambda f: _pct(f["same"]["false_alarms"])),
    ("`unintended` (fixes put back) detected", "", lambda f: _pct(f["unintended"]["detected"])),
)


def _same_runs(results: dict[str, Any], cases: list[Case]) -> str:
    """How many `same` runs ran their changed lines: a quiet run that ran none of them says little."""
    same = [results["cases"][case.id] for case in cases if case.label == "same"
            and (results["cases"].get(case.id) or {}).get("status") == "ok"]
    measured = [entry for entry in same if _measured(entry)]
    some = sum(1 for entry in measured if entry["coverage"].get("changed_lines_covered"))
    every = sum(1 for entry in measured
                if entry["coverage"].get("changed_lines_covered") == entry["coverage"].get("changed_lines"))
    return (f"`same` runs that ran their changed lines: {some} of {len(same)} ran some ({every} every one; "
            f"{len(same) - len(measured)} not measured); {sum(map(_apart_only, same))} held only "
            "differences set apart.")


def _reach(entry: dict[str, Any]) -> str:
    """Whether the run reached the changed lines, by the report's coverage, and what else it reported."""
    if entry["status"] == "tool-error":
        return f"no report, {entry['reason'].partition(': ')[2] or entry['reason']}"
    if not _measured(entry):
        text = "changed-line coverage not measured"
    else:
        text = f"changed lines reached {_lines(entry)}"
        uncovered = entry["coverage"].get("uncovered") or {}
        if uncovered:
            spans = "; ".join(f"{path} {_spans(lines)}" for path, lines in uncovered.items())
            text += f" (never run: {spans})"
    unrelated = len(entry["differences"]) - entry["related"]
    if unrelated:
        text += f"; {unrelated} differences elsewhere"
    return text


def _spans(lines: list[int]) -> str:
    """[3, 4, 5, 9] -> '3-5, 9'."""
    spans: list[list[int]] = []
    for line in sorted(lines):
        if spans and line == spans[-1][1] + 1:
            spans[-1][1] = line
        else:
            spans.append([line, line])
    return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in spans)


def render_comparison(old: dict[str, Any], new: dict[str, Any]) -> str:
    """Case by case: what the new run gained and lost against the old one."""
    gained: list[str] = []
    lost: list[str] = []
    for case_id in sorted(set(old["cases"]) & set(new["cases"])):
        before, after = old["cases"][case_id], new["cases"][case_id]
        if before.get("status") not in JUDGED or after.get("status") not in JUDGED:
            continue
        # an engine error judged by an older runner has no verdict: it was no detection, no alarm
        detected = bool(before.get("detected")), bool(after.get("detected"))
        alarmed = bool(before.get("false_alarm")), bool(after.get("false_alarm"))
        if after["label"] in ("change", "unintended", "mixed") and detected[0] != detected[1]:
            (gained if detected[1] else lost).append(f"{case_id}: {'detected' if detected[1] else 'missed'}")
        if after["label"] == "same" and alarmed[0] != alarmed[1]:
            (lost if alarmed[1] else gained).append(f"{case_id}: {'false alarm' if alarmed[1] else 'quiet'}")
        lines_before = (before.get("coverage") or {}).get("changed_lines_covered") or 0
        lines_after = (after.get("coverage") or {}).get("changed_lines_covered") or 0
        if lines_after != lines_before:
            (gained if lines_after > lines_before else lost).append(
                f"{case_id}: changed lines covered {lines_before} -> {lines_after}"
            )
    only_old = sorted(set(old["cases"]) - set(new["cases"]))
    out = [
        f"# Compared with budget {old['settings']['budget']:g} s, seed {old['settings']['seed']}, "
        f"`{old['settings']['difforacle']}`",
        "",
        f"Gained ({len(gained)}):",
        "",
    ]
    out += [f"- {line}" for line in gained] or ["- nothing"]
    out += ["", f"Lost ({len(lost)}):", ""]
    out += [f"- {line}" for line in lost] or ["- nothing"]
    if only_old:
        out += ["", f"Only in the old results: {', '.join(only_old)}"]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- command line


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--manifest", type=Path, default=HERE / "manifest.toml")
    parser.add_argument(
        "--mirrors",
        type=Path,
        default=os.environ.get("DIFFORACLE_MIRRORS"),
        help="folder of bare mirrors (default $DIFFORACLE_MIRRORS)",
    )
    parser.add_argument(
        "--difforacle",
        default=os.environ.get("DIFFORACLE", "difforacle"),
        help="the difforacle command (default $DIFFORACLE, else difforacle on PATH)",
    )
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out", type=Path, default=None, help="results JSON (default results/b<budget>-s<seed>.json)"
    )
    parser.add_argument("--markdown", type=Path, default=None, help="also write the tables here")
    parser.add_argument("--only", default="", help="comma-separated case ids or owner/name repositories")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(
            os.environ.get("DIFFORACLE_BENCH_WORK", Path.home() / ".cache" / "difforacle-real-changes")
        ),
        help="clones, venvs and temporary trees (default $DIFFORACLE_BENCH_WORK or ~/.cache/...)",
    )
    parser.add_argument("--python", default=sys.executable, help="interpreter the venvs are made from")
    parser.add_argument("--compare", type=Path, default=None, help="older results JSON to compare with")
    parser.add_argument("--report-only", action="store_true", help="run nothing; tables from --out")
    parser.add_argument(
        "--rejudge", action="store_true", help="judge the differences in --out again (after a rule change)"
    )
    parser.add_argument("--labels-only", action="store_true", help="check the labels, run no difforacle")
    parser.add_argument("--reports", type=Path, default=None, help="keep every full report in this folder")
    parser.add_argument(
        "--case-literals", type=Path, default=None, metavar="FILE",
        help=f"write the hashes of what each case's diff and words hold (kept as {LITERALS_FILE.name}), for "
             "the test that the engine holds none of it; runs nothing else")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        manifest = load_manifest(args.manifest)
        only = {item.strip() for item in args.only.split(",") if item.strip()}
        unknown = only - {case.id for case in manifest.cases} - set(manifest.repositories)
        if unknown:
            raise BenchError(f"--only: no case or repository {', '.join(sorted(unknown))}")
        out = args.out or HERE / "results" / f"b{args.budget:g}-s{args.seed}.json"
        difforacle = shlex.split(args.difforacle)
        if args.case_literals:
            if args.mirrors is None:
                raise BenchError("no mirrors: pass --mirrors DIR or set $DIFFORACLE_MIRRORS")
            write_case_literals(args.case_literals, manifest, args.mirrors, args.work.resolve())
            return 0
        if not args.report_only:
            if args.mirrors is None:
                raise BenchError("no mirrors: pass --mirrors DIR or set $DIFFORACLE_MIRRORS")
            if not (args.labels_only or args.rejudge) and shutil.which(difforacle[0]) is None:
                raise BenchError(
                    f"difforacle command {difforacle[0]!r} not found (--difforacle or $DIFFORACLE)"
                )
            settings = Settings(
                args.manifest,
                args.mirrors,
                difforacle,
                args.budget,
                args.seed,
                out,
                args.markdown,
                args.work.resolve(),
                args.python,
                only,
                args.labels_only,
                args.reports,
            )
            results = (
                rejudge(settings, manifest, read_results(out))
                if args.rejudge
                else run_benchmark(settings, manifest)
            )
            results["triage"] = triage_summary(results, manifest.cases)  # the figures, over every case
            save_results(out, results)
        elif not out.exists():
            raise BenchError(f"--report-only: no results at {out}")
        else:
            results = read_results(out)
        text = render_markdown(results, manifest, only)
        if args.compare:
            text += "\n" + render_comparison(read_results(args.compare), results)
    except BenchError as error:
        print(f"run.py: {error}", file=sys.stderr)
        return 2
    if args.markdown:
        args.markdown.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
