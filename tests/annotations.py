"""Reads the four markers of the rule example files (`# ruleid:`, `# ok:`, `# todoruleid:`,
`# todook:`), each applying to the next line that is not itself a marker, and the one file-level
marker `# gate-config: <TOML>`, whose lines together are a `[tool.gate]` table for the file."""

from __future__ import annotations

import re
from dataclasses import dataclass

MARKER = re.compile(r"^\s*#\s*(ruleid|ok|todoruleid|todook):\s*(\S+)\s*$")
LOOSE = re.compile(r"#\s*(ruleid|ok|todoruleid|todook)\b")
CONFIG = re.compile(r"^\s*#\s*gate-config:\s*(.*)$")


@dataclass(frozen=True)
class Expectation:
    kind: str
    rule: str
    line: int


def parse(text: str) -> list[Expectation]:
    """The expectations in a file; raises ValueError on a malformed or dangling marker."""
    expectations: list[Expectation] = []
    pending: list[tuple[str, str, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = MARKER.match(line)
        if match:
            pending.append((match.group(1), match.group(2), number))
            continue
        if LOOSE.search(line):
            raise ValueError(f"line {number}: malformed marker: {line.strip()}")
        for kind, rule, _ in pending:
            expectations.append(Expectation(kind, rule, number))
        pending = []
    if pending:
        raise ValueError(f"line {pending[0][2]}: marker with no line after it")
    return expectations


def compare(expectations: list[Expectation], found: set[tuple[str, int]]) -> list[str]:
    """Problems, as messages, between the expectations and the (rule name, line) findings."""
    problems = []
    annotated = {(e.rule, e.line) for e in expectations if e.kind in ("ruleid", "todook")}
    for item in expectations:
        hit = (item.rule, item.line) in found
        if item.kind == "ruleid" and not hit:
            problems.append(f"line {item.line}: expected {item.rule}, not reported")
        if item.kind == "ok" and hit:
            problems.append(f"line {item.line}: {item.rule} reported on an ok line")
        if item.kind == "todoruleid" and hit:
            problems.append(f"line {item.line}: {item.rule} now reported: make it ruleid")
        if item.kind == "todook" and not hit:
            problems.append(f"line {item.line}: {item.rule} no longer reported: make it ok")
    for rule, line in sorted(found - annotated, key=lambda x: (x[1], x[0])):
        problems.append(f"line {line}: {rule} reported but not annotated")
    return problems


def config_table(text: str) -> str:
    """The TOML of the file's `# gate-config:` lines, one line each ('' when there are none)."""
    return "\n".join(m.group(1) for line in text.splitlines() if (m := CONFIG.match(line)))
