"""The seam harness on trio and anyio (both of anyio's backends): faults land as scope cancels."""

from __future__ import annotations

from pathlib import Path

import harness_scenarios as s
import pytest

from gate.harness import sweep

SCOPED = ["trio", "anyio", "anyio:trio"]


def outcomes(report, fault: str = "cancel") -> list[str]:
    return [trial.outcome for trial in report.trials if trial.fault == fault]


def test_trio_unshielded_teardown_fails_at_every_seam(tmp_path: Path) -> None:
    report = sweep(s.trio_unshielded, s.check, faults=("cancel",), backend="trio", root=tmp_path)
    assert report.backend == "trio"
    assert [seam.function for seam in report.seams] == ["trio_unshielded", "trio_unshielded"]
    # level-triggered: the cancel at the first seam raises again at the teardown's checkpoint
    assert outcomes(report) == ["check-failed", "check-failed"]


def test_trio_shielded_teardown_holds(tmp_path: Path) -> None:
    report = sweep(s.trio_shielded, s.check, faults=("cancel",), backend="trio", root=tmp_path)
    # seam 2 is inside the shielded scope: the cancel waits for an unshielded checkpoint, none
    # comes, and the scenario ends normally: ok, since the check passes
    assert outcomes(report) == ["ok", "ok"]


def test_trio_nursery_children_are_probed_named_and_stable(tmp_path: Path) -> None:
    first = sweep(s.trio_children, s.check_pair, faults=("cancel",), backend="trio", root=tmp_path)
    child = "trio_children.<locals>.child"
    # the order of the children's seams is trio's (it differs when hypothesis has made trio's
    # scheduling "deterministic"); within one process, every run takes the same order
    assert first.seams[0].task == "main"
    expected = [child, child, f"{child}#2", f"{child}#2"]
    assert sorted(seam.task for seam in first.seams[1:]) == expected
    assert outcomes(first) == ["ok"] * 5  # trio reorders tasks at random; no trial diverged
    again = sweep(
        s.trio_children, s.check_pair, faults=("cancel",), backend="trio", root=tmp_path / "2"
    )
    assert [seam.where for seam in again.seams] == [seam.where for seam in first.seams]


def test_trio_replaced(tmp_path: Path) -> None:
    report = sweep(s.trio_replaces, s.check, faults=("cancel",), backend="trio", root=tmp_path)
    (trial,) = report.trials
    assert trial.outcome == "replaced"
    assert "RuntimeError came out instead of the cancellation" in trial.detail


def test_trio_error_and_keyboard_interrupt(tmp_path: Path) -> None:
    report = sweep(
        s.trio_shielded,
        s.check,
        faults=("error", "keyboard-interrupt"),
        backend="trio",
        root=tmp_path,
    )
    # an exception is not a cancel: the shield does not hold it, and seam 2 skips the write
    assert outcomes(report, "error") == ["ok", "check-failed"]
    assert outcomes(report, "keyboard-interrupt") == ["ok", "check-failed"]


@pytest.mark.parametrize("backend", ["anyio", "anyio:trio"])
def test_anyio_shielded_scope_holds_on_both_backends(tmp_path: Path, backend: str) -> None:
    # On asyncio, a task.cancel() would pass anyio's shield; the harness cancels anyio's scope.
    report = sweep(s.anyio_shielded, s.check, faults=("cancel",), backend=backend, root=tmp_path)
    assert outcomes(report) == ["ok", "ok"]


@pytest.mark.parametrize("backend", ["anyio", "anyio:trio"])
def test_anyio_unshielded_teardown_fails_on_both_backends(tmp_path: Path, backend: str) -> None:
    report = sweep(s.anyio_unshielded, s.check, faults=("cancel",), backend=backend, root=tmp_path)
    assert outcomes(report) == ["check-failed", "check-failed"]


def test_anyio_code_under_the_asyncio_backend_is_not_meaningful(tmp_path: Path) -> None:
    # The reason for --backend anyio: a native task.cancel() passes anyio's shielded scope.
    report = sweep(s.anyio_shielded, s.check, faults=("cancel",), root=tmp_path)
    assert outcomes(report) == ["ok", "check-failed"]


@pytest.mark.parametrize("backend", SCOPED)
def test_a_hang_in_a_shielded_scope_is_hung(tmp_path: Path, backend: str) -> None:
    scenario = s.trio_hangs_shielded if backend == "trio" else s.anyio_hangs_shielded
    report = sweep(scenario, s.check, faults=("cancel",), backend=backend, timeout=1.0)
    (trial,) = report.trials
    assert trial.outcome == "hung"
