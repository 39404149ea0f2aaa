"""The teardown rules over one parsed file: hand the candidate functions to libcst, let every
teardown rule judge the facts, and resolve positions only for what gets reported."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from gate.analysis.cancellation import imports_asyncio
from gate.analysis.candidates import FunctionSpan
from gate.analysis.cstwalk import Span, node_positions
from gate.analysis.facts import ModuleAnalysis
from gate.analysis.interrupts import helper_interrupts, one_error_per_interrupt
from gate.analysis.walker import AnalysisError, Project, Snippet, analyse_functions
from gate.checks import analysis_skipped, rules_of
from gate.config import GateConfig
from gate.discovery import matches
from gate.model import Family, Finding, Location, Severity
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
    unique = _unique_anchors(findings)
    if analysis.tiers.repeat is Severity.ERROR:
        return unique
    helpers = helper_interrupts(analysis, locate)
    return one_error_per_interrupt(unique, analysis.tiers.repeat, helpers)


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
