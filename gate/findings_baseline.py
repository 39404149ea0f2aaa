"""The findings baseline (`baselines/findings.json`): the teardown and ruff findings a project
has chosen to live with for now, as the complexity baseline does for complexity.

An entry spells out a finding's fingerprint: its code, project-relative path, enclosing
function and source text, never a line number, so code moving up or down the file keeps its
entry, and a file git reports as renamed keeps its entries too. The file is sorted, one entry per
line, without timestamps: regenerated from the same tree it has the same bytes, and two branches
that touch different entries merge cleanly. ruff's entries are kept apart with the ruff version
that reported them: another version can word its findings differently.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from gate import git
from gate.baseline_file import (
    BaselineError,
    check_schema,
    conflict_line,
    conflict_parsed,
    judged_paths,
    parse_document,
    read_raw,
    relative_to,
)
from gate.config import LoadedConfig
from gate.document import DocumentError, alias, read_document
from gate.fsutil import atomic_write, display_path
from gate.model import Family, Finding

SCHEMA_VERSION = 1

# Complexity has its own ratchet. A file gate could not read or parse was not checked at all, so
# its finding is never grandfathered.
BASELINED_FAMILIES = frozenset({Family.TEARDOWN, Family.RUFF})

Key = tuple[str, str, str]  # code, path, anchor: what a finding's fingerprint hashes


@dataclass(frozen=True)
class Entry:
    """One grandfathered finding. `text` is None for an anchor that is a function alone."""

    code: str = field(metadata={"min_length": 1})
    path: str = field(metadata={"min_length": 1})
    function: str
    text: str | None = None

    @classmethod
    def of(cls, finding: Finding) -> Entry:
        function, separator, text = finding.anchor.partition("\x1f")
        return cls(
            code=finding.code,
            path=finding.location.path,
            function=function,
            text=text if separator else None,
        )

    @property
    def key(self) -> Key:
        anchor = self.function if self.text is None else f"{self.function}\x1f{self.text}"
        return (self.code, self.path, anchor)

    @property
    def order(self) -> tuple[str, str, str, str]:
        return (self.path, self.function, self.code, self.text or "")

    def moved(self, path: str) -> Entry:
        return replace(self, path=path)

    def line(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    def describe(self) -> str:
        text = (self.text or "").split("\x1f")[-1]
        where = self.function or "module level"
        return f"{self.code} {self.path} ({where}: {text})"


def key_of(finding: Finding) -> Key:
    return (finding.code, finding.location.path, finding.anchor)


@dataclass(frozen=True)
class FindingsBaseline:
    """The file: gate's entries, ruff's entries and the ruff version that reported them."""

    schema_version: int = field(default=SCHEMA_VERSION, metadata=alias("schema"))
    tool: str = "gate"
    findings: tuple[Entry, ...] = ()
    ruff_findings: tuple[Entry, ...] = field(default=(), metadata=alias("ruff-findings"))
    ruff_version: str | None = field(default=None, metadata=alias("ruff-version"))


def _section(name: str, entries: Iterable[Entry]) -> list[str]:
    rows = [entry.line() for entry in sorted(set(entries), key=lambda e: e.order)]
    if not rows:
        return [f'  "{name}": [],']
    return [f'  "{name}": [', *(f"    {row}," for row in rows[:-1]), f"    {rows[-1]}", "  ],"]


def render(baseline: FindingsBaseline) -> str:
    """The file's text: sorted, one entry per line, a trailing newline, no timestamps."""
    lines = ["{"]
    lines += _section("findings", baseline.findings)
    lines += _section("ruff-findings", baseline.ruff_findings)
    lines.append(f'  "ruff-version": {json.dumps(baseline.ruff_version)},')
    lines.append(f'  "schema": {SCHEMA_VERSION},')
    lines.append('  "tool": "gate"')
    return "\n".join(lines) + "\n}\n"


@dataclass
class Split:
    """A run's findings against the baseline: those it reports, those the baseline holds, and
    the entries of the judged files that matched nothing (stale)."""

    reported: list[Finding] = field(default_factory=list)
    baselined: list[Finding] = field(default_factory=list)
    stale: list[Entry] = field(default_factory=list)


def split(
    findings: Iterable[Finding], entries: Iterable[Entry], judged: Callable[[Entry], bool]
) -> Split:
    """Match findings against entries, one entry for one finding; only findings of the
    baselined families can match."""
    entries = list(entries)
    remaining = Counter(entry.key for entry in entries)
    result = Split()
    for finding in findings:
        key = key_of(finding)
        if finding.family in BASELINED_FAMILIES and remaining[key] > 0:
            remaining[key] -= 1
            result.baselined.append(finding)
        else:
            result.reported.append(finding)
    for entry in entries:
        if remaining[entry.key] > 0 and judged(entry):
            remaining[entry.key] -= 1
            result.stale.append(entry)
    return result


@dataclass
class Section:
    """One part of the file (gate's entries or ruff's) as `gate baseline update` leaves it."""

    entries: list[Entry] = field(default_factory=list)
    added: list[Entry] = field(default_factory=list)
    removed: list[Entry] = field(default_factory=list)
    not_accepted: list[Entry] = field(default_factory=list)


def plan_section(
    findings: Iterable[Finding],
    recorded: Sequence[Entry],
    judged: Callable[[Entry], bool],
    accept_new: bool,
) -> Section:
    """Keep the entries that still match and those of files not judged, remove the stale
    ones, add the new findings only with `accept_new`."""
    matched = split(findings, recorded, judged)
    section = Section()
    stale = Counter(entry.key for entry in matched.stale)
    for entry in recorded:
        gone = stale[entry.key] > 0
        stale[entry.key] -= gone
        (section.removed if gone else section.entries).append(entry)
    new = [Entry.of(finding) for finding in matched.reported]
    section.added, section.not_accepted = (new, []) if accept_new else ([], new)
    section.entries += section.added
    return section


class FindingsSession:
    """The findings baseline of one configured project, and what git says about renames."""

    def __init__(self, loaded: LoadedConfig) -> None:
        self.root = loaded.root
        self.path = (self.root / loaded.settings.findings_baseline).resolve()
        self.shown = display_path(self.path)

    def read(self, merge_conflicts: bool = False) -> FindingsBaseline | None:
        """The baseline, None when there is none; raises BaselineError when it is broken.

        A file with merge-conflict markers is an error, unless `merge_conflicts`: then both
        sides are read and their entries kept."""
        text = read_raw(self.path, self.shown)
        if text is None:
            return None
        line = conflict_line(text)
        if line is None:
            return _parse(text, self.shown)
        if not merge_conflicts:
            raise BaselineError(
                f"{self.shown}:{line}: merge-conflict marker in the baseline; resolve it, or run "
                "`gate baseline update`, which keeps the entries of both sides"
            )
        return _merged(text, self.shown, line)

    def write(self, baseline: FindingsBaseline) -> None:
        atomic_write(self.path, render(baseline))

    @functools.cached_property
    def entry_lines(self) -> dict[Entry, int]:
        """The line of each entry in the file, for pointing at stale ones."""
        text = read_raw(self.path, self.shown) or ""
        lines = {}
        for number, line in enumerate(text.splitlines(), start=1):
            row = line.strip().rstrip(",")
            if row.startswith("{") and row.endswith("}"):
                try:
                    lines[read_document(Entry, json.loads(row))] = number
                except (ValueError, DocumentError):
                    continue
        return lines

    def renamed(self, entries: Iterable[Entry]) -> dict[str, str]:
        """Renames git reports since the baseline was last committed, for entries whose file
        is gone."""
        gone = {entry.path for entry in entries if not (self.root / entry.path).exists()}
        if not gone:
            return {}
        commit = git.last_commit(self.root, relative_to(self.root, self.path)) or git.head(
            self.root
        )
        return git.renamed_away(self.root, commit, gone) if commit else {}

    def judged_paths(
        self, checked: Iterable[str], arguments: Sequence[Path], entries: Iterable[Entry]
    ) -> set[str]:
        return judged_paths(self.root, checked, arguments, (entry.path for entry in entries))


def _parse(text: str, shown: str) -> FindingsBaseline:
    baseline = parse_document(text, shown, FindingsBaseline)
    check_schema(baseline.tool, baseline.schema_version, SCHEMA_VERSION, shown)
    return baseline


def _merged(text: str, shown: str, line: int) -> FindingsBaseline:
    """Both sides of a conflicted findings baseline: every entry of either side. The ruff
    version is kept only when both sides agree (the next update records the current one)."""
    ours, theirs = conflict_parsed(text, shown, line, _parse)
    same = ours.ruff_version == theirs.ruff_version
    return replace(
        ours,
        findings=tuple(dict.fromkeys(ours.findings + theirs.findings)),
        ruff_findings=tuple(dict.fromkeys(ours.ruff_findings + theirs.ruff_findings)),
        ruff_version=ours.ruff_version if same else None,
    )


def follow_renames(entries: Iterable[Entry], renamed: dict[str, str]) -> list[Entry]:
    return [
        entry.moved(renamed[entry.path]) if entry.path in renamed else entry for entry in entries
    ]


def check_ruff_version(
    baseline: FindingsBaseline, version: str, stale: Sequence[Entry], shown: str
) -> None:
    """Another ruff can word its findings differently: when the baseline's ruff entries no
    longer match under a new ruff version, say so rather than report them as fixed."""
    if baseline.ruff_version in (None, version) or not stale:
        return
    raise BaselineError(
        f"{shown}: its ruff entries were written with ruff {baseline.ruff_version}, this run "
        f"uses ruff {version}, and {len(stale)} of them no longer match (the new ruff words its "
        "findings differently, or they were fixed); re-baseline deliberately with "
        "`gate baseline update --rebaseline` and review the diff"
    )


@dataclass
class FindingsUpdate:
    """What `gate baseline update` does to the findings baseline."""

    session: FindingsSession
    baseline: FindingsBaseline
    sections: tuple[Section, Section]  # gate's entries, ruff's
    moved: list[tuple[str, str]]
    text: str
    unchanged: bool

    def report(self) -> list[str]:
        """One line per change, then whether the file was written."""
        lines = [f"moved: {old} -> {new}" for old, new in self.moved]
        for section in self.sections:
            lines += [f"added: {entry.describe()}" for entry in section.added]
            lines += [
                f"removed: {entry.describe()} (no longer reported)" for entry in section.removed
            ]
            lines += [
                f"not added: {entry.describe()} (new; --accept-new adds it)"
                for entry in section.not_accepted
            ]
        count = len(self.baseline.findings) + len(self.baseline.ruff_findings)
        state = "up to date" if self.unchanged else "written"
        return [*lines, f"{self.session.shown}: {state} ({count} entries)"]

    def write(self) -> None:
        if not self.unchanged:
            atomic_write(self.session.path, self.text)


@dataclass(frozen=True)
class _Planner:
    """The judged files and the renames of one `gate baseline update`. New findings are added
    with `accept_new`, on the first run, and for the judged files of a `rebaseline`."""

    judged: set[str]
    renamed: dict[str, str]
    accept_new: bool
    rebaseline: bool

    def section(
        self, recorded: Sequence[Entry], findings: Iterable[Finding], ruff: bool, ran: bool
    ) -> Section:
        """The plan of gate's section, or of ruff's (`ruff`); `ran`: the tool ran."""
        entries = follow_renames(recorded, self.renamed)
        if self.rebaseline:
            entries = [entry for entry in entries if not (ran and entry.path in self.judged)]
        baselined = [
            f
            for f in findings
            if f.family in BASELINED_FAMILIES and (f.family is Family.RUFF) == ruff
        ]
        judged = functools.partial(self._judged, ran)
        return plan_section(baselined, entries, judged, self.accept_new or self.rebaseline)

    def _judged(self, ran: bool, entry: Entry) -> bool:
        return ran and entry.path in self.judged


def plan_findings_update(
    session: FindingsSession,
    findings: Sequence[Finding],
    parsed_paths: Iterable[str],
    arguments: Sequence[Path],
    ruff_version: str | None,
    accept_new: bool = False,
    rebaseline: bool = False,
) -> FindingsUpdate:
    """Remove stale entries, re-key files git reports as renamed, add new findings only with
    `accept_new` (or when there is no baseline yet); `rebaseline` starts the judged files over.
    Only files under `arguments` that gate could parse are judged. Raises BaselineError when
    the file is broken or a new ruff version no longer matches its ruff entries."""
    try:
        existing = session.read(merge_conflicts=True)
    except BaselineError:
        if not rebaseline:
            raise
        existing = None  # starting over replaces even a broken file
    first = existing is None
    recorded = existing or FindingsBaseline()
    entries = [*recorded.findings, *recorded.ruff_findings]
    renamed = session.renamed(entries)
    judged = session.judged_paths(parsed_paths, arguments, follow_renames(entries, renamed))
    planner = _Planner(judged, renamed, accept_new or first, rebaseline)
    gate = planner.section(recorded.findings, findings, ruff=False, ran=True)
    ruff_ran = ruff_version is not None
    ruff = planner.section(recorded.ruff_findings, findings, ruff=True, ran=ruff_ran)
    if ruff_version is not None and not rebaseline:
        check_ruff_version(recorded, ruff_version, ruff.removed, session.shown)
    baseline = FindingsBaseline(
        findings=tuple(gate.entries),
        ruff_findings=tuple(ruff.entries),
        ruff_version=ruff_version or recorded.ruff_version,
    )
    text = render(baseline)
    unchanged = not first and read_raw(session.path, session.shown) == text
    return FindingsUpdate(session, baseline, (gate, ruff), sorted(renamed.items()), text, unchanged)
