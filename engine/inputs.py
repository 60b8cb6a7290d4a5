"""The one validation layer for files a user names: reading inputs, writing outputs.

Every reader of every problem package opens its file through :func:`read_input_bytes`
(binary formats) or :func:`read_input_text` (text formats), and every command that
writes a file checks the path with :func:`check_output_path` before it computes
anything and writes through :func:`write_output_text`.  So the first hour of a user
meets the same one-line messages everywhere:

* a missing file is ``PATH: no such file``, a directory ``PATH: is a directory, not a file``;
* a gzip file (``.gz``, or the gzip magic bytes) is decompressed transparently;
  a corrupt one is ``PATH: not a valid gzip file (...)``;
* binary data where text is expected is ``PATH: binary data, not a text file`` (raw
  bytes never reach the message);
* an output path in a missing or unwritable directory is refused before the work
  starts, as ``cannot write PATH: ...``.

Each function takes the exception class to raise (a subclass of
:class:`~stealsearch.engine.errors.InputError`), so a problem's readers keep their own error type.

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
stealsearch.engine.errors.InputError: ... is a directory, not a file
>>> print(shown(b"ab\\x00\\xff" * 20, limit=8))
'ab\\x00\\xffab\\x00\\xff...'
"""
from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from .errors import InputError

GZIP_MAGIC = b"\x1f\x8b"

#: Decompressed inputs larger than this are refused (a gzip bomb should not eat the memory).
MAX_DECOMPRESSED_BYTES = 4 << 30


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


def read_input_bytes(path, error: type[InputError] = InputError) -> bytes:
    """The bytes of the file at ``path`` (gunzipped when it is gzip), or one clear
    ``error`` naming the path."""
    p = Path(os.fspath(path))
    try:
        if p.is_dir():
            raise error(f"{path}: is a directory, not a file")
        data = p.read_bytes()
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except PermissionError:
        raise error(f"{path}: permission denied") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__})") from None
    if data[:2] == GZIP_MAGIC:
        try:
            with gzip.GzipFile(fileobj=_BytesReader(data)) as fh:
                data = fh.read(MAX_DECOMPRESSED_BYTES + 1)
        except (OSError, EOFError, zlib.error) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
            raise error(f"{path}: not a valid gzip file ({shown(reason, 60)[1:-1]})") from None
        if len(data) > MAX_DECOMPRESSED_BYTES:
            raise error(f"{path}: decompresses to more than {MAX_DECOMPRESSED_BYTES >> 30} GiB")
    elif p.suffix.lower() == ".gz":
        raise error(f"{path}: named .gz but not a gzip file")
    return data


def _BytesReader(data: bytes):
    import io

    return io.BytesIO(data)


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
