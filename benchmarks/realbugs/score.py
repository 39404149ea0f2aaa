"""Score gate and flake8-async on the real-bug cases: found on the buggy version, silent on the
fixed one.

    .venv/bin/python benchmarks/realbugs/score.py [--mirrors DIR] [--out DIR] [--json FILE]

Rebuilds every case (rebuild.py), then runs, in each version's own folder and with each tool's
defaults, `gate check --format json --no-cache` in two modes and `flake8 --select ASYNC` once:

    file     gate checks the case's file alone, as pre-commit runs it
    package  gate checks the whole exported package (`gate check .` in the version's folder, as
             CI runs it) and only the findings in the case's file are kept; gate reads callers'
             facts (a function every caller shields is shielded) only when given directories
    flake8-async checks one file at a time whatever it is given, so it runs once, per file

A finding matches a case when it lies inside the case's function in that version (line span from
`ast`) and its code is a teardown rule: GATE1xx for gate, ASYNC1xx for flake8-async.

    found    a matching finding on the buggy version
    missed   none on the buggy version
    false    a matching finding on the fixed version

The table marks with `@` a finding that also touches one of the case's buggy lines. Every fixed
version gate flags, in either mode, is listed with its case's `fixed_flag_reason` from cases.toml.
Exit 1 when gate flags a fixed version with an error and its case records no reason: a regression
(or a new false alarm) to explain or fix. The full results (every finding of every run) go to
--json, by default OUT/results.json, so two runs can be diffed before and after a rule change.
flake8-async comes with `pip install -e '.[bench]'`; without it its columns read `n/a`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rebuild import (  # the folder is not a package: import by path
    VERSIONS,
    BenchmarkError,
    RebuiltCase,
    Version,
    add_common_arguments,
    load_cases,
    rebuild_all,
    select,
)

# How gate is run: on the case's file alone (pre-commit) or on the exported package (CI).
GATE_MODES = ("file", "package")

GATE_TEARDOWN = re.compile(r"GATE1\d\d")
# flake8-async's rules about a checkpoint or a cancellation in cleanup code. Its other ASYNC1xx
# rules judge something else (ASYNC109 a `timeout` parameter, ASYNC115 `sleep(0)`, ASYNC110 a
# busy-wait loop, ...): a finding of theirs inside the function says nothing about the bug.
ASYNC_TEARDOWN = re.compile(r"ASYNC10[234]|ASYNC120")
FLAKE8_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):\d+: (?P<code>\w+) (?P<message>.*)$")


@dataclass(frozen=True)
class Finding:
    code: str
    line: int
    end_line: int
    message: str
    severity: str = "error"  # flake8-async has no severities: every finding fails its run


@dataclass
class VersionScore:
    findings: list[Finding] = field(default_factory=list)
    matching: list[Finding] = field(default_factory=list)
    at_buggy_line: bool = False


@dataclass
class ToolScore:
    available: bool
    buggy: VersionScore = field(default_factory=VersionScore)
    fixed: VersionScore = field(default_factory=VersionScore)

    @property
    def found(self) -> bool:
        return bool(self.buggy.matching)

    @property
    def flagged_fixed(self) -> bool:
        return bool(self.fixed.matching)

    @property
    def fails_fixed(self) -> bool:
        """Flagged on the fixed version with a finding that fails the run (an error)."""
        return any(finding.severity == "error" for finding in self.fixed.matching)


Findings = dict[tuple[str, str], list[Finding]]


@dataclass(frozen=True)
class GateRun:
    """gate's findings on every rebuilt version in one mode, and the seconds its runs took
    (summed over runs, which overlap: the wall time of the whole benchmark is printed apart)."""

    findings: Findings
    seconds: float


def gate_findings(rebuilt: Sequence[RebuiltCase]) -> dict[str, GateRun]:
    """gate's findings in every mode, one run per version and mode, a few at a time."""
    jobs = _gate_jobs(rebuilt)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        done = dict(zip(jobs, pool.map(_timed_gate, jobs), strict=True))
    return {
        mode: _gate_run({job: done[job] for job in jobs if job.mode == mode}) for mode in GATE_MODES
    }


class GateJob(NamedTuple):
    case_id: str
    name: str  # "buggy" or "fixed"
    mode: str  # one of GATE_MODES
    version: Version


def _gate_jobs(rebuilt: Sequence[RebuiltCase]) -> list[GateJob]:
    """Every run to make, the largest packages first so that no long run starts last."""
    jobs = [
        GateJob(item.case.id, name, mode, item.version(name))
        for mode in GATE_MODES
        for item in rebuilt
        for name in VERSIONS
    ]
    sizes = {job: _python_files(job.version.root) if job.mode == "package" else 0 for job in jobs}
    return sorted(jobs, key=lambda job: -sizes[job])


def _gate_run(done: dict[GateJob, tuple[list[Finding], float]]) -> GateRun:
    return GateRun(
        findings={(job.case_id, job.name): findings for job, (findings, _) in done.items()},
        seconds=sum(seconds for _, seconds in done.values()),
    )


def _python_files(root: Path) -> int:
    return sum(1 for _ in root.rglob("*.py"))


def _timed_gate(job: GateJob) -> tuple[list[Finding], float]:
    start = time.perf_counter()
    findings = run_gate(job.version, job.mode)
    return findings, time.perf_counter() - start


def run_gate(version: Version, mode: str = "file") -> list[Finding]:
    """gate's findings in one rebuilt file, run from the version's folder, so no settings of
    another project apply and each version is a project of its own; BenchmarkError on exit 2.

    In "file" mode gate is given the file; in "package" mode it is given the folder (`.`, which
    holds the exported package) and only the findings in the file are kept. `--jobs 1`: the
    benchmark already runs several versions at once."""
    relative = version.file.relative_to(version.root)
    target = str(relative) if mode == "file" else "."
    command = [sys.executable, "-m", "gate", "check", "--format", "json", "--no-cache"]
    completed = _run([*command, "--jobs", "1", "--exit-zero", target], version.root)
    if completed.returncode != 0:
        raise BenchmarkError(f"gate failed on {version.root / target}: {completed.stderr.strip()}")
    try:
        report = json.loads(completed.stdout)
    except json.JSONDecodeError as error:
        raise BenchmarkError(f"gate's JSON on {version.root / target}: {error}") from error
    return [
        Finding(
            item["code"],
            item["line"],
            item.get("end_line", item["line"]),
            item["message"],
            item["severity"],
        )
        for item in report["findings"]
        if Path(item["path"]) == relative
    ]


def flake8_async_findings(rebuilt: Sequence[RebuiltCase], out: Path) -> Findings:
    """flake8-async's findings on every rebuilt file, in one flake8 run (it has no cross-file
    analysis, and one run lets flake8 use every core); BenchmarkError when flake8 fails."""
    files = {
        item.version(name).file.relative_to(out).as_posix(): (item.case.id, name)
        for item in rebuilt
        for name in VERSIONS
    }
    command = [sys.executable, "-m", "flake8", "--select", "ASYNC", "--jobs", "auto"]
    completed = _run([*command, *files], out)
    if completed.returncode not in (0, 1):
        raise BenchmarkError(f"flake8 failed: {completed.stderr.strip()}")
    findings: Findings = {key: [] for key in files.values()}
    for path, finding in parse_flake8(completed.stdout):
        findings[files[path]].append(finding)
    return findings


def parse_flake8(output: str) -> list[tuple[str, Finding]]:
    """(path, finding) for every `path:line:col: CODE message` line of flake8's output."""
    parsed = []
    for text in output.splitlines():
        match = FLAKE8_LINE.match(text)
        if match:
            line = int(match["line"])
            finding = Finding(match["code"], line, line, match["message"])
            parsed.append((Path(match["path"]).as_posix().removeprefix("./"), finding))
    return parsed


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)


def flake8_async_installed() -> bool:
    return importlib.util.find_spec("flake8_async") is not None


def score_version(
    item: RebuiltCase, name: str, findings: list[Finding], teardown: re.Pattern[str]
) -> VersionScore:
    version = item.version(name)
    matching = [f for f in findings if teardown.fullmatch(f.code) and version.holds(f.line)]
    buggy_lines = set(item.case.buggy_lines) if name == "buggy" else set()
    at_line = any(buggy_lines & set(range(f.line, f.end_line + 1)) for f in matching)
    return VersionScore(findings=findings, matching=matching, at_buggy_line=at_line)


def score_case(
    item: RebuiltCase, findings: Findings | None, teardown: re.Pattern[str]
) -> ToolScore:
    """How one tool did on one case; `available=False` when the tool did not run."""
    if findings is None:
        return ToolScore(available=False)
    buggy, fixed = (
        score_version(item, name, findings[(item.case.id, name)], teardown) for name in VERSIONS
    )
    return ToolScore(available=True, buggy=buggy, fixed=fixed)


@dataclass(frozen=True)
class CaseScore:
    """How gate, in each mode, and flake8-async did on one case."""

    item: RebuiltCase
    gate: dict[str, ToolScore]
    flake8: ToolScore

    @property
    def fixed_flagged_by_gate(self) -> bool:
        return any(score.flagged_fixed for score in self.gate.values())

    @property
    def unexplained_error(self) -> bool:
        """gate fails the run on the fixed version and the case says nothing about why."""
        failing = any(score.fails_fixed for score in self.gate.values())
        return failing and not self.item.case.fixed_flag_reason


def describe(score: ToolScore, version: str) -> str:
    """One table cell: what a tool said about one version of a case."""
    if not score.available:
        return "n/a"
    side = score.buggy if version == "buggy" else score.fixed
    if not side.matching:
        return "missed" if version == "buggy" else "silent"
    codes = sorted({f"{f.code}@{f.line}" for f in side.matching}, key=_by_line)
    shown = ",".join(codes[:3]) + (",..." if len(codes) > 3 else "")
    word = "found" if version == "buggy" else "FALSE"
    marker = "@" if side.at_buggy_line else ""
    severity = "" if _fails(side) else ", warning"
    return f"{word}{marker} {shown}{severity}"


def _by_line(text: str) -> tuple[int, str]:
    """`GATE101@1715` sorts by line, then code: the cell reads the same on every run."""
    code, _, line = text.rpartition("@")
    return int(line), code


def totals(scores: Sequence[ToolScore]) -> dict[str, int]:
    """found, missed, false (flagged on fixed) and found at a buggy line, over scored cases."""
    scored = [score for score in scores if score.available]
    return {
        "cases": len(scored),
        "found": sum(score.found for score in scored),
        "found_with_error": sum(_fails(score.buggy) for score in scored if score.found),
        "missed": sum(not score.found for score in scored),
        "false": sum(score.flagged_fixed for score in scored),
        "false_errors": sum(score.fails_fixed for score in scored),
        "found_at_buggy_line": sum(score.buggy.at_buggy_line for score in scored),
    }


def _fails(side: VersionScore) -> bool:
    return any(finding.severity == "error" for finding in side.matching)


TABLE_HEADER = (
    "case",
    "gate file buggy",
    "gate file fixed",
    "gate package buggy",
    "gate package fixed",
    "flake8-async buggy",
    "flake8-async fixed",
)


def render_table(rows: Sequence[CaseScore]) -> str:
    """One line per case: gate on the file alone, gate on the package, flake8-async (per file)."""
    cells = [TABLE_HEADER, *(_table_row(row) for row in rows)]
    widths = [max(len(row[column]) for row in cells) for column in range(len(TABLE_HEADER))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)


def _table_row(row: CaseScore) -> tuple[str, ...]:
    gate = [describe(row.gate[mode], version) for mode in GATE_MODES for version in VERSIONS]
    flake8 = [describe(row.flake8, version) for version in VERSIONS]
    return (row.item.case.id, *gate, *flake8)


def render_totals(name: str, figures: dict[str, int]) -> str:
    if not figures["cases"]:
        return f"{name}: not run"
    return (
        f"{name}: found {figures['found']}/{figures['cases']} "
        f"({figures['found_at_buggy_line']} at a buggy line, "
        f"{figures['found_with_error']} with an error), missed {figures['missed']}, "
        f"false {figures['false']} (flagged on the fixed version; "
        f"{figures['false_errors']} with an error that fails the run)"
    )


def render_tool_totals(figures: dict[str, dict[str, int]]) -> list[str]:
    return [
        render_totals("gate, file alone (pre-commit)", figures["gate_file"]),
        render_totals("gate, package (CI)", figures["gate_package"]),
        render_totals("flake8-async (per file: the same in both modes)", figures["flake8_async"]),
    ]


def render_reasons(rows: Sequence[CaseScore]) -> list[str]:
    """Every fixed version gate flags in either mode, with the reason its case records; and the
    reasons recorded for fixed versions gate no longer flags."""
    lines = []
    for row in rows:
        case = row.item.case
        seen = ", ".join(f"{mode} {describe(row.gate[mode], 'fixed')}" for mode in GATE_MODES)
        if row.fixed_flagged_by_gate:
            reason = case.fixed_flag_reason or (
                "NO REASON RECORDED (fails the benchmark)"
                if row.unexplained_error
                else "no reason recorded (warnings only)"
            )
            lines.append(f"{case.id}: {seen}\n{_indented(reason)}")
        elif case.fixed_flag_reason and all(s.available for s in row.gate.values()):
            lines.append(f"{case.id}: {seen}\n    its fixed_flag_reason is stale: drop it")
    return lines


def _indented(text: str) -> str:
    return textwrap.fill(
        " ".join(text.split()), width=100, initial_indent="    ", subsequent_indent="    "
    )


def results_json(rows: Sequence[CaseScore], seconds: dict[str, float]) -> dict[str, object]:
    cases = []
    for row in rows:
        item = row.item
        spans = {
            name: [item.version(name).first_line, item.version(name).last_line] for name in VERSIONS
        }
        cases.append(
            {
                "id": item.case.id,
                "repository": item.case.repository,
                "function": {"buggy": item.case.function, "fixed": item.case.fixed_function},
                "span": spans,
                "buggy_lines": list(item.case.buggy_lines),
                "fixed_flag_reason": item.case.fixed_flag_reason,
                **{f"gate_{mode}": _tool_json(row.gate[mode]) for mode in GATE_MODES},
                "flake8_async": _tool_json(row.flake8),
            }
        )
    held_out = [row for row in rows if row.item.case.held_out]
    return {
        "version": 2,
        "cases": cases,
        "totals": tool_totals(rows),
        "held_out_totals": tool_totals(held_out) if held_out else None,
        "seconds": seconds,
    }


def tool_totals(rows: Sequence[CaseScore]) -> dict[str, dict[str, int]]:
    return {
        **{f"gate_{mode}": totals([row.gate[mode] for row in rows]) for mode in GATE_MODES},
        "flake8_async": totals([row.flake8 for row in rows]),
    }


def _tool_json(score: ToolScore) -> dict[str, object]:
    if not score.available:
        return {"available": False}
    return {
        "available": True,
        "found": score.found,
        "flagged_fixed": score.flagged_fixed,
        "buggy": asdict(score.buggy),
        "fixed": asdict(score.fixed),
    }


def score_all(
    rebuilt: Sequence[RebuiltCase], out: Path, with_flake8: bool
) -> tuple[list[CaseScore], dict[str, float]]:
    """Run both tools and score every case; the seconds each tool's runs took, summed."""
    start = time.perf_counter()
    gate = gate_findings(rebuilt)
    gate_wall = time.perf_counter() - start
    flake8 = flake8_async_findings(rebuilt, out) if with_flake8 else None
    seconds = {f"gate_{mode}_runs": round(run.seconds, 1) for mode, run in gate.items()}
    seconds["gate_wall"] = round(gate_wall, 1)
    if flake8 is not None:
        seconds["flake8_async_wall"] = round(time.perf_counter() - start - gate_wall, 1)
    rows = [
        CaseScore(
            item=item,
            gate={mode: score_case(item, gate[mode].findings, GATE_TEARDOWN) for mode in gate},
            flake8=score_case(item, flake8, ASYNC_TEARDOWN),
        )
        for item in rebuilt
    ]
    return rows, seconds


def render_report(rows: Sequence[CaseScore], results: dict[str, object]) -> str:
    figures: dict[str, dict[str, int]] = results["totals"]  # type: ignore[assignment]
    seconds: dict[str, float] = results["seconds"]  # type: ignore[assignment]
    parts = [render_table(rows), "", *render_tool_totals(figures), ""]
    held_out: dict[str, dict[str, int]] | None = results["held_out_totals"]  # type: ignore[assignment]
    if held_out is not None:
        parts += [
            "Held out (`held_out` in cases.toml: pinned and added before gate ran on them):",
            *render_tool_totals(held_out),
            "",
        ]
    parts += [
        f"time: gate {seconds['gate_wall']} s wall for both modes "
        f"(runs summed: file {seconds['gate_file_runs']} s, "
        f"package {seconds['gate_package_runs']} s), flake8-async "
        + (f"{seconds['flake8_async_wall']} s" if "flake8_async_wall" in seconds else "not run"),
    ]
    reasons = render_reasons(rows)
    if reasons:
        parts += ["", "Fixed versions gate flags (fixed_flag_reason in cases.toml):", *reasons]
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(parser)
    parser.add_argument("--json", type=Path, help="results file (default OUT/results.json)")
    parser.add_argument("--no-flake8", action="store_true", help="score gate only")
    args = parser.parse_args(argv)
    with_flake8 = not args.no_flake8 and flake8_async_installed()
    try:
        rebuilt = rebuild_all(select(load_cases(args.cases), args.only), args.mirrors, args.out)
        rows, seconds = score_all(rebuilt, args.out, with_flake8)
    except BenchmarkError as error:
        print(error, file=sys.stderr)
        return 2
    if not with_flake8 and not args.no_flake8:
        print("flake8-async is not installed (pip install -e '.[bench]'): its columns read n/a")
    results = results_json(rows, seconds)
    print(render_report(rows, results))
    target = args.json or args.out / "results.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"results: {target}")
    unexplained = [row.item.case.id for row in rows if row.unexplained_error]
    if unexplained:
        print(
            f"gate fails the run on the fixed version of {', '.join(unexplained)} and cases.toml "
            "records no fixed_flag_reason: explain it there, or fix gate",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
