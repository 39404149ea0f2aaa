"""gate against the tools users would otherwise run, side by side, on one tree.

    .venv/bin/python benchmarks/compare.py DIR [--repeat N] [--slow-repeat N]

Fetches nothing: DIR is any directory of Python code. Every command runs as a whole process;
the figures are medians of wall-clock seconds and the peak resident memory of the process tree
(from wait4). The tools come from the same environment as this Python (`pip install -e
'.[bench]'` installs xenon, flake8 and flake8-async; ruff and radon come with gate's test extras).

gate runs with an empty [tool.gate] config from a scratch directory, so its cache lives there and
no settings of the measured tree apply; `--exit-zero` keeps findings from looking like failures.
"gate cold + ruff" runs from a second scratch directory whose config says `ruff = true` (ruff
then uses the measured tree's own ruff configuration, or its defaults).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BIN = Path(sys.executable).parent


def tool(name: str) -> str | None:
    candidate = BIN / name
    return str(candidate) if candidate.exists() else shutil.which(name)


@dataclass
class Measurement:
    name: str
    seconds: list[float] = field(default_factory=list)
    peak_mb: float = 0.0
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.seconds) if self.seconds else float("nan")


def run_once(command: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one run of the command."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss / 1024


def measure(
    name: str,
    command: list[str],
    cwd: Path,
    repeat: int,
    before_each=None,
    warmup: bool = False,
) -> Measurement:
    result = Measurement(name)
    if warmup:
        run_once(command, cwd)
    for number in range(repeat):
        if before_each is not None:
            before_each(number)
        seconds, peak = run_once(command, cwd)
        result.seconds.append(seconds)
        result.peak_mb = max(result.peak_mb, peak)
    return result


def python_files(tree: Path) -> list[Path]:
    return sorted(path for path in tree.rglob("*.py") if path.is_file())


def gate_runs(tree: Path, files: list[Path], scratch: Path, repeat: int) -> list[Measurement]:
    gate = [tool("gate") or "gate", "check", str(tree), "--exit-zero", "--format", "json"]
    with_ruff = scratch / "with-ruff"
    with_ruff.mkdir(exist_ok=True)
    (with_ruff / "pyproject.toml").write_text("[tool.gate]\nruff = true\n")
    runs = [
        measure("gate cold (all cores)", [*gate, "--no-cache"], scratch, repeat),
        measure("gate cold + ruff (all cores)", [*gate, "--no-cache"], with_ruff, repeat),
        measure("gate cold (--jobs 1)", [*gate, "--no-cache", "--jobs", "1"], scratch, repeat),
        measure("gate warm (cache)", gate, scratch, repeat, warmup=True),
        measure("gate warm + ruff (both caches)", gate, with_ruff, repeat, warmup=True),
    ]
    victim = files[len(files) // 2]
    original = victim.read_bytes()

    def touch(number: int) -> None:
        victim.write_bytes(original + f"\n# benchmark edit {number} {time.time()}\n".encode())

    try:
        one = measure("gate, one file changed", gate, scratch, repeat, before_each=touch)
    finally:
        victim.write_bytes(original)
    one.note = victim.relative_to(tree).as_posix()
    return [*runs, one]


def other_runs(tree: Path, scratch: Path, repeat: int, slow_repeat: int) -> list[Measurement]:
    runs = []
    ruff = tool("ruff")
    if ruff:
        select = [ruff, "check", "--select", "C901,ASYNC", "--exit-zero", "--quiet", str(tree)]
        runs.append(measure("ruff C901,ASYNC --no-cache", [*select, "--no-cache"], scratch, repeat))
        cached = [*select, "--cache-dir", str(scratch / "ruff-cache")]
        runs.append(measure("ruff C901,ASYNC (cache)", cached, scratch, repeat, warmup=True))
    commands = {
        "xenon (no baseline, no teardown rules)": (
            "xenon",
            ["--max-absolute", "F", "--max-modules", "F", "--max-average", "F", str(tree)],
            repeat,
        ),
        "radon cc": ("radon", ["cc", "-s", str(tree)], repeat),
        "flake8 --select ASYNC (flake8-async)": (
            "flake8",
            ["--select", "ASYNC", "--exit-zero", str(tree)],
            slow_repeat,
        ),
    }
    for name, (program, arguments, times) in commands.items():
        found = tool(program)
        if found and times > 0:
            runs.append(measure(name, [found, *arguments], scratch, times))
    return runs


def report(results: list[Measurement]) -> None:
    cold = results[0].median
    print()
    print(f"{'command':44} {'median s':>9} {'vs gate cold':>13} {'peak MB':>8}")
    for item in results:
        ratio = item.median / cold
        print(f"{item.name:44} {item.median:9.3f} {ratio:12.2f}x {item.peak_mb:8.0f}  {item.note}")
    named = {item.name: item for item in results}
    warm = named["gate warm (cache)"].median
    print()
    if "xenon (no baseline, no teardown rules)" in named:
        xenon = named["xenon (no baseline, no teardown rules)"].median
        print(f"cold gate / xenon: {cold / xenon:.2f} (target <= 1)")
        with_ruff = named["gate cold + ruff (all cores)"].median
        print(f"cold gate + ruff / xenon: {with_ruff / xenon:.2f} (target <= 1)")
    print(
        f"ruff's cost in a cold run: {named['gate cold + ruff (all cores)'].median - cold:+.3f} s"
    )
    print(f"warm / cold gate: {warm / cold:.1%} (target < 10%)")
    if "ruff C901,ASYNC (cache)" in named:
        ruff = named["ruff C901,ASYNC (cache)"].median
        print(f"warm gate / cached ruff: {warm / ruff:.1f}x (target <= 3x)")
    print(f"one changed file: {named['gate, one file changed'].median:.3f} s (target < 0.5 s)")
    peak = max(item.peak_mb for item in results if item.name.startswith("gate"))
    print(f"gate peak memory (largest process): {peak:.0f} MB (target < 300 MB)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (default 5)")
    parser.add_argument(
        "--slow-repeat", type=int, default=1, help="runs of flake8, 0 to skip (default 1)"
    )
    args = parser.parse_args()
    tree = args.tree.resolve()
    files = python_files(tree)
    lines = sum(path.read_bytes().count(b"\n") for path in files)
    scratch = Path(tempfile.mkdtemp(prefix="gate-bench-"))
    (scratch / "pyproject.toml").write_text("[tool.gate]\n")
    print(f"tree: {tree} ({len(files)} files, {lines} lines); Python {sys.version.split()[0]}")
    print(f"cores: {os.cpu_count()}; runs per command: {args.repeat} (flake8: {args.slow_repeat})")
    try:
        results = gate_runs(tree, files, scratch, args.repeat)
        results += other_runs(tree, scratch, args.repeat, args.slow_repeat)
        report(results)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
