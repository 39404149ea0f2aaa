"""gate on real async code bases, joined with the verdicts judged by hand.

    .venv/bin/python benchmarks/realcode/run.py [--tree OWNER/NAME] [--keep DIR] [--template]

Each tree in trees.toml is exported from the mirror that `fetch github:OWNER/NAME` leaves in
/work/.mirror/OWNER+NAME/repo (`--mirrors` to change that) at its pinned commit, with `git archive`
into a temporary directory outside any git checkout. gate checks the tree's listed subdirectories
from the tree root, teardown rules only (`--select GATE1,GATE9`: the complexity ratchet needs a
baseline the trees do not have). The trees' pyproject.toml files are exported too; none of them
has a [tool.gate] table, so gate runs with its defaults.

Every finding is looked up in judgments.csv (repo, path, line, code, function, verdict, tier,
shape, why) by (repo, path, line, code). The script prints, per tree and in total, the findings by
severity and by verdict, the share of errors judged real today and if severities followed the
judged tiers, then every unjudged finding, every error judged false, the judged findings gate no
longer reports (a lost `real` one is a lost true positive) and the false and debatable findings by
shape. `--template` prints the unjudged findings as CSV rows to fill in instead.

Exit 1 when an error-severity finding is judged false or is not judged, 0 otherwise, 2 when a
mirror or commit is missing or gate fails.
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import json
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
VERDICTS = ("real", "debatable", "false")
TIERS = ("error", "warning")


class SetupError(Exception):
    """A mirror, commit or judgment row that the benchmark cannot use."""


@dataclass(frozen=True)
class Tree:
    repo: str
    commit: str
    paths: tuple[str, ...]

    def mirror(self, mirrors: Path) -> Path:
        return mirrors / self.repo.replace("/", "+") / "repo"


@dataclass(frozen=True)
class Judgment:
    function: str
    verdict: str
    tier: str
    shape: str
    why: str


@dataclass(frozen=True)
class Finding:
    repo: str
    path: str
    line: int
    code: str
    severity: str
    message: str
    function: str

    @property
    def key(self) -> tuple[str, str, int, str]:
        return (self.repo, self.path, self.line, self.code)


def load_trees(path: Path) -> list[Tree]:
    """The trees in trees.toml, in file order."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [Tree(item["repo"], item["commit"], tuple(item["paths"])) for item in data["tree"]]


def load_judgments(path: Path) -> dict[tuple[str, str, int, str], Judgment]:
    """judgments.csv keyed by (repo, path, line, code); raises SetupError on a bad row."""
    judged: dict[tuple[str, str, int, str], Judgment] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for number, row in enumerate(csv.DictReader(handle), start=2):
            key = (row["repo"], row["path"], int(row["line"]), row["code"])
            if row["verdict"] not in VERDICTS or row["tier"] not in TIERS:
                raise SetupError(f"{path.name}:{number}: bad verdict or tier in {row}")
            if key in judged:
                raise SetupError(f"{path.name}:{number}: {key} is judged twice")
            judged[key] = Judgment(
                row["function"], row["verdict"], row["tier"], row["shape"], row["why"]
            )
    return judged


def export(tree: Tree, mirrors: Path, destination: Path) -> None:
    """Write the tree's Python files and pyproject.toml at its commit into destination.

    Only *.py files are archived: some mirrors lack large blobs (built web assets) that a plain
    `git archive` of the directory would need.
    """
    mirror = tree.mirror(mirrors)
    if not mirror.is_dir():
        raise SetupError(f"{mirror}: no mirror; run the fetch tool on github:{tree.repo}")
    specs = [f":(glob){path}/**/*.py" for path in tree.paths]
    listed = git(mirror, "ls-tree", "--name-only", tree.commit, "pyproject.toml")
    archive = subprocess.run(
        ["git", "-C", str(mirror), "archive", tree.commit, "--", *specs, *listed.split()],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        raise SetupError(f"{tree.repo}: git archive failed: {archive.stderr.decode().strip()}")
    destination.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(destination)], input=archive.stdout, check=True)


def git(mirror: Path, *arguments: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(mirror), *arguments], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise SetupError(f"{mirror}: git {' '.join(arguments)}: {result.stderr.strip()}")
    return result.stdout


def run_gate(tree: Tree, root: Path) -> list[Finding]:
    """gate's findings on the exported tree, each with its enclosing function."""
    command = [sys.executable, "-m", "gate", "check", "--format", "json", "--no-cache"]
    command += ["--exit-zero", "--select", "GATE1,GATE9", *tree.paths]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SetupError(f"{tree.repo}: gate exited {result.returncode}: {result.stderr.strip()}")
    functions = FunctionIndex(root)
    return [
        Finding(
            tree.repo,
            item["path"],
            item["line"],
            item["code"],
            item["severity"],
            item["message"],
            functions.enclosing(item["path"], item["line"]),
        )
        for item in json.loads(result.stdout)["findings"]
    ]


class FunctionIndex:
    """The qualified name of the innermost function around a line, per file, parsed once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.spans: dict[str, list[tuple[int, int, str]]] = {}

    def enclosing(self, path: str, line: int) -> str:
        if path not in self.spans:
            self.spans[path] = function_spans(self.root / path)
        inside = [span for span in self.spans[path] if span[0] <= line <= span[1]]
        return max(inside)[2] if inside else "<module>"


def function_spans(path: Path) -> list[tuple[int, int, str]]:
    try:
        module = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return []
    spans: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    spans.append((child.lineno, child.end_lineno or child.lineno, name))
                    visit(child, f"{name}.<locals>.")
                else:
                    visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(module, "")
    return spans


@dataclass
class Tally:
    severity: Counter
    verdict: Counter
    error_verdict: Counter
    judged_error_tier: Counter
    tier_mismatch: int = 0

    @classmethod
    def of(cls, findings: list[Finding], judged: dict) -> Tally:
        tally = cls(Counter(), Counter(), Counter(), Counter())
        for finding in findings:
            tally.add(finding, judged.get(finding.key))
        return tally

    def add(self, finding: Finding, judgment: Judgment | None) -> None:
        verdict = judgment.verdict if judgment else "unjudged"
        self.severity[finding.severity] += 1
        self.verdict[verdict] += 1
        if finding.severity == "error":
            self.error_verdict[verdict] += 1
        if judgment and judgment.verdict != "false":
            self.tier_mismatch += judgment.tier != finding.severity
            if judgment.tier == "error":
                self.judged_error_tier[verdict] += 1

    def lines(self, name: str) -> list[str]:
        severities = ", ".join(f"{k} {n}" for k, n in sorted(self.severity.items())) or "none"
        kept = sum(self.judged_error_tier.values())
        kept_real = self.judged_error_tier["real"]
        return [
            f"{name}: {sum(self.severity.values())} findings ({severities})",
            f"    all findings: {by_verdict(self.verdict)}",
            f"    errors: {by_verdict(self.error_verdict)}; real share of errors "
            f"{share(self.error_verdict['real'], sum(self.error_verdict.values()))} "
            "(target >= 60%)",
            f"    judged not false whose severity differs from the judged tier: "
            f"{self.tier_mismatch}",
            f"    if severities followed the judged tiers and no false finding were left: "
            f"{kept} errors, {kept_real} real ({share(kept_real, kept)})",
        ]


def by_verdict(counts: Counter) -> str:
    return ", ".join(f"{verdict} {counts[verdict]}" for verdict in (*VERDICTS, "unjudged"))


def share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "n/a"


def describe(finding: Finding) -> str:
    return f"  {finding.path}:{finding.line} {finding.code} [{finding.severity}] {finding.message}"


def verdict_of(finding: Finding, judged: dict) -> str:
    judgment = judged.get(finding.key)
    return judgment.verdict if judgment else "unjudged"


def report(per_tree: dict[str, list[Finding]], judged: dict) -> int:
    """Print the figures and lists; 1 when an error is judged false or not judged."""
    everything = [finding for findings in per_tree.values() for finding in findings]
    for repo, findings in per_tree.items():
        print("\n".join(Tally.of(findings, judged).lines(repo)))
    print("\n".join(Tally.of(everything, judged).lines("TOTAL")))
    unjudged = with_verdict(everything, judged, "unjudged")
    judged_false = with_verdict(everything, judged, "false")
    false_errors = [finding for finding in judged_false if finding.severity == "error"]
    print_list("unjudged findings (judge them in judgments.csv)", map(describe, unjudged))
    print_list("errors judged false", map(describe, false_errors))
    print_list("every error and its verdict", error_lines(everything, judged))
    print_list("judged findings gate no longer reports", gone_lines(per_tree, judged))
    print_shapes(everything, judged)
    failing = [finding for finding in unjudged if finding.severity == "error"] + false_errors
    return 1 if failing else 0


def with_verdict(findings: list[Finding], judged: dict, verdict: str) -> list[Finding]:
    return [finding for finding in findings if verdict_of(finding, judged) == verdict]


def gone_lines(per_tree: dict[str, list[Finding]], judged: dict) -> list[str]:
    reported = {finding.key for findings in per_tree.values() for finding in findings}
    gone = [key for key in judged if key[0] in per_tree and key not in reported]
    return [gone_line(key, judged) for key in gone]


def error_lines(findings: list[Finding], judged: dict) -> list[str]:
    return [judged_line(f, judged) for f in findings if f.severity == "error"]


def judged_line(finding: Finding, judged: dict) -> str:
    judgment = judged.get(finding.key)
    why = f"{judgment.verdict} ({judgment.shape}): {judgment.why}" if judgment else "unjudged"
    return f"  {finding.repo} {finding.path}:{finding.line} {finding.code} {why}"


def gone_line(key: tuple[str, str, int, str], judged: dict) -> str:
    judgment = judged[key]
    return f"  {key[0]} {key[1]}:{key[2]} {key[3]} was {judgment.verdict}: {judgment.why}"


def print_shapes(findings: list[Finding], judged: dict) -> None:
    shapes = Counter(
        (judged[finding.key].shape, judged[finding.key].verdict)
        for finding in findings
        if finding.key in judged and judged[finding.key].verdict != "real"
    )
    lines = (f"  {count:4} {shape} ({verdict})" for (shape, verdict), count in shapes.most_common())
    print_list("false and debatable findings by shape", lines)


def print_list(title: str, lines) -> None:
    lines = list(lines)
    print(f"\n{title}: {len(lines)}")
    for line in lines:
        print(line)


def template(findings: list[Finding], judged: dict) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for finding in findings:
        if finding.key not in judged:
            row = [*finding.key[:2], finding.line, finding.code, finding.function, "", "", "", ""]
            writer.writerow(row)
    return buffer.getvalue()


def collect(trees: list[Tree], mirrors: Path, workdir: Path) -> dict[str, list[Finding]]:
    per_tree = {}
    for tree in trees:
        root = workdir / tree.repo.replace("/", "+")
        export(tree, mirrors, root)
        per_tree[tree.repo] = run_gate(tree, root)
    return per_tree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--tree", action="append", help="only this OWNER/NAME (repeatable)")
    parser.add_argument("--keep", type=Path, help="export the trees here and keep them")
    parser.add_argument("--template", action="store_true", help="print unjudged rows as CSV")
    args = parser.parse_args()
    trees = [t for t in load_trees(HERE / "trees.toml") if not args.tree or t.repo in args.tree]
    try:
        judged = load_judgments(HERE / "judgments.csv")
        if args.keep:
            per_tree = collect(trees, args.mirrors, args.keep.resolve())
        else:
            with tempfile.TemporaryDirectory(prefix="gate-realcode-") as scratch:
                per_tree = collect(trees, args.mirrors, Path(scratch))
    except SetupError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.template:
        everything = [finding for findings in per_tree.values() for finding in findings]
        print(template(everything, judged), end="")
        return 0
    return report(per_tree, judged)


if __name__ == "__main__":
    sys.exit(main())
