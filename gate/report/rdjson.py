"""reviewdog's Diagnostic Format: `rdjson` (one document) and `rdjsonl` (one per line).

rdjson columns count UTF-8 bytes, gate's count code points: each column is converted through the
source line it points into. A fix becomes a `suggestions` entry, which reviewdog posts as a
suggested change.
"""

from __future__ import annotations

import json
from typing import Any

from gate.model import Finding, Fix, Location, Severity
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


def suggestion(fix: Fix) -> dict[str, Any]:
    """The fix as a reviewdog suggestion: its whole lines, up to the end of the last one."""
    last = fix.original.splitlines()[-1] if fix.original else ""
    text = fix.replacement or ""
    text = text[:-2] if text.endswith("\r\n") else text.rstrip("\n")
    return {
        "range": {
            "start": {"line": fix.start_line, "column": 1},
            "end": {"line": fix.end_line, "column": byte_column(last, len(last) + 1)},
        },
        "text": text,
    }


def diagnostic(finding: Finding, context: ReportContext, with_fix: bool = True) -> dict[str, Any]:
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
    if with_fix and finding.fix is not None and finding.fix.available:
        result["suggestions"] = [suggestion(finding.fix)]
    return result


def _diagnostics(context: ReportContext) -> list[dict[str, Any]]:
    """One per finding; the suggestion of a region that several findings share goes with the
    first of them only, so that the review shows it once."""
    seen: set[tuple[str, Fix]] = set()
    diagnostics = []
    for finding in context.findings:
        key = (finding.location.path, finding.fix) if finding.fix is not None else None
        diagnostics.append(diagnostic(finding, context, with_fix=key not in seen))
        if key is not None:
            seen.add(key)
    return diagnostics


def render(context: ReportContext) -> str:
    document = {"source": {"name": "gate"}, "diagnostics": _diagnostics(context)}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def render_lines(context: ReportContext) -> str:
    return "".join(
        json.dumps(diagnostic, ensure_ascii=False) + "\n" for diagnostic in _diagnostics(context)
    )
