"""The CI files in examples/ci parse, and every gate command in them runs against this repo."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml

from gate.cli import main

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "examples" / "ci").glob("*.yml"))


def _scripts(node: object) -> list[str]:
    """Every shell line under a `run:` or `script:` key."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("run", "script"):
                lines = value if isinstance(value, list) else str(value).splitlines()
                found.extend(line.strip() for line in lines)
            else:
                found.extend(_scripts(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_scripts(item))
    return found


def gate_commands(path: Path) -> list[list[str]]:
    commands = []
    for line in _scripts(yaml.safe_load(path.read_text())):
        first = line.split("|")[0].strip()  # the part before a pipe into reviewdog
        if first.startswith("gate "):
            commands.append(shlex.split(first.replace('"$BASE"', "HEAD")))
    return commands


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_ci_file_parses_and_its_gate_commands_run(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    commands = gate_commands(path)
    assert commands, f"{path.name} runs no gate command"
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    for argv in commands:
        if "--output" in argv:
            index = argv.index("--output") + 1
            argv[index] = str(tmp_path / argv[index])
        code = main(argv[1:])
        captured = capsys.readouterr()
        assert code in (0, 1), f"{shlex.join(argv)} exited {code}: {captured.err}"
        # gate's own tree is clean, so these pass here
        assert code == 0, f"{shlex.join(argv)}: {captured.out}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_ci_files_install_ruff_for_the_ruff_enabled_configuration(path: Path) -> None:
    """The commands above run against this repository, whose config has `ruff = true`: they
    run ruff too, as they would for a team that puts ruff under the gate."""
    from gate.config import load_config

    assert load_config(None, ROOT).settings.ruff
    installs = [
        line for line in _scripts(yaml.safe_load(path.read_text())) if "pip install" in line
    ]
    assert installs and all("gate[ruff]" in line for line in installs)
