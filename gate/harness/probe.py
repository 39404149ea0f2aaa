"""The probe around each task's coroutine: counts seams, names them, injects one fault.

Every task the scenario runs (its main task and the children it starts) gets its coroutine
wrapped in a `Probe`, a `collections.abc.Coroutine` that forwards `send`/`throw` and records each
yield as a seam in the run's `Trace`. Seams are numbered across all tasks in the order they
happen. At seam k the trace injects the run's fault into the task that reached it: a cancel
through the backend (from inside the k-th `send`, so it lands exactly at that seam), or an
exception thrown in when that task resumes.
"""

from __future__ import annotations

import asyncio
import collections
import collections.abc
import gc
import inspect
import linecache
import os
import re
import sys
import sysconfig
from collections.abc import Callable
from typing import Any

from gate.seamdata import Frame, Seam

_STDLIB = sysconfig.get_paths()["stdlib"]
_HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))
_ASYNC_GEN_AWAITABLES = {"async_generator_asend", "async_generator_athrow"}
_LIBRARIES = ("trio", "anyio", "outcome", "sniffio", "exceptiongroup")
_LIBRARY_PARTS = tuple(f"{os.sep}site-packages{os.sep}{name}{os.sep}" for name in _LIBRARIES)
# 3.13.0 names a task created through a task factory "None" (fixed in 3.13.1).
_DEFAULT_TASK_NAME = re.compile(r"Task-\d+|None")


class InjectedFault(Exception):
    """The exception the harness throws into a scenario at a seam (the `error` fault)."""


class InjectedKeyboardInterrupt(KeyboardInterrupt):
    """The KeyboardInterrupt the harness throws in at a seam (the `keyboard-interrupt` fault)."""


def _is_user_code(filename: str) -> bool:
    if filename.startswith("<"):
        return False
    absolute = os.path.abspath(filename)
    if absolute.startswith(_HARNESS_DIR):
        return False
    if absolute.startswith(_STDLIB) and "site-packages" not in absolute:
        return False
    return not any(part in absolute for part in _LIBRARY_PARTS)


def _qualname(frame: Any) -> str:
    code = frame.f_code
    qualname = getattr(code, "co_qualname", None)  # 3.11+
    if qualname is not None:
        return str(qualname)
    owner = frame.f_locals.get("self", frame.f_locals.get("cls"))
    if owner is not None and code.co_varnames[:1] in (("self",), ("cls",)):
        cls = owner if isinstance(owner, type) else type(owner)
        return f"{cls.__qualname__}.{code.co_name}"
    return str(code.co_name)


def _awaited(current: Any) -> Any:
    """What a suspended coroutine, generator or async generator is waiting on, if anything."""
    following = (
        getattr(current, "cr_await", None)
        or getattr(current, "gi_yieldfrom", None)
        or getattr(current, "ag_await", None)
    )
    if following is None and type(current).__name__ in _ASYNC_GEN_AWAITABLES:
        # `async for` awaits an asend/athrow object, which does not expose its generator; the
        # garbage collector's view of its references does.
        following = next(
            (ref for ref in gc.get_referents(current) if inspect.isasyncgen(ref)), None
        )
    return following


def _frames(coroutine: Any) -> list[Frame]:
    """The frames of a suspended await chain, outermost first."""
    frames = []
    current = coroutine
    for _ in range(1000):
        frame = (
            getattr(current, "cr_frame", None)
            or getattr(current, "gi_frame", None)
            or getattr(current, "ag_frame", None)
        )
        if frame is not None:
            frames.append(Frame(frame.f_code.co_filename, frame.f_lineno, _qualname(frame)))
        current = _awaited(current)
        if current is None:
            break
    return frames


def name_seam(index: int, coroutine: Any, task: str) -> Seam:
    """The seam a suspended coroutine stands at, named by its innermost frame of user code."""
    frames = _frames(coroutine)
    user = [frame for frame in frames if _is_user_code(frame.path)]
    chosen = user[-1] if user else (frames[-1] if frames else Frame("?", 0, "?"))
    source = linecache.getline(chosen.path, chosen.line).strip() if chosen.line else ""
    return Seam(index, chosen.path, chosen.line, chosen.function, source, tuple(user), task)


def _without_module(name: str) -> str:
    """`pkg.mod.Class.method` -> `Class.method` when `pkg.mod` is an imported module."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        if ".".join(parts[:cut]) in sys.modules:
            return ".".join(parts[cut:])
    return name


def is_cancel(error: BaseException | None, cancel_types: tuple[type[BaseException], ...]) -> bool:
    """A cancel of the backend's kind, or an exception group that holds only such cancels."""
    if error is None:
        return False
    if isinstance(error, cancel_types):
        return True
    members = getattr(error, "exceptions", None)
    if not isinstance(members, tuple) or not members:
        return False
    return all(is_cancel(member, cancel_types) for member in members)


class Trace:
    """One run: its seams across every task and the fault it injects at seam `at`.

    `cancel(probe)` is the backend's cancel, set by the runner: `task.cancel()` of the probe's
    task on asyncio, the scenario's task group's scope on trio and anyio.
    """

    def __init__(self, fault: str | None, at: int) -> None:
        self.fault = fault
        self.at = at
        self.seams: list[Seam] = []
        self.target: Probe | None = None  # the probe the fault went into
        self.injected: list[BaseException] = []  # the fault's exceptions, as delivered
        self.main: Probe | None = None
        self.cancel: Callable[[Probe], None] = lambda probe: None
        self._second_cancel_sent = False
        self._labels: collections.Counter[str] = collections.Counter()

    @property
    def reached(self) -> bool:
        return self.target is not None

    def label(self, probe: Probe) -> str:
        """A name for the probe's task that is the same in every run of the scenario."""
        if probe is self.main:
            return "main"
        name = probe.task_name()
        if not name or _DEFAULT_TASK_NAME.fullmatch(name):
            name = str(getattr(probe.coroutine, "__qualname__", "task"))
        name = _without_module(name)
        self._labels[name] += 1
        count = self._labels[name]
        return name if count == 1 else f"{name}#{count}"

    def on_yield(self, probe: Probe) -> None:
        seam = name_seam(len(self.seams) + 1, probe.coroutine, probe.label)
        self.seams.append(seam)
        if seam.index == self.at and self.target is None:
            self._inject(probe)
        elif (
            self.fault == "cancel-twice"
            and probe is self.target
            and self.injected
            and not self._second_cancel_sent
        ):
            self._second_cancel_sent = True
            self.cancel(probe)

    def _inject(self, probe: Probe) -> None:
        self.target = probe
        if self.fault in ("cancel", "cancel-twice"):
            self.cancel(probe)
        elif self.fault == "error":
            probe.throw_next = InjectedFault(f"injected at seam {self.at}")
        elif self.fault == "keyboard-interrupt":
            probe.throw_next = InjectedKeyboardInterrupt(f"injected at seam {self.at}")

    def on_throw(self, probe: Probe, error: BaseException) -> None:
        """An exception going into a probe: the injected cancel, as the backend delivers it."""
        expected = 2 if self._second_cancel_sent else 1
        if (
            probe is self.target
            and isinstance(error, asyncio.CancelledError)
            and len(self.injected) < expected
        ):
            self.injected.append(error)


class Probe(collections.abc.Coroutine):  # type: ignore[type-arg]
    """Forwards to one task's coroutine; reports each yield to the trace."""

    def __init__(self, coroutine: Any, trace: Trace, task_name: Callable[[], str]) -> None:
        self.coroutine = coroutine
        self.trace = trace
        self.task_name = task_name
        self.task: Any = None
        self.throw_next: BaseException | None = None
        self.returned = False
        self.raised: BaseException | None = None
        self._label: str | None = None

    @property
    def label(self) -> str:
        if self._label is None:
            self._label = self.trace.label(self)
        return self._label

    def _step(self, call: Callable[[], Any]) -> Any:
        try:
            yielded = call()
        except StopIteration:
            self.returned = True
            raise
        except BaseException as error:
            self.raised = error
            raise
        self.trace.on_yield(self)
        return yielded

    def send(self, value: Any) -> Any:
        if self.throw_next is not None:
            error, self.throw_next = self.throw_next, None
            self.trace.injected.append(error)
            return self._step(lambda: self.coroutine.throw(error))
        return self._step(lambda: self.coroutine.send(value))

    def throw(self, typ: Any, value: Any = None, traceback: Any = None) -> Any:
        error = typ if isinstance(typ, BaseException) else (value if value is not None else typ())
        self.throw_next = None  # the task resumed with an exception of its own
        self.trace.on_throw(self, error)
        return self._step(lambda: self.coroutine.throw(error))

    def close(self) -> None:
        self.coroutine.close()

    def __await__(self) -> Any:
        return self

    def __next__(self) -> Any:
        return self.send(None)

    def __getattr__(self, name: str) -> Any:
        # cr_frame, cr_running, cr_await, __qualname__...: what the event loop, trio, anyio and
        # inspect.getcoroutinestate() read from a task's coroutine.
        if name == "coroutine":
            raise AttributeError(name)
        return getattr(self.coroutine, name)
