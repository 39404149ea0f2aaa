"""reviewdog's Diagnostic Format: `rdjson` (one document) and `rdjsonl` (one per line).

rdjson columns count UTF-8 bytes, gate's count code points: each column is converted through the
source line it points into.
"""

from __future__ import annotations

import json
from typing import Any

from gate.model import Finding, Location, Severity
from gate.report.context import ReportContext


def byte_column(text: str, column: int) -> int:
    """The 1-based UTF-8 byte column of a 1-based code-point column in `text`."""
    return len(text[: column - 1].encode("utf-8")) + 1


def _location(location: Location, context: ReportContext) -> dict[str, Any]:
    start_text = context.line_text(location.path, location.line)
    range_: dict[str, Any] = {
        "start": {"line": location.line, "column": byte_column(start_text, location.column)}
    }
    if location.end_line is not None and location.end_column is not None:
        end_text = (
            start_text
            if location.end_line == location.line
            else context.line_text(location.path, location.end_line)
        )
        range_["end"] = {
            "line": location.end_line,
            "column": byte_column(end_text, location.end_column),
        }
    return {"path": context.repo_path(location.path), "range": range_}


def diagnostic(finding: Finding, context: ReportContext) -> dict[str, Any]:
    rule = context.rule_of(finding)
    code: dict[str, Any] = {"value": finding.code}
    uri = context.help_uri(rule)
    if uri:
        code["url"] = uri
    result: dict[str, Any] = {
        "message": finding.message,
        "location": _location(finding.location, context),
        "severity": "ERROR" if finding.severity is Severity.ERROR else "WARNING",
        "source": {"name": "gate"},
        "code": code,
    }
    if finding.related:
        result["related_locations"] = [
            {"message": item.message, "location": _location(item.location, context)}
            for item in finding.related
        ]
    return result


def render(context: ReportContext) -> str:
    document = {
        "source": {"name": "gate"},
        "diagnostics": [diagnostic(finding, context) for finding in context.findings],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def render_lines(context: ReportContext) -> str:
    return "".join(
        json.dumps(diagnostic(finding, context), ensure_ascii=False) + "\n"
        for finding in context.findings
    )
