"""`gate seams` on the command line: formats, --accept, --backend, bad input, hangs and exits."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

import harness_scenarios as s
import pytest
from conftest import run_gate as run

SCENARIOS = str(Path(__file__).parent / "harness_scenarios.py")
GATE = Path(sys.executable).with_name("gate")


def seams(capsys, name: str, *options: str, check: str = "check") -> tuple[int, str, str]:
    return run(capsys, "seams", f"{SCENARIOS}:{name}", "--check", f"{SCENARIOS}:{check}", *options)


def test_junit_has_one_case_per_trial_named_like_the_marker(capsys) -> None:
    code, out, _ = seams(capsys, "no_guard", "--format", "junit")
    assert code == 1
    suite = ElementTree.fromstring(out)
    assert (suite.get("tests"), suite.get("failures")) == ("6", "4")
    names = [case.get("name") for case in suite.iter("testcase")]
    assert names == [
        "cancel-1-step:19",
        "error-1-step:19",
        "cancel-2-step:19",
        "error-2-step:19",
        "cancel-3-step:19",
        "error-3-step:19",
    ]
    failures = [case.find("failure") for case in suite.iter("testcase")]
    assert [failure is not None for failure in failures] == [False, False] + [True] * 4
    assert failures[2].get("type") == "check-failed"
    assert "task.json was not written" in failures[2].text


def test_markdown_is_a_pr_comment(capsys) -> None:
    code, out, _ = seams(capsys, "no_guard", "--format", "markdown", "--faults", "cancel")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "<!-- gate-seams -->"
    assert "3 seams, 3 trials, 2 failed" in lines[1]
    assert "| # | task | where | source | cancel | notes |" in lines
    assert "#### Failing trials" in lines
    assert any(line.startswith("- `cancel-2-step:19` **check-failed**") for line in lines)


def test_accepted_outcomes_exit_0_and_show_as_accepted_in_every_format(capsys) -> None:
    options = ("--faults", "cancel", "--accept", "replaced")
    code, out, _ = seams(capsys, "fresh_cancel", *options)
    assert code == 0
    assert "replaced (accepted)" in out
    assert "1 seams, 1 trials, 0 failed, 1 accepted" in out
    code, out, _ = seams(capsys, "fresh_cancel", *options, "--format", "json")
    document = json.loads(out)
    assert document["accept"] == ["replaced"]
    assert document["trials"][0]["outcome"] == "replaced"
    assert document["trials"][0]["accepted"] is True
    assert document["summary"]["accepted"] == 1
    code, out, _ = seams(capsys, "fresh_cancel", *options, "--format", "markdown")
    assert "replaced (accepted)" in out and "Accepted outcomes: `replaced`." in out
    code, out, _ = seams(capsys, "fresh_cancel", *options, "--format", "junit")
    case = ElementTree.fromstring(out).find("testcase")
    assert case.find("failure") is None
    assert case.find("system-out").text.startswith("accepted replaced:")
    # without --accept the same trial fails
    code, _, _ = seams(capsys, "fresh_cancel", "--faults", "cancel")
    assert code == 1


def test_accept_scoped_to_a_fault(capsys) -> None:
    code, _, _ = seams(
        capsys, "records_error", "--accept", "error:swallowed", check="check_completed"
    )
    assert code == 0
    code, _, _ = seams(
        capsys, "records_error", "--accept", "cancel:swallowed", check="check_completed"
    )
    assert code == 1
    repeated = ("--accept", "cancel:swallowed", "--accept", "error:swallowed")
    code, out, _ = seams(
        capsys, "records_error", *repeated, "--format", "json", check="check_completed"
    )
    assert code == 0
    assert json.loads(out)["accept"] == ["cancel:swallowed", "error:swallowed"]


@pytest.mark.parametrize(
    ("backend", "name", "expected"),
    [
        ("trio", "trio_unshielded", 1),
        ("trio", "trio_shielded", 0),
        ("anyio", "anyio_shielded", 0),
        ("anyio", "anyio_unshielded", 1),
        ("anyio:trio", "anyio_shielded", 0),
    ],
)
def test_backend(capsys, backend: str, name: str, expected: int) -> None:
    code, out, _ = seams(capsys, name, "--backend", backend, "--faults", "cancel")
    assert code == expected, out
    assert f"({backend})" in out


def test_new_faults_on_the_command_line(capsys) -> None:
    code, out, _ = seams(capsys, "saves_on_cancel", "--faults", "cancel-twice,keyboard-interrupt")
    assert code == 1
    assert "cancel-twice" in out and "keyboard-interrupt" in out


def test_child_task_seams_are_listed_with_their_task(capsys) -> None:
    code, out, _ = seams(capsys, "gathered", "--format", "json", check="check_pair")
    tasks = [seam["task"] for seam in json.loads(out)["seams"]]
    assert tasks == ["main", "child_writes", "child_holds", "child_writes", "child_holds"]
    assert code == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--timeout", "nan"], "'nan' is not a positive number of seconds"),
        (["--timeout", "inf"], "'inf' is not a positive number of seconds"),
        (["--timeout", "0"], "'0' is not a positive number of seconds"),
        (["--timeout", "-2"], "'-2' is not a positive number of seconds"),
        (["--accept", "ok"], "cannot accept 'ok'"),
        (["--accept", "nope:replaced"], "unknown fault 'nope'"),
        (["--backend", "curio"], "invalid choice: 'curio'"),
        (["--backend", "trio", "--faults", "cancel-twice"], "not available on trio"),
    ],
)
def test_usage_errors_exit_2(capsys, options: list[str], message: str) -> None:
    code, _, err = seams(capsys, "no_guard", *options)
    assert code == 2
    assert message in err


def test_not_async_target_exits_2_with_a_clear_message(capsys) -> None:
    code, _, err = seams(capsys, "not_async")
    assert code == 2
    assert "not_async: the scenario is not async" in err
    assert "NoneType' object has no attribute" not in err


def test_system_exit_is_an_outcome_not_an_exit(capsys) -> None:
    code, out, _ = seams(capsys, "exits_when_cancelled", "--faults", "cancel")
    assert code == 1
    assert "SystemExit came out instead of the injected exception" in out
    code, _, err = seams(capsys, "exits")
    assert code == 2
    assert "the clean run raised SystemExit: 5" in err


def _gate(*argv: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(GATE), *argv], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_a_blocked_loop_does_not_hang_gate_seams(tmp_path: Path) -> None:
    started = time.monotonic()
    completed = _gate(
        "seams",
        f"{SCENARIOS}:blocks_when_cancelled",
        "--check",
        f"{SCENARIOS}:check",
        "--faults",
        "cancel",
        "--timeout",
        "1",
        cwd=tmp_path,
    )
    assert completed.returncode == 1, completed.stderr
    assert "hung" in completed.stdout
    assert time.monotonic() - started < s.BLOCK_SECONDS, "gate waited for the blocked loop"


def test_module_targets_resolve_against_the_working_directory(tmp_path: Path) -> None:
    package = tmp_path / "gate_cwd_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "scenario.py").write_text(
        "import asyncio\n\n"
        "async def run(workdir):\n"
        "    (workdir / 'done').write_text('')\n"
        "    await asyncio.sleep(0)\n\n"
        "def check(workdir):\n"
        "    assert (workdir / 'done').exists()\n"
    )
    completed = _gate(
        "seams",
        "gate_cwd_pkg.scenario:run",
        "--check",
        "gate_cwd_pkg.scenario:check",
        cwd=tmp_path,
    )
    assert completed.returncode == 0, completed.stderr
    assert "1 seams, 2 trials, 0 failed" in completed.stdout


def test_accepted_trials_confirm_no_finding(capsys, tmp_path: Path) -> None:
    example = Path(__file__).resolve().parent.parent / "examples"
    report = tmp_path / "seams.json"
    code, _, _ = run(
        capsys,
        "seams",
        f"{example}/scenario.py:buggy",
        "--check",
        f"{example}/scenario.py:check",
        "--accept",
        "check-failed",
        "--format",
        "json",
        "--output",
        str(report),
    )
    assert code == 0
    assert json.loads(report.read_text())["summary"]["accepted"] == 4
    code, out, _ = run(capsys, "check", str(example), "--seams", str(report))
    assert code == 1
    assert "confirmed by the seam sweep" not in out
