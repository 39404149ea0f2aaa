"""The seam harness: a cancel and an exception at every await seam, on every Python we have."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import harness_scenarios as s
import pytest
from conftest import run_gate as run

from gate.harness import SweepError, assert_ok, sweep
from gate.seamlink import link

ROOT = Path(__file__).resolve().parent.parent


def outcomes(report, fault: str) -> list[str]:
    return [trial.outcome for trial in report.trials if trial.fault == fault]


def test_no_guard_fails_at_the_teardown_seams(tmp_path: Path) -> None:
    report = sweep(s.no_guard, s.check, root=tmp_path)
    assert len(report.seams) == 3
    # seam 1 is in the try body: the finally still runs; seams 2 and 3 are in the teardown
    assert outcomes(report, "cancel") == ["ok", "check-failed", "check-failed"]
    assert outcomes(report, "error") == ["ok", "check-failed", "check-failed"]
    with pytest.raises(AssertionError, match="4 of 6 seam trials failed"):
        assert_ok(report)


def test_hold_and_reraise_passes_every_seam_with_the_same_exception(tmp_path: Path) -> None:
    report = sweep(s.hold_and_reraise, s.check, root=tmp_path)
    assert len(report.seams) == 4
    assert {trial.outcome for trial in report.trials} == {"ok"}
    assert_ok(report)


def test_swallowed(tmp_path: Path) -> None:
    report = sweep(s.swallows, s.check, faults=("cancel",), root=tmp_path)
    assert outcomes(report, "cancel") == ["ok", "swallowed"]


def test_replaced(tmp_path: Path) -> None:
    report = sweep(s.replaces, s.check, root=tmp_path)
    assert outcomes(report, "cancel") == ["replaced"]
    assert outcomes(report, "error") == ["replaced"]
    assert "RuntimeError came out instead of the injected exception" in report.trials[0].detail


def test_hung_trial_still_ends_the_sweep(tmp_path: Path) -> None:
    report = sweep(s.hangs, s.check, faults=("cancel",), timeout=0.5, root=tmp_path)
    (trial,) = report.trials
    assert trial.outcome == "hung"
    assert trial.problems == ("hung",)


def test_clean_run_must_pass(tmp_path: Path) -> None:
    with pytest.raises(SweepError, match="the clean run raised OSError: the sandbox did not"):
        sweep(s.flaky_clean_run, s.check, root=tmp_path)
    with pytest.raises(SweepError, match=r"does not pass the check: .*task\.json was not written"):
        sweep(s.writes_nothing, s.check, root=tmp_path)
    with pytest.raises(ValueError, match="unknown fault"):
        sweep(s.no_guard, s.check, faults=("timeout",), root=tmp_path)


def test_every_kind_of_seam_is_found_and_survives(tmp_path: Path) -> None:
    report = sweep(s.every_kind_of_seam, s.check, root=tmp_path)
    functions = {seam.function for seam in report.seams}
    assert "_in_thread" in functions  # to_thread: the wait on the thread's future
    tasks = {(seam.task, seam.function) for seam in report.seams}
    # gather's children are tasks of their own, each probed and named
    assert {("step", "step"), ("step#2", "step")} <= tasks
    # wait_for runs its argument in a child task before 3.12 and inline from 3.12 on
    assert (("main", "step") in tasks) == (sys.version_info >= (3, 12))
    assert "_numbers" in functions  # async generator
    assert "_Resource.__aenter__" in functions
    assert "_Resource.__aexit__" in functions
    assert {trial.outcome for trial in report.trials} == {"ok"}, report.failed


def test_seam_names_the_innermost_user_frame(tmp_path: Path) -> None:
    report = sweep(s.no_guard, s.check, faults=("cancel",), root=tmp_path)
    seam = report.seams[1]
    assert (Path(seam.path).name, seam.function, seam.source) == (
        "harness_scenarios.py",
        "step",
        "await asyncio.sleep(0)",
    )
    assert [frame.function for frame in seam.frames] == ["no_guard", "step"]


def test_child_tasks_left_running_are_a_warning(tmp_path: Path) -> None:
    report = sweep(s.leaves_a_child_running, s.check, faults=("cancel",), root=tmp_path)
    assert report.trials[0].outcome == "ok"
    assert report.trials[0].warnings == (
        "1 task(s) were still running when the scenario ended and were cancelled, "
        "as asyncio.run does",
    )


def test_each_trial_gets_a_fresh_directory(tmp_path: Path) -> None:
    sweep(s.no_guard, s.check, root=tmp_path)
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names[0] == "clean"
    assert "seam-002-cancel" in names
    assert "seam-003-error" in names


def test_pytest_fixture_from_a_plain_test(seam_sweep) -> None:
    report = seam_sweep(s.hold_and_reraise, s.check)
    assert report.trials and not report.failed


pytest_plugins = ["pytester"]


def test_pytest_fixture_fails_with_the_seam_table(pytester: pytest.Pytester) -> None:
    scenarios = (Path(__file__).parent / "harness_scenarios.py").read_text()
    pytester.makepyfile(harness_scenarios=scenarios)
    pytester.makepyfile(
        """
        import harness_scenarios as s

        def test_sweep(seam_sweep):
            seam_sweep(s.no_guard, s.check, faults=("cancel",))
        """
    )
    result = pytester.runpytest_subprocess()  # the plugin loads through its pytest11 entry
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*2 of 3 seam trials failed*", "*check-failed*"])


# -- static and dynamic together

RUNNABLE = ROOT / "rules" / "runnable-teardowns.py"


def _runnable_module():
    spec = importlib.util.spec_from_file_location("runnable_teardowns", RUNNABLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _runnable_check(workdir: Path) -> None:
    assert (workdir / "task.json").exists(), "task.json was not written"
    assert (workdir / "cleaned").exists(), "cleanup did not run"


EXPECTED = {
    "NoGuard": "check-failed",
    "GuardOnFirstAwaitOnly": "check-failed",
    "ExceptException": "check-failed",
    "BareShield": "check-failed",
    "Suppressed": "swallowed",
    # Static rules accept a flag that is read later; re-raising a *fresh* CancelledError still
    # loses the original object. Only the harness sees that.
    "AbsorbingFlag": "replaced",
    "HoldAndReraise": "ok",
    "NestedFinallyChain": "ok",
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_runnable_examples_agree_with_the_static_rules(name: str, tmp_path: Path) -> None:
    from annotations import parse

    module = _runnable_module()
    cls = getattr(module, name)

    async def scenario(workdir: Path) -> None:
        await cls(workdir).run()

    report = sweep(scenario, _runnable_check, faults=("cancel",), root=tmp_path)
    failing = {trial.outcome for trial in report.failed}
    if EXPECTED[name] == "ok":
        assert not report.failed, report.failed
        return
    assert EXPECTED[name] in failing, report.failed
    # every ruleid marker inside this class must be confirmed by a failing seam
    source = RUNNABLE.read_text().splitlines()
    start = next(i for i, line in enumerate(source, 1) if line.startswith(f"class {name}("))
    end = next(
        (i for i, line in enumerate(source, 1) if i > start and line.startswith("class ")),
        len(source) + 1,
    )
    expected_lines = {
        e.line for e in parse(RUNNABLE.read_text()) if e.kind == "ruleid" and start < e.line < end
    }
    confirmed = {
        int(label.rsplit(":", 1)[1]) for labels in link(report).values() for label in labels
    }
    assert expected_lines <= confirmed, (expected_lines, confirmed)


# -- the command line


SCENARIOS = str(Path(__file__).parent / "harness_scenarios.py")


def test_cli_json_is_pinned(capsys) -> None:
    code, out, _ = run(
        capsys,
        "seams",
        f"{SCENARIOS}:no_guard",
        "--check",
        f"{SCENARIOS}:check",
        "--format",
        "json",
    )
    assert code == 1
    document = json.loads(out)
    assert set(document) == {
        "version",
        "python",
        "backend",
        "target",
        "accept",
        "seams",
        "trials",
        "summary",
    }
    assert document["version"] == 1
    assert document["python"] == ".".join(map(str, sys.version_info[:3]))
    assert document["backend"] == "asyncio"
    assert document["summary"] == {"seams": 3, "trials": 6, "failed": 4, "accepted": 0}
    seam = document["seams"][0]
    assert set(seam) == {"index", "task", "path", "line", "function", "source", "frames"}
    trial = document["trials"][0]
    assert set(trial) == {
        "seam",
        "fault",
        "outcome",
        "accepted",
        "problems",
        "detail",
        "warnings",
        "confirms",
    }


def test_cli_text_and_exit_0(capsys) -> None:
    code, out, _ = run(
        capsys, "seams", f"{SCENARIOS}:hold_and_reraise", "--check", f"{SCENARIOS}:check"
    )
    assert code == 0
    assert "4 seams, 8 trials, 0 failed" in out


def test_cli_module_target_and_faults(capsys, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    code, out, _ = run(
        capsys,
        "seams",
        "harness_scenarios:no_guard",
        "--check",
        "harness_scenarios:check",
        "--faults",
        "cancel",
    )
    assert code == 1
    assert "3 seams, 3 trials, 2 failed" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nowhere.py:f", "--check", "x.py:c"], "no such file nowhere.py"),
        (["no_colon", "--check", "x:c"], "expected path/to/file.py:function"),
        ([f"{SCENARIOS}:missing", "--check", f"{SCENARIOS}:check"], "has no attribute 'missing'"),
        ([f"{SCENARIOS}:writes_nothing", "--check", f"{SCENARIOS}:check"], "clean run does not"),
        ([f"{SCENARIOS}:no_guard", "--check", f"{SCENARIOS}:check", "--faults", "boom"], "boom"),
        (["not_a_module_xyz:f", "--check", "x:c"], "cannot import not_a_module_xyz"),
    ],
)
def test_cli_usage_errors_exit_2(capsys, argv: list[str], message: str) -> None:
    code, _, err = run(capsys, "seams", *argv)
    assert code == 2
    assert message in err


def test_check_marks_findings_the_sweep_confirmed(capsys, tmp_path: Path) -> None:
    report = tmp_path / "seams.json"
    example = ROOT / "examples"
    run(
        capsys,
        "seams",
        f"{example}/scenario.py:buggy",
        "--check",
        f"{example}/scenario.py:check",
        "--format",
        "json",
        "--output",
        str(report),
    )
    code, out, _ = run(capsys, "check", str(example), "--seams", str(report))
    assert code == 1
    confirmed = [line for line in out.splitlines() if "confirmed by the seam sweep" in line]
    assert len(confirmed) == 3
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    code, _, err = run(capsys, "check", str(example), "--seams", str(bad))
    assert code == 2
    assert "not a `gate seams --format json` report" in err
