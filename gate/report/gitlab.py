"""GitLab's code-quality report (a subset of the Code Climate issue format)."""

from __future__ import annotations

import json

from gate.model import Severity
from gate.report.context import ReportContext


def render(context: ReportContext) -> str:
    issues = [
        {
            "description": f"{finding.code} {finding.message}",
            "check_name": f"{finding.code} {finding.name}",
            "fingerprint": finding.fingerprint,
            "severity": "major" if finding.severity is Severity.ERROR else "minor",
            "location": {
                "path": context.repo_path(finding.location.path),
                "lines": {"begin": finding.location.line},
            },
        }
        for finding in context.findings
    ]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
