"""The Unbalanced Tree Search benchmark as an enumerate-mode plug-in (the engine's oracle)."""
from .problem import PRESETS, UTSParameterError, UTSParams, UTSProblem  # noqa: F401
