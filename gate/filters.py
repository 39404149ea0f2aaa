"""The filters a run's findings pass through after the rules: selection, `# noqa` (here), the
findings baseline (`findings_baseline.split`) and `--diff` (`diff.keep`).

Each takes findings and returns the ones that stay; none reads config on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from gate.checks import RULES
from gate.model import Family, Finding
from gate.rule import Rule
from gate.source import Suppressions, suppressed


class SelectionError(ValueError):
    """A code or prefix that names no rule; the message names it."""


def normalise_codes(codes: Iterable[str], where: str) -> tuple[str, ...]:
    """Codes and prefixes upper-cased (codes are case-insensitive) and checked: each must name
    at least one rule. Raises SelectionError naming `where` and the code."""
    normalised = []
    for code in codes:
        upper = code.strip().upper()
        if not upper or not any(rule_code.startswith(upper) for rule_code in RULES):
            known = ", ".join(RULES)
            raise SelectionError(
                f"{where}: {code!r} is not a rule code or prefix of one (known: {known})"
            )
        normalised.append(upper)
    return tuple(normalised)


@dataclass(frozen=True)
class Selection:
    """Which rules a run reports: the longest matching prefix wins, as in ruff; `select`
    replaces the config's, ignores add up. Rules that are always reported cannot be dropped.
    `ruff`: ruff runs and its findings are reported (ruff's own configuration selects them)."""

    select: tuple[str, ...]
    ignore: tuple[str, ...] = ()
    ruff: bool = False

    def wants(self, rule: Rule) -> bool:
        if rule.always_reported:
            return True
        best_select = max((len(p) for p in self.select if rule.code.startswith(p)), default=-1)
        best_ignore = max((len(p) for p in self.ignore if rule.code.startswith(p)), default=-1)
        return best_select >= 0 and best_select > best_ignore

    def wants_code(self, code: str) -> bool:
        return self.wants(RULES[code])

    def judges(self, code: str) -> bool:
        """Would this run report a finding of gate's `code` if there were one? A code that no
        longer names a rule is judged: nothing can report it any more."""
        return code not in RULES or self.wants_code(code)

    def apply(self, findings: Iterable[Finding]) -> list[Finding]:
        return [
            finding
            for finding in findings
            if (self.ruff if finding.family is Family.RUFF else self.wants_code(finding.code))
        ]


def selection(
    config_select: Sequence[str],
    config_ignore: Sequence[str],
    config_source: str,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    ruff: bool = False,
) -> Selection:
    """The run's selection from the config and the command line; raises SelectionError on a
    code that names no rule (the config's named with its file and key). `ruff` (the config's
    `ruff = true`) holds unless `select` narrows the run to the gate rules it names."""
    chosen_select = (
        normalise_codes(select, "--select")
        if select
        else normalise_codes(config_select, f"{config_source}: tool.gate.select")
    )
    chosen_ignore = normalise_codes(ignore or (), "--ignore") + normalise_codes(
        config_ignore, f"{config_source}: tool.gate.ignore"
    )
    return Selection(chosen_select, chosen_ignore, ruff=ruff and not select)


def without_noqa(
    findings: Iterable[Finding], noqa_by_path: Mapping[str, Suppressions]
) -> list[Finding]:
    """The findings no `# noqa` comment on their line covers. ruff's findings pass: ruff
    applied its own `# noqa` (which it reads differently, on a string's last line)."""
    return [
        finding
        for finding in findings
        if finding.family is Family.RUFF
        or not suppressed(finding, noqa_by_path.get(finding.location.path, {}))
    ]
