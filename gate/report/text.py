"""`path:line:col: CODE message`, coloured with rich markup when `color` is set."""

from __future__ import annotations

from rich.markup import escape

from gate.model import Severity
from gate.report.context import ReportContext


def render(context: ReportContext) -> str:
    lines = []
    for finding in context.findings:
        where = f"{finding.location.path}:{finding.location.line}:{finding.location.column}:"
        if context.color:
            style = "red" if finding.severity is Severity.ERROR else "yellow"
            lines.append(
                f"[bold]{escape(where)}[/bold] [{style}]{finding.code}[/{style}] "
                f"{escape(finding.message)}"
            )
        else:
            lines.append(f"{where} {finding.code} {finding.message}")
    count = len(context.findings)
    if count:
        noun = "finding" if count == 1 else "findings"
        lines.append(f"Found {count} {noun} in {context.files} files checked.")
    else:
        lines.append(f"All checks passed ({context.files} files checked).")
    return "\n".join(lines) + "\n"
