"""The seam harness: each fault, --accept, the state-passing check, child tasks, shutdown, hangs."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness_scenarios as s
import pytest

from gate.harness import (
    FAULTS,
    InjectedKeyboardInterrupt,
    Options,
    SweepError,
    list_seams,
    sweep,
)
from gate.seamdata import Acceptance

TESTS = Path(__file__).resolve().parent


def outcomes(report, fault: str) -> list[str]:
    return [trial.outcome for trial in report.trials if trial.fault == fault]


# -- faults


def test_cancel_twice_cuts_a_save_that_one_cancel_lets_finish(tmp_path: Path) -> None:
    report = sweep(s.saves_on_cancel, s.check, faults=("cancel", "cancel-twice"), root=tmp_path)
    assert outcomes(report, "cancel") == ["ok", "ok"]
    assert outcomes(report, "cancel-twice") == ["check-failed", "check-failed"]


def test_cancel_twice_passes_a_save_held_through_the_second_cancel(tmp_path: Path) -> None:
    # the second cancel lands in the handler; re-raising the first CancelledError counts as ok
    report = sweep(s.saves_on_cancel_shielded, s.check, faults=("cancel-twice",), root=tmp_path)
    assert outcomes(report, "cancel-twice") == ["ok", "ok"]


def test_keyboard_interrupt_passes_a_handler_that_holds_only_cancelled(tmp_path: Path) -> None:
    report = sweep(
        s.holds_only_cancelled, s.check, faults=("cancel", "keyboard-interrupt"), root=tmp_path
    )
    assert outcomes(report, "cancel") == ["ok"]
    assert outcomes(report, "keyboard-interrupt") == ["check-failed"]


def test_keyboard_interrupt_held_by_a_finally_comes_out_unchanged(tmp_path: Path) -> None:
    report = sweep(s.hold_and_reraise, s.check, faults=("keyboard-interrupt",), root=tmp_path)
    assert set(outcomes(report, "keyboard-interrupt")) == {"ok"}
    assert len(report.trials) == 4


def test_keyboard_interrupt_replaced_is_named(tmp_path: Path) -> None:
    report = sweep(s.replaces, s.check, faults=("keyboard-interrupt",), root=tmp_path)
    (trial,) = report.trials
    assert trial.outcome == "replaced"
    assert "RuntimeError came out instead of the injected exception" in trial.detail
    assert issubclass(InjectedKeyboardInterrupt, KeyboardInterrupt)


def test_every_trial_ends_as_asyncio_run_does(tmp_path: Path) -> None:
    # A bare asyncio.shield(save()) survives the cancel of its waiter, but asyncio.run cancels
    # the shielded task when the main task ends: the save is cut.
    report = sweep(s.bare_shield_save, s.check, faults=("cancel",), root=tmp_path)
    where = [(seam.task, seam.function) for seam in report.seams]
    assert where == [
        ("main", "step"),
        ("main", "bare_shield_save"),
        ("save", "save"),
        ("save", "save"),
    ]
    assert outcomes(report, "cancel") == ["ok", "check-failed", "check-failed", "check-failed"]
    shutdown = report.trials[1]
    assert shutdown.warnings and "cancelled, as asyncio.run does" in shutdown.warnings[0]


# -- child tasks


@pytest.mark.parametrize(
    ("scenario", "tasks"),
    [
        (s.gathered, ["main", "child_writes", "child_holds", "child_writes", "child_holds"]),
        (s.created_task, ["main", "child_holds", "child_holds"]),
        pytest.param(
            s.task_group,
            ["main", "writer", "holder", "writer", "holder"],
            marks=pytest.mark.skipif(sys.version_info < (3, 11), reason="TaskGroup is 3.11+"),
        ),
    ],
)
def test_seams_inside_child_tasks_are_probed_and_named(
    tmp_path: Path, scenario, tasks: list[str]
) -> None:
    report = sweep(scenario, s.check_pair, faults=("cancel", "error"), root=tmp_path)
    assert [seam.task for seam in report.seams] == tasks


def test_a_cancel_at_a_child_seam_is_delivered_to_that_child(tmp_path: Path) -> None:
    report = sweep(s.gathered, s.check_pair, faults=("cancel", "error"), root=tmp_path)
    by_seam = {(t.seam, t.fault): t for t in report.trials}
    teardown = next(
        seam.index
        for seam in report.seams
        if seam.task == "child_writes" and seam.index > 2  # its await in the finally
    )
    for fault in ("cancel", "error"):
        trial = by_seam[(teardown, fault)]
        assert trial.outcome == "check-failed"
        assert "not written: ['a.json']" in trial.detail
    # the other child holds the interrupt at both of its seams
    holder = [seam.index for seam in report.seams if seam.task == "child_holds"]
    assert all(by_seam[(index, "cancel")].outcome == "ok" for index in holder)


# -- correct fixes: --accept and the state-passing check


def test_a_fresh_cancelled_error_is_replaced_unless_accepted(tmp_path: Path) -> None:
    plain = sweep(s.fresh_cancel, s.check, faults=("cancel",), root=tmp_path / "plain")
    assert [t.outcome for t in plain.failed] == ["replaced"]
    accepted = sweep(
        s.fresh_cancel, s.check, faults=("cancel",), accept=["replaced"], root=tmp_path / "acc"
    )
    (trial,) = accepted.trials
    assert (trial.outcome, trial.accepted, trial.ok) == ("replaced", True, True)
    assert accepted.failed == []
    assert accepted.accepted == [trial]


def test_accept_scoped_to_one_fault(tmp_path: Path) -> None:
    report = sweep(
        s.records_error,
        s.check_completed,
        faults=("cancel", "error"),
        accept=["error:swallowed", "cancel:replaced"],
        root=tmp_path,
    )
    assert outcomes(report, "error") == ["swallowed", "swallowed"]
    assert all(trial.accepted for trial in report.trials if trial.fault == "error")
    assert report.failed == []
    # accepting swallowed for the cancel fault only leaves the error trials failing
    other = sweep(
        s.records_error,
        s.check_completed,
        faults=("error",),
        accept=["cancel:swallowed"],
        root=tmp_path / "other",
    )
    assert [trial.outcome for trial in other.failed] == ["swallowed", "swallowed"]


def test_accept_covers_a_trial_only_when_it_covers_every_problem(tmp_path: Path) -> None:
    # fresh_cancel's error trial fails the check: accepting "replaced" does not hide that
    report = sweep(s.fresh_cancel, s.check, accept=["replaced"], root=tmp_path)
    assert [(t.fault, t.outcome, t.accepted) for t in report.trials] == [
        ("cancel", "replaced", True),
        ("error", "check-failed", False),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ok", "cannot accept 'ok'"),
        ("fine", "cannot accept 'fine'"),
        ("boom:replaced", "unknown fault 'boom'"),
    ],
)
def test_accept_rejects_what_it_does_not_know(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Acceptance.parse(text)


def test_the_check_receives_the_state_the_scenario_built(tmp_path: Path) -> None:
    report = sweep(s.forgets_completed_at, s.check_completed, root=tmp_path)
    # task.json is written in the teardown, but completed_at only on success: only the state
    # shows it, even though the scenario raised
    assert {t.outcome for t in report.trials} == {"check-failed"}
    assert all("result.completed_at was not set" in t.detail for t in report.trials)
    assert sweep(s.records_error, s.check_completed, faults=("cancel",), root=tmp_path / "b")


def test_one_argument_scenarios_and_checks_still_work(tmp_path: Path) -> None:
    report = sweep(s.hold_and_reraise, s.check, root=tmp_path)
    assert report.trials and not report.failed


# -- hangs, blocking, exits and mistakes


def test_a_teardown_that_outlives_the_timeout_is_hung_whatever_it_raised(tmp_path: Path) -> None:
    report = sweep(
        s.hangs_on_second_cancel, s.check, faults=("cancel",), timeout=1.0, root=tmp_path
    )
    (trial,) = report.trials
    assert trial.outcome == "hung"  # it raised RuntimeError on the second cancel, not "replaced"
    assert "replaced" not in trial.problems


def test_a_scenario_that_blocks_the_loop_does_not_stop_the_sweep(tmp_path: Path) -> None:
    started = time.monotonic()
    report = sweep(s.blocks_when_cancelled, s.check, faults=("cancel",), timeout=1.0, root=tmp_path)
    elapsed = time.monotonic() - started
    (trial,) = report.trials
    assert trial.outcome == "hung"
    assert "enforced from outside" in trial.detail
    assert elapsed < s.BLOCK_SECONDS - 1, elapsed


def test_system_exit_in_a_trial_is_an_outcome(tmp_path: Path) -> None:
    report = sweep(s.exits_when_cancelled, s.check, faults=("cancel",), root=tmp_path)
    (trial,) = report.trials
    assert trial.outcome == "replaced"
    assert "SystemExit came out" in trial.detail


def test_system_exit_in_the_clean_run_is_a_sweep_error(tmp_path: Path) -> None:
    with pytest.raises(SweepError, match="the clean run raised SystemExit: 5"):
        sweep(s.exits, s.check, root=tmp_path)


def test_a_scenario_that_is_not_async_says_so(tmp_path: Path) -> None:
    with pytest.raises(SweepError, match="not async: calling it returned NoneType"):
        sweep(s.not_async, s.check, root=tmp_path)


def test_an_async_check_says_so(tmp_path: Path) -> None:
    with pytest.raises(SweepError, match="must be a plain `def`"):
        sweep(s.no_guard, s.async_check, root=tmp_path)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timeout": float("nan")}, "not a positive, finite number"),
        ({"timeout": float("inf")}, "not a positive, finite number"),
        ({"timeout": 0}, "not a positive, finite number"),
        ({"timeout": -1.0}, "not a positive, finite number"),
        ({"timeout": "5"}, "not a number of seconds"),
        ({"faults": ["timeout"]}, "unknown fault"),
        ({"faults": []}, "no fault chosen"),
        ({"backend": "curio"}, "unknown backend 'curio'"),
        ({"backend": "trio", "faults": ["cancel-twice"]}, "not available on trio"),
        ({"accept": ["ok"]}, "cannot accept 'ok'"),
    ],
)
def test_bad_options_are_value_errors(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Options.build(**options)


def test_every_fault_is_known_to_the_cli_and_the_api() -> None:
    assert FAULTS == ("cancel", "cancel-twice", "error", "keyboard-interrupt")


def test_a_sweep_without_a_root_removes_its_temporary_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # gate seams sweeps without a root: each run's directories are its own business, and a
    # pre-commit hook run a thousand times must not leave a thousand behind
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    report = sweep(s.saves_on_cancel, s.check, faults=("cancel",))
    assert [trial.outcome for trial in report.trials] == ["ok", "ok"]
    assert list(tmp_path.iterdir()) == []
    kept = tmp_path / "kept"
    sweep(s.saves_on_cancel, s.check, faults=("cancel",), root=kept)
    assert sorted(path.name for path in kept.iterdir()) == [
        "clean",
        "seam-001-cancel",
        "seam-002-cancel",
    ]


# -- what the harness imports


def _in_subprocess(code: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=TESTS, check=False
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def test_sweep_works_without_libcst_and_imports_no_rules() -> None:
    out = _in_subprocess(
        "import sys\n"
        "sys.modules['libcst'] = None  # import libcst raises ImportError\n"
        "import harness_scenarios as s\n"
        "from gate.harness import sweep\n"
        "report = sweep(s.no_guard, s.check)\n"
        "names = ('libcst', 'gate.engine', 'gate.checks', 'gate.report', 'gate.seamlink')\n"
        "loaded = sorted(\n"
        "    name for name, module in sys.modules.items()\n"
        "    if module is not None and name.startswith(names)\n"
        ")\n"
        "print(len(report.failed), loaded)\n"
    )
    assert out.split() == ["4", "[]"]


def test_the_seam_renderer_does_not_import_the_harness() -> None:
    out = _in_subprocess(
        "import sys\n"
        "import gate.report.seams\n"
        "import gate.seamlink\n"
        "print(sorted(name for name in sys.modules if name.startswith('gate.harness')))\n"
    )
    assert out.split() == ["[]"]


def test_a_task_left_running_gets_the_deadline_cancel_and_a_grace_period(tmp_path: Path) -> None:
    # The run's end cancels the leftover task once; it ignores that, and the deadline's second
    # cancel comes while the harness waits for it: it gets the grace period to wrap up.
    with pytest.raises(SweepError, match=r"still running after the 0\.5s timeout"):
        list_seams(s.leaves_a_stubborn_child, s.check, tmp_path, Options.build(timeout=0.5))
    assert (tmp_path / "stubborn").exists()
