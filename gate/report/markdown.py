"""One pull-request comment a person wants to read.

Stable for a sticky comment: it starts with a hidden marker line a bot can find and update in
place, and its content depends only on the findings (no timestamps).
"""

from __future__ import annotations

from collections import defaultdict

from gate.model import ComplexityDetail, Finding, Severity
from gate.report.context import ReportContext

MARKER = "<!-- gate-report -->"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _where(finding: Finding, context: ReportContext) -> str:
    path = context.repo_path(finding.location.path)
    text = f"`{path}:{finding.location.line}`"
    url = context.link(path, finding.location.line)
    return f"[{text}]({url})" if url else text


def _summary(context: ReportContext) -> str:
    errors = sum(f.severity is Severity.ERROR for f in context.findings)
    warnings = len(context.findings) - errors
    counts = context.baseline.counts() if context.baseline is not None else ""
    baselined = f" ({counts})" if counts else ""
    if not context.findings:
        return f"**gate**: no findings in {context.files} file(s){baselined}. :white_check_mark:"
    return (
        f"**gate**: {errors} error(s), {warnings} warning(s) in "
        f"{len({f.location.path for f in context.findings})} of {context.files} file(s)"
        f"{baselined}."
    )


def _findings_by_file(context: ReportContext) -> list[str]:
    grouped: dict[str, list[Finding]] = defaultdict(list)
    for finding in context.findings:
        if not isinstance(finding.detail, ComplexityDetail):
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
    lines += _findings_by_file(context)
    lines += _complexity(context)
    lines += _advice(context)
    return "\n".join(lines) + "\n"
