from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gate.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test from inside an empty temporary directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    os.environ.pop("GITHUB_STEP_SUMMARY", None)


# A teardown with the bug: the await on line 5 can skip the write on line 6 (GATE100 at 6:9).
BUGGY = """\
async def run(job):
    try:
        await job.evaluate()
    finally:
        await job.post_run()
        job.write_result()
"""
CLEAN = BUGGY.replace("        await job.post_run()\n", "")


def run_gate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """gate's exit code, stdout and stderr for `argv`."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def git(root: Path, *args: str) -> str:
    completed = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True)
    return completed.stdout


def init_repo(root: Path, branch: str = "main") -> Path:
    """An empty git repository with an identity, so commits work on any machine."""
    git(root, "init", "-q", "-b", branch)
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")
    return root
