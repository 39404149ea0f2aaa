"""`path:line:col: CODE message`, coloured with rich markup when `color` is set."""

from __future__ import annotations

from gate.model import Finding, Severity
from gate.report.context import ReportContext


def _line(finding: Finding, context: ReportContext, suffix: str = "") -> str:
    location = finding.location
    where = f"{context.shown(location.path)}:{location.line}:{location.column}:"
    if context.color:
        from rich.markup import escape

        style = "red" if finding.severity is Severity.ERROR else "yellow"
        style = "dim" if suffix else style
        return (
            f"[bold]{escape(where)}[/bold] [{style}]{finding.code}[/{style}] "
            f"{escape(finding.message)}{escape(suffix)}"
        )
    return f"{where} {finding.code} {finding.message}{suffix}"


def render(context: ReportContext) -> str:
    lines = [_line(finding, context) for finding in context.findings]
    baseline = context.baseline
    if baseline is not None and baseline.show:
        lines += [_line(finding, context, " (baselined)") for finding in baseline.baselined]
    count = len(context.findings)
    files = f"{context.files} file{'' if context.files == 1 else 's'} checked"
    if baseline is not None and baseline.counts():
        files += f", {baseline.counts()}"
    if count:
        lines.append(f"Found {count} finding{'' if count == 1 else 's'} in {files}.")
    else:
        lines.append(f"All checks passed ({files}).")
    return "\n".join(lines) + "\n"
