"""Score gate and flake8-async on the real-bug cases: found on the buggy version, silent on the
fixed one.

    .venv/bin/python benchmarks/realbugs/score.py [--mirrors DIR] [--out DIR] [--json FILE]

Rebuilds every case (rebuild.py), then runs, in each version's own folder and with each tool's
defaults, `gate check --format json --no-cache` and `flake8 --select ASYNC` on the rebuilt file.
A finding matches a case when it lies inside the case's function in that version (line span from
`ast`) and its code is a teardown rule: GATE1xx for gate, ASYNC1xx for flake8-async.

    found    a matching finding on the buggy version
    missed   none on the buggy version
    false    a matching finding on the fixed version

The table marks with `@` a finding that also touches one of the case's buggy lines. The full
results (every finding of both tools on both versions) go to --json, by default OUT/results.json,
so two runs can be diffed before and after a rule change. flake8-async comes with
`pip install -e '.[bench]'`; without it its columns read `n/a`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

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


def gate_findings(rebuilt: Sequence[RebuiltCase]) -> Findings:
    """gate's findings on every rebuilt file, one run per version, a few at a time."""
    jobs = [(item.case.id, name, item.version(name)) for item in rebuilt for name in VERSIONS]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        found = list(pool.map(lambda job: run_gate(job[2]), jobs))
    return {
        (case_id, name): findings for (case_id, name, _), findings in zip(jobs, found, strict=True)
    }


def run_gate(version: Version) -> list[Finding]:
    """gate's findings on one rebuilt file, run from the version's folder, so no settings of
    another project apply and each version is a project of its own; BenchmarkError on exit 2."""
    relative = version.file.relative_to(version.root)
    command = [sys.executable, "-m", "gate", "check", "--format", "json", "--no-cache"]
    completed = _run([*command, "--exit-zero", str(relative)], version.root)
    if completed.returncode != 0:
        raise BenchmarkError(f"gate failed on {version.file}: {completed.stderr.strip()}")
    report = json.loads(completed.stdout)
    return [
        Finding(
            item["code"],
            item["line"],
            item.get("end_line", item["line"]),
            item["message"],
            item["severity"],
        )
        for item in report["findings"]
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
    return f"{word}{marker} {shown}"


def _by_line(text: str) -> int:
    return int(text.rsplit("@", 1)[1])


def totals(scores: Sequence[ToolScore]) -> dict[str, int]:
    """found, missed, false (flagged on fixed) and found at a buggy line, over scored cases."""
    scored = [score for score in scores if score.available]
    return {
        "cases": len(scored),
        "found": sum(score.found for score in scored),
        "missed": sum(not score.found for score in scored),
        "false": sum(score.flagged_fixed for score in scored),
        "false_errors": sum(score.fails_fixed for score in scored),
        "found_at_buggy_line": sum(score.buggy.at_buggy_line for score in scored),
    }


def render_table(rows: list[tuple[str, ToolScore, ToolScore]]) -> str:
    header = ("case", "gate buggy", "gate fixed", "flake8-async buggy", "flake8-async fixed")
    cells = [header] + [
        (case_id, *(describe(s, v) for s in (gate, flake8) for v in VERSIONS))
        for case_id, gate, flake8 in rows
    ]
    widths = [max(len(row[column]) for row in cells) for column in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)


def render_totals(name: str, figures: dict[str, int]) -> str:
    if not figures["cases"]:
        return f"{name}: not run"
    return (
        f"{name}: found {figures['found']}/{figures['cases']} "
        f"({figures['found_at_buggy_line']} at a buggy line), missed {figures['missed']}, "
        f"false {figures['false']} (flagged on the fixed version; "
        f"{figures['false_errors']} with an error that fails the run)"
    )


def results_json(rows: list[tuple[RebuiltCase, ToolScore, ToolScore]]) -> dict[str, object]:
    cases = []
    for item, gate, flake8 in rows:
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
                "gate": _tool_json(gate),
                "flake8_async": _tool_json(flake8),
            }
        )
    return {
        "version": 1,
        "cases": cases,
        "totals": {
            "gate": totals([gate for _, gate, _ in rows]),
            "flake8_async": totals([flake8 for _, _, flake8 in rows]),
        },
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(parser)
    parser.add_argument("--json", type=Path, help="results file (default OUT/results.json)")
    parser.add_argument("--no-flake8", action="store_true", help="score gate only")
    args = parser.parse_args(argv)
    with_flake8 = not args.no_flake8 and flake8_async_installed()
    try:
        rebuilt = rebuild_all(select(load_cases(args.cases), args.only), args.mirrors, args.out)
        gate = gate_findings(rebuilt)
        flake8 = flake8_async_findings(rebuilt, args.out) if with_flake8 else None
        rows = [
            (item, score_case(item, gate, GATE_TEARDOWN), score_case(item, flake8, ASYNC_TEARDOWN))
            for item in rebuilt
        ]
    except BenchmarkError as error:
        print(error, file=sys.stderr)
        return 2
    if not with_flake8 and not args.no_flake8:
        print("flake8-async is not installed (pip install -e '.[bench]'): its columns read n/a")
    print(render_table([(item.case.id, gate, flake8) for item, gate, flake8 in rows]))
    print()
    results = results_json(rows)
    print(render_totals("gate", results["totals"]["gate"]))  # type: ignore[index]
    print(render_totals("flake8-async", results["totals"]["flake8_async"]))  # type: ignore[index]
    target = args.json or args.out / "results.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"results: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
