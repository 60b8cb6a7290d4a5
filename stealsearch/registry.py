"""The one registry of problem packages, ours and anyone's: the entry-point group
``stealsearch.problems``, where an entry point names a package (ours are declared in
pyproject.toml as a third party declares its own: docs/writing-a-problem.md).

A package's faces are found by their file names, each optional: ``cli.py``
(``register(subparsers)``: its sub-commands), ``demo.py`` (``tour(client, workers) ->
bool``: its section of the tour), ``sweep_items.py`` (its sweep item kinds: the public
functions there named after the problem, so that each problem owns the kind names that
start with its own).  The registry is data: nothing of a package is imported before one
of its faces is needed, and ``stealsearch --version`` loads none.

Order: ours in the tour's order (:data:`TOUR`), then the others by name.  A plug-in that
clashes or fails is refused or skipped with one :class:`PlugInWarning` line, and the rest
works (:func:`accept`, :func:`usable`, :func:`register_commands`); our own packages are
not guarded: an error in one is a bug of ours and surfaces as one.  Without our metadata
(a source tree never installed, or one installed from an older pyproject.toml), ours are
the sub-packages of ``stealsearch.problems`` found on disk, and plug-ins still come from
their entry points.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import re
import warnings
from dataclasses import dataclass
from types import ModuleType
from typing import Callable

#: the entry-point group a problem package is declared in
GROUP = "stealsearch.problems"
#: the distribution whose entry points are ours
OURS = "stealsearch"
#: our problems in the order of the tour (the engine's oracle first, then the seed papers)
TOUR = ("uts", "clique", "liquid", "hrelation", "commclust", "twolevel")
#: the application's own commands: no problem may take them
BUILTIN_COMMANDS = ("demo", "sweep", "reproduce", "resume")
#: the file names of a package's faces (modules of the package)
CLI, DEMO, SWEEP_ITEMS = "cli", "demo", "sweep_items"

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\Z")


class PlugInWarning(UserWarning):
    """A problem package that was refused or skipped (the rest works without it)."""


class CommandTaken(Exception):
    """A problem's ``register`` asked for a command that another one has."""


@dataclass(frozen=True)
class ProblemPackage:
    """One registered problem package."""

    name: str            #: the entry point's name: its command, the prefix of its kinds
    package: str         #: the module the entry point names
    distribution: str    #: the distribution that declares it, with its version
    ours: bool           #: declared by stealsearch itself

    def face(self, face: str) -> ModuleType | None:
        """The package's module ``face`` (:data:`CLI`, :data:`DEMO`, :data:`SWEEP_ITEMS`),
        imported now, or ``None`` when the package has no such file.  Any other import
        error (the package itself missing, a dependency of the face) is raised."""
        module = f"{self.package}.{face}"
        try:
            return importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name == module:
                return None
            raise

    @property
    def label(self) -> str:
        return f"'{self.name}' ({self.distribution})"


# -- which packages ----------------------------------------------------------------------

@functools.cache
def problems() -> tuple[ProblemPackage, ...]:
    """The registered problem packages, in order (see the module docstring); the refused
    ones are warned about, once per process.

    >>> [p.name for p in problems()][:3]
    ['uts', 'clique', 'liquid']
    """
    from importlib.metadata import entry_points

    accepted, refusals = accept(entry_points(group=GROUP), _our_packages_on_disk)
    for line in refusals:
        _warn(line)
    return accepted


def accept(entry_points, ours_on_disk: Callable[[], list[str]] | None = None):
    """Which entry points of the group become problems, and in what order.

    Ours (the entry points of the ``stealsearch`` distribution) come first, in the order
    of :data:`TOUR` (one missing there after them, by name), then the others by name.  A
    plug-in is refused when its name is not a lower-case Python identifier (it is a
    command, and the prefix of its item kinds), is one of ours or of
    :data:`BUILTIN_COMMANDS`, or extends another problem's name with ``_`` (their kinds'
    names would mix); when its entry point names no module; and when two distributions
    declare its name (both are refused: neither is preferred in silence).

    Parameters
    ----------
    entry_points : iterable
        ``importlib.metadata`` entry points (``name``, ``value``, ``dist``).
    ours_on_disk : callable, optional
        The names of our packages, asked only when no entry point is ours.

    Returns
    -------
    accepted : tuple of ProblemPackage
        In order.
    refusals : list of str
        One line per refused entry point.
    """
    declared: dict[str, list[ProblemPackage]] = {}
    refusals = []
    for ep in entry_points:
        dist = getattr(ep, "dist", None)
        dist_name = dist.name if dist is not None else "an unnamed distribution"
        where = f"{dist_name} {dist.version}" if dist is not None else dist_name
        p = ProblemPackage(ep.name, ep.value.strip(), where, dist_name == OURS)
        if not p.ours and not _NAME.match(p.name):
            refusals.append(f"plug-in {p.label} refused: its name is not a lower-case "
                            "Python identifier (it is a command and the prefix of its "
                            "item kinds)")
        elif not _MODULE.match(p.package):
            refusals.append(f"plug-in {p.label} refused: its entry point names "
                            f"{p.package!r}, not a package (write the module's name)")
        else:
            declared.setdefault(p.name, []).append(p)
    if not any(p.ours for ps in declared.values() for p in ps) and ours_on_disk is not None:
        for name in ours_on_disk():
            declared.setdefault(name, []).append(
                ProblemPackage(name, f"stealsearch.problems.{name}", OURS, True))
    accepted = []
    for name, ps in declared.items():
        mine = [p for p in ps if p.ours]
        others = [p for p in ps if not p.ours]
        if mine:
            accepted.append(mine[0])
            refusals += [f"plug-in {p.label} refused: '{name}' is one of stealsearch's own "
                         "problems" for p in others]
        elif name in BUILTIN_COMMANDS:
            refusals += [f"plug-in {p.label} refused: '{name}' is a stealsearch command"
                         for p in others]
        elif len(others) > 1:
            refusals.append(f"plug-in '{name}' refused: declared by "
                            + " and by ".join(p.distribution for p in others))
        else:
            accepted.append(others[0])
    accepted.sort(key=lambda p: (not p.ours, _tour_rank(p.name), p.name))
    # a name that extends an earlier one with "_" would share its item kinds' names
    kept: list[ProblemPackage] = []
    for p in accepted:
        prefix = next((q for q in kept if p.name.startswith(q.name + "_")
                       or q.name.startswith(p.name + "_")), None)
        if prefix is not None and not p.ours:
            refusals.append(f"plug-in {p.label} refused: its name extends '{prefix.name}' "
                            f"(item kinds named '{prefix.name}_...' are {prefix.name}'s)")
        else:
            kept.append(p)
    return tuple(kept), refusals


def _tour_rank(name: str) -> int:
    return TOUR.index(name) if name in TOUR else len(TOUR)


def _our_packages_on_disk() -> list[str]:
    import pkgutil

    import stealsearch.problems

    return sorted(m.name for m in pkgutil.iter_modules(stealsearch.problems.__path__)
                  if m.ispkg)


# -- a plug-in is whole or out -------------------------------------------------------------

#: plug-in name -> why it is out (None: checked and in), for this process
_checked: dict[str, str | None] = {}


def _warn(line: str) -> None:
    warnings.warn(line, PlugInWarning, stacklevel=3)


def _skip(p: ProblemPackage, why: str) -> None:
    if _checked.get(p.name) is None:
        _checked[p.name] = why
        _warn(f"plug-in {p.label} skipped: {why}")


def _failure(exc: BaseException) -> str:
    """One line for a plug-in's failure; a Ctrl-C that arrived meanwhile (recorded by the
    command's handlers, perhaps wrapped by the import it interrupted) is raised instead."""
    from stealsearch.engine.core.stop_request import stop_if_requested

    stop_if_requested()
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def usable(p: ProblemPackage) -> bool:
    """Are ``p``'s ``cli.py`` and ``sweep_items.py`` importable (ours: always, unguarded)?
    A plug-in that fails is skipped from then on, with one warning line."""
    if p.ours:
        return True
    if p.name not in _checked:
        try:
            if not hasattr(importlib.import_module(p.package), "__path__"):
                _skip(p, f"{p.package} is a module, not a package of faces")
                return False
            for face in (CLI, SWEEP_ITEMS):
                p.face(face)
        except Exception as exc:  # noqa: BLE001 - anything a plug-in raises: skip it
            _skip(p, f"importing it failed: {_failure(exc)}")
        else:
            _checked[p.name] = None
    return _checked[p.name] is None


# -- the faces ---------------------------------------------------------------------------

class _Commands:
    """The sub-parsers action as one problem's ``register`` sees it: ``add_parser``
    refuses a command name that is taken, and remembers the names it gave."""

    def __init__(self, action, owner: str, taken: dict):
        self._action, self._owner, self._taken = action, owner, taken
        self.added: list[str] = []

    def add_parser(self, name, **kwargs):
        names = [name, *kwargs.get("aliases", ())]
        for n in names:
            if n in self._taken:
                raise CommandTaken(f"its command '{n}' is taken ({self._taken[n]})")
        parser = self._action.add_parser(name, **kwargs)
        for n in names:
            self._taken[n] = self._owner
            self.added.append(n)
        return parser

    def withdraw(self) -> None:
        """Remove the commands this problem added (its ``register`` failed half-way);
        argparse has no public way to, hence its two private tables."""
        for n in self.added:
            self._action.choices.pop(n, None)
            self._taken.pop(n, None)
        self._action._choices_actions[:] = [a for a in self._action._choices_actions
                                            if a.dest not in self.added]

    def __getattr__(self, attr):
        return getattr(self._action, attr)


def register_commands(subparsers) -> None:
    """Every problem's sub-commands (its ``cli.py``'s ``register``), in order, into the
    ``stealsearch`` parser's sub-parsers.  A plug-in whose ``register`` raises, or asks for
    a command that is taken (ours, the application's, an earlier plug-in's), is withdrawn
    and skipped with one warning line."""
    taken = {n: "a stealsearch command" for n in (*BUILTIN_COMMANDS, *subparsers.choices)}
    for p in problems():
        if not usable(p):
            continue
        cli = p.face(CLI)
        if cli is None:
            continue
        commands = _Commands(subparsers, f"by stealsearch's {p.name}" if p.ours
                             else f"by plug-in {p.label}", taken)
        if p.ours:
            cli.register(commands)
            continue
        try:
            cli.register(commands)
        except Exception as exc:  # noqa: BLE001 - anything a plug-in raises: skip it
            commands.withdraw()
            _skip(p, str(exc) if isinstance(exc, CommandTaken)
                  else f"its register() failed: {_failure(exc)}")


def tours() -> list[tuple[str, Callable]]:
    """``(name, tour)`` of every problem whose ``demo.py`` has ``tour(client, workers)``,
    in order.  A plug-in's ``demo.py`` that fails to import is left out, and its tour
    that raises counts as a failed section, each with one warning line."""
    out = []
    for p in problems():
        if not usable(p):
            continue
        if p.ours:
            demo = p.face(DEMO)
        else:
            try:
                demo = p.face(DEMO)
            except Exception as exc:  # noqa: BLE001 - anything a plug-in raises
                _warn(f"plug-in {p.label}: its demo.py failed ({_failure(exc)}); its "
                      "section of the tour is left out")
                continue
        tour = getattr(demo, "tour", None)
        if callable(tour):
            out.append((p.name, tour if p.ours else functools.partial(_guarded_tour, p, tour)))
    return out


def _guarded_tour(p: ProblemPackage, tour: Callable, client, workers: int) -> bool:
    try:
        return bool(tour(client, workers))
    except Exception as exc:  # noqa: BLE001 - anything a plug-in raises: a failed section
        _warn(f"plug-in {p.label}: its tour failed: {_failure(exc)}")
        return False


def kinds_of(p: ProblemPackage, module: ModuleType) -> dict[str, str]:
    """``p``'s item kinds in its ``sweep_items`` module: name -> ``"module:function"``."""
    return {name: f"{module.__name__}:{name}" for name, fn in vars(module).items()
            if inspect.isfunction(fn) and fn.__module__ == module.__name__
            and (name == p.name or name.startswith(p.name + "_"))}


@functools.cache
def item_kinds() -> dict[str, str]:
    """Every sweep item kind, in order: name -> ``"module:function"`` (the sweep runner's
    resolver, :func:`stealsearch.engine.app.sweep.load_grid`)."""
    out: dict[str, str] = {}
    for p in problems():
        if usable(p):
            module = p.face(SWEEP_ITEMS)
            if module is not None:
                out.update(kinds_of(p, module))
    return out
