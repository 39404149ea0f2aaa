"""A progress bar for long runs: rich, on stderr, only on a terminal, only after two seconds."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

DELAY = 2.0


def progress_bar(stream: Any = None, delay: float = DELAY) -> Callable[[int, int], None] | None:
    """A `progress(done, total)` callback, or None when stderr is not a terminal."""
    stream = stream if stream is not None else sys.stderr
    if not stream.isatty():
        return None
    started = time.monotonic()
    state: dict[str, Any] = {}

    def progress(done: int, total: int) -> None:
        bar = state.get("bar")
        if bar is None:
            if time.monotonic() - started < delay or done >= total:
                return
            from rich.console import Console
            from rich.progress import Progress

            bar = Progress(console=Console(file=stream), transient=True)
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task("gate check", total=total)
        bar.update(state["task"], completed=done)
        if done >= total:
            bar.stop()

    return progress
