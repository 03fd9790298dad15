"""The difforacle engine: (repository, base, head, budget) -> Report. No network, no GitHub."""

from .engine import Options, Progress, analyze
from .model import Report, SetupError

__all__ = ["Options", "Progress", "Report", "SetupError", "analyze"]
