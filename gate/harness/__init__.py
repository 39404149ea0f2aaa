"""The await-seam harness: fire a cancel and an exception at every seam of a scenario."""

from gate.harness.sweep import (
    FAULTS,
    InjectedFault,
    Seam,
    SweepError,
    SweepReport,
    Trial,
    sweep,
)

__all__ = ["FAULTS", "InjectedFault", "Seam", "SweepError", "SweepReport", "Trial", "sweep"]
