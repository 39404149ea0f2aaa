"""What the seam harness costs: per seam (the probe around each yield) and per trial.

    .venv/bin/python benchmarks/harness_overhead.py [--seams N] [--repeat R]

Prints medians; fetches nothing. The baseline is the same scenario run by `asyncio.run`; the
probed run is the harness's own asyncio runner (a fresh loop whose task factory wraps every
task's coroutine, ended as `asyncio.run` ends), without a fault.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from gate.harness.backends import RunResult, run_asyncio
from gate.harness.probe import Trace
from gate.harness.sweep import sweep


def make_scenario(seams: int):
    async def scenario(workdir: Path) -> None:
        interrupt = None
        try:
            for _ in range(seams):
                await asyncio.sleep(0)
        except BaseException as error:
            interrupt = error
        (workdir / "task.json").write_text("{}")
        if interrupt is not None:
            raise interrupt

    return scenario


def check(workdir: Path) -> None:
    assert (workdir / "task.json").exists()


def timed(function, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seams", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp())
    scenario = make_scenario(args.seams)

    def plain() -> None:
        asyncio.run(scenario(workdir))

    def probed() -> None:
        result = RunResult(Trace(None, 0))
        run_asyncio(lambda: scenario(workdir), result, timeout=60.0)
        assert len(result.trace.seams) == args.seams

    bare = timed(plain, args.repeat)
    wrapped = timed(probed, args.repeat)
    per_seam = (wrapped - bare) / args.seams
    print(
        f"scenario with {args.seams} seams: asyncio {bare * 1e3:.1f} ms, "
        f"under the probe {wrapped * 1e3:.1f} ms ({wrapped / bare:.1f}x)"
    )
    print(f"probe overhead per seam: {per_seam * 1e6:.1f} us (naming the seam's frames included)")

    for seams in (20, 200):
        small = make_scenario(seams)
        whole = timed(
            lambda small=small: sweep(small, check, root=Path(tempfile.mkdtemp())), args.repeat
        )
        trials = seams * 2
        print(
            f"sweep of a {seams}-seam scenario (1 clean run + {trials} trials, each on its own "
            f"thread and loop): {whole * 1e3:.0f} ms, {whole / (trials + 1) * 1e3:.2f} ms per trial"
        )


if __name__ == "__main__":
    main()
