"""The services some tests need (a Docker engine, Redis, bubblewrap): skipped here, required in CI."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def service_unavailable(what: str, why: object) -> NoReturn:
    """Skip a test whose service (Docker, Redis, bubblewrap) is missing here, but fail in CI:
    `.ci/run` installs and starts them all, so a missing one there is a broken CI, not a skip."""
    message = f"{what} is unavailable: {why}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI installs and starts it in .ci/services)", pytrace=False)
    pytest.skip(message)


# The image the App's tests run their Docker sandbox on (.ci/run builds it before the tests).
TEST_IMAGE = os.environ.get("DIFFORACLE_SANDBOX_IMAGE") or "difforacle:test"
