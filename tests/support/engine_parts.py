"""The engine's parts made the way the engine makes them, for tests that drive one part alone."""

from __future__ import annotations

import sys

from difforacle.generator.generation.techniques import Components
from difforacle.generator.planning.deadline import (
    WORKER_QUIT_TIMEOUT,
    WORKER_REQUEST_TIMEOUT,
    WORKER_START_TIMEOUT,
)
from difforacle.generator.runtime.workers import WorkerOptions

# A worker under this interpreter, with a generous sequence timeout for loaded machines.
WORKER_OPTIONS = WorkerOptions(sys.executable, call_timeout=1.0, sequence_timeout=5.0,
                               start_timeout=WORKER_START_TIMEOUT, request_timeout=WORKER_REQUEST_TIMEOUT,
                               quit_timeout=WORKER_QUIT_TIMEOUT)

# every technique at its default, and the path memo (off by default) on
WITH_PATHS = Components.without((), enabled=["paths"])
