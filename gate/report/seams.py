"""Renderers for a seam sweep: text (a rich table), the pinned JSON, JUnit XML and markdown.

Every way a sweep is shown lives here, the failure listing that `assert_ok` and the pytest plugin
raise included. Renderers read `gate.seamdata` only; the labels of the static findings a failing
seam confirms come in from the caller (`gate.seamlink` links them), keyed by seam number.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from gate.fsutil import display_path
from gate.seamdata import FAULTS, Seam, SweepReport, Trial, case_id

MARKER = "<!-- gate-seams -->"
Confirms = Mapping[int, Sequence[str]]


@dataclass(frozen=True)
class SeamContext:
    """A report and what the caller knows about it: the findings each seam confirms."""

    report: SweepReport
    confirms: Confirms = field(default_factory=dict)
    color: bool = False
    width: int = 120

    def confirmed_by(self, trial: Trial) -> list[str]:
        """The static findings a failing trial confirms; none for a trial that is ok."""
        return [] if trial.ok else list(self.confirms.get(trial.seam, ()))


def _faults(report: SweepReport) -> list[str]:
    used = {trial.fault for trial in report.trials}
    return [fault for fault in FAULTS if fault in used]


def _outcome(trial: Trial) -> str:
    return f"{trial.outcome} (accepted)" if trial.accepted else trial.outcome


def _where(seam: Seam | None) -> str:
    """`orchestrator.py:31 in Sandbox.run_command (via Orchestrator.run:60, ...) -> source`."""
    if seam is None:
        return "?"
    task = f" [task {seam.task}]" if seam.task != "main" else ""
    callers = [f"{frame.function}:{frame.line}" for frame in seam.frames[:-1]]
    via = f" (via {', '.join(callers)})" if callers else ""
    return f"{Path(seam.path).name}:{seam.line} in {seam.function}{task}{via} -> {seam.source}"


def summary(report: SweepReport) -> str:
    """`4 seams, 8 trials, 2 failed` (and how many were accepted)."""
    accepted = f", {len(report.accepted)} accepted" if report.accepted else ""
    return (
        f"{len(report.seams)} seams, {len(report.trials)} trials, "
        f"{len(report.failed)} failed{accepted}"
    )


def trial_line(report: SweepReport, trial: Trial, confirms: Confirms | None = None) -> str:
    """One trial on one line: seam, fault, outcome, where, why, what it confirms."""
    labels = SeamContext(report, confirms or {}).confirmed_by(trial)
    confirmed = f" (confirms {', '.join(labels)})" if labels else ""
    outcome = _outcome(trial)
    where = _where(report.seam(trial.seam))
    return f"seam {trial.seam} [{trial.fault}] {outcome}: {where}: {trial.detail}{confirmed}"


def failure_text(report: SweepReport, confirms: Confirms | None = None) -> str:
    """A header, then every failing trial on one line."""
    lines = [f"{len(report.failed)} of {len(report.trials)} seam trials failed:"]
    lines += [f"  {trial_line(report, trial, confirms)}" for trial in report.failed]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# text


def _cell(trial: Trial | None) -> str:
    if trial is None:
        return ""
    style = "green" if trial.outcome == "ok" else ("yellow" if trial.accepted else "red")
    return f"[{style}]{_outcome(trial)}[/{style}]"


def _notes(context: SeamContext, trials: list[Trial]) -> str:
    notes: list[str] = []
    for trial in trials:
        labels = context.confirmed_by(trial)
        if labels:
            notes.append("confirms " + ", ".join(labels))
        notes.extend(trial.warnings)
    return "; ".join(dict.fromkeys(notes))


def _text_row(context: SeamContext, seam: Seam, faults: list[str], tasks: bool) -> list[str]:
    by_key = {(t.seam, t.fault): t for t in context.report.trials if t.seam == seam.index}
    trials = [by_key[(seam.index, fault)] for fault in faults if (seam.index, fault) in by_key]
    location = f"{display_path(seam.path)}:{seam.line} in {seam.function}"
    cells = [seam.task, location, seam.source] if tasks else [location, seam.source]
    outcomes = [_cell(by_key.get((seam.index, fault))) for fault in faults]
    return [str(seam.index), *cells, *outcomes, _notes(context, trials)]


def _table(context: SeamContext) -> Any:
    from rich.table import Table

    report = context.report
    faults = _faults(report)
    tasks = any(seam.task != "main" for seam in report.seams)
    backend = f" ({report.backend})" if report.backend != "asyncio" else ""
    table = Table(title=f"{report.target or 'scenario'}: {len(report.seams)} seams{backend}")
    table.add_column("#", justify="right")
    columns = ("task", "location", "source") if tasks else ("location", "source")
    for column in (*columns, *faults, "notes"):
        table.add_column(column)
    for seam in report.seams:
        table.add_row(*_text_row(context, seam, faults, tasks))
    return table


def render_text(context: SeamContext) -> str:
    """A table with one row per seam and one column per fault, then what failed and why."""
    from rich.console import Console

    report = context.report
    console = Console(width=context.width, color_system="standard" if context.color else None)
    with console.capture() as capture:
        console.print(_table(context))
        text = summary(report)
        console.print(f"[red]{text}[/red]" if report.failed else text)
        if report.failed:
            failures = failure_text(report, context.confirms)
            console.print(failures, markup=False, highlight=False, soft_wrap=True)
    return capture.get()


# ---------------------------------------------------------------------------------------------
# json


def _seam_json(seam: Seam) -> dict[str, Any]:
    return {
        "index": seam.index,
        "task": seam.task,
        "path": display_path(seam.path),
        "line": seam.line,
        "function": seam.function,
        "source": seam.source,
        "frames": [
            {"path": display_path(frame.path), "line": frame.line, "function": frame.function}
            for frame in seam.frames
        ],
    }


def _trial_json(context: SeamContext, trial: Trial) -> dict[str, Any]:
    return {
        "seam": trial.seam,
        "fault": trial.fault,
        "outcome": trial.outcome,
        "accepted": trial.accepted,
        "problems": list(trial.problems),
        "detail": trial.detail,
        "warnings": list(trial.warnings),
        "confirms": context.confirmed_by(trial),
    }


def render_json(context: SeamContext) -> str:
    """The pinned JSON document, version 1 (keys are only ever added)."""
    report = context.report
    document = {
        "version": 1,
        "python": report.python,
        "backend": report.backend,
        "target": report.target,
        "accept": [str(acceptance) for acceptance in report.accept],
        "seams": [_seam_json(seam) for seam in report.seams],
        "trials": [_trial_json(context, trial) for trial in report.trials],
        "summary": {
            "seams": len(report.seams),
            "trials": len(report.trials),
            "failed": len(report.failed),
            "accepted": len(report.accepted),
        },
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------------------------
# junit


def _testcase(suite: ElementTree.Element, context: SeamContext, trial: Trial) -> None:
    seam = context.report.seam(trial.seam)
    name = case_id(trial.fault, seam) if seam else f"{trial.fault}-{trial.seam}"
    attributes = {"classname": context.report.target or "scenario", "name": name}
    if seam is not None:
        attributes.update(file=display_path(seam.path), line=str(seam.line))
    attributes["time"] = f"{trial.seconds:.3f}"
    case = ElementTree.SubElement(suite, "testcase", attributes)
    if not trial.ok:
        labels = context.confirmed_by(trial)
        confirmed = f" (confirms {', '.join(labels)})" if labels else ""
        failure = ElementTree.SubElement(
            case, "failure", message=f"{trial.outcome}: {trial.detail}", type=trial.outcome
        )
        failure.text = (
            f"seam {trial.seam} [{trial.fault}] {_where(seam)}: {trial.detail}{confirmed}"
        )
    notes = list(trial.warnings)
    if trial.accepted:
        notes.insert(0, f"accepted {trial.outcome}: {trial.detail}")
    if notes:
        ElementTree.SubElement(case, "system-out").text = "\n".join(notes)


def render_junit(context: SeamContext) -> str:
    """One test case per trial, named like the pytest marker's items (`cancel-3-f:88`)."""
    report = context.report
    suite = ElementTree.Element(
        "testsuite",
        name="gate seams",
        tests=str(len(report.trials)),
        failures=str(len(report.failed)),
        errors="0",
        skipped="0",
        time=f"{report.sweep_seconds:.3f}",
    )
    for trial in report.trials:
        _testcase(suite, context, trial)
    ElementTree.indent(suite)
    body = ElementTree.tostring(suite, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'


# ---------------------------------------------------------------------------------------------
# markdown


def _md(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_outcome(trial: Trial | None) -> str:
    if trial is None:
        return ""
    if trial.outcome == "ok":
        return "ok"
    return f"{trial.outcome} (accepted)" if trial.accepted else f"**{trial.outcome}**"


def _md_table(context: SeamContext) -> list[str]:
    report = context.report
    faults = _faults(report)
    by_key = {(trial.seam, trial.fault): trial for trial in report.trials}
    lines = [
        "| # | task | where | source | " + " | ".join(faults) + " | notes |",
        "|---:|---|---|---|" + "---|" * len(faults) + "---|",
    ]
    for seam in report.seams:
        trials = [by_key[(seam.index, fault)] for fault in faults if (seam.index, fault) in by_key]
        where = f"`{display_path(seam.path)}:{seam.line}` {seam.function}"
        cells = [_md_outcome(by_key.get((seam.index, fault))) for fault in faults]
        row = [str(seam.index), seam.task, where, f"`{seam.source}`", *cells]
        row.append(_notes(context, trials))
        lines.append("| " + " | ".join(_md(cell) for cell in row) + " |")
    return lines


def render_markdown(context: SeamContext) -> str:
    """One pull-request comment: a summary line, the seam table, each failure and why."""
    report = context.report
    backend = f" on {report.backend}" if report.backend != "asyncio" else ""
    mark = ":x:" if report.failed else ":white_check_mark:"
    lines = [
        MARKER,
        f"**gate seams** `{report.target or 'scenario'}`{backend}: {summary(report)}. {mark}",
        "",
        *_md_table(context),
    ]
    if report.failed:
        lines += ["", "#### Failing trials", ""]
        for trial in report.failed:
            labels = context.confirmed_by(trial)
            confirmed = f" Confirms {', '.join(labels)}." if labels else ""
            seam = report.seam(trial.seam)
            name = case_id(trial.fault, seam) if seam else str(trial.seam)
            lines.append(f"- `{name}` **{trial.outcome}**: {_md(trial.detail)}.{confirmed}")
    if report.accept:
        accepted = ", ".join(f"`{acceptance}`" for acceptance in report.accept)
        lines += ["", f"Accepted outcomes: {accepted}."]
    return "\n".join(lines) + "\n"


Renderer = Callable[[SeamContext], str]

RENDERERS: dict[str, Renderer] = {
    "text": render_text,
    "json": render_json,
    "junit": render_junit,
    "markdown": render_markdown,
}
