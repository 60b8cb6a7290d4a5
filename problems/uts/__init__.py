"""The Unbalanced Tree Search benchmark as an enumerate-mode plug-in (the engine's oracle)."""
from .model import PRESETS, UTSParameterError, UTSParams, UTSProblem  # noqa: F401
