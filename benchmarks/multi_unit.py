"""Benchmark: detection rate of `--allocation defect` vs `uniform` on multi-unit PR cases.

Not a test (pytest does not collect it). A multi-unit case is one killed mutant of the shared
benchmark corpus (../shared/bench: a single-line regression the library's own tests catch)
plus behaviour-preserving edits of K *other* units (functions/methods) of the same package,
so the pull request touches K + 1 units and the engine must decide where its budget goes.
The edits are the harness's own (`refactor.py`: rename a local, swap if/else with the
condition negated; a comment line only as a fallback), each checked against the AST;
`--check-tests` also runs the library's own tests on the edits alone. Units come
alternately from the mutant's module and from the package's other modules, shuffled with
`--seed`. Mutants that break the module's import are skipped by default: difforacle finds
them without exploring, whatever the allocation.

    python benchmarks/multi_unit.py build [--subjects inflection,semver,cachetools] [--limit 3]
                                           [--units 4] [--seed 1] [--workdir /tmp/multi-unit]
    python benchmarks/multi_unit.py run --budget 30 [--seeds 1,2,3] [--out results.json]
    python benchmarks/multi_unit.py summarize [--out results.json] [--markdown table.md]

`build` clones each corpus repository into WORKDIR/<subject> (the shared corpus is only
read), commits branch `multi/<case-id>` off `base` per killed mutant (the first --limit in
manifest order; same inputs, same commit ids) and writes WORKDIR/manifest.json. `run` calls
`$DIFFORACLE diff` (default `difforacle`) once per case, allocation and seed, one process at
a time, saving after each run and skipping runs already in --out for the same head commit.
`summarize` prints detection rates per subject and allocation, per seed and pooled, with
median seconds and changed-line coverage, and the pairs only one allocation detected.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shlex
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from types import ModuleType
from typing import Any

from git import Repo

DEFAULT_BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"
CACHE = Path(os.environ.get("BENCH_CACHE", "~/.cache/pr-regression-bench")).expanduser()
DEFAULT_WORKDIR = Path("/tmp/multi-unit")
SUBJECTS = ("inflection", "semver", "cachetools")
ALLOCATIONS = ("defect", "uniform")
EDIT_KINDS = ("rename_local", "swap_if", "comment")  # keys of refactor.FUNCTION_REFACTORINGS
COMMENT = "# multi-unit bench: no behaviour change"
MANIFEST_SCHEMA = "difforacle.bench-multi-unit.manifest/1"
RESULTS_SCHEMA = "difforacle.bench-multi-unit.results/1"


class BenchError(Exception):
    """A problem the user must fix (missing corpus, bad arguments): one line, exit 2."""


@dataclass(frozen=True)
class Harness:
    """The shared benchmark's modules, imported from its folder."""

    astutil: ModuleType
    refactor: ModuleType
    corpus: ModuleType
    proc: ModuleType
    subjects: ModuleType
    venvs: ModuleType
    folder: Path


def load_harness(folder: Path) -> Harness:
    """Import the harness modules from `folder` (they import each other by top-level name)."""
    if not (folder / "refactor.py").is_file():
        raise BenchError(f"no benchmark harness at {folder} (pass --bench)")
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    import astutil
    import corpus
    import proc
    import refactor
    import subjects
    import venvs

    return Harness(astutil, refactor, corpus, proc, subjects, venvs, folder)


# ---------------------------------------------------------------- build


@dataclass(frozen=True)
class Edit:
    file: str
    function: str
    operator: str
    detail: str
    line: int  # in the file as it was just before this edit


def plan_edits(
    h: Harness, sources: dict[str, str], mutant_file: str, mutant_function: str, count: int, seed: str,
    kinds: tuple[str, ...] = EDIT_KINDS,
) -> tuple[dict[str, str], list[Edit]]:
    """Apply behaviour-preserving edits to `count` units other than the mutated one.

    `sources` maps package files to their text (the mutant's file already mutated). Units are
    shuffled with `seed`; slots alternate between the mutant's module and the other modules
    (falling back to whichever still has candidates). Edits that change the syntax tree
    (rename_local, swap_if; slot i tries them rotated by i) come first. A comment is only a
    fallback, and only in a file whose tree already changed: difforacle skips a file whose
    tree is unchanged, so a comment elsewhere would touch no unit it sees. Each edit is
    AST-checked by the harness and kept only if the units it changes are exactly the
    intended ones. Returns the edited sources and the edits.
    """
    rng = random.Random(seed)
    same = sorted(_units(h, {mutant_file: sources[mutant_file]}) - {(mutant_file, mutant_function)})
    other = sorted(_units(h, {f: s for f, s in sources.items() if f != mutant_file}))
    rng.shuffle(same)
    rng.shuffle(other)
    current = dict(sources)
    edits: list[Edit] = []
    code_kinds = tuple(k for k in kinds if k != "comment")
    for pass_kinds in (code_kinds, ("comment",) if "comment" in kinds else ()):
        edited = {(e.file, e.function) for e in edits}
        queues = [[u for u in pool if u not in edited] for pool in (same, other)]
        if pass_kinds == ("comment",):
            retouched = {e.file for e in edits}
            queues = [[u for u in queue if u[0] in retouched or u[0] == mutant_file] for queue in queues]
        while pass_kinds and len(edits) < count and any(queues):
            slot = len(edits)
            file, qualname = (queues[slot % 2] or queues[1 - slot % 2]).pop(0)
            shift = slot % len(pass_kinds)
            for kind in pass_kinds[shift:] + pass_kinds[:shift]:
                edit = _edit(h, kind, current[file], qualname)
                if edit is None:
                    continue
                expected = {qualname} | {e.function for e in edits if e.file == file}
                if not set(h.astutil.changed_functions(sources[file], edit.source)) <= expected:
                    continue  # the line diff attributes the change to a neighbour too: skip
                current[file] = edit.source
                edits.append(Edit(file, qualname, edit.operator, edit.detail, edit.line))
                break
    return current, edits


def _units(h: Harness, sources: dict[str, str]) -> set[tuple[str, str]]:
    return {(file, qualname) for file, text in sources.items()
            for qualname, _ in h.astutil.iter_functions(ast.parse(text))}


def _edit(h: Harness, kind: str, source: str, qualname: str) -> Any:
    if kind == "comment":
        return h.refactor.add_comment(source, qualname, COMMENT)
    return h.refactor.FUNCTION_REFACTORINGS[kind](source, qualname)


def map_line(old: str, new: str, line: int) -> int | None:
    """Line number in `new` of `old`'s line `line`, when that line is unchanged."""
    matcher = SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal" and i1 < line <= i2:
            return j1 + line - i1
    return None


def _blob(repo: Repo, ref: str, path: str) -> str:
    return (repo.commit(ref).tree / path).data_stream.read().decode("utf-8")


def _clone(corpus_repo: Path, work: Path, base_sha: str) -> Repo:
    """A fresh clone of the corpus at `work` with a local `base` branch; only our own clones are replaced."""
    if work.exists():
        try:
            url = Repo(work).remotes.origin.url
        except Exception as exc:  # not a git repository, or no origin
            raise BenchError(f"{work} exists and is not a clone of {corpus_repo}: "
                             "remove it or pass --workdir") from exc
        if Path(url).resolve() != corpus_repo.resolve():
            raise BenchError(f"{work} is a clone of {url}, not {corpus_repo}: remove it or pass --workdir")
        shutil.rmtree(work)
    work.parent.mkdir(parents=True, exist_ok=True)
    repo = Repo.clone_from(str(corpus_repo), str(work))
    repo.git.checkout("-q", "-f", "-B", "base", base_sha)
    return repo


def build_subject(h: Harness, name: str, args: argparse.Namespace) -> list[dict]:
    """Clone one subject's corpus and commit its multi-unit cases; their manifest entries."""
    def log(message: str) -> None:
        print(f"[{name}] {message}", file=sys.stderr, flush=True)

    subject = {s.name: s for s in h.subjects.load_subjects(h.folder / "subjects.toml")}.get(name)
    if subject is None:
        raise BenchError(f"{name} is not a subject of {h.folder / 'subjects.toml'}")
    corpus_repo = args.corpus / name / "repo"
    manifest_file = h.folder / "manifests" / f"{name}.json"
    if not corpus_repo.is_dir():
        raise BenchError(f"no corpus repository at {corpus_repo}: run {h.folder}/build_corpus.py first")
    if not manifest_file.is_file():
        raise BenchError(f"no manifest at {manifest_file}: run {h.folder}/build_corpus.py first")
    manifest = json.loads(manifest_file.read_text())
    if Repo(corpus_repo).commit(manifest["base_branch"]).hexsha != manifest["base"]:
        raise BenchError(f"corpus at {corpus_repo} does not match {manifest_file}: rerun build_corpus.py")

    base_sha = manifest["base"]
    work = args.workdir / name
    repo = _clone(corpus_repo, work, base_sha)
    package = Path(subject.source_dir) / subject.package
    files = sorted(p.relative_to(work).as_posix() for p in (work / package).rglob("*.py")) \
        if (work / package).is_dir() else [package.with_suffix(".py").as_posix()]
    base_sources = {f: _blob(repo, base_sha, f) for f in files}
    killed = [c for c in manifest["cases"] if c["kind"] == "mutant" and c["killed"]]
    cases = []
    for case in killed:
        if args.limit and len(cases) >= args.limit:
            break
        record = build_case(h, repo, subject, case, base_sha, base_sources, args)
        if record["breaks_import"] and not args.keep_import_breaking:
            h.corpus.checkout(repo, "base")
            repo.git.branch("-D", record["head"])
            log(f"{case['id']}: skipped, its mutant breaks the import of {case['file']} "
                "(found without any exploration; --keep-import-breaking keeps such cases)")
            continue
        cases.append(record)
        edited = ", ".join(f"{'' if e['file'] == case['file'] else e['file'] + ':'}{e['function']} "
                           f"({e['operator']})" for e in record["edits"])
        log(f"{record['head']}: {case['function']} mutated; edited {edited}"
            f"{'; edits pass own tests' if record['tests_checked'] else ''}")
    h.corpus.checkout(repo, "base")
    return cases


def build_case(h: Harness, repo: Repo, subject: Any, case: dict, base_sha: str,
               base_sources: dict[str, str], args: argparse.Namespace) -> dict:
    """Commit `multi/<id>`: the mutant plus edits of other units; its manifest entry."""
    file, function = case["file"], case["function"]
    if file not in base_sources:
        raise BenchError(f"{case['id']}: {file} is not in package {subject.package}")
    case_ref = f"origin/{case['branch']}"
    touched = repo.git.diff("--name-only", base_sha, case_ref).split()
    mutated = _blob(repo, case_ref, file)
    if touched != [file] or h.astutil.changed_functions(base_sources[file], mutated) != [function]:
        raise BenchError(f"{case['id']}: {case['branch']} does not change exactly {file}:{function}")
    sources = {**base_sources, file: mutated}
    final, edits = plan_edits(h, sources, file, function, args.units, f"{args.seed}:{case['id']}",
                              tuple(args.kinds))
    if len(edits) < args.units:
        print(f"[{subject.name}] {case['id']}: only {len(edits)} of {args.units} units could be edited",
              file=sys.stderr)
    head_line = map_line(mutated, final[file], case["line"])
    changed = {f: text for f, text in final.items() if text != base_sources[f]}
    tests_checked = False
    if args.check_tests:
        check_edits_alone(h, repo, subject, case, base_sha, changed, head_line)
        tests_checked = True
    branch = f"multi/{case['id']}"
    head = h.corpus.commit_case(repo, branch, changed,
                                f"multi {case['id']}: one mutated unit and {len(edits)} edited units")
    root, module = h.corpus.module_of(Path(repo.working_tree_dir), file)
    units = sorted({(f, q) for f, text in changed.items()
                    for q in h.astutil.changed_functions(base_sources[f], text)})
    return {
        "id": case["id"], "subject": subject.name, "repo": str(repo.working_tree_dir), "base": base_sha,
        "head": branch, "head_sha": head,
        "mutant": {"case": case["id"], "file": file, "function": function, "operator": case["operator"],
                   "detail": case["detail"], "base_line": case["line"], "head_line": head_line},
        "edits": [vars(e) for e in edits],
        "changed": [list(u) for u in units],
        "tests_checked": tests_checked,
        "breaks_import": breaks_import(h, root, module),
    }


def breaks_import(h: Harness, root: Path, module: str) -> bool:
    """Whether importing `module` from `root` (the checked-out head) fails, as import-time mutants do."""
    done = h.proc.run([sys.executable, "-c", f"import {module}"], cwd=root, timeout=60,
                      env=h.proc.env_with(PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1"))
    return done.returncode != 0


def check_edits_alone(h: Harness, repo: Repo, subject: Any, case: dict, base_sha: str,
                      changed: dict[str, str], head_line: int | None) -> None:
    """Run the own tests on base plus the edits without the mutant; they must pass."""
    file = case["file"]
    alone = dict(changed)
    if head_line is None:
        raise BenchError(f"{case['id']}: the mutated line moved; cannot separate it from the edits")
    lines = alone[file].splitlines(keepends=True)
    lines[head_line - 1] = _blob(repo, base_sha, file).splitlines(keepends=True)[case["line"] - 1]
    alone[file] = "".join(lines)
    python = h.venvs.ensure_venv("tests", subject.test_requires)
    with h.corpus.worktrees(Path(repo.working_tree_dir), base_sha) as (tree,):
        for path, text in alone.items():
            (tree / path).write_text(text, encoding="utf-8")
        suite = h.corpus.run_suite(subject, tree, python)
    if not suite.passed:
        raise BenchError(f"{case['id']}: own tests fail on the edits alone: {suite.output_tail[-300:]!r}")


def cmd_build(args: argparse.Namespace) -> int:
    h = load_harness(args.bench)
    unknown = set(args.kinds) - set(EDIT_KINDS)
    if unknown:
        raise BenchError(f"--kinds takes {','.join(EDIT_KINDS)}, not {','.join(sorted(unknown))}")
    cases = [c for name in args.subjects for c in build_subject(h, name, args)]
    manifest = {"schema": MANIFEST_SCHEMA, "seed": args.seed, "units": args.units, "kinds": args.kinds,
                "cases": cases}
    path = args.manifest or args.workdir / "manifest.json"
    _write_json(path, manifest)
    per = {n: sum(c["subject"] == n for c in cases) for n in args.subjects}
    print(f"{len(cases)} cases ({', '.join(f'{n} {k}' for n, k in per.items())}) -> {path}")
    return 0


# ---------------------------------------------------------------- run


def run_key(case_id: str, allocation: str, seed: int) -> str:
    return f"{case_id}|{allocation}|{seed}"


def mutant_line_covered(case: dict, coverage: dict) -> bool | None:
    """Whether the run executed the mutated line, from the report's uncovered lines (head side if given)."""
    line, file = case["mutant"]["head_line"], case["mutant"]["file"]
    coverage = (coverage.get("sides") or {}).get("head") or coverage
    if line is None or not coverage:
        return None
    if "uncovered" in coverage:
        return line not in coverage["uncovered"].get(file, [])
    return True if coverage.get("changed_lines_covered") == coverage.get("changed_lines") else None


def run_one(h: Harness, command: list[str], case: dict, allocation: str, seed: int, budget: float) -> dict:
    """One `difforacle diff` run; raises BenchError when the CLI rejects --allocation."""
    with tempfile.TemporaryDirectory(prefix="bench-multi-") as tmp:
        report_path = Path(tmp) / "report.json"
        argv = [*command, "diff", "--repo", case["repo"], "--base", case["base"], "--head", case["head"],
                "--budget", f"{budget:g}", "--seed", str(seed), "--allocation", allocation,
                "--json", str(report_path)]
        done = h.proc.run(argv, env=h.proc.env_with(), timeout=2 * budget + 120)
        entry: dict[str, Any] = {
            "case": case["id"], "subject": case["subject"], "allocation": allocation, "seed": seed,
            "head_sha": case["head_sha"], "exit": done.returncode, "seconds": round(done.seconds, 2),
            "detected": False, "differences": 0, "coverage": None, "mutant_line_covered": None,
            "stats": None, "error": None,
        }
        if done.timed_out:
            entry["error"] = "timeout"
            return entry
        if done.returncode == 2 and "--allocation" in done.stderr and (
                "unrecognized arguments" in done.stderr or "invalid choice" in done.stderr):
            raise BenchError(f"difforacle rejects --allocation (not landed yet?): {_tail(done.stderr)}")
        if done.returncode not in (0, 1):
            entry["error"] = f"exit {done.returncode}: {_tail(done.stderr)}"
            return entry
        try:
            report = json.loads(report_path.read_text())
        except (OSError, ValueError) as exc:
            entry["error"] = f"unreadable report ({exc}): {_tail(done.stderr)}"
            entry["detected"] = done.returncode == 1
            return entry
    entry["differences"] = len(report.get("differences", []))
    entry["detected"] = done.returncode == 1 or entry["differences"] > 0
    entry["coverage"] = report.get("coverage")
    entry["stats"] = report.get("stats")
    entry["mutant_line_covered"] = mutant_line_covered(case, report.get("coverage") or {})
    return entry


def cmd_run(args: argparse.Namespace) -> int:
    h = load_harness(args.bench)
    if args.budget <= 0:
        raise BenchError("--budget must be positive")
    if not args.manifest.is_file():
        raise BenchError(f"no manifest at {args.manifest}: run `build` first")
    manifest = json.loads(args.manifest.read_text())
    cases = [c for c in manifest["cases"] if not args.only or c["subject"] in args.only]
    if args.limit:
        cases = [c for n in dict.fromkeys(c["subject"] for c in cases)
                 for c in [c for c in cases if c["subject"] == n][: args.limit]]
    for case in cases:
        if not Path(case["repo"]).is_dir():
            raise BenchError(f"no repository at {case['repo']}: rerun `build`")
    command = shlex.split(os.environ.get("DIFFORACLE", "difforacle"))
    if shutil.which(command[0]) is None:
        raise BenchError(f"{command[0]!r} is not on PATH (install difforacle or set $DIFFORACLE)")
    results = _load_results(args.out, args.budget)
    for seed in args.seeds:
        for case in cases:
            for allocation in args.allocations:
                key = run_key(case["id"], allocation, seed)
                old = results["runs"].get(key)
                redo = args.retry_errors and old and old["error"]
                if old and old.get("head_sha") == case["head_sha"] and not redo:
                    continue  # done on this very head (a rebuild with another --seed gives new heads)
                entry = run_one(h, command, case, allocation, seed, args.budget)
                results["runs"][key] = entry
                _write_json(args.out, results)
                cov = entry["coverage"] or {}
                print(f"{case['id']:<18} {allocation:<8} seed {seed}  detected={entry['detected']!s:<5} "
                      f"{entry['seconds']:6.1f}s  changed lines {cov.get('changed_lines_covered', '-')}"
                      f"/{cov.get('changed_lines', '-')}  mutant line covered={entry['mutant_line_covered']}"
                      f"{'  ' + entry['error'] if entry['error'] else ''}", file=sys.stderr, flush=True)
    print(render_table(list(results["runs"].values()), args.budget))
    return 0


def _load_results(path: Path, budget: float) -> dict:
    if not path.exists():
        return {"schema": RESULTS_SCHEMA, "budget_s": budget, "runs": {}}
    results = json.loads(path.read_text())
    if results.get("schema") != RESULTS_SCHEMA or results.get("budget_s") != budget:
        raise BenchError(f"{path} holds runs at budget {results.get('budget_s')}: use another --out")
    return results


# ---------------------------------------------------------------- summarize


def _median(values: Iterable[float]) -> float | None:
    values = list(values)
    return statistics.median(values) if values else None


def _ratio(coverage: dict | None) -> float | None:
    if not coverage or not coverage.get("changed_lines"):
        return None
    return coverage["changed_lines_covered"] / coverage["changed_lines"]


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def render_table(runs: list[dict], budget: float | None = None) -> str:
    """Markdown table per subject and overall: detection per seed and pooled, medians; then paired wins."""
    header = ("| subject | allocation | detected per seed | pooled | median s | median changed-line cov "
              "| mutant line covered | errors |")
    title = "multi-unit cases" + (f", budget {budget:g} s" if budget is not None else "")
    lines = [title, "", header, "|" + "---|" * 8]
    subjects = list(dict.fromkeys(r["subject"] for r in runs))
    groups: dict[str, list[dict]] = {s: [r for r in runs if r["subject"] == s] for s in subjects}
    if len(subjects) != 1:
        groups["overall"] = runs
    paired = []
    for name, group in groups.items():
        for allocation in [a for a in ALLOCATIONS if any(r["allocation"] == a for r in group)]:
            mine = [r for r in group if r["allocation"] == allocation]
            seeds = sorted({r["seed"] for r in mine})
            per_seed = ", ".join(f"s{s} {_hits(r for r in mine if r['seed'] == s)}" for s in seeds)
            hits, total = sum(r["detected"] for r in mine), len(mine)
            covered = [r["mutant_line_covered"] for r in mine if r["mutant_line_covered"] is not None]
            lines.append(
                f"| {name} | {allocation} | {per_seed} | {hits}/{total} ({100 * hits / total:.0f}%) "
                f"| {_fmt(_median(r['seconds'] for r in mine), '.1f')} "
                f"| {_fmt(_median(x for r in mine if (x := _ratio(r['coverage'])) is not None), '.0%')} "
                f"| {sum(covered)}/{len(covered)} | {sum(bool(r['error']) for r in mine)} |")
        paired.append(f"{name}: {_paired(group)}")
    return "\n".join([*lines, "", "paired (same case and seed), detected by one allocation only:", *paired])


def _hits(runs: Iterable[dict]) -> str:
    runs = list(runs)
    return f"{sum(r['detected'] for r in runs)}/{len(runs)}"


def _paired(runs: list[dict]) -> str:
    by_key = {(r["case"], r["seed"], r["allocation"]): r["detected"] for r in runs}
    pairs = [(by_key[(c, s, "defect")], by_key[(c, s, "uniform")]) for c, s, a in by_key
             if a == "defect" and (c, s, "uniform") in by_key]
    defect_only = sum(d and not u for d, u in pairs)
    uniform_only = sum(u and not d for d, u in pairs)
    return f"defect only {defect_only}, uniform only {uniform_only}, of {len(pairs)} pairs"


def cmd_summarize(args: argparse.Namespace) -> int:
    if not args.out.is_file():
        raise BenchError(f"no results at {args.out}: run `run` first")
    results = json.loads(args.out.read_text())
    runs = [r for r in results["runs"].values() if not args.only or r["subject"] in args.only]
    if not runs:
        raise BenchError(f"{args.out} holds no runs" + (f" for {','.join(args.only)}" if args.only else ""))
    table = render_table(runs, results.get("budget_s"))
    print(table)
    if args.markdown:
        args.markdown.write_text(table + "\n")
    return 0


# ---------------------------------------------------------------- command line


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(path)


def _tail(text: str, limit: int = 300) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-2:])[-limit:]


def _csv(convert: Callable[[str], Any], choices: Iterable[str] | None = None) -> Callable[[str], list]:
    allowed = tuple(choices) if choices else None

    def parse(text: str) -> list:
        items = [item.strip() for item in text.split(",") if item.strip()]
        if not items:
            raise argparse.ArgumentTypeError("empty list")
        if allowed and (bad := [i for i in items if i not in allowed]):
            raise argparse.ArgumentTypeError(f"{','.join(bad)} not in {','.join(allowed)}")
        try:
            return [convert(item) for item in items]
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc
    return parse


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--bench", type=Path, default=DEFAULT_BENCH, help="shared benchmark harness folder")
    sub = top.add_subparsers(dest="command", required=True)
    workdir = DEFAULT_WORKDIR

    build = sub.add_parser("build", help="clone the corpora and commit the multi/<case> branches")
    build.add_argument("--subjects", type=_csv(str), default=list(SUBJECTS),
                       help=f"comma-separated (default: {','.join(SUBJECTS)})")
    build.add_argument("--limit", type=int, default=0, help="first N killed mutants per subject (0: all)")
    build.add_argument("--units", "-k", type=int, default=4, help="other units to edit per case (K)")
    build.add_argument("--kinds", type=_csv(str, EDIT_KINDS), default=list(EDIT_KINDS),
                       help="edit kinds, tried in turn per unit")
    build.add_argument("--seed", default="1", help="chooses the edited units")
    build.add_argument("--corpus", type=Path, default=CACHE / "corpus")
    build.add_argument("--workdir", type=Path, default=workdir, help="clones go to WORKDIR/<subject>")
    build.add_argument("--manifest", type=Path, help="default: WORKDIR/manifest.json")
    build.add_argument("--keep-import-breaking", action="store_true",
                       help="keep cases whose mutant makes the module fail to import (default: skip them)")
    build.add_argument("--check-tests", action="store_true",
                       help="also run the library's own tests on the edits alone (slow)")
    build.set_defaults(handler=cmd_build)

    run = sub.add_parser("run", help="run difforacle per case, allocation and seed (resumable)")
    run.add_argument("--budget", type=float, required=True, help="seconds per difforacle run")
    run.add_argument("--seeds", type=_csv(int), default=[1, 2, 3])
    run.add_argument("--allocations", type=_csv(str, ALLOCATIONS), default=list(ALLOCATIONS))
    run.add_argument("--manifest", type=Path, default=workdir / "manifest.json")
    run.add_argument("--only", type=_csv(str), default=[], help="subjects to run")
    run.add_argument("--limit", type=int, default=0, help="first N cases per subject (0: all)")
    run.add_argument("--out", type=Path, default=workdir / "results.json")
    run.add_argument("--retry-errors", action="store_true", help="rerun runs recorded with an error")
    run.set_defaults(handler=cmd_run)

    summarize = sub.add_parser("summarize", help="print the detection table of --out")
    summarize.add_argument("--out", type=Path, default=workdir / "results.json")
    summarize.add_argument("--only", type=_csv(str), default=[], help="subjects to include")
    summarize.add_argument("--markdown", type=Path, help="also write the table to this file")
    summarize.set_defaults(handler=cmd_summarize)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.handler(args)
    except BenchError as exc:
        print(f"bench_multi_unit: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
