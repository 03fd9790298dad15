"""The difforacle engine: (repository, base, head, budget) -> Report. No network, no GitHub."""

from .engine import analyze
from .model import Report, SetupError
from .options import Options, Progress

__all__ = ["Options", "Progress", "Report", "SetupError", "analyze"]
