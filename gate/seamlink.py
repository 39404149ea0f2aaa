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
from gate.model import Family, Finding, TeardownDetail
from gate.seamdata import SweepReport


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def confirms(finding: Finding, frames: Iterable[tuple[str, int]], root: Path) -> bool:
    """Does a seam with these (path, line) frames confirm the finding?

    The seam must stand at one of the interrupt points the finding names (for an awaited step
    cut short, the step itself). Finding paths are relative to the project `root`.
    """
    if not isinstance(finding.detail, TeardownDetail):
        return False
    points = [(str(root / where.path), where.line) for where in finding.detail.interrupts]
    return any(
        line == point_line and _same_file(path, point_path)
        for path, line in frames
        for point_path, point_line in points
    )


def static_findings(paths: Iterable[str]) -> list[tuple[Path, Finding]]:
    """The teardown findings gate reports for these files, each with its project's config and
    root."""
    from gate.config import load_config
    from gate.discovery import SourceFile
    from gate.filecheck import check_file

    findings: list[tuple[Path, Finding]] = []
    for path in sorted(set(paths)):
        if Path(path).is_file():
            loaded = load_config(None, Path(path))
            relative = os.path.relpath(os.path.realpath(path), loaded.root)
            source = SourceFile(Path(path), Path(relative).as_posix())
            findings.extend(
                (loaded.root, f)
                for f in check_file(source, loaded.settings).all_findings
                if f.family is Family.TEARDOWN
            )
    return findings


def confirmations(frames_by_seam: dict[int, list[tuple[str, int]]]) -> dict[int, list[str]]:
    """For each seam (by index), the labels of the static findings its frames confirm."""
    paths = {path for frames in frames_by_seam.values() for path, _ in frames}
    findings = static_findings(paths)
    return {
        index: [label(finding) for root, finding in findings if confirms(finding, frames, root)]
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
    findings: list[Finding], failing: list[tuple[str, list[tuple[str, int]]]], root: Path
) -> list[Finding]:
    """The findings, each one a failing seam confirms with that said in its message."""
    marked = []
    for finding in findings:
        reasons = [d for d, frames in failing if confirms(finding, frames, root)]
        if reasons:
            finding = replace(
                finding, message=f"{finding.message} [confirmed by the seam sweep: {reasons[0]}]"
            )
        marked.append(finding)
    return marked
