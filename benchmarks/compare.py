"""gate against the tools users would otherwise run, side by side, on one tree.

    .venv/bin/python benchmarks/compare.py DIR [--repeat N] [--slow-repeat N] [--against GATE]

Fetches nothing: DIR is any directory of Python code. Every command runs as a whole process;
the figures are medians of wall-clock seconds and the peak resident memory of the process tree
(from wait4). The tools come from the same environment as this Python (`pip install -e
'.[bench]'` installs xenon, flake8 and flake8-async; ruff and radon come with gate's test extras).

gate runs with an empty [tool.gate] config from a scratch directory, so its cache lives there and
no settings of the measured tree apply; `--exit-zero` keeps findings from looking like failures.
"gate cold + ruff" runs from a second scratch directory whose config says `ruff = true` (ruff
then uses the measured tree's own ruff configuration, or its defaults).

The cold runs of gate and the other tools are interleaved (one run of each in turn, `--repeat`
rounds), so that on a machine shared with other work they see the same load; the load average
is printed before and after. Compare ratios taken in one run of this script, not seconds taken
on different days. Two one-file edits are timed: a comment appended to the middle file (the
edit most tools' benchmarks use), and a comment inside an async function with a `finally:`,
which the teardown rules must read again.

`--against GATE` times a second gate executable (an install of an earlier version) in the same
rounds: its cold runs are interleaved with the others, its warm and edit runs follow gate's, and
its rows are named `against: ...`, so that before and after are compared under one load.
"""

from __future__ import annotations

import argparse
import os
import py_compile
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


def gate_command(binary: str | None = None) -> list[str]:
    return [binary or tool("gate") or "gate", "check", "--exit-zero", "--format", "json"]


AGAINST = "against: "  # the name prefix of the rows of the gate given with --against


def cold_runs(
    tree: Path, scratch: Path, repeat: int, against: str | None = None
) -> list[Measurement]:
    """gate cold (with and without ruff, on all cores and on one), xenon, radon and ruff
    without its cache, interleaved round by round (and the `against` gate's cold runs)."""
    gate = [*gate_command(), str(tree), "--no-cache"]
    with_ruff = scratch / "with-ruff"
    with_ruff.mkdir(exist_ok=True)
    (with_ruff / "pyproject.toml").write_text("[tool.gate]\nruff = true\n")
    commands = {
        "gate cold (all cores)": (gate, scratch),
        "gate cold + ruff (all cores)": (gate, with_ruff),
        "gate cold (--jobs 1)": ([*gate, "--jobs", "1"], scratch),
    }
    if against is not None:
        other = [*gate_command(against), str(tree), "--no-cache"]
        commands[AGAINST + "gate cold (all cores)"] = (other, scratch)
        commands[AGAINST + "gate cold (--jobs 1)"] = ([*other, "--jobs", "1"], scratch)
    ruff = tool("ruff")
    if ruff:
        select = [ruff, "check", "--select", "C901,ASYNC", "--exit-zero", "--quiet", str(tree)]
        commands["ruff C901,ASYNC --no-cache"] = ([*select, "--no-cache"], scratch)
    for name, program, arguments in (
        (
            "xenon (no baseline, no teardown rules)",
            "xenon",
            ["--max-absolute", "F", "--max-modules", "F", "--max-average", "F", str(tree)],
        ),
        ("radon cc", "radon", ["cc", "-s", str(tree)]),
    ):
        found = tool(program)
        if found:
            commands[name] = ([found, *arguments], scratch)
    results = {name: Measurement(name) for name in commands}
    for _ in range(repeat):
        for name, (command, cwd) in commands.items():
            seconds, peak = run_once(command, cwd)
            results[name].seconds.append(seconds)
            results[name].peak_mb = max(results[name].peak_mb, peak)
    return list(results.values())


def _inside_async_function(files: list[Path]) -> tuple[Path, int] | None:
    """A file and the line after an `async def ...:` line in a function with a `finally:`:
    a comment inserted there changes what the teardown rules read."""
    for path in files:
        lines = path.read_bytes().splitlines(keepends=True)
        for number, line in enumerate(lines):
            stripped = line.strip()
            header = stripped.startswith(b"async def ") and stripped.endswith(b":")
            if header and any(b"finally:" in later for later in lines[number + 1 : number + 30]):
                return path, number + 1
    return None


def edit_run(
    name: str,
    victim: Path,
    at_line: int | None,
    tree: Path,
    scratch: Path,
    repeat: int,
    binary: str | None = None,
) -> Measurement:
    """gate with one file edited before each run: a comment inserted after line `at_line`,
    or appended when it is None."""
    original = victim.read_bytes()
    lines = original.splitlines(keepends=True)

    def touch(number: int) -> None:
        comment = f"# benchmark edit {number} {time.time()}\n".encode()
        if at_line is None:
            victim.write_bytes(original + b"\n" + comment)
        else:
            victim.write_bytes(b"".join(lines[:at_line]) + comment + b"".join(lines[at_line:]))

    try:
        command = [*gate_command(binary), str(tree)]
        result = measure(name, command, scratch, repeat, before_each=touch, warmup=True)
    finally:
        victim.write_bytes(original)
    result.note = victim.relative_to(tree).as_posix()
    return result


def warm_runs(tree: Path, files: list[Path], scratch: Path, repeat: int) -> list[Measurement]:
    gate = [*gate_command(), str(tree)]
    runs = [
        measure("gate warm (cache)", gate, scratch, repeat, warmup=True),
        measure("gate warm + ruff (both caches)", gate, scratch / "with-ruff", repeat, warmup=True),
    ]
    ruff = tool("ruff")
    if ruff:
        select = [ruff, "check", "--select", "C901,ASYNC", "--exit-zero", "--quiet", str(tree)]
        cached = [*select, "--cache-dir", str(scratch / "ruff-cache")]
        runs.append(measure("ruff C901,ASYNC (cache)", cached, scratch, repeat, warmup=True))
    runs += edit_runs(tree, files, scratch, repeat)
    return runs


def edit_runs(
    tree: Path, files: list[Path], scratch: Path, repeat: int, binary: str | None = None
) -> list[Measurement]:
    """gate with the middle file changed, then with an async function changed."""
    prefix = AGAINST if binary is not None else ""
    victim = files[len(files) // 2]
    name = prefix + "gate, one file changed"
    runs = [edit_run(name, victim, None, tree, scratch, repeat, binary)]
    inside = _inside_async_function(files)
    if inside is not None:
        name = prefix + "gate, one async function changed"
        runs.append(edit_run(name, inside[0], inside[1], tree, scratch, repeat, binary))
    return runs


def against_runs(tree: Path, files: list[Path], against: str, repeat: int) -> list[Measurement]:
    """The `against` gate's warm and edit runs, from a scratch directory of its own."""
    scratch = Path(tempfile.mkdtemp(prefix="gate-bench-against-"))
    try:
        (scratch / "pyproject.toml").write_text("[tool.gate]\n")
        gate = [*gate_command(against), str(tree)]
        runs = [measure(AGAINST + "gate warm (cache)", gate, scratch, repeat, warmup=True)]
        return runs + edit_runs(tree, files, scratch, repeat, against)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def flake8_run(tree: Path, scratch: Path, times: int) -> list[Measurement]:
    found = tool("flake8")
    if not found or times <= 0:
        return []
    command = [found, "--select", "ASYNC", "--exit-zero", str(tree)]
    return [measure("flake8 --select ASYNC (flake8-async)", command, scratch, times)]


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
    if "gate, one async function changed" in named:
        inside = named["gate, one async function changed"].median
        print(f"one changed async function: {inside:.3f} s")
    peak = max(item.peak_mb for item in results if item.name.startswith("gate"))
    print(f"gate peak memory (largest process): {peak:.0f} MB (target < 300 MB)")
    if (
        AGAINST + "gate cold (all cores)" in named
        and "xenon (no baseline, no teardown rules)" in named
    ):
        other = named[AGAINST + "gate cold (all cores)"].median
        print(
            f"against: cold gate / xenon: {other / xenon:.2f}; "
            f"cold gate / against: {cold / other:.2f}"
        )


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def compile_gate() -> int:
    """Bring the measured gate's bytecode up to date, as installing it does (pip compiles every
    module of the tools it installs; an editable install writes its bytecode on first use unless
    PYTHONDONTWRITEBYTECODE is set). Without this, a gate module edited since its `.pyc` was
    written is compiled again in every timed run, and the tools it is compared with are not.
    Returns how many modules were out of date."""
    import importlib.util

    spec = importlib.util.find_spec("gate")
    if spec is None or spec.origin is None:
        return 0
    stale = 0
    for source in Path(spec.origin).parent.rglob("*.py"):
        cached = Path(importlib.util.cache_from_source(str(source)))
        if not cached.exists() or cached.stat().st_mtime < source.stat().st_mtime:
            py_compile.compile(str(source), cfile=str(cached), quiet=1)
            stale += 1
    return stale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (default 5)")
    parser.add_argument(
        "--slow-repeat", type=int, default=1, help="runs of flake8, 0 to skip (default 1)"
    )
    parser.add_argument(
        "--against", metavar="GATE", help="another gate executable to time in the same rounds"
    )
    args = parser.parse_args()
    compiled = compile_gate()
    tree = args.tree.resolve()
    files = python_files(tree)
    lines = sum(path.read_bytes().count(b"\n") for path in files)
    scratch = Path(tempfile.mkdtemp(prefix="gate-bench-"))
    (scratch / "pyproject.toml").write_text("[tool.gate]\n")
    print(f"tree: {tree} ({len(files)} files, {lines} lines); Python {sys.version.split()[0]}")
    print(f"cores: {os.cpu_count()}; runs per command: {args.repeat} (flake8: {args.slow_repeat})")
    print(f"gate's bytecode compiled before timing: {compiled} modules were out of date")
    try:
        print(f"load average before: {_load()}")
        results = cold_runs(tree, scratch, args.repeat, args.against)
        print(f"load average after the cold runs: {_load()}")
        for item in results:
            print(
                f"  {item.name:44} {item.median:9.3f} s  runs {[round(s, 2) for s in item.seconds]}"
            )
        results += warm_runs(tree, files, scratch, args.repeat)
        if args.against is not None:
            results += against_runs(tree, files, args.against, args.repeat)
        results += flake8_run(tree, scratch, args.slow_repeat)
        print(f"load average after: {_load()}")
        report(results)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
