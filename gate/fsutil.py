"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path


def display_path(path: str | os.PathLike[str]) -> str:
    """A path relative to the current directory, POSIX style, as reports show it."""
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive on Windows
        return Path(path).as_posix()


# A temporary file is named after its target and the writing process:
# `.complexity.json.<pid>.<random>.tmp`, so a later run can tell a killed writer's leftover
# from a write in progress. Before, it was `.complexity.json.<8 random characters>`.
TEMPORARY = re.compile(r"(?P<pid>\d+)\.[a-z0-9_]+\.tmp")
UNNAMED_TEMPORARY = re.compile(r"[a-z0-9_]{8}")
STALE_AFTER_SECONDS = 10.0  # no write takes this long; a younger file may be another host's
UNNAMED_STALE_AFTER_SECONDS = 3600.0


def atomic_write(path: Path, data: str | bytes, durable: bool = True) -> None:
    """Write `data` to `path` through a temporary file beside it and a rename, after removing
    what killed writers left there; `durable` syncs the file first. Raises OSError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    handle, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data.encode("utf-8") if isinstance(data, str) else data)
            if durable:
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


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Remove the temporary files a killed `atomic_write(path, ...)` left beside `path`: those
    whose process is gone (and that are over ten seconds old). Returns what it removed; a file
    it cannot remove is left alone."""
    prefix = f".{path.name}."
    now = time.time()
    removed = []
    try:
        entries = [entry for entry in os.scandir(path.parent) if entry.name.startswith(prefix)]
    except OSError:
        return []
    for entry in entries:
        try:
            if _is_stale(
                entry.name[len(prefix) :], now - entry.stat(follow_symlinks=False).st_mtime
            ):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def _is_stale(rest: str, age: float) -> bool:
    named = TEMPORARY.fullmatch(rest)
    if named is not None and os.name == "posix":
        return age > STALE_AFTER_SECONDS and not _process_exists(int(named["pid"]))
    # elsewhere os.kill(pid, 0) is no harmless probe: go by age alone
    unnamed = named is not None or UNNAMED_TEMPORARY.fullmatch(rest) is not None
    return unnamed and age > UNNAMED_STALE_AFTER_SECONDS


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process, for instance
        return True
    return True
