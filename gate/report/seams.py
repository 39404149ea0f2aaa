"""Renderers for a seam sweep: a rich table (text) and the pinned JSON."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table

from gate.fsutil import display_path
from gate.harness.sweep import FAULTS, Seam, SweepReport, Trial


def render_json(report: SweepReport) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"


def _row(seam: Seam, faults: list[str], trials: dict[tuple[int, str], Trial]) -> list[str]:
    cells = []
    notes: list[str] = []
    for fault in faults:
        trial = trials.get((seam.index, fault))
        if trial is None:
            cells.append("")
            continue
        style = "green" if trial.outcome == "ok" else "red"
        cells.append(f"[{style}]{trial.outcome}[/{style}]")
        if trial.confirms:
            notes.append("confirms " + ", ".join(trial.confirms))
        notes.extend(trial.warnings)
    location = f"{display_path(seam.path)}:{seam.line} in {seam.function}"
    return [str(seam.index), location, seam.source, *cells, "; ".join(dict.fromkeys(notes))]


def _summary(report: SweepReport) -> str:
    failed = len(report.failed)
    summary = f"{len(report.seams)} seams, {len(report.trials)} trials, {failed} failed"
    return f"[red]{summary}[/red]" if failed else summary


def _table(report: SweepReport) -> Table:
    used = {trial.fault for trial in report.trials}
    faults = [fault for fault in FAULTS if fault in used]
    trials = {(trial.seam, trial.fault): trial for trial in report.trials}
    table = Table(title=f"{report.target or 'scenario'}: {len(report.seams)} seams")
    table.add_column("#", justify="right")
    for column in ("location", "source", *faults, "notes"):
        table.add_column(column)
    for seam in report.seams:
        table.add_row(*_row(seam, faults, trials))
    return table


def render_text(report: SweepReport, color: bool = False, width: int = 120) -> str:
    """A table with one row per seam and one column per fault, then what failed and why."""
    table = _table(report)
    console = Console(width=width, color_system="standard" if color else None)
    with console.capture() as capture:
        console.print(table)
        console.print(_summary(report))
        if report.failed:
            console.print(report.failure_text(), markup=False, highlight=False, soft_wrap=True)
    return capture.get()
