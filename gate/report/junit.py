"""JUnit XML, for CI systems that show test reports: one failing test case per finding."""

from __future__ import annotations

from xml.etree import ElementTree

from gate.model import Severity
from gate.report.context import ReportContext


def render(context: ReportContext) -> str:
    failures = sum(f.severity is Severity.ERROR for f in context.findings)
    suite = ElementTree.Element(
        "testsuite",
        name="gate",
        tests=str(max(len(context.findings), 1)),
        failures=str(failures),
        errors="0",
        skipped=str(len(context.findings) - failures),
    )
    if not context.findings:
        ElementTree.SubElement(suite, "testcase", classname="gate", name="gate check")
    for finding in context.findings:
        location = finding.location
        path = context.repo_path(location.path)
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname=path,
            name=f"{finding.code} {path}:{location.line}:{location.column}",
            file=path,
            line=str(location.line),
        )
        tag = "failure" if finding.severity is Severity.ERROR else "skipped"
        detail = ElementTree.SubElement(case, tag, message=finding.message, type=finding.code)
        detail.text = f"{path}:{location.line}:{location.column}: {finding.code} {finding.message}"
    ElementTree.indent(suite)
    body = ElementTree.tostring(suite, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'
