"""Static and dynamic together: which `gate check` findings a failing seam confirms.

A failing seam confirms a teardown finding when one of the seam's frames stands at the finding's
interrupt point (its related location) or at the finding itself (an awaited step cut short).

The harness only reports seams and their frames; the CLI (`gate seams`, `gate check --seams`)
and the pytest plugin link them to findings here, above the harness.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from gate.config import ConfigError
from gate.model import Finding
from gate.seamdata import SweepReport


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def confirms(finding: Finding, frames: Iterable[tuple[str, int]]) -> bool:
    """Does a seam with these (path, line) frames confirm the finding?

    The seam must stand at the interrupt point the finding names; for findings reported at the
    await itself (an awaited step cut short, an unshielded await) the finding's own line counts.
    """
    points = [(item.location.path, item.location.line) for item in finding.related]
    if finding.code in ("GATE101", "GATE104"):
        points.append((finding.location.path, finding.location.line))
    return any(
        line == point_line and _same_file(path, point_path)
        for path, line in frames
        for point_path, point_line in points
    )


def static_findings(paths: Iterable[str]) -> list[Finding]:
    """The teardown findings gate reports for these files, with default settings."""
    from gate.config import GateConfig
    from gate.engine import SourceFile, check_file
    from gate.fsutil import display_path

    findings: list[Finding] = []
    for path in sorted(set(paths)):
        if Path(path).is_file():
            source = SourceFile(Path(path), display_path(Path(path)))
            findings.extend(
                f for f in check_file(source, GateConfig()).findings if f.code.startswith("GATE1")
            )
    return findings


def confirmations(frames_by_seam: dict[int, list[tuple[str, int]]]) -> dict[int, list[str]]:
    """For each seam (by index), the labels of the static findings its frames confirm."""
    paths = {path for frames in frames_by_seam.values() for path, _ in frames}
    findings = static_findings(paths)
    return {
        index: [label(finding) for finding in findings if confirms(finding, frames)]
        for index, frames in frames_by_seam.items()
    }


def link(report: SweepReport) -> dict[int, list[str]]:
    """For each failing seam of a sweep (by index), the labels of the findings it confirms."""
    failing = {trial.seam for trial in report.failed}
    frames = {
        seam.index: [(frame.path, frame.line) for frame in seam.frames]
        for seam in report.seams
        if seam.index in failing
    }
    return confirmations(frames) if frames else {}


def label(finding: Finding) -> str:
    return f"{finding.code} at {Path(finding.location.path).name}:{finding.location.line}"


def read_seam_report(path: Path) -> list[tuple[str, list[tuple[str, int]]]]:
    """The failing trials (neither ok nor accepted) of a `gate seams --format json` report:
    (description, frames) for each.

    Raises ConfigError naming the file when it is not such a report.
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        seams = {seam["index"]: seam for seam in document["seams"]}
        failing = []
        for trial in document["trials"]:
            if trial["outcome"] == "ok" or trial.get("accepted", False):
                continue
            seam = seams[trial["seam"]]
            frames = [(frame["path"], frame["line"]) for frame in seam.get("frames", [])]
            frames.append((seam["path"], seam["line"]))
            failing.append((f"seam {trial['seam']} {trial['fault']}: {trial['outcome']}", frames))
        return failing
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the seam report: {error.strerror}") from None
    except (ValueError, KeyError, TypeError) as error:
        raise ConfigError(f"{path}: not a `gate seams --format json` report ({error})") from None


def mark_confirmed(
    findings: list[Finding], failing: list[tuple[str, list[tuple[str, int]]]]
) -> list[Finding]:
    """The findings, each one a failing seam confirms with that said in its message."""
    marked = []
    for finding in findings:
        reasons = [description for description, frames in failing if confirms(finding, frames)]
        if reasons:
            finding = replace(
                finding, message=f"{finding.message} [confirmed by the seam sweep: {reasons[0]}]"
            )
        marked.append(finding)
    return marked
