"""The real `pre-commit try-repo` against this repository's working tree."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import BUGGY, CLEAN, write
from test_complexity import branches

from gate.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_hooks_file_follows_the_schema() -> None:
    from pre_commit.clientlib import load_manifest

    assert load_manifest(ROOT / ".pre-commit-hooks.yaml")  # raises on a schema error
    by_id = hooks()
    assert set(by_id) == {"gate", "gate-complexity"}
    for hook in by_id.values():
        assert hook["language"] == "python"
        assert hook["types_or"] == ["python", "pyi"]
        assert "update" not in hook["entry"]  # hooks never write the baseline
    assert by_id["gate-complexity"]["pass_filenames"] is False
    assert by_id["gate-complexity"]["require_serial"] is True


TANGLED = branches("tangled", 12)  # complexity 12, over the default threshold of 10


def hooks() -> dict[str, dict]:
    return {
        hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    }


def codes_reported(hook: dict, files: list[str], capsys) -> set[str]:
    """The codes a hook reports when pre-commit runs it on `files`."""
    argv = shlex.split(hook["entry"])[1:] + (files if hook.get("pass_filenames", True) else [])
    code = main(argv)
    out = capsys.readouterr().out
    assert code in (0, 1), out
    return {line.split()[1] for line in out.splitlines() if ": GATE" in line}


def test_complexity_is_reported_by_one_hook_only(in_tmp: Path, capsys) -> None:
    write(in_tmp / "bad.py", BUGGY)
    write(in_tmp / "tangled.py", TANGLED)
    found = {
        hook_id: codes_reported(hook, ["bad.py", "tangled.py"], capsys)
        for hook_id, hook in hooks().items()
    }
    assert found == {"gate": {"GATE100"}, "gate-complexity": {"GATE200"}}


def test_the_hooks_file_says_what_the_hooks_write() -> None:
    header = (ROOT / ".pre-commit-hooks.yaml").read_text().split("\n- id:")[0]
    assert "writes no file" not in header and "any file" not in header
    assert "`.gate_cache/`" in header
    assert "Neither hook writes the baseline" in header


def pre_commit(repo: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    executable = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run(
        [executable, *args], cwd=repo, capture_output=True, text=True, env=environment, timeout=900
    )


def hook_sections(output: str):
    """(hook id, its output) for each hook in `pre-commit run` output."""
    for section in output.split("- hook id: ")[1:]:
        hook_id, _, rest = section.partition("\n")
        yield hook_id.strip(), rest


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
    write(repo / "tangled.py", TANGLED)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    home = tmp_path / "pre-commit-home"

    failing = pre_commit(repo, "try-repo", str(ROOT), "gate", "--files", "bad.py", home=home)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "bad.py:6:9: GATE100" in failing.stdout

    passing = pre_commit(repo, "try-repo", str(ROOT), "gate", "--files", "good.py", home=home)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout

    # every hook over every file: the complexity crossing is reported by gate-complexity only
    both = pre_commit(repo, "try-repo", str(ROOT), "--all-files", home=home)
    assert both.returncode == 1, both.stdout + both.stderr
    sections = dict(hook_sections(both.stdout))
    assert set(sections) == {"gate", "gate-complexity"}
    assert "bad.py:6:9: GATE100" in sections["gate"] and "GATE200" not in sections["gate"]
    assert "tangled.py:1:1: GATE200 tangled: complexity 12" in sections["gate-complexity"]
    assert "GATE100" not in sections["gate-complexity"]
    # what the hooks wrote: the result cache, never the baseline
    assert (repo / ".gate_cache").is_dir()
    assert not (repo / "baselines").exists()
