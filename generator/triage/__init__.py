"""Triage: why each difference is there, as far as the pull request itself tells, with the evidence.

Most differences a pull request shows are meant; the ones nothing accounts for are the possible
regressions a reviewer must read first. `pull_request` reads the pull request's own words (title,
body, commit messages, changelog entries, changed docstrings) and values, `evidence` holds them with
the tests that broke or assert a change in one record, `mentions` finds where words name a
difference's operation, `rules` is the ordered list of rules that read the record, and `verdicts`
runs them: each difference gets the `Verdict` of the first rule that accounts for it, or stays
unexplained with what came closest.
"""
