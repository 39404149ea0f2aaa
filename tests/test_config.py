"""`[tool.gate]` is read strictly: a wrong type or a bad template fails when the config loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BUGGY, write
from conftest import run_gate as run


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (
            "[tool.gate.complexity]\nthreshold = true\n",
            "pyproject.toml: tool.gate.complexity.threshold: Input should be a valid integer "
            "(got true)",
        ),
        (
            '[tool.gate.complexity]\nthreshold = "10"\n',
            "pyproject.toml: tool.gate.complexity.threshold: Input should be a valid integer "
            '(got "10")',
        ),
        (
            '[[tool.gate.complexity.paths]]\nglob = "a/*"\nthreshold = 1.5\n',
            "pyproject.toml: tool.gate.complexity.paths.0.threshold: Input should be a valid "
            "integer (got 1.5)",
        ),
        (
            "[tool.gate.complexity]\nbaseline = 1\n",
            "pyproject.toml: tool.gate.complexity.baseline: Input should be a valid string (got 1)",
        ),
        (
            '[tool.gate]\nexclude = "build/*"\n',
            'pyproject.toml: tool.gate.exclude: Input should be an array (got "build/*")',
        ),
        (
            "[tool.gate.teardown]\nshield-helpers = [1]\n",
            "pyproject.toml: tool.gate.teardown.shield-helpers.0: Input should be a valid string "
            "(got 1)",
        ),
        (
            "[tool.gate]\ndocs-url = false\n",
            "pyproject.toml: tool.gate.docs-url: Input should be a valid string (got false)",
        ),
    ],
)
def test_wrong_types_are_errors_not_coerced(
    in_tmp: Path, capsys, table: str, expected: str
) -> None:
    write(in_tmp / "pyproject.toml", table)
    write(in_tmp / "job.py", BUGGY)
    code, out, err = run(capsys, "check")
    assert (code, out) == (2, "")
    assert expected in err.splitlines()[0]


def test_strict_config_still_reads_arrays_and_tables(in_tmp: Path, capsys) -> None:
    write(
        in_tmp / "pyproject.toml",
        '[tool.gate]\nexclude = ["skip/*"]\n[tool.gate.teardown]\nextend-critical-tokens = '
        '["archive"]\n[[tool.gate.complexity.paths]]\nglob = "a/*"\nthreshold = 3\n',
    )
    write(in_tmp / "job.py", BUGGY.replace("write_result", "archive_run"))
    write(in_tmp / "skip" / "job.py", BUGGY)
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert out.splitlines()[0].startswith("job.py:6:9: GATE100 `job.archive_run()`")
    assert "skip/" not in out


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("https://docs.example/{code}/{title}", "unknown placeholder {title}"),
        ("https://docs.example/{}", "unknown placeholder {}"),
        ("https://docs.example/{code!z}", "not a URL template (Unknown conversion specifier z)"),
        ("https://docs.example/{code", "not a URL template (expected '}' before end of string)"),
        ("https://docs.example/{code.lower}", "unknown placeholder {code.lower}"),
    ],
)
@pytest.mark.parametrize("format_", ["sarif", "rdjson", "text"])
def test_docs_url_template_is_checked_when_the_config_loads(
    in_tmp: Path, capsys, template: str, problem: str, format_: str
) -> None:
    write(in_tmp / "pyproject.toml", f'[tool.gate]\ndocs-url = "{template}"\n')
    write(in_tmp / "job.py", BUGGY)
    code, out, err = run(capsys, "check", "--format", format_)
    assert (code, out) == (2, "")
    assert err.startswith(f"gate: error: pyproject.toml: tool.gate.docs-url: {problem}")
    assert "the placeholders are {code} and {name}" in err
    assert "internal error" not in err


def test_docs_url_with_both_placeholders_is_accepted(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", '[tool.gate]\ndocs-url = "https://d.example/{name}#{code}"\n')
    # not job.py: gate.report.sources caches source lines by relative path for the process
    write(in_tmp / "docs_url_job.py", BUGGY)
    code, out, _ = run(capsys, "check", "--format", "rdjson")
    assert code == 1
    assert '"url": "https://d.example/skippable-teardown-step#GATE100"' in out
