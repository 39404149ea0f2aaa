"""`@pytest.mark.seams`: one test item per seam and fault, and the README's example, as written."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = Path(__file__).resolve().parent / "harness_scenarios.py"

MARKED = """
from pathlib import Path

import pytest

import harness_scenarios as s

RUNS = Path(__file__).with_name("runs.txt")


async def counted(workdir):
    with RUNS.open("a") as runs:
        runs.write("x")
    await s.no_guard(workdir)


@pytest.mark.seams(counted, s.check, faults=["cancel"])
def test_no_guard(seam):
    seam.verify()


@pytest.mark.seams(s.fresh_cancel, s.check, faults=["cancel"], accept=["replaced"])
def test_accepted(seam):
    trial = seam.verify()
    assert (trial.outcome, trial.accepted) == ("replaced", True)


@pytest.mark.seams(s.writes_nothing, s.check)
def test_clean_run_fails(seam):
    seam.verify()


@pytest.mark.seams(s.trio_shielded, s.check, faults=["cancel"], backend="trio")
def test_trio(seam):
    seam.verify()
"""


@pytest.fixture
def marked(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copy(SCENARIOS, pytester.path / "harness_scenarios.py")
    pytester.makepyfile(test_marked=MARKED)
    return pytester


def test_collection_runs_the_scenario_once_and_names_each_seam(marked: pytest.Pytester) -> None:
    result = marked.runpytest_subprocess("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "test_marked.py::test_no_guard[[]cancel-1-step:19[]]",
            "test_marked.py::test_no_guard[[]cancel-2-step:19[]]",
            "test_marked.py::test_no_guard[[]cancel-3-step:19[]]",
            "test_marked.py::test_accepted[[]cancel-1-step:19[]]",
            "test_marked.py::test_clean_run_fails[[]clean-run[]]",
            "test_marked.py::test_trio[[]cancel-1-trio_shielded:*[]]",
            "test_marked.py::test_trio[[]cancel-2-trio_shielded:*[]]",
        ]
    )
    assert (marked.path / "runs.txt").read_text() == "x"


def test_each_item_runs_its_own_trial(marked: pytest.Pytester) -> None:
    result = marked.runpytest_subprocess("-v")
    result.assert_outcomes(passed=4, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*test_no_guard[[]cancel-1-step:19[]] PASSED*",
            "*test_no_guard[[]cancel-2-step:19[]] FAILED*",
            "*test_no_guard[[]cancel-3-step:19[]] FAILED*",
            "*test_accepted[[]cancel-1-step:19[]] PASSED*",
            "*test_clean_run_fails[[]clean-run[]] FAILED*",
            "*seam 2 [[]cancel[]] check-failed: harness_scenarios.py:19 in step*",
            "*seam sweep could not start: the clean run does not pass the check*",
        ]
    )
    # one clean run per collection, one run per item of test_no_guard
    assert (marked.path / "runs.txt").read_text() == "x" * 4


def test_one_seam_reruns_alone(marked: pytest.Pytester) -> None:
    result = marked.runpytest_subprocess("-k", "test_no_guard and cancel-2")
    result.assert_outcomes(failed=1, deselected=6)
    assert (marked.path / "runs.txt").read_text() == "x" * 2  # collection, then the one trial


def test_a_marker_on_a_test_without_the_seam_fixture_is_a_collection_error(
    pytester: pytest.Pytester,
) -> None:
    shutil.copy(SCENARIOS, pytester.path / "harness_scenarios.py")
    pytester.makepyfile(
        """
        import pytest
        import harness_scenarios as s

        @pytest.mark.seams(s.no_guard, s.check)
        def test_forgot_the_fixture():
            pass
        """
    )
    result = pytester.runpytest_subprocess()
    result.stdout.fnmatch_lines(["*marks a test that takes the `seam` fixture*"])
    assert result.ret != 0


# -- the README's example, exactly as the README shows it


def _readme_example() -> tuple[str, list[str]]:
    """The python block with the marker, and the FAILED lines of the console block after it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w+)\n(.*?)```", readme, flags=re.DOTALL)
    index = next(i for i, (kind, body) in enumerate(blocks) if "@pytest.mark.seams(" in body)
    console = next(body for kind, body in blocks[index + 1 :] if kind == "console")
    failed = [line.strip() for line in console.splitlines() if line.startswith("FAILED")]
    return blocks[index][1], failed


def test_readme_marker_example_runs_as_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # the short summary's lines in full
    source, failed_lines = _readme_example()
    name = re.search(r"# (test_\w+\.py)", source).group(1)
    shutil.copy(ROOT / "examples" / "orchestrator.py", pytester.path / "orchestrator.py")
    (pytester.path / name).write_text(source)
    result = pytester.runpytest_subprocess("-q", "-rf", "-p", "no:cacheprovider")
    # one failing item per fault at each of the two teardown seams of the buggy run()
    result.assert_outcomes(failed=4, passed=12)
    assert len(failed_lines) == 4
    for line in failed_lines:
        result.stdout.fnmatch_lines([line.replace("[", "[[]").rstrip(".") + "*"])
