"""What a new user sees first: `gate` alone, its help, its errors, a table piped to a pager."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_gate as run
from conftest import write
from test_complexity import branches

from gate.cli import build_parser


def test_gate_alone_prints_the_help(capsys) -> None:
    code, out, err = run(capsys)
    assert code == 2
    assert out.startswith("usage: gate [-h] [--version] COMMAND ...\n")
    for command in ("check", "explain", "rules", "seams", "baseline"):
        assert f"\n    {command} " in out
    assert err == ""


def test_a_command_without_its_action_prints_that_commands_help(capsys) -> None:
    code, out, err = run(capsys, "baseline")
    assert code == 2
    assert out.startswith("usage: gate baseline [-h] ACTION ...\n")
    assert "\n    update " in out and "\n    show " in out
    assert err == ""


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["nonsense"], "gate: error: argument COMMAND: invalid choice: 'nonsense'"),
        (["check", "--format", "xml"], "gate check: error: argument --format: invalid choice"),
        (["check", "--jobs", "x"], "gate check: error: argument --jobs/-j: 'x' is not a number"),
        (["baseline", "show", "--nope"], "gate: error: unrecognized arguments: --nope"),
        (["seams", "a.py:f"], "gate seams: error: the following arguments are required: --check"),
    ],
)
def test_usage_errors_name_the_program_once(capsys, argv: list[str], error: str) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith("usage: gate")
    assert err.splitlines()[-1].startswith(error)
    assert "gate: gate" not in err and "error: gate" not in err


def _parsers(parser: argparse.ArgumentParser, prog: str = "gate"):
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                yield from _parsers(subparser, f"{prog} {name}")


def test_every_option_of_every_command_has_help() -> None:
    missing = []
    commands = 0
    for prog, parser in _parsers(build_parser()):
        commands += 1
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                helps = {choice.dest: choice.help for choice in action._choices_actions}
                missing += [f"{prog} {name}" for name in action.choices if not helps.get(name)]
            elif not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{prog} {'/'.join(action.option_strings) or action.dest}")
    assert commands == 8  # gate, check, explain, rules, seams, baseline, update, show
    assert missing == []


def test_baseline_show_piped_prints_long_keys_whole(in_tmp: Path, capsys) -> None:
    deep = Path("src", *(["a_rather_long_directory_name"] * 4), "module.py")
    write(in_tmp / "pyproject.toml", "[tool.gate.complexity]\nthreshold = 3\n")
    write(in_tmp / deep, "class Orchestrator:\n" + branches("classify_the_outcome", 5, "    "))
    assert run(capsys, "baseline", "update")[0] == 0
    key = f"{deep.as_posix()}::Orchestrator.classify_the_outcome"
    assert len(key) > 120
    environment = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    shown = subprocess.run(
        [sys.executable, "-m", "gate", "baseline", "show"],
        stdout=subprocess.PIPE,  # a pipe, as in `gate baseline show | cat`
        text=True,
        check=True,
        env=environment,
    )
    row = next(line for line in shown.stdout.splitlines() if "classify" in line)
    assert row.split() == ["│", key, "│", "5", "│", "5", "│", "3", "│", "0", "│"]
