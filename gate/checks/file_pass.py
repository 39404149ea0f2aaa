"""The teardown rules over one parsed file: pick the functions, hand them to libcst, report."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from libcst.metadata import MetadataWrapper, PositionProvider

from gate.checks import TEARDOWN_CHECKS
from gate.checks.base import Reporter
from gate.checks.candidates import FunctionSpan
from gate.checks.regions import ModuleAnalysis
from gate.checks.teardown import AnalysisError, analyse_functions
from gate.config import GateConfig
from gate.model import Finding, Location


def teardown_findings(
    display: str,
    text: str,
    spans: list[FunctionSpan],
    level_triggered: bool,
    candidates: list[FunctionSpan],
    settings: GateConfig,
    reporter: Reporter,
) -> list[Finding]:
    """The GATE1xx findings of the candidate functions (and the helpers they await)."""
    lines = text.splitlines(keepends=True)
    try:
        analysis = analyse_functions(lines, spans, level_triggered, settings.teardown, candidates)
    except (AnalysisError, RecursionError) as error:
        line = getattr(error, "line", 1)
        column = getattr(error, "column", 1)
        reason = str(error) if isinstance(error, AnalysisError) else "nested too deeply"
        reporter.locate = lambda node: Location(display, line, column)
        message = f"teardown rules skipped: {reason}, though Python can parse it"
        return [reporter.finding("GATE902", None, message, "analysis-skipped")]
    reporter.locate = _locator(display, analysis)
    findings: list[Finding] = []
    for check in TEARDOWN_CHECKS:
        findings.extend(check.check(analysis, reporter))
    return _unique_anchors(findings)


def _locator(display: str, analysis: ModuleAnalysis) -> Callable[[object], Location]:
    """Positions of reported nodes, resolved for the one parsed function a node lives in, and
    only when a finding needs it."""
    positions: dict[object, Location] = {}
    resolved: set[int] = set()

    def locate(node: object) -> Location:
        snippet = analysis.node_snippets[id(node)]
        if id(snippet) not in resolved:
            resolved.add(id(snippet))
            wrapper = MetadataWrapper(snippet.module, unsafe_skip_copy=True)
            offset = snippet.line_offset
            for known, code_range in wrapper.resolve(PositionProvider).items():
                start, end = code_range.start, code_range.end
                positions[known] = Location(
                    display,
                    start.line + offset,
                    start.column + 1,
                    end.line + offset,
                    end.column + 1,
                )
        return positions[node]

    return locate


def _unique_anchors(findings: list[Finding]) -> list[Finding]:
    """Number repeated anchors in source order so that every fingerprint is distinct."""
    counts: Counter[tuple[str, str]] = Counter()
    unique = []
    reported: set[tuple[str, int, int]] = set()
    for finding in sorted(findings, key=Finding.sort_key):
        # a step in a finally block of a function that is also an awaited helper is seen by two
        # regions; report it once
        spot = (finding.code, finding.location.line, finding.location.column)
        if spot in reported:
            continue
        reported.add(spot)
        key = (finding.code, finding.anchor)
        counts[key] += 1
        if counts[key] > 1:
            finding = replace(finding, anchor=f"{finding.anchor}#{counts[key]}")
        unique.append(finding)
    return unique
