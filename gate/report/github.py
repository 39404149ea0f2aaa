"""GitHub Actions workflow commands: one `::error`/`::warning` annotation per finding."""

from __future__ import annotations

from gate.model import Finding, Severity
from gate.report.context import ReportContext


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding, context: ReportContext) -> str:
    location = finding.location
    level = "error" if finding.severity is Severity.ERROR else "warning"
    end_line = location.end_line or location.line
    properties = [
        ("file", context.repo_path(location.path)),
        ("line", str(location.line)),
        ("endLine", str(end_line)),
    ]
    # GitHub accepts columns only on a single-line annotation.
    if end_line == location.line:
        properties.append(("col", str(location.column)))
        if location.end_column is not None:
            properties.append(("endColumn", str(location.end_column)))
    properties.append(("title", f"{finding.code} {finding.name}"))
    joined = ",".join(f"{key}={_escape_property(value)}" for key, value in properties)
    return f"::{level} {joined}::{_escape_data(finding.message)}"


def render(context: ReportContext) -> str:
    return "".join(annotation(finding, context) + "\n" for finding in context.findings)
