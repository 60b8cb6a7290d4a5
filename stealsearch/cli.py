"""The ``stealsearch`` command: the sub-command table and the one error policy.

Bad input anywhere (an :class:`engine.errors.InputError`, or an argparse error)
prints one line ``stealsearch: error: ...`` on stderr and exits 2, never a traceback;
a search that could not finish exits 1; an interrupt exits 130.
"""
from __future__ import annotations

import importlib
import os
import sys
from typing import Sequence

from engine.commandline import OneLineParser, one_line_warnings
from engine.errors import InputError, SearchFailed

from . import __version__

#: Sub-command modules, in the order ``--help`` lists them; each has ``register(sub)``.
SUBCOMMAND_MODULES = (
    "stealsearch.demo",
    "problems.uts.cli",
    "problems.clique.cli",
    "problems.liquid.cli",
    "problems.hrelation.cli",
    "problems.commclust.cli",
    "problems.twolevel.cli",
    "stealsearch.sweep",
    "stealsearch.reproduce",
)


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog="stealsearch",
        description="Parallel backtracking search on Dask (stealstack), and the "
                    "scheduling algorithms of the seed papers.")
    parser.add_argument("--version", action="version", version=f"stealsearch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND",
                                parser_class=OneLineParser)
    sub.required = True
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        with one_line_warnings(sys.argv[1:] if argv is None else list(argv)):
            parser = build_parser()
            args = parser.parse_args(argv)
            code = args.func(args)
            sys.stdout.flush()
        return 0 if code is None else int(code)
    except BrokenPipeError:
        # the reader of our output went away (``stealsearch ... | head -1``): stop quietly,
        # and point stdout at /dev/null so the interpreter's final flush does not complain
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141
    except InputError as exc:
        msg = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        if not msg.startswith("stealsearch"):
            msg = f"stealsearch: error: {msg}"
        print(msg, file=sys.stderr)
        return 2
    except SearchFailed as exc:
        print(f"stealsearch: search failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stealsearch: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
