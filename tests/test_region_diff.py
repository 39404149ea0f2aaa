"""Region-aware `--diff`: a teardown is one unit, so a change to any line of a teardown region
(or of a helper it awaits) makes every teardown finding of that region new in the change."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from xml.etree import ElementTree

import pytest
from conftest import git, init_repo, write
from conftest import run_gate as run

from gate.report import RENDERERS

ROOT = Path(__file__).resolve().parent.parent
FIRST_AWAIT = "            await self._run_post_commands()\n            await self._cleanup()\n"
# The reviewed PR: a guard around the first teardown await, the rest left as it was.
HALF_FIX = """\
            try:
                await self._run_post_commands()
            except asyncio.CancelledError as error:
                self.result["interrupted"] = repr(error)
            await self._cleanup()
"""


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


@pytest.fixture
def half_fix(in_tmp: Path) -> Path:
    """The PR's shape in a throwaway repository: main has the unguarded teardown, the feature
    branch guards only the first await."""
    init_repo(in_tmp)
    shutil.copy(ROOT / "examples" / "orchestrator.py", in_tmp / "orchestrator.py")
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    commit(in_tmp, "base: no guard")
    git(in_tmp, "checkout", "-qb", "feature")
    source = (in_tmp / "orchestrator.py").read_text(encoding="utf-8")
    assert source.count(FIRST_AWAIT) == 1
    write(in_tmp / "orchestrator.py", source.replace(FIRST_AWAIT, HALF_FIX))
    commit(in_tmp, "guard the first await")
    return in_tmp


def _line_of(root: Path, text: str) -> int:
    lines = (root / "orchestrator.py").read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if line.strip() == text)


def _text(out: str) -> set[tuple[str, int]]:
    return {
        (m[2], int(m[1])) for m in re.finditer(r"^orchestrator\.py:(\d+):\d+: (\w+) ", out, re.M)
    }


def _json(out: str) -> set[tuple[str, int]]:
    return {(f["code"], f["line"]) for f in json.loads(out)["findings"]}


def _github(out: str) -> set[tuple[str, int]]:
    found = re.finditer(
        r"^::(?:error|warning) file=orchestrator\.py,line=(\d+),.*title=(\w+) ", out, re.M
    )
    return {(m[2], int(m[1])) for m in found}


def _sarif(out: str) -> set[tuple[str, int]]:
    results = json.loads(out)["runs"][0]["results"]
    return {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results
    }


def _rdjson(out: str) -> set[tuple[str, int]]:
    return {
        (d["code"]["value"], d["location"]["range"]["start"]["line"])
        for d in json.loads(out)["diagnostics"]
    }


def _rdjsonl(out: str) -> set[tuple[str, int]]:
    diagnostics = [json.loads(line) for line in out.splitlines()]
    return {(d["code"]["value"], d["location"]["range"]["start"]["line"]) for d in diagnostics}


def _gitlab(out: str) -> set[tuple[str, int]]:
    return {
        (issue["check_name"].split()[0], issue["location"]["lines"]["begin"])
        for issue in json.loads(out)
    }


def _markdown(out: str) -> set[tuple[str, int]]:
    rows = re.finditer(r"^\| `orchestrator\.py:(\d+)` \| (\w+) ", out, re.M)
    return {(m[2], int(m[1])) for m in rows}


def _junit(out: str) -> set[tuple[str, int]]:
    cases = ElementTree.fromstring(out).iter("testcase")
    return {(case.get("name", "").split()[0], int(case.get("line", "0"))) for case in cases}


EXTRACT = {
    "text": _text,
    "json": _json,
    "github": _github,
    "sarif": _sarif,
    "rdjson": _rdjson,
    "rdjsonl": _rdjsonl,
    "gitlab": _gitlab,
    "markdown": _markdown,
    "junit": _junit,
}


def test_every_format_is_covered() -> None:
    assert set(EXTRACT) == set(RENDERERS)


@pytest.mark.parametrize("fmt", sorted(EXTRACT))
def test_half_fix_reports_the_rest_of_the_teardown(half_fix: Path, capsys, fmt: str) -> None:
    code, out, err = run(capsys, "check", "--diff", "main", "--format", fmt, "--no-cache")
    assert code == 1, err
    cleanup = _line_of(half_fix, "await self._cleanup()")
    finalize = _line_of(half_fix, "self._finalize_result(started)")
    assert EXTRACT[fmt](out) == {("GATE101", cleanup), ("GATE100", finalize)}


def test_before_region_awareness_the_half_fix_would_pass(half_fix: Path, capsys) -> None:
    """Neither finding is on a changed line, nor is its interrupt point: only the region is."""
    changed = git(half_fix, "diff", "-U0", "main", "--", "orchestrator.py")
    added = {int(m[1]) for m in re.finditer(r"^@@ -\S+ \+(\d+)", changed, re.M)}
    cleanup = _line_of(half_fix, "await self._cleanup()")
    assert cleanup not in added and cleanup - 1 not in added


def test_a_change_outside_the_region_reports_no_teardown_finding(in_tmp: Path, capsys) -> None:
    init_repo(in_tmp)
    shutil.copy(ROOT / "examples" / "orchestrator.py", in_tmp / "orchestrator.py")
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    commit(in_tmp, "base")
    git(in_tmp, "checkout", "-qb", "feature")
    source = (in_tmp / "orchestrator.py").read_text(encoding="utf-8")
    # a line in run()'s try body, outside the finally block
    changed = source.replace('run_command("evaluate")\n', 'run_command("evaluate --fast")\n', 1)
    write(in_tmp / "orchestrator.py", changed)
    commit(in_tmp, "change the try body")
    code, out, _ = run(capsys, "check", "--diff", "main", "--no-cache")
    assert (code, out) == (0, "All checks passed (1 file checked).\n")


HELPERS = """\
class Job:
    async def run(self):
        try:
            await self.go()
        finally:
            await self._teardown()

    async def _teardown(self):
        await self.flush_logs()
        self.write_result()

    async def _unused(self):
        await self.flush_logs()
        self.write_result()
"""


@pytest.fixture
def helpers(in_tmp: Path) -> Path:
    init_repo(in_tmp)
    write(in_tmp / "job.py", HELPERS)
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    commit(in_tmp, "base")
    git(in_tmp, "checkout", "-qb", "feature")
    return in_tmp


def _codes_and_lines(out: str) -> set[tuple[str, int]]:
    return {(m[2], int(m[1])) for m in re.finditer(r"^job\.py:(\d+):\d+: (\w+) ", out, re.M)}


def test_a_changed_helper_makes_the_awaiting_region_new(helpers: Path, capsys) -> None:
    source = HELPERS.replace(
        "        self.write_result()\n\n    async def _unused",
        "        self.write_result()  # the helper changed\n\n    async def _unused",
    )
    write(helpers / "job.py", source)
    commit(helpers, "touch the helper")
    code, out, _ = run(capsys, "check", "--diff", "main", "--no-cache")
    assert code == 1
    found = _codes_and_lines(out)
    # the helper's own finding, and the caller's: its region awaits the changed helper
    assert ("GATE100", 10) in found and ("GATE101", 6) in found


def test_a_new_await_of_a_helper_makes_the_helper_findings_new(helpers: Path, capsys) -> None:
    """`_unused` was no teardown before; awaiting it from a finally block makes it one."""
    source = HELPERS.replace(
        "            await self._teardown()\n",
        "            await self._teardown()\n            await self._unused()\n",
    )
    write(helpers / "job.py", source)
    commit(helpers, "await another helper")
    code, out, _ = run(capsys, "check", "--diff", "main", "--no-cache")
    assert code == 1
    assert ("GATE100", 15) in _codes_and_lines(out)  # `_unused`'s write_result, lines unchanged
