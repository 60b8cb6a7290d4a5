"""Exceptions the engine and the problems raise on purpose.

Everything a user can get wrong (a malformed file, an out-of-range option) raises a
subclass of :class:`InputError`; the CLI turns it into one line on stderr and exit
code 2.  Anything else is a bug and keeps its traceback.
"""


class InputError(ValueError):
    """Bad input from the user: a file, a parameter, a cluster address."""


class ClusterUnavailable(InputError):
    """The cluster the user named cannot be used: the scheduler does not answer, died
    while we connected, or has no workers within the wait."""


class SearchFailed(RuntimeError):
    """A parallel search could not finish (a worker died, a peer stopped answering)."""


class InputWarning(UserWarning):
    """Input the reader accepted after dropping something (a self-loop, a duplicate edge);
    the command prints it as one ``stealsearch: warning: ...`` line."""


def first_line(exc: BaseException) -> str:
    """One line saying what ``exc`` was about: its message's first line (an exception of
    one argument: that argument, not its repr), else its class name."""
    text = str(exc.args[0]) if len(exc.args) == 1 else str(exc)
    return text.strip().splitlines()[0] if text.strip() else exc.__class__.__name__
