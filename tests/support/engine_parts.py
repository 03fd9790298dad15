"""The engine's parts made the way the engine makes them, for tests that drive one part alone."""

from __future__ import annotations

import os
import sys

from difforacle.generator.generation.techniques import Components
from difforacle.generator.planning.deadline import (
    WORKER_QUIT_TIMEOUT,
    WORKER_REQUEST_TIMEOUT,
    WORKER_START_TIMEOUT,
)
from difforacle.generator.runtime.workers import WorkerOptions

# The interpreter the project under test runs on: this one, or DIFFORACLE_TEST_PYTHON (.ci/pythons
# runs the worker's tests with each of Python 3.9-3.13 this way; the host stays on this one).
PROJECT_PYTHON = os.environ.get("DIFFORACLE_TEST_PYTHON") or sys.executable

# A worker under that interpreter, with a generous sequence timeout for loaded machines.
WORKER_OPTIONS = WorkerOptions(PROJECT_PYTHON, call_timeout=1.0, sequence_timeout=5.0,
                               start_timeout=WORKER_START_TIMEOUT, request_timeout=WORKER_REQUEST_TIMEOUT,
                               quit_timeout=WORKER_QUIT_TIMEOUT)

# every technique at its default, and the path memo (off by default) on
WITH_PATHS = Components.without((), enabled=["paths"])
