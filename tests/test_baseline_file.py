"""The baseline file under everyday accidents: merge conflicts, broken files, advice that works."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from conftest import git, init_repo, write
from conftest import run_gate as run
from test_complexity import branches

from gate.complexity.baseline import render_baseline

BASELINE = Path("baselines") / "complexity.json"


@pytest.fixture
def repo(in_tmp: Path, capsys) -> Path:
    """A project whose baseline grandfathers app/a.py::f at 5 (threshold 3), committed."""
    init_repo(in_tmp)
    write(in_tmp / "pyproject.toml", "[tool.gate.complexity]\nthreshold = 3\n")
    write(in_tmp / "app" / "a.py", branches("f", 5))
    assert run(capsys, "baseline", "update")[0] == 0
    git(in_tmp, "add", "-A")
    git(in_tmp, "commit", "-qm", "start")
    return in_tmp


def conflicted(repo: Path, capsys, style: str) -> None:
    """Two branches that each ran `gate baseline update`, merged: the baseline conflicts.

    ours tightened f from 5 to 4; theirs added g = 5 with --accept-new."""
    git(repo, "config", "merge.conflictStyle", style)
    git(repo, "checkout", "-qb", "theirs")
    write(repo / "app" / "b.py", branches("g", 5))
    assert run(capsys, "baseline", "update", "--accept-new")[0] == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "add g")
    git(repo, "checkout", "-q", "main")
    write(repo / "app" / "a.py", branches("f", 4))
    assert run(capsys, "baseline", "update")[0] == 0
    git(repo, "commit", "-qam", "tighten f")
    merged = git_merge(repo, "theirs")
    assert "CONFLICT (content): Merge conflict in baselines/complexity.json" in merged
    assert "<<<<<<<" in (repo / BASELINE).read_text()


def git_merge(repo: Path, branch: str) -> str:
    completed = subprocess.run(
        ["git", "merge", "-q", branch], cwd=repo, capture_output=True, text=True
    )
    assert completed.returncode == 1
    return completed.stdout + completed.stderr


def suggested_command(message: str) -> list[str]:
    """The `gate ...` command an error message tells the user to run, as argv."""
    found = re.findall(r"`(gate [^`]+)`", message)
    assert found, f"no command suggested in: {message}"
    return shlex.split(found[0])[1:]


@pytest.mark.parametrize("style", ["merge", "diff3", "zdiff3"])
def test_the_command_a_conflicted_baseline_suggests_merges_it(
    repo: Path, capsys, style: str
) -> None:
    conflicted(repo, capsys, style)
    code, _, err = run(capsys, "check")
    assert code == 2
    assert "baselines/complexity.json:3: merge-conflict marker in the baseline" in err
    command = suggested_command(err)
    assert command == ["baseline", "update"]

    code, out, _ = run(capsys, *command)
    assert code == 0, out
    assert out.splitlines()[-1] == "baselines/complexity.json: written (2 entries)"
    # every entry of either side, the lower count where both have one
    text = (repo / BASELINE).read_text()
    assert text == render_baseline({"app/a.py::f": 4, "app/b.py::g": 5})
    assert run(capsys, "check")[0] == 0
    assert run(capsys, "baseline", "update")[1].endswith("up to date (2 entries)\n")


def test_merged_entries_are_judged_like_any_other(repo: Path, capsys) -> None:
    conflicted(repo, capsys, "merge")
    # theirs still has f at 5; the merge keeps ours (4), so a rise back to 5 is refused
    write(repo / "app" / "a.py", branches("f", 5))
    code, out, _ = run(capsys, "baseline", "update")
    assert code == 1
    assert "refused: app/a.py::f rose from 4 to 5" in out
    assert "<<<<<<<" in (repo / BASELINE).read_text()  # not written


def test_rebaseline_replaces_a_conflicted_baseline(repo: Path, capsys) -> None:
    conflicted(repo, capsys, "merge")
    code, out, _ = run(capsys, "baseline", "update", "--rebaseline")
    assert code == 0, out
    assert "added: app/a.py::f = 4" in out
    assert "added: app/b.py::g = 5" in out
    assert json.loads((repo / BASELINE).read_text())["functions"] == {
        "app/a.py::f": 4,
        "app/b.py::g": 5,
    }


@pytest.mark.parametrize(
    "content",
    [
        "{\n<<<<<<< HEAD\n",
        "not json\n",
        '{"functions": {"app/a.py::f": true}}\n',
        '{"radon": "5.1.0"}\n',
    ],
)
def test_rebaseline_starts_over_from_any_broken_baseline(repo: Path, capsys, content: str) -> None:
    write(repo / BASELINE, content)
    assert run(capsys, "check")[0] == 2
    code, out, _ = run(capsys, "baseline", "update", "--rebaseline")
    assert code == 0, out
    assert json.loads((repo / BASELINE).read_text())["functions"] == {"app/a.py::f": 5}


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (
            '{\n<<<<<<< HEAD\n  "functions": {"app/a.py::f": 4},\n=======\n  "functions": '
            '{"app/a.py::f": 5,},\n>>>>>>> theirs\n  "schema": 1\n}\n',
            "baselines/complexity.json (their side of the conflict):2: the baseline is not "
            "valid JSON",
        ),
        (
            '{\n<<<<<<< HEAD\n  "radon": "5.1.0"\n=======\n  "radon": "6.0.1"\n>>>>>>> x\n}\n',
            "baselines/complexity.json:2: the two sides of the conflict were measured with "
            "radon 5.1.0 and 6.0.1",
        ),
        (
            '{\n<<<<<<< HEAD\n  "functions": {}\n>>>>>>> x\n}\n',
            "baselines/complexity.json:2: merge-conflict markers that do not nest",
        ),
    ],
)
def test_a_conflict_that_cannot_be_merged_says_so(
    repo: Path, capsys, content: str, problem: str
) -> None:
    write(repo / BASELINE, content)
    code, out, err = run(capsys, "baseline", "update")
    assert (code, out) == (2, "")
    assert problem in err
    assert (repo / BASELINE).read_text() == content


@pytest.mark.parametrize(
    "content",
    [
        '{"radon": "5.1.0", "functions": {"app/a.py::f": 5}}\n',
        '{\n  "functions": {\n<<<<<<< HEAD\n    "app/a.py::f": 5\n=======\n'
        '    "app/a.py::f": 6\n>>>>>>> x\n  }\n}\n',
    ],
)
def test_every_command_a_broken_baseline_suggests_works(repo: Path, capsys, content: str) -> None:
    write(repo / BASELINE, content)
    code, _, err = run(capsys, "check")
    assert code == 2
    code, out, err = run(capsys, *suggested_command(err))
    assert code == 0, out + err
    assert run(capsys, "check")[0] == 0


def test_a_count_that_is_not_an_integer_is_a_broken_baseline(repo: Path, capsys) -> None:
    write(repo / BASELINE, '{"functions": {"app/a.py::f": "12"}}\n')
    code, _, err = run(capsys, "check")
    assert code == 2
    assert "complexity.json: functions.app/a.py::f: Input should be a valid integer" in err
