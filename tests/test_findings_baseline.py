"""The findings baseline (`baselines/findings.json`): teardown and ruff findings grandfathered
by fingerprint, in throwaway git repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BUGGY, git, init_repo, write
from conftest import run_gate as run

from gate.document import read_document
from gate.findings_baseline import Entry, FindingsBaseline, render

PYPROJECT = """\
[tool.gate]
ruff = true

[tool.ruff.lint]
select = ["F"]
external = ["GATE"]
"""
LEGACY = "import os\n\n\n" + BUGGY  # F401 at 1:8, GATE100 at 9:9
# One new bug of each kind.
NEW_BUGS = """

async def fresh(job):
    import sys

    try:
        await job.evaluate()
    finally:
        await job.post_run()
        job.upload_logs()
"""


def commit(root: Path, message: str = "change") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


@pytest.fixture
def legacy(in_tmp: Path) -> Path:
    """A repository with one legacy teardown finding and one legacy ruff finding."""
    init_repo(in_tmp)
    write(in_tmp / "pyproject.toml", PYPROJECT)
    write(in_tmp / "app" / "legacy.py", LEGACY)
    commit(in_tmp, "legacy")
    return in_tmp


def baseline_file(root: Path) -> Path:
    return root / "baselines" / "findings.json"


def codes(out: str) -> list[str]:
    return [line.split()[1] for line in out.splitlines() if ": " in line and ".py:" in line]


def test_the_adoption_story(legacy: Path, capsys) -> None:
    """Baseline today's debt, catch one new bug of each kind, notice a fixed one, drop it."""
    code, out, _ = run(capsys, "check")
    assert code == 1 and codes(out) == ["F401", "GATE100"]

    code, out, _ = run(capsys, "baseline", "update")
    assert code == 0, out
    assert "added: GATE100 app/legacy.py (run: job.write_result())" in out
    assert "added: F401 app/legacy.py (module level: os in `import os`)" in out
    assert "baselines/findings.json: written (2 entries)" in out
    first = baseline_file(legacy).read_bytes()
    complexity = (legacy / "baselines" / "complexity.json").read_bytes()
    commit(legacy, "baseline")

    code, out, err = run(capsys, "check")
    assert (code, out, err) == (0, "All checks passed (1 file checked, 2 baselined).\n", "")

    # one new bug of each kind: exactly those two are reported
    write(legacy / "app" / "legacy.py", LEGACY + NEW_BUGS)
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert out.splitlines() == [
        "app/legacy.py:13:12: F401 `sys` imported but unused",
        "app/legacy.py:19:9: GATE100 `job.upload_logs()` can be skipped: an interrupt at line 18 "
        "(`await job.post_run()`) is not held, so the rest of this finally block never runs",
        "Found 2 findings in 1 file checked, 2 baselined.",
    ]
    # update never adds them without --accept-new
    code, out, _ = run(capsys, "baseline", "update")
    assert code == 0 and "not added: F401 app/legacy.py (fresh: sys in `import sys`)" in out
    assert baseline_file(legacy).read_bytes() == first
    git(legacy, "checkout", "app/legacy.py")

    # fixing a baselined one reports it stale, as a warning
    write(legacy / "app" / "legacy.py", LEGACY.replace("import os\n", "\n"))
    code, out, err = run(capsys, "check")
    assert code == 0
    assert out == "All checks passed (1 file checked, 1 baselined, 1 stale).\n"
    assert err == (
        "gate: warning: baselines/findings.json:6: stale entry F401 app/legacy.py (module "
        "level: os in `import os`): no longer reported; `gate baseline update` removes it\n"
    )
    code, out, _ = run(capsys, "baseline", "update")
    assert "removed: F401 app/legacy.py (module level: os in `import os`)" in out
    assert "baselines/findings.json: written (1 entries)" in out
    after = baseline_file(legacy).read_bytes()
    assert json.loads(after)["ruff-findings"] == []
    assert run(capsys, "check")[1] == "All checks passed (1 file checked, 1 baselined).\n"

    # byte-identical when regenerated from the same tree
    baseline_file(legacy).unlink()
    (legacy / "baselines" / "complexity.json").unlink()
    assert run(capsys, "baseline", "update")[0] == 0
    assert baseline_file(legacy).read_bytes() == after
    assert (legacy / "baselines" / "complexity.json").read_bytes() == complexity
    code, out, _ = run(capsys, "baseline", "update")
    assert "baselines/findings.json: up to date (1 entries)" in out


def test_the_file_is_sorted_one_entry_per_line(legacy: Path, capsys) -> None:
    write(legacy / "app" / "b.py", BUGGY)
    write(legacy / "app" / "a.py", "import json\n" + BUGGY)
    run(capsys, "baseline", "update")
    text = baseline_file(legacy).read_text(encoding="utf-8")
    assert text == (
        "{\n"
        '  "findings": [\n'
        '    {"code": "GATE100", "function": "run", "path": "app/a.py", '
        '"text": "job.write_result()"},\n'
        '    {"code": "GATE100", "function": "run", "path": "app/b.py", '
        '"text": "job.write_result()"},\n'
        '    {"code": "GATE100", "function": "run", "path": "app/legacy.py", '
        '"text": "job.write_result()"}\n'
        "  ],\n"
        '  "ruff-findings": [\n'
        '    {"code": "F401", "function": "", "path": "app/a.py", '
        '"text": "json in `import json`"},\n'
        '    {"code": "F401", "function": "", "path": "app/legacy.py", '
        '"text": "os in `import os`"}\n'
        "  ],\n"
        f'  "ruff-version": "{json.loads(text)["ruff-version"]}",\n'
        '  "schema": 1,\n'
        '  "tool": "gate"\n'
        "}\n"
    )
    assert "line" not in text


def test_render_round_trips() -> None:
    baseline = FindingsBaseline(
        findings=(Entry(code="GATE100", path="a.py", function="f", text="x\x1fy \u00e9"),),
    )
    text = render(baseline)
    assert read_document(FindingsBaseline, json.loads(text)) == baseline


def test_code_moving_keeps_its_entries(legacy: Path, capsys) -> None:
    run(capsys, "baseline", "update")
    moved = "import os\n\n\ndef helper():\n    return 1\n\n\n" + BUGGY
    write(legacy / "app" / "legacy.py", moved)
    code, out, _ = run(capsys, "check")
    assert (code, out) == (0, "All checks passed (1 file checked, 2 baselined).\n")


def test_git_mv_keeps_the_entries(legacy: Path, capsys) -> None:
    run(capsys, "baseline", "update")
    commit(legacy, "baseline")
    git(legacy, "mv", "app/legacy.py", "app/renamed.py")
    code, out, err = run(capsys, "check")
    assert (code, out, err) == (0, "All checks passed (1 file checked, 2 baselined).\n", "")
    commit(legacy, "rename")
    assert run(capsys, "check")[0] == 0
    code, out, _ = run(capsys, "baseline", "update")
    assert "moved: app/legacy.py -> app/renamed.py" in out
    entries = json.loads(baseline_file(legacy).read_text())
    assert {entry["path"] for entry in entries["findings"] + entries["ruff-findings"]} == {
        "app/renamed.py"
    }


def test_show_baselined_lists_them_and_they_never_fail(legacy: Path, capsys) -> None:
    run(capsys, "baseline", "update")
    code, out, _ = run(capsys, "check", "--show-baselined")
    assert code == 0
    assert out.splitlines()[0] == "app/legacy.py:1:8: F401 `os` imported but unused (baselined)"
    assert out.splitlines()[1].startswith("app/legacy.py:9:9: GATE100 ")
    assert out.splitlines()[1].endswith(" (baselined)")
    code, out, _ = run(capsys, "check", "--show-baselined", "--format", "json")
    document = json.loads(out)
    assert code == 0 and document["findings"] == []
    assert document["summary"] == {"files": 1, "findings": 0, "baselined": 2, "stale": 0}
    assert [item["code"] for item in document["baselined"]] == ["F401", "GATE100"]
    code, out, _ = run(capsys, "check", "--format", "json")
    assert "baselined" not in json.loads(out)  # listed only when asked for
    code, out, _ = run(capsys, "check", "--format", "markdown")
    assert "**gate**: no findings in 1 file(s) (2 baselined)." in out


def test_without_a_baseline_nothing_changes(legacy: Path, capsys) -> None:
    code, out, _ = run(capsys, "check", "--format", "json")
    assert code == 1
    assert set(json.loads(out)["summary"]) == {"files", "findings"}


def test_only_the_files_checked_are_judged(legacy: Path, capsys) -> None:
    """pre-commit passes some files: entries of the others are not stale."""
    write(legacy / "app" / "other.py", "x = 1\n")
    run(capsys, "baseline", "update")
    code, out, err = run(capsys, "check", "app/other.py")
    assert (code, out, err) == (0, "All checks passed (1 file checked).\n", "")


def test_a_narrower_selection_judges_only_what_it_selects(legacy: Path, capsys) -> None:
    """`--select GATE2` (the complexity hook) runs neither the teardown rules' judgement nor
    ruff: their entries are not stale."""
    run(capsys, "baseline", "update")
    code, out, err = run(capsys, "check", "--select", "GATE2")
    assert (code, out, err) == (0, "All checks passed (1 file checked).\n", "")


def test_a_file_that_stopped_parsing_keeps_its_entries(legacy: Path, capsys) -> None:
    run(capsys, "baseline", "update")
    before = baseline_file(legacy).read_bytes()
    write(legacy / "app" / "legacy.py", LEGACY + "def broken(:\n")
    code, out, err = run(capsys, "check")
    assert code == 1 and "GATE900" in out and "stale" not in err
    run(capsys, "baseline", "update")
    assert baseline_file(legacy).read_bytes() == before


def test_a_deleted_file_under_a_checked_directory_is_stale(legacy: Path, capsys) -> None:
    write(legacy / "app" / "gone.py", BUGGY)
    run(capsys, "baseline", "update")
    (legacy / "app" / "gone.py").unlink()
    code, out, err = run(capsys, "check")
    assert code == 0 and "1 stale" in out
    assert "stale entry GATE100 app/gone.py (run: job.write_result())" in err


def test_accept_new_adds_new_findings(legacy: Path, capsys) -> None:
    run(capsys, "baseline", "update")
    write(legacy / "app" / "legacy.py", LEGACY + NEW_BUGS)
    code, out, _ = run(capsys, "baseline", "update", "--accept-new")
    assert code == 0
    assert "added: GATE100 app/legacy.py (fresh: job.upload_logs())" in out
    assert "added: F401 app/legacy.py (fresh: sys in `import sys`)" in out
    assert run(capsys, "check")[0] == 0


def test_a_baselined_finding_stays_baselined_under_diff(legacy: Path, capsys) -> None:
    """--diff narrows what is reported; the baseline still never fails the run."""
    run(capsys, "baseline", "update")
    commit(legacy, "baseline")
    git(legacy, "checkout", "-qb", "feature")
    write(legacy / "app" / "legacy.py", LEGACY.replace("job.post_run()", "job.post_run(2)"))
    commit(legacy, "touch the region")
    code, out, _ = run(capsys, "check", "--diff", "main")
    assert (code, out) == (0, "All checks passed (1 file checked, 2 baselined).\n")
    write(
        legacy / "app" / "legacy.py", LEGACY.replace("job.post_run()", "job.post_run(2)") + NEW_BUGS
    )
    commit(legacy, "a new bug")
    code, out, _ = run(capsys, "check", "--diff", "main")
    assert code == 1 and codes(out) == ["F401", "GATE100"]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda text: text[:30], "baselines/findings.json:3: the baseline is not valid JSON"),
        (
            lambda text: text.replace('  "findings": [', '<<<<<<< HEAD\n  "findings": ['),
            "baselines/findings.json:2: merge-conflict marker",
        ),
        (
            lambda text: text.replace('"function"', '"funktion"', 1),
            "baselines/findings.json: findings.0.funktion: unknown key",
        ),
        (
            lambda text: text.replace('"schema": 1', '"schema": 7'),
            "baselines/findings.json: written by gate with schema 7; this gate reads schema 1",
        ),
        (lambda text: "[]\n", "baselines/findings.json: the baseline must be a JSON object"),
    ],
)
def test_a_broken_baseline_exits_2_naming_file_and_problem(
    legacy: Path, capsys, damage, message: str
) -> None:
    run(capsys, "baseline", "update")
    path = baseline_file(legacy)
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
    for argv in (("check",), ("baseline", "update")):
        code, out, err = run(capsys, *argv)
        assert code == 2, out
        assert message in err
        assert "Traceback" not in err


def test_a_ruff_version_that_words_findings_differently_is_detected(legacy: Path, capsys) -> None:
    run(capsys, "baseline", "update")
    path = baseline_file(legacy)
    text = path.read_text(encoding="utf-8")
    version = json.loads(text)["ruff-version"]
    # the same findings under another version: no problem, and update records the new one
    path.write_text(text.replace(f'"{version}"', '"0.0.1"'), encoding="utf-8")
    assert run(capsys, "check")[0] == 0
    code, out, _ = run(capsys, "baseline", "update")
    assert code == 0 and json.loads(path.read_text())["ruff-version"] == version
    # another version whose fingerprints do not match: exit 2, not "fixed"
    reworded = text.replace(f'"{version}"', '"0.0.1"').replace("os in", "`os` in")
    path.write_text(reworded, encoding="utf-8")
    for argv in (("check",), ("baseline", "update")):
        code, _, err = run(capsys, *argv)
        assert code == 2
        assert f"written with ruff 0.0.1, this run uses ruff {version}" in err
        assert "--rebaseline" in err
    code, out, _ = run(capsys, "baseline", "update", "--rebaseline")
    assert code == 0, out
    assert json.loads(path.read_text()) == json.loads(text)


def test_update_keeps_the_entries_of_both_sides_of_a_conflict(legacy: Path, capsys) -> None:
    write(legacy / "app" / "b.py", BUGGY)
    run(capsys, "baseline", "update")
    path = baseline_file(legacy)
    both = path.read_text(encoding="utf-8")
    lines = both.splitlines(keepends=True)
    a_line = next(line for line in lines if '"app/b.py"' in line and "GATE100" in line)
    b_line = next(line for line in lines if '"app/legacy.py"' in line and "GATE100" in line)
    conflicted = "".join(line for line in lines if line not in (a_line, b_line))
    start = conflicted.index('  "findings": [\n') + len('  "findings": [\n')
    conflicted = (
        conflicted[:start]
        + "<<<<<<< HEAD\n"
        + a_line.rstrip(",\n")
        + "\n"
        + "=======\n"
        + b_line.rstrip(",\n")
        + "\n"
        + ">>>>>>> other\n"
        + conflicted[start:]
    )
    path.write_text(conflicted, encoding="utf-8")
    code, _, err = run(capsys, "check")
    assert code == 2 and "baselines/findings.json:3: merge-conflict marker in the baseline" in err
    code, out, _ = run(capsys, "baseline", "update")
    assert code == 0, out
    assert path.read_text(encoding="utf-8") == both
