"""A run as a pipeline: discover the files, run the file rules on each (cached, in parallel),
run the project rules over what the files yielded, then filter.

The command line composes it with the one config it loaded; nothing below reads config on its
own. Renderers come after, in the command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gate.analysis.summary import ModuleSummary
from gate.checks import rules_of
from gate.complexity.facts import RatchetFacts
from gate.complexity.measure import FunctionComplexity
from gate.complexity.ratchet import judge
from gate.complexity.session import ComplexitySession
from gate.config import LoadedConfig
from gate.diff import ChangedLines, keep
from gate.discovery import Discovered, UsageError, discover
from gate.engine import RunOptions, file_results
from gate.filters import Selection, without_noqa
from gate.model import Family, Finding
from gate.source import Suppressions


@dataclass
class CheckResult:
    """The run's findings; `summaries` are its files' function summaries, which the teardown
    analysis resolved awaited callees in (the fixer runs it again with them)."""

    findings: list[Finding]
    files: int
    functions: list[FunctionComplexity] = field(default_factory=list)
    excluded: int = 0
    summaries: list[ModuleSummary] = field(default_factory=list)


@dataclass
class _FileStage:
    findings: list[Finding] = field(default_factory=list)
    functions: list[FunctionComplexity] = field(default_factory=list)
    measured_paths: set[str] = field(default_factory=set)
    unparsed: list[Finding] = field(default_factory=list)
    noqa: dict[str, Suppressions] = field(default_factory=dict)
    summaries: list[ModuleSummary] = field(default_factory=list)


def _discover(paths: Sequence[Path], loaded: LoadedConfig) -> Discovered:
    """The files to check; raises UsageError when the paths hold no Python file at all, since
    a run that looked at nothing must not pass."""
    discovered = discover(paths, loaded)
    if not discovered.files and not discovered.excluded:
        named = " ".join(str(path) for path in paths)
        raise UsageError(f"no Python files to check under {named}")
    return discovered


def _file_stage(
    discovered: Discovered, loaded: LoadedConfig, options: RunOptions, teardown: bool
) -> _FileStage:
    stage = _FileStage()
    files = discovered.files
    for source, result in zip(
        files, file_results(files, loaded.root, loaded.settings, options, teardown), strict=True
    ):
        stage.findings.extend(result.all_findings)
        stage.noqa[source.relative] = result.noqa
        if result.summary is not None:
            stage.summaries.append(result.summary)
        if result.functions is None:
            stage.unparsed.extend(result.findings)
        else:
            stage.functions.extend(result.functions)
            stage.measured_paths.add(source.relative)
    return stage


def _ratchet_facts(
    stage: _FileStage, paths: Sequence[Path], session: ComplexitySession, loaded: LoadedConfig
) -> RatchetFacts:
    baseline = session.read()
    recorded = baseline.functions if baseline is not None else {}
    judged = session.judged_paths(stage.measured_paths, paths, recorded)
    return judge(stage.functions, session.inputs(baseline, judged), loaded.settings.complexity)


def run_check(
    paths: Sequence[Path],
    loaded: LoadedConfig,
    chosen: Selection,
    options: RunOptions | None = None,
    base: str | None = None,
    changed: ChangedLines | None = None,
) -> CheckResult:
    """Check every file under `paths`: file rules, then the project rules (the complexity
    ratchet, against the merge base of `base` when given), then selection, `# noqa` and the
    `changed` lines of `--diff`. Findings are sorted by path, line, column, code.

    Raises UsageError (no Python file under `paths`) and BaselineError (a ConfigError: the
    complexity baseline is broken).
    """
    discovered = _discover(paths, loaded)
    stage = _file_stage(discovered, loaded, options or RunOptions(), teardown=True)
    findings = list(stage.findings)
    project_rules = [rule for rule in rules_of(Family.COMPLEXITY) if chosen.wants(rule)]
    if project_rules:
        facts = _ratchet_facts(stage, paths, ComplexitySession(loaded, base), loaded)
        for rule in project_rules:
            assert rule.check is not None
            findings.extend(rule.check(facts))
    findings = without_noqa(chosen.apply(findings), stage.noqa)
    if changed is not None:
        findings = keep(findings, changed, loaded.root)
    findings.sort(key=Finding.sort_key)
    return CheckResult(
        findings, len(discovered.files), stage.functions, discovered.excluded, stage.summaries
    )


@dataclass
class Measurements:
    functions: list[FunctionComplexity]
    measured_paths: set[str]
    unparsed: list[Finding]


def measure_paths(
    paths: Sequence[Path], loaded: LoadedConfig, options: RunOptions | None = None
) -> Measurements:
    """Complexity of every function under `paths`, without the teardown rules."""
    stage = _file_stage(_discover(paths, loaded), loaded, options or RunOptions(), teardown=False)
    return Measurements(stage.functions, stage.measured_paths, stage.unparsed)
