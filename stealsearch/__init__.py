"""The ``stealsearch`` application: the command line and the demo, above ``engine``
(the generic search engine) and ``problems`` (the plug-in problems).

Layers: ``engine`` imports neither ``problems`` nor this package; ``problems`` import
``engine`` only; this package imports both.
"""
from importlib.metadata import PackageNotFoundError, version as _version

try:
    __version__ = _version("stealsearch")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
