"""What a rule is, and the per-file context a rule reports through."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gate.model import Finding, Location, Related, Severity


@dataclass(frozen=True)
class Rule:
    """A rule's identity and documentation; `doc` is the module docstring, in markdown."""

    code: str
    name: str
    summary: str
    severity: Severity
    doc: str
    fix: str = ""
    # The baseline the docs' Example and Use instead are judged against (complexity rules).
    example_baseline: tuple[tuple[str, int], ...] = ()

    def section(self, title: str) -> str:
        """The text of one `## title` section of the docs ('' when absent)."""
        match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", self.doc, re.S | re.M)
        return match.group(1).strip() if match else ""

    def examples(self, title: str) -> list[str]:
        """The python code blocks in one section of the docs."""
        return re.findall(r"```python\n(.*?)```", self.section(title), re.S)


@dataclass
class Reporter:
    """Builds findings for one file; resolves positions only when something is reported."""

    path: str
    rules: dict[str, Rule]
    locate: Callable[[object], Location]

    def finding(
        self,
        code: str,
        node: object,
        message: str,
        anchor: str,
        related: tuple[tuple[object, str], ...] = (),
        severity: Severity | None = None,
    ) -> Finding:
        rule = self.rules[code]
        return Finding(
            code=code,
            name=rule.name,
            severity=severity or rule.severity,
            location=self.locate(node),
            message=message,
            anchor=anchor,
            related=tuple(Related(self.locate(n), text) for n, text in related),
        )

    def line(self, node: object) -> int:
        return self.locate(node).line
