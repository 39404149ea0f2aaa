"""Sweep scenarios for the example orchestrator: `gate seams examples/scenario.py:buggy ...`."""

from __future__ import annotations

from pathlib import Path

from orchestrator import Orchestrator


async def buggy(workdir: Path) -> None:
    await Orchestrator(run_dir=workdir).run()


async def fixed(workdir: Path) -> None:
    await Orchestrator(run_dir=workdir).run_fixed()


def check(workdir: Path) -> None:
    assert (workdir / "task.json").exists(), "task.json was not written"
    leaked = sorted(path.name for path in workdir.glob("sandbox-*"))
    assert not leaked, f"sandbox temp dir leaked: {leaked}"
