"""A pull request's code reads the environment it runs in: with `GITHUB_TOKEN` and other secrets
planted in difforacle's own environment, the changed function sees none of them, in the workers
that explore and in the pytest runs that reproduce the difference."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

SECRETS = ("GITHUB_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "AWS_SECRET_ACCESS_KEY", "NPM_TOKEN")
PROBE = '''\
import os


def visible(separator: str) -> str:
    return str(separator)[:1].join(sorted(name for name in os.environ if "TOKEN" in name or "SECRET" in name))
'''


@pytest.mark.slow
def test_the_projects_code_sees_no_token(builder: RepoBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SECRETS:
        monkeypatch.setenv(name, "planted")
    make_pr(builder, {"pkg/__init__.py": "", "pkg/probe.py": PROBE},
            {"pkg/probe.py": PROBE.replace("return str(", "return 'head:' + str(")})
    report = run_analyze(builder, max_sequences=300, show_unreproduced=False)
    shown = [d for d in report.differences if d.target == "pkg.probe:visible"]
    assert shown, report.notes
    for difference in shown:
        assert difference.head in ("'head:'", '"head:"'), difference.head
        assert not any(name in difference.head for name in SECRETS), difference.head
        assert difference.reproduced is True  # its pytest runs, too, saw what the workers saw
