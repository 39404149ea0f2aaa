"""`gate check --diff BASE` in throwaway git repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import BUGGY, git, init_repo, write
from conftest import run_gate as run


@pytest.fixture
def repo(in_tmp: Path) -> Path:
    init_repo(in_tmp)
    write(in_tmp / "legacy.py", BUGGY)
    git(in_tmp, "add", "-A")
    git(in_tmp, "commit", "-qm", "legacy")
    git(in_tmp, "checkout", "-qb", "feature")
    return in_tmp


def commit(root: Path, message: str = "change") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def test_legacy_findings_are_left_out(repo: Path, capsys) -> None:
    assert run(capsys, "check")[0] == 1
    code, out, _ = run(capsys, "check", "--diff", "main")
    assert (code, out) == (0, "All checks passed (1 file checked).\n")


def test_new_file_is_reported(repo: Path, capsys) -> None:
    write(repo / "fresh.py", BUGGY)
    commit(repo)
    code, out, _ = run(capsys, "check", "--diff", "main")
    assert code == 1
    assert "fresh.py:6:9: GATE100" in out
    assert "legacy.py" not in out


def test_uncommitted_changes_count_too(repo: Path, capsys) -> None:
    write(repo / "fresh.py", BUGGY)
    git(repo, "add", "fresh.py")  # staged, as pre-commit sees it
    assert "fresh.py:6:9: GATE100" in run(capsys, "check", "--diff", "main")[1]


def test_changed_interrupt_point_reports_the_step_it_skips(repo: Path, capsys) -> None:
    write(repo / "legacy.py", BUGGY.replace("job.post_run()", "job.post_run(retries=2)"))
    commit(repo)
    code, out, _ = run(capsys, "check", "--diff", "main")
    assert code == 1
    assert "legacy.py:6:9: GATE100" in out  # line 6 is unchanged; its interrupt point is not


def test_pure_rename_has_no_changed_lines(repo: Path, capsys) -> None:
    git(repo, "mv", "legacy.py", "renamed.py")
    commit(repo)
    code, out, _ = run(capsys, "check", "--diff", "main")
    assert (code, out) == (0, "All checks passed (1 file checked).\n")


def test_deletion(repo: Path, capsys) -> None:
    write(repo / "other.py", "x = 1\n")
    git(repo, "rm", "-q", "legacy.py")
    commit(repo)
    assert run(capsys, "check", "--diff", "main")[0] == 0


@pytest.mark.parametrize("name", ["with space.py", "ünïcödé.py", "dir with space/ça va.py"])
def test_paths_with_spaces_and_non_ascii(repo: Path, capsys, name: str) -> None:
    write(repo / name, BUGGY)
    commit(repo)
    code, out, _ = run(capsys, "check", "--diff", "main")
    assert code == 1
    assert f"{name}:6:9: GATE100" in out


def test_complexity_judges_only_changed_functions(repo: Path, capsys) -> None:
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(12))
    write(repo / "pyproject.toml", "[tool.gate.complexity]\nthreshold = 5\n")
    write(repo / "big.py", f"def old(x):\n{branches}    return 0\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "old debt")
    git(repo, "branch", "-f", "main")
    source = (repo / "big.py").read_text() + f"\n\ndef new(x):\n{branches}    return 0\n"
    write(repo / "big.py", source)
    commit(repo)
    code, out, _ = run(capsys, "check", "--diff", "main", "--select", "GATE2")
    assert code == 1
    assert "GATE200 new: complexity 13" in out
    assert "GATE200 old" not in out


def test_unknown_base(repo: Path, capsys) -> None:
    code, _, err = run(capsys, "check", "--diff", "origin/nope")
    assert code == 2
    assert "--diff origin/nope: no such commit or branch" in err


def test_not_a_repository(in_tmp: Path, capsys) -> None:
    write(in_tmp / "a.py", "x = 1\n")
    code, _, err = run(capsys, "check", "--diff", "main")
    assert code == 2
    assert "is not inside a git repository" in err


def test_shallow_clone_without_merge_base(repo: Path, capsys, tmp_path_factory) -> None:
    for number in range(3):
        write(repo / f"f{number}.py", f"x = {number}\n")
        commit(repo, f"feature {number}")
    git(repo, "checkout", "-q", "main")
    write(repo / "m.py", "y = 1\n")
    commit(repo, "main moves on")
    clone = tmp_path_factory.mktemp("clone") / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--no-single-branch", f"file://{repo}", str(clone)],
        check=True,
    )
    git(clone, "checkout", "-q", "feature")
    import os

    os.chdir(clone)
    code, _, err = run(capsys, "check", "--diff", "origin/main")
    assert code == 2
    assert "no merge base between origin/main and HEAD in this shallow clone" in err
    assert "git fetch --unshallow" in err
