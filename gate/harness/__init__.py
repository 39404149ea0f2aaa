"""The await-seam harness: fire a fault at every seam of a scenario, on asyncio, trio or anyio.

The harness imports neither the static rules nor the renderers to do its work: `sweep()` returns
a `gate.seamdata.SweepReport`; `gate.seamlink` links failing seams to `gate check` findings and
`gate.report.seams` renders a report.
"""

from gate.harness.probe import InjectedFault, InjectedKeyboardInterrupt
from gate.harness.sweep import Options, SweepError, assert_ok, list_seams, run_trial, sweep
from gate.seamdata import (
    BACKENDS,
    DEFAULT_FAULTS,
    FAULTS,
    Acceptance,
    Frame,
    Seam,
    SweepReport,
    Trial,
)

__all__ = [
    "BACKENDS",
    "DEFAULT_FAULTS",
    "FAULTS",
    "Acceptance",
    "Frame",
    "InjectedFault",
    "InjectedKeyboardInterrupt",
    "Options",
    "Seam",
    "SweepError",
    "SweepReport",
    "Trial",
    "assert_ok",
    "list_seams",
    "run_trial",
    "sweep",
]
