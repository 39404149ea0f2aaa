"""Fixing one file's text: analyse it again, plan each region's rewrite, apply, verify.

`fix_source` is pure: (path, text, the findings reported for it) in, the findings with their
`Fix` and the fixed text out. A rewrite is kept only if the fixed text compiles and the
analysis run on it no longer reports what the rewrite was for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from gate.analysis.summary import ProjectSummaries
from gate.checks import RULES
from gate.config import GateConfig
from gate.filters import Selection, without_noqa
from gate.fix.analysed import Analysed, analyse
from gate.fix.component import Component, components, plan_component
from gate.fix.plan import FactIndex, autofix_of, match
from gate.model import Finding, Fix
from gate.source import source_lines, suppressions

BUG_NOTE = "gate's rewrite would not clear this finding (a bug in gate: please report it)"


@dataclass
class SourceFixes:
    """The reported findings with their Fix (same order), and the text with every available
    fix applied (None when nothing changes)."""

    findings: list[Finding]
    fixed: str | None = None


def apply_fixes(text: str, fixes: Sequence[Fix]) -> str:
    """`text` with each fix's lines replaced; fixes must not overlap."""
    lines = source_lines(text)
    for fix in sorted(fixes, key=lambda f: f.start_line, reverse=True):
        assert fix.replacement is not None
        lines[fix.start_line - 1 : fix.end_line] = [fix.replacement]
    return "".join(lines)


def _key(finding: Finding) -> tuple[str, str]:
    """What identifies a finding across rewrites: its code and anchor (function and text)."""
    return finding.code, re.sub(r"#\d+$", "", finding.anchor)


def _failing(
    path: str, text: str, fixed: list[Component], analysed: Analysed, options: _Options
) -> list[Component]:
    """The components whose rewrite leaves a finding it was for (all of them when the fixed
    text does not compile)."""
    new_text = apply_fixes(text, [c.rewrite for c in fixed])
    again = analyse(path, new_text, options.settings, options.summaries)
    if again is None:
        return fixed
    targeted = {f.fingerprint for c in fixed for f in c.findings}
    untargeted = [f for f in analysed.findings if f.fingerprint not in targeted]
    left = _fixable(path, new_text, again.findings, options)
    failing, shift = [], 0
    for component in sorted(fixed, key=lambda c: c.rewrite.start_line):
        fix = component.rewrite
        size = len(source_lines(fix.replacement or ""))
        if _leaves(fix, fix.start_line + shift, size, untargeted, left):
            failing.append(component)
        shift += size - (fix.end_line - fix.start_line + 1)
    return failing


def _fixable(path: str, text: str, findings: list[Finding], options: _Options) -> list[Finding]:
    """The findings a run would report (selected, not `# noqa`ed) whose rule has a fix."""
    reported = without_noqa(options.chosen.apply(findings), {path: suppressions(text)})
    return [f for f in reported if autofix_of(f) is not None]


def _leaves(fix: Fix, start: int, size: int, untargeted: list[Finding], left: list[Finding]):
    """Is a finding left in the fixed lines (`size` lines from `start`) that was not one the
    fix left alone on purpose (deselected, suppressed, outside `--diff`)?"""
    before = {_key(f) for f in untargeted if fix.start_line <= f.location.line <= fix.end_line}
    inside = [f for f in left if start <= f.location.line < start + size]
    return any(_key(f) not in before for f in inside)


def _overlapping(grouped: list[Component]) -> None:
    """Fixes whose lines overlap (a nested function's and its enclosing region's) cannot be
    applied at once: the inner one goes first, the outer one in the next round."""
    taken: list[Fix] = []
    for component in sorted(grouped, key=lambda c: c.fix.end_line - c.fix.start_line):  # type: ignore[union-attr]
        fix = component.fix
        if fix is None or not fix.available:
            continue
        clash = next(
            (t for t in taken if t.start_line <= fix.end_line and fix.start_line <= t.end_line),
            None,
        )
        if clash is None:
            taken.append(fix)
            continue
        component.fix = replace(
            fix,
            replacement=None,
            note=f"the fix at lines {clash.start_line}-{clash.end_line} (a nested function) "
            "overlaps this one; `gate check --fix` applies them one after the other",
        )


@dataclass(frozen=True)
class _Options:
    settings: GateConfig
    chosen: Selection
    summaries: ProjectSummaries | None = None


def _round(path: str, text: str, wanted: set[tuple[str, str]], options: _Options):
    """One round of planning on `text` for the findings whose key is `wanted`: the components
    with their Fix, and the text with the available ones applied (None: nothing changes)."""
    analysed = analyse(path, text, options.settings, options.summaries)
    if analysed is None:
        return [], None
    lines = source_lines(text)
    targeted = [f for f in analysed.findings if _key(f) in wanted]
    grouped = components(match(FactIndex(analysed.analysis, analysed.trees), targeted))
    for component in grouped:
        component.fix = plan_component(component, analysed, lines)
    _overlapping(grouped)
    fixed = _verified(path, text, grouped, analysed, options)
    new_text = apply_fixes(text, [c.fix for c in fixed if c.fix is not None])
    return grouped, new_text if fixed and new_text != text else None


# What a finding of a rule that has a rewrite says when no region's rewrite covers it (a
# handler that tests for a cancel it cannot catch, outside any teardown region)
UNPLANNED_NOTE = "gate has no rewrite for line {line}; by hand: {fix}"


def _with_fixes(
    reported: Sequence[Finding],
    wanted: set[tuple[str, str]],
    planned: dict[str, Fix | None],
    lines: list[str],
) -> list[Finding]:
    """The findings with the Fix planned for them; one whose rule has a rewrite that no plan
    covers says why."""
    return [
        replace(f, fix=planned.get(f.fingerprint) or f.fix or _unplanned(f, lines))
        if _key(f) in wanted
        else f
        for f in reported
    ]


def _unplanned(finding: Finding, lines: list[str]) -> Fix:
    """The Fix of a finding no region's rewrite covers: its lines unchanged, and why."""
    start = finding.location.line
    end = max(finding.location.end_line or start, start)
    rule = RULES.get(finding.code)
    how = rule.fix if rule is not None else "see the rule's docs"
    note = UNPLANNED_NOTE.format(line=start, fix=how)
    return Fix(start, end, "".join(lines[start - 1 : end]), None, note)


def _verified(
    path: str, text: str, grouped: list[Component], analysed: Analysed, options: _Options
) -> list[Component]:
    """The components whose fix is proven: applied together, the text compiles and no longer
    has what they were for. The others lose their rewrite and say that gate failed."""
    fixed = [c for c in grouped if c.fix is not None and c.fix.available]
    while fixed:
        failing = _failing(path, text, fixed, analysed, options)
        if not failing:
            break
        for component in failing:
            component.fix = replace(component.fix, replacement=None, note=BUG_NOTE)  # type: ignore[arg-type]
        fixed = [c for c in fixed if all(c is not f for f in failing)]
    return fixed


ROUNDS = 3  # nested functions with fixes of their own need one round per level


def fix_source(
    path: str,
    text: str,
    reported: Sequence[Finding],
    settings: GateConfig,
    chosen: Selection,
    rounds: int = ROUNDS,
    summaries: ProjectSummaries | None = None,
) -> SourceFixes:
    """Plan a fix for every reported finding whose rule has one; see the module docs.

    The findings come back with the Fix planned on `text` (what a review suggests); `fixed` is
    the text after up to `rounds` rounds of fixes (what `--fix` writes). `summaries` are the
    project's, as the run that reported the findings had them.
    """
    wanted = {_key(f) for f in reported if autofix_of(f) is not None}
    if not wanted:
        return SourceFixes(list(reported))
    options = _Options(settings, chosen, summaries)
    grouped, fixed = _round(path, text, wanted, options)
    by_fingerprint = {f.fingerprint: c.fix for c in grouped for f in c.findings}
    findings = _with_fixes(reported, wanted, by_fingerprint, source_lines(text))
    current = fixed
    for _ in range(rounds - 1):
        if current is None:
            break
        fixed = current
        _, current = _round(path, current, wanted, options)
    return SourceFixes(findings, current or fixed)
