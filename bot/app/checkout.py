"""A pull request's base and head commits fetched into a fresh repository, with the token in
git's environment only.

Why the environment: a token in the remote URL ends up in `.git/config`, in `FETCH_HEAD` and
in git's error messages; a credential helper writes it to disk. `http.extraheader` given as
GIT_CONFIG_COUNT/GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n (git 2.31+) exists only in the fetching
process's environment, so nothing under the work directory, which the sandbox later sees,
ever holds it. Git runs without the user's or the system's configuration, and never prompts.

Files of the commits are read from git's objects (`read_file`), never through the work
tree, which a hostile pull request may have filled with symbolic links.
"""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

from .model import PullRequestJob

GIT_TIMEOUT = 600.0  # seconds for one git command (a fetch of a large repository)
MAX_CONFIG_BYTES = 1_000_000


class FetchError(Exception):
    """The commits could not be fetched or checked out; the message is one line without secrets."""


def clone_url(web_url: str, repository: str) -> str:
    """Where GitHub serves the repository over smart HTTP (the web host, not the API's)."""
    return f"{web_url.rstrip('/')}/{repository}.git"


def git_environment(home: Path, token: str | None = None) -> dict[str, str]:
    """A clean environment for git: no user or system configuration, no prompts; with `token`,
    the authorization header GitHub expects for an installation token (basic, x-access-token)."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "LC_ALL": "C",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
           "GIT_ASKPASS": "", "SSH_ASKPASS": ""}
    if token is not None:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        env.update({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "http.extraheader",
                    "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}"})
    return env


def fetch_pull_request(job: PullRequestJob, repo: Path, url: str, token: str, home: Path) -> None:
    """`git init` + fetch of the job's base and head into `repo`, then the head checked out.

    A head in a fork is fetched as the base repository's `refs/pull/N/head` (the token covers
    the base repository only); the head SHA must then be in what was fetched.
    """
    home.mkdir(parents=True, exist_ok=True)
    plain, with_token = git_environment(home), git_environment(home, token)
    _git(["init", "-q", "--template=", str(repo)], plain, "create the repository")
    _git(["-C", str(repo), "remote", "add", "origin", url], plain, "add the remote")
    refspecs = [job.base_sha, job.head_sha]
    if job.from_fork:
        refspecs = [job.base_sha, f"+refs/pull/{job.number}/head:refs/remotes/origin/pull/{job.number}"]
    _git(["-C", str(repo), "fetch", "-q", "--no-tags", "--no-write-fetch-head", "origin", *refspecs],
         with_token, f"fetch {job.repository} {job.base_sha[:12]} and {job.head_sha[:12]}")
    for name, sha in (("base", job.base_sha), ("head", job.head_sha)):
        if not has_commit(repo, sha, plain):
            raise FetchError(f"the {name} commit {sha[:12]} is not in {job.repository} any more "
                             "(force-pushed away?)")
    _git(["-C", str(repo), "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", job.head_sha],
         plain, f"check out {job.head_sha[:12]}")


def pull_head(url: str, number: int, token: str, home: Path) -> str:
    """The pull request's head SHA as git serves it (`refs/pull/N/head`, forks included).

    Why git: the REST API's answer would cost one of the installation's 5,000 requests an hour,
    and a job asks just before it publishes; git's traffic does not count against that limit.
    Run from `home`, never from the checkout, whose `.git` the sandbox could have written.
    """
    ref = f"refs/pull/{number}/head"
    out = _git(["ls-remote", url, ref], git_environment(home, token), f"read {ref}", cwd=home)
    for line in out.splitlines():
        sha, _, name = line.partition("\t")
        if name == ref:
            return sha
    raise FetchError(f"cannot read {ref}: the repository has no such ref")


def clone_commit(repo: Path, sha: str, destination: Path, home: Path) -> None:
    """A second clone of `repo` (sharing its objects) with commit `sha` checked out.

    Made before any code of the pull request runs: afterwards `repo` is tainted (a sandboxed
    step could write hooks or configuration into its `.git`), and git must never run on it
    outside a sandbox again.
    """
    plain = git_environment(home)
    _git(["clone", "-q", "--shared", "--no-checkout", str(repo), str(destination)], plain,
         f"clone the checkout for {sha[:12]}")
    _git(["-C", str(destination), "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", sha],
         plain, f"check out {sha[:12]}")


def has_commit(repo: Path, sha: str, env: dict[str, str]) -> bool:
    done = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{sha}^{{commit}}"], env=env,
                          capture_output=True, timeout=GIT_TIMEOUT)
    return done.returncode == 0


def read_file(repo: Path, sha: str, path: str, home: Path) -> bytes | None:
    """The file `path` of commit `sha` from git's objects, or None if the commit has no such file."""
    env = git_environment(home)
    kind = subprocess.run(["git", "-C", str(repo), "cat-file", "-t", f"{sha}:{path}"], env=env,
                          capture_output=True, text=True, timeout=GIT_TIMEOUT)
    if kind.returncode != 0 or kind.stdout.strip() != "blob":
        return None
    blob = subprocess.run(["git", "-C", str(repo), "cat-file", "blob", f"{sha}:{path}"], env=env,
                          capture_output=True, timeout=GIT_TIMEOUT)
    if blob.returncode != 0 or len(blob.stdout) > MAX_CONFIG_BYTES:
        return None
    return blob.stdout


def _git(args: list[str], env: dict[str, str], what: str, cwd: Path | None = None) -> str:
    """Git's output; a FetchError with git's last line of errors (never the token) if it failed."""
    try:
        done = subprocess.run(["git", *args], env=env, capture_output=True, text=True, timeout=GIT_TIMEOUT,
                              cwd=cwd)
    except subprocess.TimeoutExpired:
        raise FetchError(f"cannot {what}: git took over {GIT_TIMEOUT:g} s") from None
    except OSError as exc:
        raise FetchError(f"cannot {what}: cannot run git: {exc.strerror or exc}") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise FetchError(f"cannot {what}: {lines[-1] if lines else f'git exit status {done.returncode}'}")
    return done.stdout
