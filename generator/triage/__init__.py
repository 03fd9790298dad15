"""Triage: why each difference is there, as far as the pull request itself tells, with the evidence.

Most differences a pull request shows are meant; the ones nothing accounts for are the possible
regressions a reviewer must read first. `pull_request` reads the pull request's own words (title,
body, commit messages, changelog entries, changed docstrings), `mentions` finds where they name a
difference's operation, and `verdicts` gives each difference its `Verdict`, with the existing tests
carving found broken and the input's realism (`findings.declared_types`).
"""
