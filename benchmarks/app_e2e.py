"""Bench: the App's end-to-end time, from a `pull_request` delivery to the published summary comment.

Embedded mode as a user runs it: `difforacle app run` (web server and worker, SQLite queue,
bubblewrap sandbox by default) against the fake GitHub, which serves a bench case's repository
over git's HTTP protocol. A case of the shared benchmark is a corpus repository
(~/.cache/pr-regression-bench/corpus/<subject>/repo, branches `base` and `case/<id>`); its two
branches are fetched into a temporary repository (the cache is only read), opened as a pull
request, and a signed `pull_request` `opened` delivery is posted. The figure is the time from
sending the delivery to the summary comment being on the fake; the App's log gives the
breakdown: start (queue, token, check run), fetch, install (networked sandbox), engine
(sandbox without network), publish (review, comment, check run, with PyGithub's pauses).
Each run is its own repository, so that no run finds another's check run on the same commit.

The cases run as they are: the App installs each project with its default `pip install .`.
`--install CMD` instead gives the copy one commit under the case, on base, declaring
`[tool.difforacle] install`, with the case's change replayed on it (the pull request's diff
stays the case's).

    python benchmarks/app_e2e.py           # inflection, semver, cachetools: first killed mutant
    python benchmarks/app_e2e.py --case cachetools-m001 --repeat 3 [--budget 30] [--install CMD]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the fake GitHub and its helpers

from support.app_helpers import (
    AppProcess,
    InstalledApp,
    app_environment,
    install_app,
    published_on,
    pull_request_payload,
    wait_for,
)
from support.fake_github import FakeGitHub

CORPUS = Path.home() / ".cache" / "pr-regression-bench" / "corpus"
MANIFESTS = Path("/work/shared/bench/manifests")
SUBJECTS = ("inflection", "semver", "cachetools")
OWNER = "bench"
PHASES = ("start", "fetch", "install", "engine", "publish")
LOG_LINE = re.compile(r"^(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ [\w.]+: (?P<message>.*)$")


@dataclass(frozen=True)
class Case:
    id: str
    subject: str
    branch: str
    base: str
    head: str


@dataclass
class Run:
    case: Case
    repeat: int
    answer: int = 0  # the webhook's HTTP status
    receive: float = 0.0  # seconds to the webhook's answer
    to_comment: float | None = None  # seconds from sending the delivery to the summary comment
    to_check_run: float | None = None  # ... to the completed check run
    conclusion: str | None = None
    phases: dict[str, float] = field(default_factory=dict)
    failure: str = ""


def load_case(case_id: str, manifests: Path) -> Case:
    subject = case_id.rsplit("-", 1)[0]
    manifest = json.loads((manifests / f"{subject}.json").read_text(encoding="utf-8"))
    for case in manifest["cases"]:
        if case["id"] == case_id:
            return Case(case_id, subject, case["branch"], manifest["base"], case["head"])
    raise SystemExit(f"no case {case_id} in {manifests / f'{subject}.json'}")


def default_cases(manifests: Path) -> list[Case]:
    """The first mutant the subject's own tests kill, per subject: a real regression to find."""
    cases = []
    for subject in SUBJECTS:
        manifest = json.loads((manifests / f"{subject}.json").read_text(encoding="utf-8"))
        first = next(c for c in manifest["cases"] if c.get("kind") == "mutant" and c.get("killed"))
        cases.append(load_case(first["id"], manifests))
    return cases


def copy_case(case: Case, corpus: Path, folder: Path, install: list[str] | None) -> Path:
    """A repository holding the case's two branches, fetched from the corpus (which is only read);
    with `install`, base gets a commit declaring it and the case's change is replayed on that."""
    source = corpus / case.subject / "repo"
    target = folder / case.id
    if target.exists():
        return target
    git(folder, "init", "-q", str(target))
    refspecs = [f"refs/heads/{branch}:refs/heads/{branch}" for branch in ("base", case.branch)]
    git(target, "fetch", "-q", "--no-tags", str(source), *refspecs)
    for branch, expected in (("base", case.base), (case.branch, case.head)):
        sha = git(target, "rev-parse", f"refs/heads/{branch}")
        if sha != expected:
            raise SystemExit(f"{case.id}: branch {branch} of {source} is {sha[:12]}, the manifest says "
                             f"{expected[:12]}: rebuild the corpus")
    if install is not None:
        git(target, "checkout", "-q", "--detach", "base")
        pyproject = target / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8") if pyproject.exists() else ""
        table = f"[tool.difforacle]\ninstall = {json.dumps(install)}\n"  # a JSON string list is TOML too
        pyproject.write_text(f"{text.rstrip()}\n\n{table}".lstrip(), encoding="utf-8")
        git(target, "add", "pyproject.toml")
        git(target, "commit", "-q", "-m", "bench: install the project with the system's certificates")
        configured = git(target, "rev-parse", "HEAD")
        git(target, "cherry-pick", "--allow-empty", f"base..{case.branch}")
        git(target, "branch", "-f", "base", configured)
        git(target, "branch", "-f", case.branch, "HEAD")
    return target


def git(where: Path, *args: str) -> str:
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
                "-c", "commit.gpgsign=false"]
    done = subprocess.run(["git", "-C", str(where), *identity, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {where}: {done.stderr.strip()}")
    return done.stdout.strip()


def phases_from_log(log: str, delivery: str, job_id: str) -> dict[str, float]:
    """The job's phases, in seconds, from the App's log lines (timestamps to the millisecond)."""
    at: dict[str, datetime] = {}
    seconds: dict[str, float] = {}
    for line in log.splitlines():
        match = LOG_LINE.match(line)
        if match is None:
            continue
        when, message = datetime.strptime(match["at"], "%Y-%m-%d %H:%M:%S,%f"), match["message"]
        if message.startswith(f"delivery {delivery}: ") and " queued " in message:
            at["queued"] = when
        elif message.startswith(f"job {job_id}: "):
            event = message.removeprefix(f"job {job_id}: ")
            took = re.search(r" in ([0-9.]+) s\b", event)
            if event.startswith("fetching with a token"):
                at["fetching"] = when
            elif event.startswith("dependencies installed") and took:
                at["installed"], seconds["install"] = when, float(took[1])
            elif event.startswith("the engine ran") and took:
                at["engine"], seconds["engine"] = when, float(took[1])
            elif event.startswith("published: "):
                at["published"] = when
    if not {"queued", "fetching", "installed", "engine", "published"} <= at.keys():
        return {}

    def between(start: str, end: str) -> float:
        return (at[end] - at[start]).total_seconds()

    return {"start": between("queued", "fetching"),
            "fetch": between("fetching", "installed") - seconds["install"],
            "install": seconds["install"], "engine": seconds["engine"],
            "publish": between("engine", "published")}


def measure(app: AppProcess, fake: FakeGitHub, installed: InstalledApp, run: Run, name: str,
            timeout: float) -> None:
    """One delivery, timed until the comment appears and the check run completes."""
    full_name = f"{OWNER}/{name}"
    payload = pull_request_payload(fake, installed.installation_id, full_name, 1)
    head = payload["pull_request"]["head"]["sha"]
    delivery = f"bench-{name}"

    def settled() -> bool:
        published = published_on(fake, full_name, 1, installed.login)
        now = time.perf_counter() - began
        if published.comments and run.to_comment is None:
            run.to_comment = now
        done = [r for r in published.check_runs if r.head_sha == head and r.status == "completed"]
        if done:
            run.to_check_run, run.conclusion = now, done[0].conclusion
            if not published.comments:
                run.failure = f"{done[0].output.get('title')}: {done[0].output.get('summary', '')[:300]}"
        return bool(done)

    began = time.perf_counter()
    run.answer, answer = app.deliver("pull_request", payload, delivery)
    run.receive = time.perf_counter() - began
    if run.answer != 202:
        run.failure = f"the webhook answered {run.answer}: {answer}"
        return
    try:
        wait_for(settled, timeout=timeout, what=f"the check run of {run.case.id}")
    except AssertionError as exc:
        run.failure = str(exc)
        return
    job_id = f"{full_name}#1@{head}"
    outcome = re.compile(rf"job {re.escape(job_id)}: (published|failed|superseded)\b")
    try:
        wait_for(lambda: outcome.search(app.log()) is not None, timeout=30, what="the job's outcome logged")
    except AssertionError as exc:
        run.failure = str(exc)
        return
    run.phases = phases_from_log(app.log(), delivery, job_id)


def report(runs: list[Run], budget: float) -> int:
    print(f"\n{'case':<18} {'run':>3} {'202 in':>8} {'comment':>8} {'check':>8}  "
          + " ".join(f"{p:>8}" for p in PHASES) + "  conclusion")
    for run in runs:
        cells = [f"{run.receive * 1000:6.0f}ms", _s(run.to_comment), _s(run.to_check_run)]
        phases = " ".join(_s(run.phases.get(p)) for p in PHASES)
        print(f"{run.case.id:<18} {run.repeat:>3} {' '.join(cells)}  {phases}  {run.conclusion or '-'}"
              + (f"  FAILED: {run.failure}" if run.failure else ""))
    good = [run for run in runs if run.to_comment is not None and not run.failure]
    if not good:
        print("no run published a comment")
        return 1
    print(f"\nend to end, delivery to summary comment (budget {budget:g} s, {len(good)} run(s)): "
          f"median {statistics.median(r.to_comment for r in good):.1f} s, "
          f"min {min(r.to_comment for r in good):.1f} s, max {max(r.to_comment for r in good):.1f} s")
    for case_id in dict.fromkeys(r.case.id for r in good):
        mine = [r.to_comment for r in good if r.case.id == case_id]
        print(f"  {case_id}: median {statistics.median(mine):.1f} s over {len(mine)} run(s)")
    broken_down = [r for r in good if r.phases]
    if broken_down:
        print("median breakdown: " + ", ".join(
            f"{p} {statistics.median(r.phases[p] for r in broken_down):.1f} s" for p in PHASES))
    return 0 if len(good) == len(runs) else 1


def _s(value: float | None) -> str:
    return f"{value:7.1f}s" if value is not None else f"{'-':>8}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", default=[], metavar="ID",
                        help="a bench case, e.g. cachetools-m001 (repeatable; default: the first killed "
                             "mutant of each subject)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each case (default: 1)")
    parser.add_argument("--budget", type=float, default=30.0, help="DIFFORACLE_BUDGET (default: 30)")
    parser.add_argument("--sandbox", choices=("bubblewrap", "docker", "auto"), default="bubblewrap")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds a job may take (default: 900)")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--manifests", type=Path, default=MANIFESTS)
    parser.add_argument("--install", action="append", metavar="CMD",
                        help="install command declared on the copy's base (repeatable; default: none, "
                             "the App's own `pip install .`)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (the App's log)")
    args = parser.parse_args(argv)
    cases = [load_case(c, args.manifests) for c in args.case] or default_cases(args.manifests)
    folder = Path(tempfile.mkdtemp(prefix="bench-app-e2e-"))
    (folder / "repos").mkdir()
    runs: list[Run] = []
    try:
        with FakeGitHub(strict_tokens=True).serve() as fake:
            names = []
            for case in cases:
                repo = copy_case(case, args.corpus, folder / "repos", args.install)
                for repeat in range(1, args.repeat + 1):
                    name = f"{case.id}-{repeat}"
                    fake.add_git_repo(OWNER, name, repo)
                    fake.add_pull_from_git(OWNER, name, 1, repo, "base", case.branch, head_ref=case.branch,
                                           title=f"bench case {case.id}")
                    names.append(name)
                    runs.append(Run(case, repeat))
            installed = install_app(fake, folder / "secrets", OWNER, names)
            env = app_environment(folder / "data", fake, installed, budget=args.budget, sandbox=args.sandbox)
            with AppProcess(env, folder / "app.log") as app:
                print(f"difforacle app run on {app.url}, budget {args.budget:g} s, {args.sandbox} sandbox; "
                      f"log {folder / 'app.log'}", flush=True)
                for run, name in zip(runs, names, strict=True):
                    measure(app, fake, installed, run, name, args.timeout)
                    print(f"{run.case.id} #{run.repeat}: comment after {_s(run.to_comment).strip()}"
                          + (f" FAILED: {run.failure}" if run.failure else ""), flush=True)
                stopped = time.perf_counter()
                status = app.stop(timeout=60)
                print(f"stopped by SIGTERM in {time.perf_counter() - stopped:.1f} s, exit status {status}")
            if any(run.failure for run in runs):
                print("\n".join(app.log().splitlines()[-40:]), file=sys.stderr)
        return report(runs, args.budget)
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
