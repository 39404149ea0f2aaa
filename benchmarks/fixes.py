"""gate's fixes on trees of your choice: how many teardown findings get a fix, and whether each
fix compiles, clears what it was for and stays put when fixed again; the reasons for the rest.

    .venv/bin/python benchmarks/fixes.py DIR [DIR ...]
    .venv/bin/python benchmarks/fixes.py /tmp/gate-realbugs/*/buggy      # the real-bug cases

Each DIR is copied to a temporary folder and checked there as its own project (nothing in DIR
is written): `gate check` with the teardown rules (GATE1) and no cache, the fixes planned and
written as `gate check --fix` writes them, then checked again, then fixed again. Prints one row
per DIR and the totals; exits 1 when a written fix does not compile, leaves a finding it was for,
or changes on a second run.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from gate.config import load_config
from gate.engine import RunOptions
from gate.filters import selection
from gate.fix.files import FileFix, plan_fixes
from gate.model import Family, Finding
from gate.pipeline import run_check


@dataclass
class Row:
    name: str
    findings: int = 0
    fixable: int = 0
    cleared: int = 0
    files: int = 0
    broken: list[str] = field(default_factory=list)  # written files that do not compile
    left: list[str] = field(default_factory=list)  # fixable findings still reported after
    unstable: list[str] = field(default_factory=list)  # files a second run changes again
    reasons: Counter[str] = field(default_factory=Counter)


def _key(finding: Finding) -> tuple[str, str, str]:
    return finding.code, finding.location.path, finding.anchor


def _check(root: Path):
    loaded = load_config(None, root)
    chosen = selection(loaded.settings.select, loaded.settings.ignore, "defaults", ["GATE1"])
    result = run_check([root], loaded, chosen, RunOptions(jobs=1, cache=False))
    teardown = [f for f in result.findings if f.family is Family.TEARDOWN]
    return loaded, chosen, result, teardown


def _reason(note: str) -> str:
    """A reason without its line numbers, so that the same reason counts once."""
    words = [w for w in note.split() if not w.rstrip(",:").isdigit()]
    return " ".join(words)[:90]


def measure(directory: Path, scratch: Path) -> Row:
    root = scratch / directory.name
    shutil.copytree(directory, root)
    row = Row(str(directory))
    loaded, chosen, result, before = _check(root)
    run = plan_fixes(result.findings, loaded.root, loaded.settings, chosen, True, result.summaries)
    planned = [f for f in run.findings if f.family is Family.TEARDOWN]
    fixable = [f for f in planned if f.fix is not None and f.fix.available]
    row.findings, row.fixable, row.files = len(before), len(fixable), len(run.files)
    row.reasons.update(_reason(f.fix.note) for f in planned if f.fix and not f.fix.available)
    row.broken = _write(run.files)
    _after(root, fixable, row)
    return row


def _after(root: Path, fixable: list[Finding], row: Row) -> None:
    """What the written fixes left, and what a second run would change."""
    loaded, chosen, result, after = _check(root)
    remaining = {_key(f) for f in after}
    row.cleared = sum(_key(f) not in remaining for f in fixable)
    row.left = [_where(f) for f in fixable if _key(f) in remaining]
    again = plan_fixes(
        result.findings, loaded.root, loaded.settings, chosen, True, result.summaries
    )
    row.unstable = [file.path for file in again.files]


def _write(files: list[FileFix]) -> list[str]:
    """Write each fixed file; the ones whose new text does not compile."""
    broken = []
    for file in files:
        file.write()
        try:
            ast.parse(file.fixed)
        except SyntaxError:
            broken.append(file.path)
    return broken


def _where(finding: Finding) -> str:
    return f"{finding.location.path}:{finding.location.line} {finding.code}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directories", nargs="+", type=Path, metavar="DIR")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="gate-fixes-") as scratch:
        for number, directory in enumerate(args.directories):
            place = Path(scratch) / str(number)
            place.mkdir()
            rows.append(measure(directory, place))
    print("| tree | teardown findings | with a fix | cleared | files written | problems |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        problems = len(row.broken) + len(row.left) + len(row.unstable)
        print(
            f"| {row.name} | {row.findings} | {row.fixable} | {row.cleared} | {row.files} "
            f"| {problems or ''} |"
        )
    total = Row("total")
    for row in rows:
        total.findings += row.findings
        total.fixable += row.fixable
        total.cleared += row.cleared
        total.files += row.files
        total.broken += row.broken
        total.left += row.left
        total.unstable += row.unstable
        total.reasons.update(row.reasons)
    print(
        f"\ntotal: {total.findings} teardown findings in {len(rows)} trees; {total.fixable} "
        f"with a fix, {total.cleared} cleared by it, {total.files} files written; "
        f"{len(total.broken)} do not compile, {len(total.left)} findings left, "
        f"{len(total.unstable)} files change on a second run"
    )
    for problem in total.broken + total.left + total.unstable:
        print(f"  problem: {problem}")
    print("\nno fix, by reason:")
    for reason, count in total.reasons.most_common():
        print(f"  {count:4d}  {reason}")
    return 1 if total.broken or total.left or total.unstable else 0


if __name__ == "__main__":
    sys.exit(main())
