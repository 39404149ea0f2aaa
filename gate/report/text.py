"""`path:line:col: CODE message`, coloured with rich markup when `color` is set."""

from __future__ import annotations

from gate.model import Severity
from gate.report.context import ReportContext


def render(context: ReportContext) -> str:
    lines = []
    for finding in context.findings:
        location = finding.location
        where = f"{context.shown(location.path)}:{location.line}:{location.column}:"
        if context.color:
            from rich.markup import escape

            style = "red" if finding.severity is Severity.ERROR else "yellow"
            lines.append(
                f"[bold]{escape(where)}[/bold] [{style}]{finding.code}[/{style}] "
                f"{escape(finding.message)}"
            )
        else:
            lines.append(f"{where} {finding.code} {finding.message}")
    count = len(context.findings)
    files = f"{context.files} file{'' if context.files == 1 else 's'} checked"
    if count:
        lines.append(f"Found {count} finding{'' if count == 1 else 's'} in {files}.")
    else:
        lines.append(f"All checks passed ({files}).")
    return "\n".join(lines) + "\n"
