"""The real `pre-commit try-repo` against this repository's working tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import BUGGY, CLEAN, write

ROOT = Path(__file__).resolve().parent.parent


def test_hooks_file_follows_the_schema() -> None:
    hooks = {
        hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    }
    assert set(hooks) == {"gate", "gate-complexity"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types_or"] == ["python", "pyi"]
        assert "update" not in hook["entry"]  # hooks never write the baseline
    assert hooks["gate-complexity"]["pass_filenames"] is False
    assert hooks["gate-complexity"]["require_serial"] is True


def pre_commit(repo: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    executable = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run(
        [executable, *args], cwd=repo, capture_output=True, text=True, env=environment, timeout=900
    )


@pytest.mark.slow
def test_try_repo_fails_on_a_skippable_step_and_passes_on_a_clean_file(tmp_path: Path) -> None:
    repo = tmp_path / "user-project"
    repo.mkdir()
    for args in (
        ["init", "-q"],
        ["config", "user.email", "t@example.invalid"],
        ["config", "user.name", "t"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    write(repo / "bad.py", BUGGY)
    write(repo / "good.py", CLEAN)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    home = tmp_path / "pre-commit-home"

    failing = pre_commit(repo, "try-repo", str(ROOT), "gate", "--files", "bad.py", home=home)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "bad.py:6:9: GATE100" in failing.stdout

    passing = pre_commit(repo, "try-repo", str(ROOT), "gate", "--files", "good.py", home=home)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout

    ratchet = pre_commit(repo, "try-repo", str(ROOT), "gate-complexity", "--all-files", home=home)
    assert ratchet.returncode == 0, ratchet.stdout + ratchet.stderr
    assert not (repo / "baselines").exists()

    # ruff under the gate: the hook's environment has ruff, and the findings baseline holds
    write(repo / "pyproject.toml", "[tool.gate]\nruff = true\n")
    write(repo / "good.py", "import os\n" + CLEAN)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    ruff = pre_commit(repo, "try-repo", str(ROOT), "gate", "--files", "good.py", home=home)
    assert ruff.returncode == 1, ruff.stdout + ruff.stderr
    assert "good.py:1:8: F401 `os` imported but unused" in ruff.stdout
    gate = Path(sys.executable).parent / "gate"
    subprocess.run([str(gate), "baseline", "update"], cwd=repo, check=True, capture_output=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    held = pre_commit(repo, "try-repo", str(ROOT), "gate", "--files", "good.py", home=home)
    assert held.returncode == 0, held.stdout + held.stderr
