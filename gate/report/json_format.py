"""The pinned JSON report (version 1); other tools read it, so its shape only grows."""

from __future__ import annotations

import json

from gate.model import Finding
from gate.report.context import ReportContext


def finding_dict(finding: Finding, context: ReportContext) -> dict[str, object]:
    location = finding.location
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "path": context.shown(location.path),
        "line": location.line,
        "column": location.column,
        "end_line": location.end_line if location.end_line is not None else location.line,
        "end_column": location.end_column if location.end_column is not None else location.column,
        "message": finding.message,
        "fingerprint": finding.fingerprint,
        "related": [
            {
                "path": context.shown(item.location.path),
                "line": item.location.line,
                "column": item.location.column,
                "message": item.message,
            }
            for item in finding.related
        ],
    }


def render(context: ReportContext) -> str:
    summary: dict[str, object] = {"files": context.files, "findings": len(context.findings)}
    document: dict[str, object] = {
        "version": 1,
        "findings": [finding_dict(finding, context) for finding in context.findings],
        "summary": summary,
    }
    baseline = context.baseline
    if baseline is not None:  # keys added only where a findings baseline is in use
        summary.update(baselined=len(baseline.baselined), stale=baseline.stale)
        if baseline.show:
            document["baselined"] = [finding_dict(f, context) for f in baseline.baselined]
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
