"""SARIF 2.1.0 for GitHub code scanning; gate's fixes as `fixes` with `artifactChanges`."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from gate.model import Family, Finding, Fix, Location, Severity
from gate.report.context import ReportContext
from gate.rule import Rule

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_TAGS = {
    Family.TEARDOWN: "teardown",
    Family.COMPLEXITY: "maintainability",
    Family.FILE: "maintainability",
    Family.RUFF: "ruff",
}


def _level(severity: Severity) -> str:
    return "error" if severity is Severity.ERROR else "warning"


def _rule(rule: Rule, context: ReportContext) -> dict[str, Any]:
    described: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.section("What it does") or rule.summary},
        "help": {"text": rule.fix or rule.summary, "markdown": rule.doc},
        "defaultConfiguration": {"level": _level(rule.severity)},
        "properties": {"tags": [_TAGS[rule.family]]},
    }
    uri = context.help_uri(rule)
    if uri:
        described["helpUri"] = uri
    return described


def _physical(location: Location, context: ReportContext) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": location.line, "startColumn": location.column}
    if location.end_line is not None:
        region["endLine"] = location.end_line
    if location.end_column is not None:
        region["endColumn"] = location.end_column
    return {
        "artifactLocation": {
            "uri": quote(context.repo_path(location.path)),
            "uriBaseId": "%SRCROOT%",
        },
        "region": region,
    }


def _fix(path: str, fix: Fix, context: ReportContext) -> dict[str, Any]:
    """The rewrite as one replacement of the region's whole lines."""
    last = fix.original.splitlines()[-1] if fix.original else ""
    text = fix.replacement or ""
    text = text[:-2] if text.endswith("\r\n") else text.rstrip("\n")
    deleted = {
        "startLine": fix.start_line,
        "startColumn": 1,
        "endLine": fix.end_line,
        "endColumn": len(last) + 1,
    }
    return {
        "description": {"text": fix.note},
        "artifactChanges": [
            {
                "artifactLocation": _physical(Location(path, 1, 1), context)["artifactLocation"],
                "replacements": [{"deletedRegion": deleted, "insertedContent": {"text": text}}],
            }
        ],
    }


def _result(finding: Finding, index: dict[str, int], context: ReportContext) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": index[finding.code],
        "level": _level(finding.severity),
        "message": {"text": finding.message},
        "locations": [{"physicalLocation": _physical(finding.location, context)}],
        "partialFingerprints": {"gateFingerprint/v1": finding.fingerprint},
    }
    if finding.fix is not None and finding.fix.available:
        result["fixes"] = [_fix(finding.location.path, finding.fix, context)]
    if finding.related:
        result["relatedLocations"] = [
            {
                "id": number,
                "physicalLocation": _physical(item.location, context),
                "message": {"text": item.message},
            }
            for number, item in enumerate(finding.related)
        ]
    return result


def render(context: ReportContext) -> str:
    known = {**context.rules, **{f.code: context.rule_of(f) for f in context.findings}}
    rules = sorted(known.values(), key=lambda rule: rule.code)
    index = {rule.code: number for number, rule in enumerate(rules)}
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gate",
                        "semanticVersion": context.version,
                        "rules": [_rule(rule, context) for rule in rules],
                    }
                },
                "results": [_result(f, index, context) for f in context.findings],
                "columnKind": "unicodeCodePoints",
            }
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
