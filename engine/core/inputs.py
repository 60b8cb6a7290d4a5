"""The one validation layer for files a user names: reading inputs, writing outputs.

Every reader of every problem package opens its file through :func:`read_input_bytes`
(binary formats) or :func:`read_input_text` (text formats), and every command that
writes a file checks the path with :func:`check_output_path` before it computes
anything and writes through :func:`write_output_text`.  So the first hour of a user
meets the same one-line messages everywhere:

* a missing file is ``PATH: no such file``, a directory ``PATH: is a directory, not a file``;
* a gzip file (``.gz``, or the gzip magic bytes) is decompressed transparently, in
  chunks; a corrupt one is ``PATH: not a valid gzip file (...)``;
* every input is bounded: a file (or its decompressed content) larger than
  :func:`max_input_bytes` (1 GiB; ``STEALSEARCH_MAX_INPUT_BYTES=8G`` raises it) is
  refused before it is read whole, and a gzip bomb stops inflating at that size, so no
  input takes more memory than the cap;
* only regular files are read: a FIFO, a character device (``/dev/zero``,
  ``/dev/urandom``), a socket is refused (``STEALSEARCH_ALLOW_SPECIAL_FILES=1`` reads
  them, still under the cap);
* binary data where text is expected is ``PATH: binary data, not a text file`` (raw
  bytes never reach the message);
* an output path in a missing or unwritable directory is refused before the work
  starts, as ``cannot write PATH: ...``.

Each function takes the exception class to raise (a subclass of
:class:`~stealsearch.engine.core.errors.InputError`), so a problem's readers keep their own error type.

>>> import os, tempfile, gzip
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "t.txt.gz")
>>> with gzip.open(p, "wt") as f:
...     _ = f.write("1 2\\n")
>>> read_input_text(p)
'1 2\\n'
>>> read_input_text(d)
Traceback (most recent call last):
...
stealsearch.engine.core.errors.InputError: ... is a directory, not a file
>>> print(shown(b"ab\\x00\\xff" * 20, limit=8))
'ab\\x00\\xffab\\x00\\xff...'
"""
from __future__ import annotations

import gzip
import os
import stat
import zlib
from pathlib import Path

from .errors import InputError

GZIP_MAGIC = b"\x1f\x8b"

#: Inputs (as read, or decompressed) larger than this are refused, unless the environment
#: says otherwise (:func:`max_input_bytes`): a gzip bomb or /dev/zero must not eat memory.
MAX_DECOMPRESSED_BYTES = 1 << 30
#: the environment variables that raise the cap and allow non-regular files
MAX_INPUT_ENV = "STEALSEARCH_MAX_INPUT_BYTES"
SPECIAL_FILES_ENV = "STEALSEARCH_ALLOW_SPECIAL_FILES"
#: bytes read (or inflated) at a time
_CHUNK = 1 << 20


def max_input_bytes(error: type[InputError] = InputError) -> int:
    """The cap on one input's size: ``$STEALSEARCH_MAX_INPUT_BYTES`` (bytes, or with a
    K/M/G/T suffix), else :data:`MAX_DECOMPRESSED_BYTES`.

    >>> import os; os.environ["STEALSEARCH_MAX_INPUT_BYTES"] = "2G"; max_input_bytes()
    2147483648
    >>> del os.environ["STEALSEARCH_MAX_INPUT_BYTES"]; max_input_bytes() == MAX_DECOMPRESSED_BYTES
    True
    """
    text = os.environ.get(MAX_INPUT_ENV, "").strip()
    if not text:
        return MAX_DECOMPRESSED_BYTES
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    unit = scale.get(text[-1:].upper(), 1)
    digits = text[:-1] if unit != 1 else text
    if not (digits.isascii() and digits.isdigit()) or not 0 < int(digits) * unit <= 1 << 50:
        raise error(f"{MAX_INPUT_ENV}={shown(text, 20)[1:-1]}: expected a size in bytes "
                    "such as 4G")
    return int(digits) * unit


def _size(n: int) -> str:
    return f"{n / (1 << 30):g} GiB" if n >= 1 << 30 else f"{n / (1 << 20):g} MiB"


def shown(value, limit: int = 40) -> str:
    """``value`` as a short, printable, one-line quotation for an error message:
    control and non-ASCII bytes escaped, cut at ``limit`` characters."""
    if isinstance(value, (bytes, bytearray)):
        text = bytes(value[:limit]).decode("ascii", errors="backslashreplace")
        cut = len(value) > limit
    else:
        text = str(value)
        cut = len(text) > limit
        text = text[:limit]
    text = text.encode("ascii", errors="backslashreplace").decode("ascii")
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return "'" + text + ("..." if cut else "") + "'"


def _kind(mode: int) -> str | None:
    """What a non-regular file is, for the message (None: a regular file)."""
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def _read_capped(fh, cap: int, path, error, what: str) -> bytes:
    """At most ``cap`` bytes from ``fh``, in chunks; more is one ``error``."""
    parts, total = [], 0
    while True:
        chunk = fh.read(min(_CHUNK, cap + 1 - total))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        total += len(chunk)
        if total > cap:
            raise error(f"{path}: {what} more than {_size(cap)} (the input cap; "
                        f"{MAX_INPUT_ENV}=8G raises it)")


def read_input_bytes(path, error: type[InputError] = InputError) -> bytes:
    """The bytes of the file at ``path`` (gunzipped when it is gzip), or one clear
    ``error`` naming the path.  Bounded by :func:`max_input_bytes` (see the module
    docstring): a larger file is refused from its size, a gzip bomb as soon as it
    inflates past the cap; a non-regular file is refused before it is opened."""
    p = Path(os.fspath(path))
    cap = max_input_bytes(error)
    special = os.environ.get(SPECIAL_FILES_ENV, "") not in ("", "0")
    try:
        st = p.stat()
        if stat.S_ISDIR(st.st_mode):
            raise error(f"{path}: is a directory, not a file")
        kind = _kind(st.st_mode)
        if kind is not None and not special:
            raise error(f"{path}: is {kind}, not a regular file "
                        f"({SPECIAL_FILES_ENV}=1 reads it)")
        if kind is None and st.st_size > cap and p.suffix.lower() != ".gz":
            raise error(f"{path}: {_size(st.st_size)} is more than the input cap of "
                        f"{_size(cap)} ({MAX_INPUT_ENV}=8G raises it)")
        with open(p, "rb") as fh:
            if kind is None and os.fstat(fh.fileno()).st_ino != st.st_ino:
                raise error(f"{path}: changed while it was opened")
            head = fh.read(2)
            if head == GZIP_MAGIC:
                fh.seek(0)
                try:
                    with gzip.GzipFile(fileobj=fh) as gz:
                        return _read_capped(gz, cap, path, error, "decompresses to")
                except (OSError, EOFError, zlib.error) as exc:
                    reason = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
                    raise error(f"{path}: not a valid gzip file "
                                f"({shown(reason, 60)[1:-1]})") from None
            if p.suffix.lower() == ".gz":
                raise error(f"{path}: named .gz but not a gzip file")
            return head + _read_capped(fh, cap - len(head), path, error, "holds")
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except PermissionError:
        raise error(f"{path}: permission denied") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__})") from None


def read_input_text(path, error: type[InputError] = InputError) -> str:
    """The text of the file at ``path`` (UTF-8, a BOM dropped; gzip decompressed), or one
    clear ``error``: binary data and invalid UTF-8 are named, never quoted raw."""
    data = read_input_bytes(path, error)
    if b"\x00" in data:
        raise error(f"{path}: binary data, not a text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{path}: line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x})") from None


#: YAML aliases (``*name``) one document may use, and how deep it may nest: a "billion
#: laughs" file expands exponentially once its lists are walked, a deep one overflows
#: the parser's recursion
MAX_YAML_ALIASES = 1_000
MAX_YAML_DEPTH = 100
#: values a document may hold once its aliases are expanded: a few aliases suffice for a
#: billion laughs (8 levels of 10 aliases each: 10^8 values from 80 aliases), so the
#: count of aliases alone does not bound what a reader walks or an error message prints
MAX_YAML_VALUES = 1_000_000


def _expanded_values(data, limit: int) -> int:
    """The number of values ``data`` holds with every shared container counted each time
    it is referenced (what walking it visits), computed once per distinct container;
    stops counting past ``limit``."""
    sizes: dict[int, int] = {}
    pending = object()

    def size(x) -> int:
        if not isinstance(x, (list, dict)):
            return 1
        known = sizes.get(id(x))
        if known is pending:            # a recursive structure (&a [*a]): unbounded
            return limit + 1
        if known is not None:
            return known
        sizes[id(x)] = pending
        total = 1
        for child in (x.values() if isinstance(x, dict) else x):
            total += size(child)
            if total > limit:
                break
        sizes[id(x)] = total
        return total

    return size(data)


def load_yaml(text: str, where, error: type[InputError] = InputError):
    """``yaml.safe_load(text)``, bounded: more than :data:`MAX_YAML_ALIASES` aliases,
    deeper than :data:`MAX_YAML_DEPTH` levels or more than :data:`MAX_YAML_VALUES` values
    once aliases are expanded is one ``error`` naming ``where``
    (``yaml.YAMLError`` still raised for malformed YAML, for the caller's message).

    >>> load_yaml("a: &x [1, 2]\\nb: *x\\n", "t.yaml")
    {'a': [1, 2], 'b': [1, 2]}
    >>> load_yaml("[" * 200 + "]" * 200, "t.yaml")
    Traceback (most recent call last):
    ...
    stealsearch.engine.core.errors.InputError: t.yaml: nested deeper than 100 levels
    """
    import yaml

    class Loader(yaml.SafeLoader):
        aliases = 0
        depth = 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.events.AliasEvent):
                Loader.aliases += 1
                if Loader.aliases > MAX_YAML_ALIASES:
                    raise error(f"{where}: more than {MAX_YAML_ALIASES:,} YAML aliases "
                                "(*name); refusing to expand them")
            Loader.depth += 1
            try:
                if Loader.depth > MAX_YAML_DEPTH:
                    raise error(f"{where}: nested deeper than {MAX_YAML_DEPTH} levels")
                return super().compose_node(parent, index)
            finally:
                Loader.depth -= 1

    try:
        data = yaml.load(text, Loader=Loader)
    except RecursionError:
        raise error(f"{where}: nested too deeply") from None
    if _expanded_values(data, MAX_YAML_VALUES) > MAX_YAML_VALUES:
        raise error(f"{where}: more than {MAX_YAML_VALUES:,} values once its YAML aliases "
                    "(*name) are expanded; refusing to read it")
    return data


def check_output_path(path, error: type[InputError] = InputError) -> Path:
    """Refuse, before any work, an output path that cannot be written: a directory, a
    missing or unwritable parent directory.  Returns the path."""
    p = Path(os.fspath(path))
    if str(path) == "" or p.is_dir():
        raise error(f"cannot write {path!s}: is a directory" if str(path) else
                    "cannot write '': empty file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise error(f"cannot write {path}: no such directory {str(parent)!r}")
    if not os.access(parent, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise error(f"cannot write {path}: permission denied")
    return p


def write_output_text(path, text: str, error: type[InputError] = InputError) -> None:
    """Write ``text`` to ``path``; an OS failure is one ``error`` line."""
    check_output_path(path, error)
    try:
        Path(os.fspath(path)).write_text(text)
    except OSError as exc:
        raise error(f"cannot write {path}: {exc.strerror or exc.__class__.__name__}") from None


def check_output_dir(path, error: type[InputError] = InputError) -> Path:
    """An output directory: created if missing (with its parents), refused if it is a
    file or cannot be created/written."""
    p = Path(os.fspath(path))
    if p.exists() and not p.is_dir():
        raise error(f"cannot write into {path}: it is a file, not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise error(f"cannot create {path}: {exc.strerror or exc.__class__.__name__}") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise error(f"cannot write into {path}: permission denied")
    return p
