"""The baseline file under everyday accidents: merge conflicts, broken files, advice that works."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import BUGGY, git, init_repo, write
from conftest import run_gate as run
from test_complexity import branches

from gate.cache import CACHE_FILE
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


KILLED_UPDATE = """\
import os, signal, sys
from gate.cli import main

# die as SIGKILL leaves things: after the temporary file is written, before the rename
os.replace = lambda *args: os.kill(os.getpid(), signal.SIGKILL)
sys.exit(main(["baseline", "update", "--no-cache"]))
"""


def age(path: Path, seconds: float) -> Path:
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def dead_pid() -> int:
    """The process id of a process that has finished."""
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(finished.stdout)


def test_a_killed_update_leaves_a_temporary_file_the_next_run_removes(repo: Path, capsys) -> None:
    before = (repo / BASELINE).read_text()
    write(repo / "app" / "a.py", branches("f", 4))  # so that the update writes
    killed = subprocess.run([sys.executable, "-c", KILLED_UPDATE], cwd=repo, check=False)
    assert killed.returncode == -signal.SIGKILL
    assert (repo / BASELINE).read_text() == before  # never half-written
    [leftover] = (repo / "baselines").glob(".complexity.json.*")
    # named after the writing process, so that a later run can tell it is gone
    assert re.fullmatch(r"\.complexity\.json\.\d+\.[a-z0-9_]+\.tmp", leftover.name)

    write(repo / "app" / "a.py", branches("f", 5))  # the next update writes nothing ...
    age(leftover, 30)
    code, out, _ = run(capsys, "baseline", "update")
    assert (code, out) == (0, "baselines/complexity.json: up to date (1 entries)\n")
    assert list((repo / "baselines").glob(".complexity.json.*")) == []  # ... and cleans up


def test_only_dead_writers_temporary_files_are_removed(repo: Path, capsys) -> None:
    baselines = repo / "baselines"
    dead = dead_pid()
    kept = [
        age(write(baselines / f".complexity.json.{os.getpid()}.abc_1234.tmp", "{"), 30),  # alive
        write(baselines / f".complexity.json.{dead}.young123.tmp", "{"),  # may be another host's
        age(write(baselines / ".complexity.json.orig", "{"), 7200),  # not gate's
        age(write(baselines / ".complexity.json.a1b2c3d4", "{"), 60),  # an older gate's, young
        age(write(baselines / ".other.json.e5f6g7h8", "{"), 7200),  # another target's
    ]
    removed = [
        age(write(baselines / f".complexity.json.{dead}.abc_1234.tmp", "{"), 30),
        age(write(baselines / ".complexity.json.x9y8z7w6", "{"), 7200),  # an older gate's, old
    ]
    assert run(capsys, "baseline", "update")[0] == 0
    assert [path for path in kept if not path.exists()] == []
    assert [path for path in removed if path.exists()] == []


def test_the_result_cache_cleans_up_after_a_killed_run_too(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", BUGGY)
    cache = in_tmp / ".gate_cache"
    leftover = age(write(cache / f".{CACHE_FILE}.{dead_pid()}.a.tmp", ""), 30)
    assert run(capsys, "check")[0] == 1
    assert not leftover.exists()
    assert (cache / CACHE_FILE).is_file()
