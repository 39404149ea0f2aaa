"""A run as a pipeline: discover the files, run the file rules on each (cached, in parallel)
and ruff beside them, run the project rules over what the files yielded, then filter:
selection, `# noqa`, the findings baseline, `--diff`.

The command line composes it with the one config it loaded; nothing below reads config on its
own. Renderers come after, in the command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gate.analysis.summary import ModuleSummary, ProjectSummaries, SourceSearch
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
from gate.findings_baseline import (
    Entry,
    FindingsSession,
    Split,
    check_ruff_version,
    follow_renames,
    split,
)
from gate.model import Family, Finding
from gate.project_sources import ProjectSources
from gate.ruff import RuffRun
from gate.ruff import version as ruff_version
from gate.rule import Rule
from gate.source import Suppressions


@dataclass
class CheckResult:
    """A run's findings (sorted), and what the findings baseline held back: the findings it
    grandfathers and its stale entries (None when the project has no findings baseline).
    `rules` describes the codes of ruff's findings for the renderers; `summaries` are its files'
    function summaries, which the teardown analysis resolved awaited callees in (the fixer runs
    it again with them)."""

    findings: list[Finding]
    files: int
    functions: list[FunctionComplexity] = field(default_factory=list)
    excluded: int = 0
    baselined: list[Finding] = field(default_factory=list)
    stale: list[Entry] | None = None
    rules: dict[str, Rule] = field(default_factory=dict)
    summaries: ProjectSummaries = field(default_factory=ProjectSummaries)


@dataclass
class _FileStage:
    """What the file rules yielded for every file, gathered for the project rules."""

    findings: list[Finding] = field(default_factory=list)
    functions: list[FunctionComplexity] = field(default_factory=list)
    measured_paths: set[str] = field(default_factory=set)
    unparsed: list[Finding] = field(default_factory=list)
    noqa: dict[str, Suppressions] = field(default_factory=dict)
    excluded: int = 0
    summaries: list[ModuleSummary] = field(default_factory=list)
    imported: list[ModuleSummary] = field(default_factory=list)
    callers_known: bool = True
    sources: SourceSearch | None = None

    def project(self) -> ProjectSummaries:
        modules = tuple(self.summaries + self.imported)
        return ProjectSummaries(modules, self.callers_known, self.sources)


def _discover(paths: Sequence[Path], loaded: LoadedConfig) -> Discovered:
    """The files to check; raises UsageError when the paths hold no Python file at all, since
    a run that looked at nothing must not pass."""
    discovered = discover(paths, loaded)
    if not discovered.files and not discovered.excluded:
        named = " ".join(str(path) for path in paths)
        raise UsageError(f"no Python files to check under {named}")
    return discovered


def _file_stage(
    discovered: Discovered,
    loaded: LoadedConfig,
    options: RunOptions,
    teardown: bool,
    callers_known: bool = True,
) -> _FileStage:
    stage = _FileStage(excluded=discovered.excluded)
    files = discovered.files
    sources = ProjectSources(loaded.root, loaded.settings, files) if teardown else None
    results, imported = file_results(
        files, loaded.root, loaded.settings, options, teardown, callers_known, sources
    )
    stage.imported = imported
    stage.callers_known = callers_known
    stage.sources = sources
    for source, result in zip(files, results, strict=True):
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


@dataclass
class Survey:
    """Everything a run found before the findings baseline and `--diff` narrow it: findings
    after selection and `# noqa`, every function's complexity, and which files were checked."""

    findings: list[Finding]
    stage: _FileStage
    checked: list[str]
    rules: dict[str, Rule] = field(default_factory=dict)
    ruff_version: str | None = None


def survey(
    paths: Sequence[Path],
    loaded: LoadedConfig,
    chosen: Selection,
    options: RunOptions | None = None,
    base: str | None = None,
    project_rules: bool = True,
) -> Survey:
    """File rules, ruff (while the file rules run, when the config and selection want it),
    then the project rules (the complexity ratchet, against the merge base of `base` when
    given), selection and `# noqa`.

    Raises UsageError (no Python file under `paths`), BaselineError (a broken complexity
    baseline) and RuffError (ruff missing or failing), all ConfigErrors but the first.
    """
    options = options or RunOptions()
    discovered = _discover(paths, loaded)
    ruff = RuffRun.start(discovered.files, loaded.root, options.cache) if chosen.ruff else None
    # single files named (pre-commit) leave their callers unread: no caller facts then
    callers_known = all(path.is_dir() for path in paths)
    stage = _file_stage(discovered, loaded, options, teardown=True, callers_known=callers_known)
    findings = list(stage.findings)
    if project_rules:
        findings += _project_findings(stage, paths, loaded, chosen, base)
    rules: dict[str, Rule] = {}
    version = None
    if ruff is not None:
        ruff_findings, rules = ruff.findings()
        findings += ruff_findings
        version = ruff_version()
    findings = without_noqa(chosen.apply(findings), stage.noqa)
    checked = [source.relative for source in discovered.files]
    return Survey(findings, stage, checked, rules, version)


def _project_findings(
    stage: _FileStage,
    paths: Sequence[Path],
    loaded: LoadedConfig,
    chosen: Selection,
    base: str | None,
) -> list[Finding]:
    """The complexity rules over the ratchet's facts, when the selection wants any."""
    wanted = [rule for rule in rules_of(Family.COMPLEXITY) if chosen.wants(rule)]
    if not wanted:
        return []
    facts = _ratchet_facts(stage, paths, ComplexitySession(loaded, base), loaded)
    findings: list[Finding] = []
    for rule in wanted:
        assert rule.check is not None
        findings.extend(rule.check(facts))
    return findings


def _baseline_split(
    found: Survey, paths: Sequence[Path], loaded: LoadedConfig, chosen: Selection
) -> Split | None:
    """The run's findings against the findings baseline; None when the project has none.
    Raises BaselineError when the file is broken, or when a new ruff version no longer matches
    its ruff entries."""
    session = FindingsSession(loaded)
    baseline = session.read()
    if baseline is None:
        return None
    gate_entries = follow_renames(baseline.findings, session.renamed(baseline.findings))
    ruff_entries = follow_renames(baseline.ruff_findings, session.renamed(baseline.ruff_findings))
    parsed = found.stage.measured_paths
    judged = session.judged_paths(parsed, paths, [*gate_entries, *ruff_entries])
    gate_split = split(
        (f for f in found.findings if f.family is not Family.RUFF),
        gate_entries,
        lambda entry: entry.path in judged and chosen.judges(entry.code),
    )
    ruff_split = split(
        (f for f in found.findings if f.family is Family.RUFF),
        ruff_entries,
        lambda entry: found.ruff_version is not None and entry.path in judged,
    )
    if found.ruff_version is not None:
        check_ruff_version(baseline, found.ruff_version, ruff_split.stale, session.shown)
    return Split(
        gate_split.reported + ruff_split.reported,
        gate_split.baselined + ruff_split.baselined,
        gate_split.stale + ruff_split.stale,
    )


def run_check(
    paths: Sequence[Path],
    loaded: LoadedConfig,
    chosen: Selection,
    options: RunOptions | None = None,
    base: str | None = None,
    changed: ChangedLines | None = None,
) -> CheckResult:
    """Check every file under `paths` (see `survey`), hold back what the findings baseline
    grandfathers, then keep what the `changed` lines of `--diff` are responsible for.
    Findings are sorted by path, line, column, code.

    Raises UsageError, BaselineError (a broken complexity or findings baseline) and RuffError.
    """
    found = survey(paths, loaded, chosen, options, base)
    held = _baseline_split(found, paths, loaded, chosen)
    findings = held.reported if held is not None else found.findings
    if changed is not None:
        findings = keep(findings, changed, loaded.root)
    findings.sort(key=Finding.sort_key)
    return CheckResult(
        findings,
        len(found.checked),
        found.stage.functions,
        found.stage.excluded,
        baselined=sorted(held.baselined, key=Finding.sort_key) if held is not None else [],
        stale=held.stale if held is not None else None,
        rules=found.rules,
        summaries=found.stage.project(),
    )


@dataclass
class Measurements:
    """Every function's complexity, the files measured, and the findings of those that were not."""

    functions: list[FunctionComplexity]
    measured_paths: set[str]
    unparsed: list[Finding]


def measure_paths(
    paths: Sequence[Path], loaded: LoadedConfig, options: RunOptions | None = None
) -> Measurements:
    """Complexity of every function under `paths`, without the teardown rules."""
    stage = _file_stage(_discover(paths, loaded), loaded, options or RunOptions(), teardown=False)
    return Measurements(stage.functions, stage.measured_paths, stage.unparsed)
