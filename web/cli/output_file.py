"""A file a command writes for its reader (``--junit FILE``): whole or not at all, never through a link.

The data goes to a temporary file beside the target, then takes its name (``os.replace``), so a reader
never sees half a file and a full disk leaves the old one. A symlink is refused rather than followed (its
target could be any file the user can write), and so is anything but a regular file (a FIFO would block
the write until someone reads it, a folder cannot be replaced).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


class OutputFileError(Exception):
    """The file could not be written; the message says which file and why, in one line."""


def write_file(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically; OutputFileError (one line) when it is refused or fails."""
    target = Path(path)
    try:
        found = target.lstat()
    except FileNotFoundError:
        found = None
    except OSError as exc:
        raise OutputFileError(f"cannot write {target}: {exc.strerror or exc}") from None
    if found is not None and stat.S_ISLNK(found.st_mode):
        raise OutputFileError(f"refusing to write {target}: it is a symbolic link")
    if found is not None and not stat.S_ISREG(found.st_mode):
        raise OutputFileError(f"refusing to write {target}: it is not a regular file")
    folder = target.parent
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputFileError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        Path(temporary).replace(target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            Path(temporary).unlink()
        raise OutputFileError(f"cannot write {target}: {exc.strerror or exc}") from None
