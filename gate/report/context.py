"""What every renderer receives: the findings and a few pure helpers the shell supplies."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gate import __version__
from gate.checks import RULES
from gate.model import Family, Finding, Severity
from gate.rule import Rule


def _same(path: str) -> str:
    return path


def _no_text(path: str, line: int) -> str:
    return ""


def _no_link(path: str, line: int) -> str | None:
    return None


@dataclass(frozen=True)
class ReportContext:
    """Finding paths are canonical (project-relative). `shown` turns one into the path a person
    reads (relative to the current directory), `repo_path` into the repository-relative one
    review tools expect; `line_text` returns a source line (for UTF-8 byte columns); `link` a
    URL to a repository path's line, or None.
    """

    findings: tuple[Finding, ...]
    files: int
    color: bool = False
    shown: Callable[[str], str] = _same
    repo_path: Callable[[str], str] = _same
    line_text: Callable[[str, int], str] = _no_text
    link: Callable[[str, int], str | None] = _no_link
    docs_url: str | None = None
    rules: dict[str, Rule] = field(default_factory=lambda: dict(RULES))
    version: str = __version__
    baseline: BaselineSummary | None = None

    def help_uri(self, rule: Rule) -> str | None:
        if rule.url:
            return rule.url
        if not self.docs_url or rule.family is Family.RUFF:
            return None
        return self.docs_url.format(code=rule.code, name=rule.name)

    def rule_of(self, finding: Finding) -> Rule:
        """The finding's rule; one described by the finding alone when the context does not
        know its code (another tool's)."""
        known = self.rules.get(finding.code)
        if known is not None:
            return known
        return Rule(finding.code, finding.name, finding.name, finding.family, Severity.ERROR, "")

    def used_rules(self) -> list[Rule]:
        first = {finding.code: finding for finding in self.findings}
        return [self.rule_of(first[code]) for code in sorted(first)]


@dataclass(frozen=True)
class BaselineSummary:
    """What the findings baseline did to a run: the findings it grandfathered (listed only when
    `show` is set, always counted) and how many of its entries are stale."""

    baselined: tuple[Finding, ...] = ()
    stale: int = 0
    show: bool = False

    def counts(self) -> str:
        """`12 baselined`, `12 baselined, 1 stale`; '' when both are none."""
        parts = [f"{len(self.baselined)} baselined"] if self.baselined else []
        parts += [f"{self.stale} stale"] if self.stale else []
        return ", ".join(parts)
