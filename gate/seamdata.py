"""What a seam sweep found, as plain frozen data.

The harness (`gate.harness`) produces these, the seam renderers (`gate.report.seams`) and the
linking to static findings (`gate.seamlink`) read them. This module sits below all three and
imports none of them, so the renderer never imports the harness and the harness never imports
the renderer to describe its own results.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Literal

Fault = Literal["cancel", "cancel-twice", "error", "keyboard-interrupt"]
Backend = Literal["asyncio", "trio", "anyio", "anyio:trio"]

FAULTS: tuple[Fault, ...] = ("cancel", "cancel-twice", "error", "keyboard-interrupt")
DEFAULT_FAULTS: tuple[Fault, ...] = ("cancel", "error")
BACKENDS: tuple[Backend, ...] = ("asyncio", "trio", "anyio", "anyio:trio")

# A trial's problems in the order they are reported: the first one is its outcome. A trial that
# outlived its timeout is "hung" whatever came out of it while it was being torn down.
PROBLEMS = ("error", "hung", "check-failed", "swallowed", "replaced", "diverged")
OUTCOMES = ("ok", *PROBLEMS)


@dataclass(frozen=True)
class Frame:
    """One frame of a suspended await chain."""

    path: str
    line: int
    function: str


@dataclass(frozen=True)
class Seam:
    """Where a task suspended: the innermost frame of the scenario's own code, the chain of the
    scenario's frames down to it (outermost first), and the task it happened in."""

    index: int
    path: str
    line: int
    function: str
    source: str
    frames: tuple[Frame, ...] = ()
    task: str = "main"

    @property
    def where(self) -> tuple[str, int, str, str]:
        """What a re-run must reproduce for this seam to be the same seam."""
        return (self.path, self.line, self.function, self.task)


def case_id(fault: str, seam: Seam) -> str:
    """The name of one trial as a test: `cancel-3-Orchestrator._cleanup:88`."""
    return f"{fault}-{seam.index}-{seam.function}:{seam.line}"


@dataclass(frozen=True)
class Acceptance:
    """An outcome the user declared fine, for every fault or for one (`error:swallowed`)."""

    outcome: str
    fault: str | None = None

    @classmethod
    def parse(cls, text: str) -> Acceptance:
        """`OUTCOME` or `FAULT:OUTCOME`; raises ValueError naming what is unknown."""
        fault, _, outcome = text.strip().rpartition(":")
        if outcome not in PROBLEMS:
            raise ValueError(
                f"{text.strip()!r}: cannot accept {outcome!r}; choose from {', '.join(PROBLEMS)}"
            )
        if fault and fault not in FAULTS:
            raise ValueError(
                f"{text.strip()!r}: unknown fault {fault!r}; choose from {', '.join(FAULTS)}"
            )
        return cls(outcome, fault or None)

    def covers(self, fault: str, problem: str) -> bool:
        return problem == self.outcome and self.fault in (None, fault)

    def __str__(self) -> str:
        return f"{self.fault}:{self.outcome}" if self.fault else self.outcome


@dataclass(frozen=True)
class Trial:
    """One run of the scenario with one fault at one seam, and what the harness made of it.

    `outcome` is the first of `problems` (or "ok"); `accepted` says every problem was one the
    user accepted, so the trial counts as ok.
    """

    seam: int
    fault: str
    outcome: str = "ok"
    problems: tuple[str, ...] = ()
    detail: str = ""
    warnings: tuple[str, ...] = ()
    accepted: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.outcome == "ok" or self.accepted


def _python() -> str:
    return ".".join(map(str, sys.version_info[:3]))


@dataclass(frozen=True)
class SweepReport:
    """Every seam of the clean run and every trial, in seam order then fault order."""

    seams: tuple[Seam, ...]
    trials: tuple[Trial, ...]
    target: str = ""
    backend: str = "asyncio"
    accept: tuple[Acceptance, ...] = ()
    python: str = field(default_factory=_python)
    clean_seconds: float = 0.0
    sweep_seconds: float = 0.0

    @property
    def failed(self) -> list[Trial]:
        """The trials that are neither ok nor accepted."""
        return [trial for trial in self.trials if not trial.ok]

    @property
    def accepted(self) -> list[Trial]:
        return [trial for trial in self.trials if trial.accepted]

    def seam(self, index: int) -> Seam | None:
        return next((seam for seam in self.seams if seam.index == index), None)
