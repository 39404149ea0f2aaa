"""What every renderer receives: the findings and a few pure helpers the shell supplies."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gate import __version__
from gate.checks import RULES
from gate.model import Finding
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

    def help_uri(self, rule: Rule) -> str | None:
        if not self.docs_url:
            return None
        return self.docs_url.format(code=rule.code, name=rule.name)

    def used_rules(self) -> list[Rule]:
        codes = sorted({finding.code for finding in self.findings})
        return [self.rules[code] for code in codes]
