"""Reading data files safely, shared by the embedded and the Spark engine: only regular
files are opened (never a FIFO, a device or a socket), a csv header is parsed with the same
RFC 4180 dialect the engines are given, and no message quotes anything read from a file --
neither a cell nor a name (in a csv without a header line, the names are its first row)."""

from __future__ import annotations

import csv
import hashlib
import io
import os
import stat
import zlib
from pathlib import Path

from ..errors import ParameterError

#: the csv header must lie within the file's first MiB
HEADER_BYTES = 1 << 20


def absent_message(missing: list[str], where: str) -> str:
    """Declared headers absent from the data.  The names the data does have are never
    listed: in a csv without a header line they are its first row, i.e. data."""
    return (f"column(s) {missing} are declared in the schema but absent from {where} (the "
            "names it has are not shown: without a header line they would be data; the "
            "first line of a csv must name the columns)")


def open_regular(path: str | Path, what: str) -> int:
    """A read-only descriptor of ``path``, refused unless it is a regular file.

    ``os.stat`` first, so a FIFO, a device or a socket is never opened (opening a FIFO
    blocks until a writer appears); then ``O_NONBLOCK`` and ``fstat`` on the descriptor,
    so a name swapped for one between the two calls cannot block either."""
    try:
        st = os.stat(path)
    except (OSError, ValueError) as exc:
        raise ParameterError(f"{what} {str(path)!r} cannot be opened: "
                             f"{getattr(exc, 'strerror', None) or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ParameterError(f"{what} {str(path)!r} is not a regular file (a directory, "
                             "FIFO, device or socket is never read)")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ParameterError(f"{what} {str(path)!r} cannot be opened: {exc.strerror}") \
            from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ParameterError(f"{what} {str(path)!r} is not a regular file (a directory, "
                             "FIFO, device or socket is never read)")
    return fd


def withheld(path: Path, fmt: str) -> ParameterError:
    return ParameterError(
        f"data file {str(path)!r} could not be read as {fmt} (the reader's message is "
        "withheld because it may quote the data)"
    )


def sha256_fd(fd: int) -> str:
    h = hashlib.sha256()
    off = 0
    while True:
        chunk = os.pread(fd, 1 << 22, off)
        if not chunk:
            return h.hexdigest()
        h.update(chunk)
        off += len(chunk)


def copy_fd(fd: int, dest: str) -> None:
    """Copy the descriptor's bytes into a new private file (mode 0600)."""
    out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        off = 0
        while True:
            chunk = os.pread(fd, 1 << 22, off)
            if not chunk:
                return
            os.write(out, chunk)
            off += len(chunk)
    finally:
        os.close(out)


def csv_header(fd: int, gz: bool, delim: str, path: Path) -> list[str]:
    """The header record, parsed with the same dialect DuckDB is given (RFC 4180)."""
    raw = os.pread(fd, HEADER_BYTES, 0)
    if gz:
        try:  # a prefix of the stream decompresses to a prefix of the text
            raw = zlib.decompressobj(wbits=31).decompress(raw, HEADER_BYTES)
        except zlib.error:
            raise withheld(path, "gzip-compressed CSV") from None
    try:
        text = raw.decode("utf-8-sig", errors="strict")
    except UnicodeDecodeError as exc:  # possibly a multi-byte char cut at the boundary
        text = raw[: exc.start].decode("utf-8-sig") if exc.start > 0 else ""
    rows = csv.reader(io.StringIO(text, newline=""), delimiter=delim, quotechar='"',
                      doublequote=True, strict=False)
    try:
        header = next(rows)
    except (StopIteration, csv.Error):
        header = []
    if not header or ("\n" not in text and len(raw) >= HEADER_BYTES):
        raise ParameterError(f"data file {str(path)!r} has no header line (the first line "
                             "must name the columns, within 1 MiB)")
    return header
