"""One pull-request comment a person reads in ten seconds.

A section per root cause: the teardown region (one Fix, however many findings it has), its code
with the interrupt points and the reported steps marked, what is lost, and gate's fix as a
```` ```suggestion ```` block (or why there is none). Then whatever has no region (the file
rules), the complexity table, and each rule's fix advice.

Stable for a sticky comment: it starts with a hidden marker line a bot can find and update in
place, and its content depends only on the findings (no timestamps).
"""

from __future__ import annotations

import textwrap
from collections import defaultdict

from gate.model import INTERRUPT_POINT, ComplexityDetail, Finding, Fix, Severity, TeardownDetail
from gate.report.context import ReportContext

MARKER = "<!-- gate-report -->"
ARROW = "\u25c0"  # ◀
FULL_REGION = 16  # longer regions show only the marked lines and two lines around each


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _link(path: str, line: int, text: str, context: ReportContext) -> str:
    url = context.link(path, line)
    return f"[{text}]({url})" if url else text


def _where(finding: Finding, context: ReportContext) -> str:
    path = context.repo_path(finding.location.path)
    return _link(path, finding.location.line, f"`{path}:{finding.location.line}`", context)


def _summary(context: ReportContext) -> str:
    errors = sum(f.severity is Severity.ERROR for f in context.findings)
    warnings = len(context.findings) - errors
    counts = context.baseline.counts() if context.baseline is not None else ""
    baselined = f" ({counts})" if counts else ""
    if not context.findings:
        return f"**gate**: no findings in {context.files} file(s){baselined}. :white_check_mark:"
    fixable = sum(f.fix is not None and f.fix.available for f in context.findings)
    fixes = f" `gate check --fix` fixes {fixable} of them." if fixable else ""
    return (
        f"**gate**: {errors} error(s), {warnings} warning(s) in "
        f"{len({f.location.path for f in context.findings})} of {context.files} file(s)"
        f"{baselined}.{fixes}"
    )


def _fence(text: str, language: str) -> list[str]:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return [f"{ticks}{language}", text.rstrip("\r\n"), ticks]


# ---------------------------------------------------------------------------------------------
# One section per region


def _marks(findings: list[Finding]) -> dict[int, list[str]]:
    """What each line of a region is marked with: its interrupt points and reported steps."""
    marks: dict[int, list[str]] = defaultdict(list)
    for finding in findings:
        detail = finding.detail
        if isinstance(detail, TeardownDetail):
            for interrupt in detail.interrupts:
                if INTERRUPT_POINT not in marks[interrupt.line]:
                    marks[interrupt.line].insert(0, INTERRUPT_POINT)
        if finding.name not in marks[finding.location.line]:
            marks[finding.location.line].append(finding.name)
    return marks


def _region(fix: Fix, marks: dict[int, list[str]], path: str, context: ReportContext):
    """The lines the fix rewrites, widened to every marked line, numbered."""
    own = fix.original.splitlines()
    first = min(fix.start_line, *marks)
    last = max(fix.end_line, *marks)
    lines = [
        own[n - fix.start_line]
        if fix.start_line <= n <= fix.end_line
        else context.line_text(path, n)
        for n in range(first, last + 1)
    ]
    return list(
        zip(range(first, last + 1), textwrap.dedent("\n".join(lines)).split("\n"), strict=True)
    )


def _elided(numbered: list[tuple[int, str]], marks: dict[int, list[str]]):
    """A long region cut down to its marked lines and two lines around each."""
    if len(numbered) <= FULL_REGION:
        return numbered
    near = {n + d for n in marks for d in range(-2, 3)}
    return [(n, text) if n in near else (n, "...") for n, text in numbered]


def _marked_code(fix: Fix, findings: list[Finding], context: ReportContext) -> str:
    marks = _marks(findings)
    numbered = _elided(_region(fix, marks, findings[0].location.path, context), marks)
    shown: list[str] = []
    for number, text in numbered:
        if text != "..." or not shown or shown[-1] != "...":
            mark = marks.get(number)
            shown.append(f"{text}  # {ARROW} {', '.join(mark)}" if mark else text)
    return "\n".join(shown)


def _section(fix: Fix, findings: list[Finding], context: ReportContext) -> list[str]:
    path = context.repo_path(findings[0].location.path)
    span = f"{fix.start_line}-{fix.end_line}" if fix.end_line > fix.start_line else fix.start_line
    heading = _link(path, fix.start_line, f"`{path}:{span}`", context)
    lines = ["", f"#### {heading} {fix.where}", ""]
    if fix.lost:
        steps = ", ".join(f"`{label}`" for label in fix.lost)
        lines += [f"**Lost when interrupted:** {steps} can be skipped or cut short.", ""]
    lines += _fence(_marked_code(fix, findings, context), "python")
    if fix.replacement is not None:
        lines += ["", f"**Fix** (`gate check --fix`): {fix.note}.", ""]
        lines += _fence(fix.replacement, "suggestion")
    else:
        lines += ["", f"**No automatic fix:** {fix.note}."]
    lines += ["", f"<details><summary>{len(findings)} finding(s)</summary>", ""]
    lines += ["| line | rule | message |", "|---|---|---|"]
    lines += [
        f"| {_where(f, context)} | {f.code} {f.name} | {_cell(f.message)} |" for f in findings
    ]
    return [*lines, "", "</details>"]


def _sections(context: ReportContext) -> list[str]:
    grouped: dict[tuple[str, Fix], list[Finding]] = defaultdict(list)
    for finding in context.findings:
        if finding.fix is not None:
            grouped[(finding.location.path, finding.fix)].append(finding)
    lines: list[str] = []
    for (_, fix), findings in sorted(grouped.items(), key=lambda item: _order(item[1][0])):
        lines += _section(fix, findings, context)
    return lines


def _order(finding: Finding) -> tuple[str, int]:
    assert finding.fix is not None
    return (finding.location.path, finding.fix.start_line)


# ---------------------------------------------------------------------------------------------
# Everything else


def _other_findings(context: ReportContext) -> list[str]:
    grouped: dict[str, list[Finding]] = defaultdict(list)
    for finding in context.findings:
        if finding.fix is None and not isinstance(finding.detail, ComplexityDetail):
            grouped[context.repo_path(finding.location.path)].append(finding)
    lines = []
    for path in sorted(grouped):
        lines += ["", f"#### `{path}`", "", "| where | rule | message |", "|---|---|---|"]
        for finding in grouped[path]:
            rule = f"{finding.code} {finding.name}"
            lines.append(f"| {_where(finding, context)} | {rule} | {_cell(finding.message)} |")
    return lines


def _complexity(context: ReportContext) -> list[str]:
    rows = [(f, f.detail) for f in context.findings if isinstance(f.detail, ComplexityDetail)]
    if not rows:
        return []
    lines = [
        "",
        "#### Complexity",
        "",
        "| function | before | baseline | now | threshold | rule |",
        "|---|---|---|---|---|---|",
    ]
    for finding, detail in rows:

        def show(value: int | None) -> str:
            return "" if value is None else str(value)

        lines.append(
            f"| {_where(finding, context)} `{_cell(detail.function)}` | {show(detail.before)} | "
            f"{show(detail.baseline)} | {show(detail.complexity)} | {show(detail.threshold)} | "
            f"{finding.code} {finding.name} |"
        )
    return lines


def _advice(context: ReportContext) -> list[str]:
    rules = context.used_rules()
    if not rules:
        return []
    lines = ["", "<details><summary>How to fix</summary>", ""]
    lines += [f"- **{rule.code} {rule.name}**: {rule.fix}" for rule in rules]
    lines += ["", "`gate explain CODE` prints a rule's full documentation.", "</details>"]
    return lines


def render(context: ReportContext) -> str:
    lines = [MARKER, "### gate", "", _summary(context)]
    lines += _sections(context)
    lines += _other_findings(context)
    lines += _complexity(context)
    lines += _advice(context)
    return "\n".join(lines) + "\n"
