"""Error messages not covered elsewhere: each says what is wrong and where, and exits 2."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import BUGGY, CLEAN, git, init_repo, write
from conftest import run_gate as run

from gate import filecheck


def test_tool_gate_must_be_a_table(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", '[tool]\ngate = "yes"\n')
    code, _, err = run(capsys, "check")
    assert code == 2
    assert "pyproject.toml: tool.gate: expected a table" in err


def test_unreadable_baseline(in_tmp: Path, capsys) -> None:
    (in_tmp / "baselines" / "complexity.json").mkdir(parents=True)  # a directory, not a file
    write(in_tmp / "job.py", CLEAN)
    code, _, err = run(capsys, "check")
    assert code == 2
    assert "baselines/complexity.json: cannot read the baseline" in err


def test_internal_error_is_exit_2_without_traceback(in_tmp: Path, capsys, monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("gate.cli.run_check", broken)
    code, out, err = run(capsys, "check")
    assert (code, out) == (2, "")
    assert err.startswith("gate: internal error: RuntimeError: boom\n")
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check", "--jobs", "two"], "'two' is not a number of workers"),
        (["seams", "a.py:f", "--check", "a.py:c", "--timeout", "-1"], "'-1' is not a positive"),
        (["seams", "a.py:f", "--check", "a.py:c", "--faults", ""], "unknown fault(s) []"),
    ],
)
def test_bad_option_values(in_tmp: Path, capsys, argv: list[str], message: str) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err


def test_target_errors(in_tmp: Path, capsys) -> None:
    write(in_tmp / "scenarios.py", "VALUE = 3\nraise_later = None\n")
    write(in_tmp / "broken.py", "import nowhere_to_be_found\n")
    code, _, err = run(capsys, "seams", "scenarios.py:VALUE", "--check", "scenarios.py:VALUE")
    assert code == 2
    assert "VALUE is not callable" in err
    code, _, err = run(capsys, "seams", "broken.py:f", "--check", "broken.py:c")
    assert code == 2
    assert "importing broken.py failed: ModuleNotFoundError" in err


def test_diff_without_common_history(in_tmp: Path, capsys) -> None:
    init_repo(in_tmp)
    write(in_tmp / "a.py", BUGGY)
    git(in_tmp, "add", "-A")
    git(in_tmp, "commit", "-qm", "one")
    git(in_tmp, "checkout", "-q", "--orphan", "other")
    git(in_tmp, "commit", "-qm", "unrelated")
    code, _, err = run(capsys, "check", "--diff", "main")
    assert code == 2
    assert "--diff main: main and HEAD have no common history" in err


def test_too_deep_for_the_parsers_is_a_warning(in_tmp: Path, capsys, monkeypatch) -> None:
    write(in_tmp / "deep.py", BUGGY)

    def too_deep(*args, **kwargs):
        raise RecursionError

    monkeypatch.setattr(filecheck, "measure", too_deep)
    code, out, _ = run(capsys, "check", "--no-cache")
    assert code == 1  # the teardown finding still counts; the warning alone would not
    assert "deep.py:1:1: GATE902 complexity not measured: the code is nested too deeply" in out


@pytest.mark.skipif(sys.platform == "win32", reason="permissions")
def test_cache_that_cannot_be_written_is_skipped(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", BUGGY)
    write(in_tmp / ".gate_cache", "a file where the cache directory should be")
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "job.py:6:9: GATE100" in out
