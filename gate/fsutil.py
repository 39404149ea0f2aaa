"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def display_path(path: str | os.PathLike[str]) -> str:
    """A path relative to the current directory, POSIX style, as reports show it."""
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive on Windows
        return Path(path).as_posix()


def atomic_write(path: Path, text: str, encoding: str = "utf-8") -> None:
    """Write `text` to `path` through a temporary file and a rename; raises OSError (and
    UnicodeEncodeError when `encoding` cannot spell the text). Line endings are written as
    they are in `text`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding=encoding, newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o777)
        else:
            os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
