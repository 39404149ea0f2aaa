"""One error per interrupt point: the repeats of an error that already reports an interrupt
become the `repeat` severity, pointing at that error.

A cancel at `await mount.teardown()` that cuts it short, skips `self._stop_sandbox()` after it
and slips past the `except Exception:` around it is one bug with one fix (hold or shield that
await): three errors would fail the run three times for it. The errors naming the fewest
interrupt points are chosen first (the one most precisely about an interrupt), then by their
rule's `interrupt_order` (the await cut short, then the steps it skips, then the guard that
misses it), then in source order.

An interrupt at an await that runs a helper of the file lands at one of the helper's own
awaits: `await self.kill()` in `__aexit__` is cut short exactly when a cancel lands at the
`await self._api.delete()` inside `kill()`. The errors inside the helper are chosen first, and
the caller's await, and the steps an interrupt there skips, repeat them when they report every
await of the helper a cancel can land at.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from gate.analysis.facts import ModuleAnalysis, RegionKind
from gate.checks import RULES
from gate.model import INTERRUPT_POINT, Finding, Location, Related, Severity
from gate.rule import Locate

Point = tuple[str, int]  # an interrupt point: path and line
Helpers = Mapping[Point, set[Point]]  # the awaits a helper's await runs, by that await


def one_error_per_interrupt(
    findings: list[Finding], repeat: Severity, helpers: Helpers
) -> list[Finding]:
    """The findings, each error whose every interrupt point an error chosen before it already
    reports made a repeat (`helpers`: see `helper_interrupts`)."""
    result = list(findings)
    chosen: dict[Point, Location] = {}  # interrupt point: the error reporting it
    for candidate in _in_choosing_order(_candidates(findings, helpers)):
        errors = _reported_by(candidate, chosen)
        if errors:
            result[candidate.index] = _repeat(findings[candidate.index], repeat, errors)
            for point in candidate.points:  # the errors inside a helper report its await too
                chosen.setdefault(point, errors[0])
        else:
            location = findings[candidate.index].location
            for point in (*candidate.points, *candidate.landing):
                chosen.setdefault(point, location)
    return result


def helper_interrupts(analysis: ModuleAnalysis, locate: Locate) -> dict[Point, set[Point]]:
    """For each await of a helper of this file from a teardown region, the awaits in the
    helper that nothing there holds: where an interrupt that cuts the await short lands."""
    inside: dict[Point, set[Point]] = {}
    for region in analysis.regions:
        if region.kind is not RegionKind.HELPER or not region.awaited_from:
            continue
        exposed = {_point(locate(p.node)) for p in region.points if not p.guarded}
        for node in region.awaited_from if exposed else ():
            inside.setdefault(_point(locate(node)), set()).update(exposed)
    return inside


@dataclass(frozen=True)
class _Candidate:
    """An error that interrupt points make happen."""

    index: int  # in the findings
    points: list[Point]  # its interrupt points
    landing: list[Point]  # where they land, through the helpers they run (none: they run none)
    within: set[Point]  # every await in those helpers


def _candidates(findings: list[Finding], helpers: Helpers) -> list[_Candidate]:
    """The errors that interrupt points make happen, by rank."""
    ranked = sorted(
        (len(points), rank, finding.location.line, index, points)
        for index, finding in enumerate(findings)
        if (rank := _rank(finding)) is not None and (points := interrupt_points(finding))
    )
    return [_Candidate(index, points, *_landing(points, helpers)) for *_, index, points in ranked]


def _rank(finding: Finding) -> int | None:
    rule = RULES.get(finding.code)
    return rule.interrupt_order if rule and finding.severity is Severity.ERROR else None


def _in_choosing_order(candidates: list[_Candidate]) -> Iterator[_Candidate]:
    """By rank, but an error at an await of a helper after every error whose interrupt points
    are all in that helper (the first left, in a cycle of helpers)."""
    pending = list(candidates)
    while pending:
        ready = next((c for c in pending if not _waits(c, pending)), pending[0])
        pending.remove(ready)
        yield ready


def _waits(candidate: _Candidate, pending: list[_Candidate]) -> bool:
    within = candidate.within
    return bool(within) and any(
        other is not candidate and set(other.points) <= within for other in pending
    )


def _reported_by(candidate: _Candidate, chosen: dict[Point, Location]) -> list[Location]:
    """The errors that report every interrupt point of the candidate, or every point they
    land at; none when some point is not reported."""
    for points in (candidate.points, candidate.landing):
        if points and all(point in chosen for point in points):
            return list(dict.fromkeys(chosen[point] for point in points))
    return []


def _landing(own: list[Point], helpers: Helpers) -> tuple[list[Point], set[Point]]:
    """Where interrupts at these points land when one is an await of a helper (the awaits of
    the helpers it runs that run no helper themselves), and every await in those helpers."""
    starts = [point for point in own if point in helpers]
    if not starts:
        return [], set()
    reached = _through_helpers(starts, helpers)
    landing = {point for point in (*own, *reached) if point not in helpers}
    return sorted(landing), reached - set(own)


def _through_helpers(starts: list[Point], helpers: Helpers) -> set[Point]:
    reached, pending = set(starts), list(starts)
    while pending:
        for point in helpers[pending.pop()] - reached:
            reached.add(point)
            if point in helpers:
                pending.append(point)
    return reached


def _repeat(finding: Finding, severity: Severity, errors: list[Location]) -> Finding:
    related = tuple(Related(error, "the error for this interrupt") for error in errors)
    return replace(finding, severity=severity, related=(*finding.related, *related))


def interrupt_points(finding: Finding) -> list[Point]:
    """The path and line of a finding's interrupt points: its own for an await cut short."""
    rule = RULES.get(finding.code)
    if rule is None or rule.interrupt_order is None:
        return []
    if rule.at_interrupt:
        return [_point(finding.location)]
    return [_point(r.location) for r in finding.related if r.message == INTERRUPT_POINT]


def _point(location: Location) -> Point:
    return (location.path, location.line)
