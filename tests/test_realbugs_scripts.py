"""benchmarks/realbugs: rebuild and score on a made-up two-commit repository in tmp_path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "benchmarks" / "realbugs"
sys.path.insert(0, str(SCRIPTS))

import rebuild  # noqa: E402
import score  # noqa: E402

BUGGY = """\
import asyncio


class Job:
    async def finish(self):
        try:
            await self.run()
        finally:
            await self.upload()
            self.write_result()


async def elsewhere(store):
    try:
        await store.fill()
    finally:
        await store.flush()
        store.close()
"""

# The same file with Job.finish fixed; `elsewhere` keeps its bug, outside the case's function.
FIXED = """\
import asyncio


class Job:
    async def finish(self):
        try:
            await self.run()
        finally:
            interrupt = None
            try:
                await self.upload()
            except asyncio.CancelledError as error:
                interrupt = error
            self.write_result()
            if interrupt is not None:
                raise interrupt


async def elsewhere(store):
    try:
        await store.fill()
    finally:
        await store.flush()
        store.close()
"""


# Another module of the package, buggy at the lines Job.finish spans: the package run (CI) finds
# it, and the score must not count it against the case, whose file is job.py.
OTHER = """\
import asyncio


async def drain(store):
    try:
        await store.fill()
    finally:
        await store.flush()
        store.close()
"""


def git(repo: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args]
    return subprocess.run(
        command, cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def mirrors(tmp_path: Path) -> tuple[Path, str, str]:
    """A fetched-style mirror of acme/widget with a buggy and a fixing commit."""
    repo = tmp_path / "mirrors" / "acme+widget" / "repo"
    (repo / "widget").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "widget" / "job.py").write_text(BUGGY)
    (repo / "widget" / "other.py").write_text(OTHER)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "job")
    buggy = git(repo, "rev-parse", "HEAD")
    (repo / "widget" / "job.py").write_text(FIXED)
    git(repo, "commit", "-qam", "fix")
    return tmp_path / "mirrors", buggy, git(repo, "rev-parse", "HEAD")


def write_cases(path: Path, buggy: str, fixed: str, **overrides: object) -> Path:
    case: dict[str, object] = {
        "id": "widget-1-finish",
        "repository": "acme/widget",
        "fix_commit": fixed,
        "buggy_commit": buggy,
        "fixed_commit": fixed,
        "path": "widget/job.py",
        "function": "Job.finish",
        "buggy_lines": [9, 10],
        "shape": "awaited step before a write in finally",
        "expected_rule": "GATE100",
        "why": "a cancel during upload skips the result file",
    }
    case.update(overrides)
    lines = ["[[case]]"] + [f"{key} = {json.dumps(value)}" for key, value in case.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_score_finds_the_bug_and_stays_silent_on_the_fix(mirrors, tmp_path: Path, capsys) -> None:
    root, buggy, fixed = mirrors
    cases = write_cases(tmp_path / "cases.toml", buggy, fixed)
    results = tmp_path / "results.json"
    argv = ["--cases", str(cases), "--mirrors", str(root), "--out", str(tmp_path / "out")]
    assert score.main([*argv, "--json", str(results), "--no-flake8"]) == 0

    out = capsys.readouterr().out
    assert "widget-1-finish" in out
    assert "gate, file alone (pre-commit): found 1/1 (1 at a buggy line, 1 with an error)" in out
    assert "gate, package (CI): found 1/1 (1 at a buggy line, 1 with an error)" in out
    assert "Fixed versions gate flags" not in out
    assert "Held out" not in out  # no case says it is
    report = json.loads(results.read_text())
    assert report["held_out_totals"] is None
    case = report["cases"][0]
    for mode in ("gate_file", "gate_package"):
        gate = case[mode]
        assert gate["found"] is True and gate["flagged_fixed"] is False, mode
        assert {f["code"] for f in gate["buggy"]["matching"]} >= {"GATE100"}, mode
        # `elsewhere` is still buggy in the fixed file: found, but outside the case's function.
        assert gate["fixed"]["findings"] and not gate["fixed"]["matching"], mode
    # The package run keeps only job.py's findings: other.py's bug (lines 5-9) is not among them.
    lines = {f["line"] for f in case["gate_package"]["fixed"]["findings"]}
    assert lines == {f["line"] for f in case["gate_file"]["fixed"]["findings"]}
    assert min(lines) > 10
    assert case["flake8_async"] == {"available": False}
    assert set(report["seconds"]) == {"gate_file_runs", "gate_package_runs", "gate_wall"}
    assert (
        tmp_path / "out" / "widget-1-finish" / "fixed" / "widget" / "job.py"
    ).read_text() == FIXED


def test_held_out_cases_get_totals_of_their_own(mirrors, tmp_path: Path, capsys) -> None:
    root, buggy, fixed = mirrors
    cases = write_cases(tmp_path / "cases.toml", buggy, fixed, held_out="stop 42")
    results = tmp_path / "results.json"
    argv = ["--cases", str(cases), "--mirrors", str(root), "--out", str(tmp_path / "out")]
    assert score.main([*argv, "--json", str(results), "--no-flake8"]) == 0
    out = capsys.readouterr().out
    held_out = out.split("Held out", 1)[1]
    assert "gate, file alone (pre-commit): found 1/1" in held_out
    report = json.loads(results.read_text())
    assert report["held_out_totals"]["gate_file"]["found"] == 1


def test_run_gate_in_package_mode_reads_the_whole_package(mirrors, tmp_path: Path) -> None:
    root, buggy, fixed = mirrors
    rebuilt = rebuild.rebuild_all(
        rebuild.load_cases(write_cases(tmp_path / "cases.toml", buggy, fixed)),
        root,
        tmp_path / "out",
    )
    version = rebuilt[0].buggy
    other = rebuild.Version(version.root, version.root / "widget" / "other.py", 4, 9)
    in_other = score.run_gate(other, "package")
    assert "GATE100" in {f.code for f in in_other}
    assert all(other.holds(f.line) for f in in_other)
    assert [f.line for f in score.run_gate(version, "package")] == [
        f.line for f in score.run_gate(version, "file")
    ]


def test_a_fixed_version_flagged_with_an_error_fails_without_a_reason(
    mirrors, tmp_path: Path, capsys
) -> None:
    root, buggy, _ = mirrors
    # The "fix" is the buggy commit itself: gate flags it with an error in both modes.
    cases = write_cases(tmp_path / "cases.toml", buggy, buggy)
    argv = ["--cases", str(cases), "--mirrors", str(root), "--out", str(tmp_path / "out")]
    assert score.main([*argv, "--no-flake8"]) == 1
    captured = capsys.readouterr()
    assert "widget-1-finish: file FALSE GATE10" in captured.out
    assert "NO REASON RECORDED (fails the benchmark)" in captured.out
    assert "fixed version of widget-1-finish" in captured.err
    assert "no fixed_flag_reason" in captured.err

    reason = "the fix is incomplete: upload is still awaited unshielded"
    cases = write_cases(tmp_path / "cases.toml", buggy, buggy, fixed_flag_reason=reason)
    assert score.main([*argv, "--no-flake8"]) == 0
    captured = capsys.readouterr()
    assert f"\n    {reason}\n" in captured.out
    assert captured.err == ""


def test_a_reason_for_a_fixed_version_gate_no_longer_flags_is_called_stale(
    mirrors, tmp_path: Path, capsys
) -> None:
    root, buggy, fixed = mirrors
    cases = write_cases(tmp_path / "cases.toml", buggy, fixed, fixed_flag_reason="gate is wrong")
    argv = ["--cases", str(cases), "--mirrors", str(root), "--out", str(tmp_path / "out")]
    assert score.main([*argv, "--no-flake8"]) == 0
    assert "its fixed_flag_reason is stale: drop it" in capsys.readouterr().out


def test_a_missing_mirror_names_the_fetch_to_run(mirrors, tmp_path: Path, capsys) -> None:
    root, buggy, fixed = mirrors
    cases = write_cases(tmp_path / "cases.toml", buggy, fixed, repository="acme/absent")
    argv = ["--cases", str(cases), "--mirrors", str(root), "--out", str(tmp_path / "out")]
    assert rebuild.main(argv) == 2
    assert "fetch github:acme/absent" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"function": "Job.start"}, "no function Job.start in the buggy widget/job.py"),
        ({"buggy_lines": [14]}, "buggy line 14 is outside Job.finish (lines 5-10)"),
        ({"buggy_commit": "0" * 40}, "widget/job.py"),
        ({"owner": "me"}, "unknown key owner"),
        ({"buggy_lines": []}, "buggy_lines must be a non-empty list of line numbers"),
        ({"why": " "}, "why must be a non-empty string"),
        ({"fixed_flag_reason": ""}, "fixed_flag_reason must be a non-empty string"),
    ],
)
def test_wrong_metadata_is_one_clear_line(mirrors, tmp_path: Path, capsys, overrides, message):
    root, buggy, fixed = mirrors
    cases = write_cases(tmp_path / "cases.toml", buggy, fixed, **overrides)
    argv = ["--cases", str(cases), "--mirrors", str(root), "--out", str(tmp_path / "out")]
    assert rebuild.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_function_span_follows_qualnames() -> None:
    source = b"""\
class A:
    @property
    def x(self):
        def inner():
            return 1
        return inner


async def top():
    class B:
        async def run(self):
            pass
"""
    assert rebuild.function_span(source, "A.x") == (2, 6)
    assert rebuild.function_span(source, "A.x.<locals>.inner") == (4, 5)
    assert rebuild.function_span(source, "top.<locals>.B.run") == (11, 12)
    assert rebuild.function_span(source, "inner") is None


def test_flake8_output_is_parsed_per_file() -> None:
    output = (
        "./a/buggy/x.py:12:9: ASYNC102 await inside finally must be shielded\n"
        "a/fixed/x.py:3:1: ASYNC910 exit from async function\n"
        "not a finding\n"
    )
    parsed = score.parse_flake8(output)
    assert [(path, f.code, f.line) for path, f in parsed] == [
        ("a/buggy/x.py", "ASYNC102", 12),
        ("a/fixed/x.py", "ASYNC910", 3),
    ]


def test_the_committed_cases_are_valid_metadata() -> None:
    cases = rebuild.load_cases(rebuild.DEFAULT_CASES)
    assert len(cases) >= 15
    assert len({case.repository for case in cases}) >= 8
    for case in cases:
        assert len(case.buggy_commit) == len(case.fixed_commit) == 40, case.id
        assert case.link.startswith("https://github.com/"), case.id
