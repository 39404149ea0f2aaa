"""gate's command line, driven through main(argv) in a temporary directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BUGGY, CLEAN, write
from conftest import run_gate as run


def test_findings_exit_1_with_file_line_col(in_tmp: Path, capsys) -> None:
    write(in_tmp / "app" / "job.py", BUGGY)
    code, out, _ = run(capsys, "check", "app")
    assert code == 1
    assert out.splitlines()[0].startswith("app/job.py:6:9: GATE100 `job.write_result()` can be")
    assert "line 5" in out.splitlines()[0]
    assert out.splitlines()[-1] == "Found 1 finding in 1 file checked."


def test_clean_exit_0(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", CLEAN)
    code, out, _ = run(capsys, "check")
    assert code == 0
    assert out == "All checks passed (1 file checked).\n"


def test_exit_zero(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", BUGGY)
    assert run(capsys, "check", "--exit-zero")[0] == 0


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--select", "GATE100"], 1),
        (["--select", "GATE1"], 1),
        (["--select", "GATE101"], 0),
        (["--ignore", "GATE100"], 0),
        (["--select", "GATE1", "--ignore", "GATE10"], 0),
        (["--select", "GATE", "--ignore", "GATE1", "--select", "GATE100"], 1),
    ],
)
def test_select_and_ignore(in_tmp: Path, capsys, options: list[str], expected: int) -> None:
    write(in_tmp / "job.py", BUGGY)
    assert run(capsys, "check", *options)[0] == expected


def test_bad_select_is_usage_error(in_tmp: Path, capsys) -> None:
    code, _, err = run(capsys, "check", "--select", "E501")
    assert code == 2
    assert "'E501' is not a rule code or prefix" in err


def test_missing_path_is_usage_error(in_tmp: Path, capsys) -> None:
    code, _, err = run(capsys, "check", "nowhere.py")
    assert code == 2
    assert "nowhere.py: no such file or directory" in err


def test_json_output_is_pinned(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", BUGGY)
    code, out, _ = run(capsys, "check", "--format", "json")
    assert code == 1
    document = json.loads(out)
    assert document["version"] == 1
    assert document["summary"] == {"files": 1, "findings": 1}
    (finding,) = document["findings"]
    assert set(finding) == {
        "code",
        "name",
        "severity",
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "message",
        "fingerprint",
        "related",
    }
    assert (finding["code"], finding["name"], finding["severity"]) == (
        "GATE100",
        "skippable-teardown-step",
        "error",
    )
    assert (finding["path"], finding["line"], finding["column"]) == ("job.py", 6, 9)
    assert (finding["end_line"], finding["end_column"]) == (6, 27)
    assert finding["related"] == [
        {"path": "job.py", "line": 5, "column": 9, "message": "interrupt point"}
    ]


def test_fingerprint_survives_line_drift(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", BUGGY)
    before = json.loads(run(capsys, "check", "--format", "json")[1])
    write(in_tmp / "job.py", "# a comment\n\n" + BUGGY)
    after = json.loads(run(capsys, "check", "--format", "json")[1])
    assert before["findings"][0]["line"] + 2 == after["findings"][0]["line"]
    assert before["findings"][0]["fingerprint"] == after["findings"][0]["fingerprint"]


def test_output_file(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", BUGGY)
    code, out, _ = run(capsys, "check", "--format", "json", "--output", "out/report.json")
    assert code == 1
    assert out == ""
    assert json.loads((in_tmp / "out" / "report.json").read_text())["summary"]["findings"] == 1


def test_noqa(in_tmp: Path, capsys) -> None:
    write(
        in_tmp / "a.py", BUGGY.replace("job.write_result()", "job.write_result()  # noqa: GATE100")
    )
    write(
        in_tmp / "b.py", BUGGY.replace("job.write_result()", "job.write_result()  # noqa: GATE101")
    )
    write(in_tmp / "c.py", BUGGY.replace("job.write_result()", "job.write_result()  # noqa"))
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert [line.split(":")[0] for line in out.splitlines()[:-1]] == ["b.py"]


def test_syntax_error_is_a_finding(in_tmp: Path, capsys) -> None:
    write(in_tmp / "broken.py", "def f(:\n    pass\n")
    write(in_tmp / "fine.py", BUGGY)
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "broken.py:1:7: GATE900 syntax error: invalid syntax" in out
    assert "fine.py:6:9: GATE100" in out


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the syntax parses on 3.12 and later")
def test_syntax_newer_than_gates_python_is_a_warning(in_tmp: Path, capsys) -> None:
    write(in_tmp / "newer.py", "type Names = list[str]\n")
    write(in_tmp / "fine.py", "x = 1\n")
    code, out, _ = run(capsys, "check")
    assert code == 0  # valid in a newer Python: a warning, not a syntax error
    assert "newer.py:1:" in out and "GATE902" in out and "GATE900" not in out
    assert "libcst's newer grammar does" in out


def test_non_utf8_and_empty_files(in_tmp: Path, capsys) -> None:
    (in_tmp / "latin.py").write_bytes(b"name = '\xe9t\xe9'\n")
    (in_tmp / "declared.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'\n")
    (in_tmp / "empty.py").write_bytes(b"")
    (in_tmp / "nul.py").write_bytes(b"x = 1\x00\n")
    code, out, _ = run(capsys, "check")
    assert code == 1
    lines = out.splitlines()
    assert any(line.startswith("latin.py:1:") and "GATE900" in line for line in lines)
    assert any(line.startswith("nul.py:1:") and "GATE900" in line for line in lines)
    assert not any(line.startswith(("declared.py", "empty.py")) for line in lines)
    assert lines[-1] == "Found 2 findings in 4 files checked."


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
def test_symlink_loop_and_broken_link(in_tmp: Path, capsys) -> None:
    os.symlink("b.py", in_tmp / "a.py")
    os.symlink("a.py", in_tmp / "b.py")
    os.symlink("missing.py", in_tmp / "dangling.py")
    os.symlink(".", in_tmp / "loopdir")
    write(in_tmp / "ok.py", CLEAN)
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "a.py:1:1: GATE901 cannot read file: Too many levels of symbolic links" in out
    assert "dangling.py:1:1: GATE901 cannot read file: No such file or directory" in out
    assert "loopdir" not in out


def test_unreadable_file(in_tmp: Path, capsys, monkeypatch) -> None:
    write(in_tmp / "secret.py", CLEAN)

    real_open = os.open

    def deny(path, *args, **kwargs):
        if str(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    # root can read a mode-000 file, so refuse the open itself
    monkeypatch.setattr(os, "open", deny)
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "secret.py:1:1: GATE901 cannot read file: Permission denied" in out


def test_gitignore_is_respected(in_tmp: Path, capsys) -> None:
    subprocess.run(["git", "init", "-q"], check=True)
    write(in_tmp / ".gitignore", "generated/\n")
    write(in_tmp / "generated" / "job.py", BUGGY)
    write(in_tmp / "src" / "job.py", CLEAN)
    code, out, _ = run(capsys, "check")
    assert code == 0
    assert "(1 file checked)" in out


def test_config_exclude_and_include(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", '[tool.gate]\nexclude = ["legacy/*"]\n')
    write(in_tmp / "legacy" / "job.py", BUGGY)
    write(in_tmp / "new" / "job.py", CLEAN)
    code, out, _ = run(capsys, "check")
    assert (code, out) == (0, "All checks passed (1 file checked).\n")
    # a file named on the command line (as pre-commit passes it) is excluded too
    assert run(capsys, "check", "legacy/job.py")[0] == 0


def test_config_found_by_walking_up(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", '[tool.gate]\nignore = ["GATE100"]\n')
    write(in_tmp / "pkg" / "deep" / "job.py", BUGGY)
    os.chdir(in_tmp / "pkg")
    assert run(capsys, "check", "deep")[0] == 0


def test_teardown_config_tokens(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", BUGGY.replace("write_result", "archive_run"))
    assert run(capsys, "check")[0] == 0
    write(in_tmp / "pyproject.toml", '[tool.gate.teardown]\nextend-critical-tokens = ["archive"]\n')
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "`job.archive_run()` can be skipped" in out


def test_unknown_config_key_names_file_and_key(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", "[tool.gate.teardown]\ncritcal-tokens = []\n")
    write(in_tmp / "job.py", CLEAN)
    code, _, err = run(capsys, "check")
    assert code == 2
    assert "pyproject.toml: tool.gate.teardown.critcal-tokens: unknown key" in err


def test_wrong_type_in_config(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", '[tool.gate.complexity]\nthreshold = "high"\n')
    code, _, err = run(capsys, "check")
    assert code == 2
    assert "tool.gate.complexity.threshold: Input should be a valid integer" in err


def test_broken_toml(in_tmp: Path, capsys) -> None:
    write(in_tmp / "gate.toml", "[tool.gate\n")
    code, _, err = run(capsys, "check", "--config", "gate.toml")
    assert code == 2
    assert "gate.toml: invalid TOML" in err


def test_missing_config_file(in_tmp: Path, capsys) -> None:
    code, _, err = run(capsys, "check", "--config", "nope.toml")
    assert code == 2
    assert "nope.toml: no such config file" in err


def test_explain_and_rules(capsys) -> None:
    code, out, _ = run(capsys, "explain", "GATE102")
    assert code == 0
    assert out.startswith("# GATE102 guard-misses-cancellation\n")
    assert "## Use instead" in out
    assert run(capsys, "explain", "skippable-teardown-step")[1].startswith("# GATE100")
    code, _, err = run(capsys, "explain", "GATE999")
    assert code == 2
    assert "unknown rule 'GATE999'" in err
    code, out, _ = run(capsys, "rules")
    assert code == 0
    assert out.splitlines()[0].split()[:3] == ["GATE100", "skippable-teardown-step", "error"]


def test_help_and_usage(capsys) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "exit codes: 0 no findings, 1 findings, 2" in out
    code, out, _ = run(capsys)
    assert code == 2
    assert out.startswith("usage: gate")  # gate alone prints the help
    code, _, err = run(capsys, "check", "--format", "xml")
    assert code == 2
    assert "invalid choice: 'xml'" in err


def test_python_dash_m(in_tmp: Path) -> None:
    write(in_tmp / "job.py", BUGGY)
    completed = subprocess.run(
        [sys.executable, "-m", "gate", "check", "job.py"], capture_output=True, text=True
    )
    assert completed.returncode == 1
    assert "job.py:6:9: GATE100" in completed.stdout
    assert "\x1b[" not in completed.stdout  # plain text when piped
