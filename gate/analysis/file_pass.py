"""The teardown rules over one parsed file: hand the candidate functions to libcst, let every
teardown rule judge the facts, and resolve positions only for what gets reported."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from gate.analysis.cancellation import imports_asyncio
from gate.analysis.candidates import FunctionSpan
from gate.analysis.cstwalk import Span, node_positions
from gate.analysis.facts import ModuleAnalysis
from gate.analysis.walker import AnalysisError, Project, Snippet, analyse_functions
from gate.checks import RULES, analysis_skipped, rules_of
from gate.config import GateConfig
from gate.discovery import matches
from gate.model import INTERRUPT_POINT, Family, Finding, Location, Related, Severity
from gate.rule import Locate
from gate.source import source_lines


def teardown_findings(
    path: str,
    text: str,
    spans: list[FunctionSpan],
    level_triggered: bool,
    candidates: list[FunctionSpan],
    settings: GateConfig,
    project: Project | None = None,
) -> list[Finding]:
    """The teardown findings of the candidate functions (and the helpers they await)."""
    try:
        analysis = analyse(path, text, spans, level_triggered, candidates, settings, project)
    except (AnalysisError, RecursionError) as error:
        line = getattr(error, "line", 1)
        column = getattr(error, "column", 1)
        reason = str(error) if isinstance(error, AnalysisError) else "nested too deeply"
        message = f"teardown rules skipped: {reason}, though Python can parse it"
        return [analysis_skipped.finding(path, message, line, column)]
    return judge(analysis, locator(path, analysis))


def analyse(
    path: str,
    text: str,
    spans: list[FunctionSpan],
    level_triggered: bool,
    candidates: list[FunctionSpan],
    settings: GateConfig,
    project: Project | None = None,
) -> ModuleAnalysis:
    """The facts the teardown rules judge, for this file (the fixer asks for them too).
    Raises AnalysisError and RecursionError as `analyse_functions` does."""
    in_tests = matches(path, settings.teardown.test_paths)
    return analyse_functions(
        source_lines(text),
        spans,
        level_triggered,
        settings.teardown,
        candidates,
        in_tests,
        project,
        imports_asyncio(text),
    )


def judge(analysis: ModuleAnalysis, locate: Locate) -> list[Finding]:
    """Every teardown rule's findings over the facts, each fingerprint distinct."""
    findings: list[Finding] = []
    for rule in rules_of(Family.TEARDOWN):
        assert rule.check is not None
        findings.extend(rule.check(analysis, locate))
    return _one_error_per_interrupt(_unique_anchors(findings), analysis.tiers.repeat)


def _one_error_per_interrupt(findings: list[Finding], repeat: Severity) -> list[Finding]:
    """One error per interrupt point: an error whose every interrupt point an error chosen
    before it already reports takes the `repeat` severity, with that error as a related
    location. A cancel at `await mount.teardown()` that cuts it short, skips
    `self._stop_sandbox()` after it and slips past the `except Exception:` around it is one
    bug with one fix (hold or shield that await): three errors would fail the run three times
    for it. The errors naming the fewest interrupt points are chosen first (the one most
    precisely about an interrupt), then by their rule's `interrupt_order` (the await cut
    short, then the steps it skips, then the guard that misses it), then in source order."""
    if repeat is Severity.ERROR:
        return findings
    points = [_interrupt_points(finding) for finding in findings]
    chosen: dict[tuple[str, int], Location] = {}  # interrupt point: the error reporting it
    result = list(findings)
    for index in _errors_in_choosing_order(findings, points):
        if all(point in chosen for point in points[index]):
            errors = dict.fromkeys(chosen[point] for point in points[index])
            result[index] = _repeat(findings[index], repeat, errors)
        else:
            for point in points[index]:
                chosen.setdefault(point, findings[index].location)
    return result


def _errors_in_choosing_order(
    findings: list[Finding], points: list[list[tuple[str, int]]]
) -> list[int]:
    """The indexes of the errors that interrupt points make happen, in the order
    `_one_error_per_interrupt` chooses among them."""
    ranked = [
        (len(points[index]), rank, finding.location.line, index)
        for index, finding in enumerate(findings)
        if finding.severity is Severity.ERROR
        and points[index]
        and (rank := RULES[finding.code].interrupt_order) is not None
    ]
    return [index for *_, index in sorted(ranked)]


def _repeat(finding: Finding, severity: Severity, errors: Iterable[Location]) -> Finding:
    related = tuple(Related(error, "the error for this interrupt") for error in errors)
    return replace(finding, severity=severity, related=(*finding.related, *related))


def _interrupt_points(finding: Finding) -> list[tuple[str, int]]:
    """The path and line of a finding's interrupt points: its own for an await cut short."""
    rule = RULES.get(finding.code)
    if rule is None or rule.interrupt_order is None:
        return []
    if rule.at_interrupt:
        return [(finding.location.path, finding.location.line)]
    return [
        (r.location.path, r.location.line) for r in finding.related if r.message == INTERRUPT_POINT
    ]


def locator(path: str, analysis: ModuleAnalysis) -> Locate:
    """Positions of reported nodes, resolved for the one parsed function a node lives in, and
    only when a finding needs it."""
    located: dict[int, Location] = {}
    spans: dict[int, dict[int, Span]] = {}  # by snippet: each node's span, by node

    def locate(node: object) -> Location:
        found = located.get(id(node))
        if found is not None:
            return found
        snippet = analysis.node_snippets[id(node)]
        assert isinstance(snippet, Snippet)
        known = spans.get(id(snippet))
        if known is None:
            known = spans[id(snippet)] = node_positions(snippet.module)
        (line, column), (end_line, end_column) = known[id(node)]
        offset = snippet.line_offset
        found = located[id(node)] = Location(
            path, line + offset, column + 1, end_line + offset, end_column + 1
        )
        return found

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
