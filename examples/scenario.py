"""Sweep scenarios for the example orchestrator.

    gate seams examples/scenario.py:buggy --check examples/scenario.py:check
    gate seams examples/scenario.py:fixed --check examples/scenario.py:check
    gate seams examples/scenario.py:batch --check examples/scenario.py:check_batch

Each scenario keeps the orchestrators it built in `state`, which the check receives afterwards,
even when the scenario raised.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from orchestrator import Orchestrator


async def buggy(workdir: Path, state: SimpleNamespace) -> None:
    state.orchestrator = Orchestrator(run_dir=workdir)
    await state.orchestrator.run()


async def fixed(workdir: Path, state: SimpleNamespace) -> None:
    state.orchestrator = Orchestrator(run_dir=workdir)
    await state.orchestrator.run_fixed()


def check(workdir: Path, state: SimpleNamespace) -> None:
    assert (workdir / "task.json").exists(), "task.json was not written"
    assert "seconds" in state.orchestrator.result, "the result was never finalized"
    leaked = sorted(path.name for path in workdir.glob("sandbox-*"))
    assert not leaked, f"sandbox temp dir leaked: {leaked}"


async def batch(workdir: Path, state: SimpleNamespace) -> None:
    """Two fixed orchestrators side by side, as a batch runner starts them."""
    state.started = []

    async def evaluate(name: str) -> None:
        state.started.append(name)
        (workdir / name).mkdir()
        await Orchestrator(run_dir=workdir / name).run_fixed()

    await asyncio.gather(
        asyncio.create_task(evaluate("a"), name="run-a"),
        asyncio.create_task(evaluate("b"), name="run-b"),
    )


def check_batch(workdir: Path, state: SimpleNamespace) -> None:
    """Every orchestrator that started wrote its task.json (a cancel can land before one did)."""
    for name in state.started:
        assert (workdir / name / "task.json").exists(), f"{name}/task.json was not written"
