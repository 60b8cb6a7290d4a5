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
