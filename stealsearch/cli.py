"""The ``stealsearch`` command: the sub-command table and the one error policy.

Bad input anywhere (an :class:`stealsearch.engine.core.errors.InputError`, or an argparse error)
prints one line ``stealsearch: error: ...`` on stderr and exits 2, never a traceback;
a search that could not finish exits 1, and so does output that cannot be written
(``> /dev/full``: one line).  A first stop signal during a search (Ctrl-C, SIGTERM, a
closed terminal's SIGHUP, SIGQUIT) stops it and prints the result so far (status
interrupted, best, bound, nodes) after its final checkpoint, then exits 128 + n (130
for SIGINT, 143 for SIGTERM, 129 for SIGHUP); a second one exits at once, unless it is
the echo of a job manager's group signal (:mod:`stealsearch.engine.deploy.interrupts`).
A signal before the search (while the engine is imported, a graph read) prints
``stealsearch: interrupted`` and exits 128 + n: the handlers are installed before the
first heavy import.  ``stealsearch resume DIR`` re-runs the command stored in a
checkpoint from its cut.
"""
from __future__ import annotations

import os
import sys
from typing import Sequence

from . import __version__

# The engine is imported inside the functions below, not here: `stealsearch --version`
# answers without it (the engine loads numba and Dask: ~1 s).


def build_parser() -> OneLineParser:
    """The ``stealsearch`` parser: the tour, every registered problem's sub-commands
    (:mod:`stealsearch.registry`, in its order), the sweep and reproduce commands, resume,
    check-proof."""
    from stealsearch.engine.app.commandline import OneLineParser, example_epilog

    from . import check_proof, demo, registry, reproduce, sweep

    parser = OneLineParser(
        prog="stealsearch",
        description="Parallel backtracking search on Dask (stealstack), and the "
                    "scheduling algorithms of the same papers.",
        epilog=example_epilog("stealsearch clique keller4",
                              "stealsearch hrel --random 8 16 --algorithm all"))
    parser.add_argument("--version", action="version", version=f"stealsearch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND",
                                parser_class=OneLineParser)
    sub.required = True
    demo.register(sub)
    registry.register_commands(sub)
    sweep.register(sub)
    reproduce.register(sub)
    _register_resume(sub)
    check_proof.register(sub)
    return parser


# --- resilience: `stealsearch resume DIR` -------------------------------------------------
#: what the resume command decides in place of the stored command: where the search runs,
#: how it reaches its cluster, its limits (counted from the resume) and its checkpoint
#: (the resumed DIR); parser destinations, compared and replaced after parsing
_PLACE_DESTS = ("workers", "sequential", "scheduler", "cluster_config", "ramp_up", "grace",
                "checkpoint", "time_limit", "node_limit", "force", "connect_timeout",
                "wait_workers")
#: how it reports: the resume command's replace the stored ones when it gives any
_REPORT_DESTS = ("json", "quiet", "progress")


def _register_resume(sub) -> None:
    from stealsearch.engine.app.commandline import example_epilog

    p = sub.add_parser("resume", help="continue a search checkpointed with --checkpoint DIR",
                       description="Continue the search checkpointed in DIR: the stored command "
                                   "is run again from its last consistent cut, on the backend "
                                   "given here (default: as a new search does, on every usable "
                                   "core of this process).  A "
                                   "checkpoint of a different input is refused.",
                       epilog=example_epilog(
                           "stealsearch uts --tree T1L --checkpoint ckpt --time-limit 2",
                           "stealsearch resume ckpt --time-limit 2"))
    p.add_argument("dir", metavar="DIR", help="the folder a --checkpoint DIR run wrote")
    where = p.add_mutually_exclusive_group()
    from stealsearch.engine.app.commandline import add_workers_argument
    add_workers_argument(where, "continue on a LocalCluster of N worker processes (no N, or "
                                "'auto': one per usable core)")
    where.add_argument("--sequential", action="store_true",
                       help="continue in this process (no cluster)")
    where.add_argument("--scheduler", metavar="ADDR", default=None,
                       help="continue on a running Dask scheduler, e.g. tcp://127.0.0.1:8786")
    where.add_argument("--cluster-config", metavar="FILE", default=None,
                       help="continue on a cluster described in FILE (YAML; the ready ones "
                            "ship in stealsearch.cluster_configs)")
    from stealsearch.engine.app.commandline import add_rampup_arguments
    add_rampup_arguments(p)
    p.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help="stop after S more seconds")
    p.add_argument("--node-limit", type=int, default=None, metavar="N",
                   help="stop after about N more nodes")
    # the new place may need them as a new search does (e.g. --workers 16 on 2 cores)
    from stealsearch.engine.app.commandline import add_cluster_arguments, checkpoint_required_help

    add_cluster_arguments(p)
    p.add_argument("--checkpoint-required", action="store_true", default=None,
                   help=checkpoint_required_help() + " (default: as the stored command)")
    p.add_argument("--prove", default=None, metavar="PREFIX",
                   help="continue the proof of a search started with --prove (its "
                        "checkpoint keeps the proof so far): write the model PREFIX.opb "
                        "and the proof PREFIX.pbp of the whole search when it finishes")
    p.add_argument("--trust", action="store_true",
                   help="resume a checkpoint that your key did not sign (another user's or "
                        "machine's, or edited): its stored command is still checked, and "
                        "it is still never unpickled here")
    # how it reports, as for a new search (replacing the stored command's own)
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    talk = p.add_mutually_exclusive_group()
    talk.add_argument("--progress", action="store_true",
                      help="the live line even when stderr is not a terminal")
    talk.add_argument("--quiet", action="store_true", help="no live line, no notes")
    p.set_defaults(func=_run_resume)


#: options whose value names a file or folder the command writes: never taken from a
#: stored command (the checkpoint is written into the resumed DIR, the result to stdout)
_OUTPUT_DESTS = ("checkpoint", "out", "plot", "dendrogram_plot", "save_instance", "prove")
#: output options the resume command gives itself: the stored value is dropped (the
#: checkpoint is the resumed DIR; a proof goes where the resume command's --prove says)
_RESUME_OWN_DESTS = ("checkpoint", "prove")


def _search_commands(parser) -> dict:
    """{name: sub-parser} of the sub-commands that run an engine search (they take
    ``--checkpoint``): the only ones a checkpoint's stored command may name."""
    import argparse

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: p for name, p in sub.choices.items()
            if any(a.dest == "checkpoint" for a in p._actions)}


def validated_command(directory, argv, parser):
    """The stored command of a checkpoint, parsed and checked before anything of it runs:
    a search sub-command whose every option is one of that sub-command's, spelt in full
    (every parser refuses abbreviations), and none of them an output path (those are
    refused: resume writes only the checkpoint it was given and stdout).  The check is on
    the parsed options, so no spelling (``--out=X``, an abbreviation, an option given
    twice) gets past it.  Returns the parsed namespace."""
    import contextlib
    import io

    from stealsearch.engine.core.checkpoint import CheckpointError
    from stealsearch.engine.core.errors import InputError

    searches = _search_commands(parser)
    if not argv or argv[0] not in searches:
        raise CheckpointError(f"checkpoint {directory}: its stored command "
                              f"{(argv or [''])[0]!r:.40} is not a search sub-command "
                              f"({', '.join(sorted(searches))}); refusing to run it")
    try:
        # (--help or --version among the words would print and exit: neither is a search)
        with contextlib.redirect_stdout(io.StringIO()):
            namespace = parser.parse_args(list(argv))
    except InputError as exc:
        why = str(exc).split(": error: ", 1)[-1]
        raise CheckpointError(f"checkpoint {directory}: its stored command cannot be read "
                              f"({why}); refusing to run it") from None
    except SystemExit:
        raise CheckpointError(f"checkpoint {directory}: its stored command asks for help or "
                              "a version, not a search; refusing to run it") from None
    sub = searches[argv[0]]
    for action in sub._actions:
        if action.dest in _OUTPUT_DESTS and action.dest not in _RESUME_OWN_DESTS \
                and getattr(namespace, action.dest, action.default) != action.default:
            raise CheckpointError(f"checkpoint {directory}: its stored command writes "
                                  f"{action.option_strings[-1]}; refusing to write a path the "
                                  "checkpoint names")
    return namespace


def _run_resume(args) -> int:
    from stealsearch.engine.core.checkpoint import CheckpointError, check_signed, read_manifest

    manifest = read_manifest(args.dir)
    argv = (manifest.get("info") or {}).get("argv")
    if not argv or argv[0] == "resume":
        raise CheckpointError(f"checkpoint {args.dir}: written through the Python API (no "
                              "command stored); continue it with stealsearch.resume()")
    if not args.trust:
        check_signed(args.dir, manifest, "resume it with --trust")
    parser = build_parser()
    inner = validated_command(args.dir, list(argv), parser)
    sub = _search_commands(parser)[argv[0]]
    # the place, limits and checkpoint are the resume command's: the stored ones go back
    # to their defaults, and what the resume command gives replaces them
    for dest in _PLACE_DESTS:
        setattr(inner, dest, sub.get_default(dest))
    for dest in _PLACE_DESTS:
        value = getattr(args, dest, None)
        # a flag not given is False or None; --no-ramp-up is the one False that is given
        if value is not None and (value is not False or dest == "ramp_up"):
            setattr(inner, dest, value)
    if args.checkpoint_required:
        inner.checkpoint_required = True
    if hasattr(inner, "prove"):
        inner.prove = args.prove            # never the stored command's path
    elif args.prove is not None:
        raise CheckpointError(f"checkpoint {args.dir}: its search ({argv[0]}) logs no "
                              "proof; --prove applies to a clique search")
    if any(getattr(args, dest) for dest in _REPORT_DESTS):
        for dest in _REPORT_DESTS:
            setattr(inner, dest, bool(getattr(args, dest)))
    inner.resume_from = args.dir
    inner.stealsearch_argv = list(argv)
    code = inner.func(inner)
    args.exit_status = getattr(inner, "exit_status", None)
    return code
# --- end resilience ----------------------------------------------------------------------


# --- signals before the engine is imported ------------------------------------------------
#: (signal, monotonic time) of the signals that arrived before the engine's own handlers
#: were installed (:func:`stealsearch.engine.deploy.interrupts.own_process_signals` takes them)
_EARLY: list = []


def _early_handler(signum, frame):
    """A stop signal (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT) while the command imports the
    engine (numba, Dask: seconds): recorded, then raised as KeyboardInterrupt; a second
    one (not an echo) exits at once, nothing of ours runs yet."""
    import signal
    import time

    # the engine's rule for a second signal that is the echo of the first (a job manager
    # signalling the process, then its group); its module imports nothing heavy
    from stealsearch.engine.deploy.interrupts import is_echo

    now = time.monotonic()
    if _EARLY:
        first, at = _EARLY[0]
        if is_echo(first, signum, now - at):
            if signum == signal.SIGTERM:    # it names the request (see interrupts._handler)
                _EARLY[0] = (signum, at)
            return
        os._exit(128 + signum)
    _EARLY.append((signum, now))
    raise KeyboardInterrupt


def _install_early_handlers() -> dict | None:
    """The handlers above, and a hook that keeps a KeyboardInterrupt swallowed by a
    callback ("Exception ignored in ...": llvmlite, importlib) off the terminal (it is
    recorded); returns what to put back, or None outside the main thread."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    # the handler's rule and the signals, loaded now (the module imports nothing heavy)
    from stealsearch.engine.deploy.interrupts import stop_signals

    _EARLY.clear()
    previous = {s: signal.getsignal(s) for s in stop_signals()}
    for s in previous:
        signal.signal(s, _early_handler)
    hook = sys.unraisablehook

    def quiet(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            return          # recorded by the handler: the command stops or its exit code says so
        hook(unraisable)

    sys.unraisablehook = quiet
    previous["unraisablehook"] = hook
    return previous


def _restore(previous: dict | None, interrupts, as_program: bool) -> None:
    import signal

    if previous is None:
        return
    hook = previous.pop("unraisablehook")
    if as_program:
        # the process's last moments (closing a cluster, the interpreter's exit): a late
        # echo of the signal that stopped us is absorbed, never a traceback
        if interrupts is not None:
            interrupts.release_process_signals(None)
            if interrupts.received_signal() is not None:
                # stopped by a signal: its echo (a job manager signals the process, then
                # its group) may come after the result, while the interpreter exits, which
                # puts the default handlers back (a death by SIGTERM after the result was
                # printed); ignored, it cannot
                for s in interrupts.stop_signals():
                    signal.signal(s, signal.SIG_IGN)
        else:
            for s in previous:
                signal.signal(s, signal.SIG_IGN)
        return
    sys.unraisablehook = hook
    if interrupts is not None:
        interrupts.release_process_signals(previous)
    else:
        for s, h in previous.items():
            signal.signal(s, h)


def _say(line: str) -> None:
    """One line on stderr, if stderr can still be written (a closed terminal: not)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


class OutputError(Exception):
    """The command's output could not be written: stdout on a full disk (``> /dev/full``),
    a closed terminal, a quota.  (A reader that went away, ``| head``, is BrokenPipeError.)"""


class _Stdout:
    """``sys.stdout`` while a command runs: its write errors are :class:`OutputError`,
    told apart from every other OSError of the command."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc.strerror or exc.__class__.__name__) from None

    def flush(self):
        try:
            return self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc.strerror or exc.__class__.__name__) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _stdout_to_devnull(stream) -> None:
    """Point ``stream``'s file descriptor at /dev/null, so that what is still buffered
    goes nowhere when the interpreter flushes it at exit (not into a second error)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
    except (OSError, ValueError):
        pass


def _interrupted(interrupts) -> int:
    import signal

    _say("stealsearch: interrupted")
    sig = interrupts.received_signal() if interrupts is not None else None
    if sig is None and _EARLY:
        sig = _EARLY[0][0]
    return 128 + int(sig or signal.SIGINT)


def main(argv: Sequence[str] | None = None) -> int:
    as_program = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:
        # answered before the parser is built: building it imports every sub-command
        # (numba, Dask), ~1 s for one line
        print(f"stealsearch {__version__}")
        return 0
    previous = _install_early_handlers()      # before the first heavy import
    interrupts = None
    try:
        from stealsearch.engine.deploy import interrupts as imported
        interrupts = imported
        if previous is not None:
            interrupts.own_process_signals([s for s, _ in _EARLY],
                                           _EARLY[0][1] if _EARLY else None)
        return _main(argv, interrupts)
    except KeyboardInterrupt:
        return _interrupted(interrupts)
    except (SystemError, RuntimeError) as exc:
        # a Ctrl-C that Python or numba wrapped (here, for the imports above and all of
        # _main): while numba loads or runs a compiled function's Python part (the clique's
        # initial local search, about a second in) it surfaces as "returned a result with
        # an exception set", chained from the KeyboardInterrupt; while a class is created
        # (a dataclass's fields, importing engine/deploy/cluster_config.py half a second in) as
        # Python 3.11's "RuntimeError: Error calling __set_name__", caused by it
        if _from_interrupt(exc):
            return _interrupted(interrupts)
        raise
    finally:
        _restore(previous, interrupts, as_program)


def _main(argv: list, interrupts) -> int:
    from stealsearch.engine.app.commandline import announce_compiles, one_line_warnings
    from stealsearch.engine.core.errors import InputError, SearchFailed

    stdout = sys.stdout
    sys.stdout = _Stdout(stdout)
    try:
        with one_line_warnings(argv):
            parser = build_parser()
            interrupts.stop_if_requested()      # one that a callback swallowed while importing
            args = parser.parse_args(argv)
            args.stealsearch_argv = argv
            announce_compiles(args)             # a first run's kernel compiles say so, once
            code = args.func(args)
            sys.stdout.flush()
            sig = interrupts.received_signal()
            if sig is not None:     # the search stopped on a stop signal and printed its result
                return 128 + sig
        code = 0 if code is None else int(code)
        # (a checkpoint that was required and failed: the result was printed, exit 1)
        return max(code, int(getattr(args, "exit_status", None) or 0))
    except BrokenPipeError:
        # the reader of our output went away (``stealsearch ... | head -1``): stop quietly,
        # and point stdout at /dev/null so the interpreter's final flush does not complain
        _stdout_to_devnull(stdout)
        return 141
    except OutputError as exc:
        _stdout_to_devnull(stdout)
        sig = interrupts.received_signal()
        if sig is not None:         # (a closed terminal: its SIGHUP is what to report)
            return 128 + sig
        _say(f"stealsearch: error: cannot write the output ({exc})")
        return 1
    except InputError as exc:
        msg = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        if not msg.startswith("stealsearch"):
            msg = f"stealsearch: error: {msg}"
        _say(msg)
        return 2
    except SearchFailed as exc:
        _say(f"stealsearch: search failed: {exc}")
        return 1
    except KeyboardInterrupt:
        return _interrupted(interrupts)
    finally:
        sys.stdout = stdout


def _from_interrupt(exc: BaseException) -> bool:
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
