"""The pipeline's contract: rules are units, a finding has one canonical path, discovery never
silently checks nothing, and positions and `# noqa` follow Python's own idea of a line."""

from __future__ import annotations

import ast
import importlib
import json
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BUGGY, CLEAN, init_repo, write
from conftest import run_gate as run
from hypothesis import given, settings
from hypothesis import strategies as st
from test_properties import STATEMENTS

import gate.checks
from gate import engine
from gate.checks import RULES
from gate.config import GateConfig
from gate.discovery import SourceFile
from gate.filecheck import check_file
from gate.model import Family
from gate.rule import Rule, Scope

ROOT = Path(__file__).resolve().parent.parent
GATE = ROOT / "gate"
CODE = re.compile(r"GATE\d{3}")


# -- rules are units -----------------------------------------------------------------------------


def _rule_modules() -> list[str]:
    return [info.name for info in pkgutil.iter_modules(gate.checks.__path__)]


@pytest.mark.parametrize("name", _rule_modules())
def test_every_rule_module_is_one_complete_rule(name: str) -> None:
    module = importlib.import_module(f"gate.checks.{name}")
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    assigned = [
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id == "RULE"
    ]
    assert assigned == ["RULE"], f"{name} must define exactly one RULE"
    rule = module.RULE
    assert isinstance(rule, Rule)
    assert name == rule.name.replace("-", "_"), "the module is named after its rule"
    assert RULES[rule.code] is rule
    assert rule.doc.startswith(f"# {rule.code} {rule.name}\n")
    if rule.family is Family.FILE:
        assert rule.check is None and rule.scope is Scope.FILE
    else:
        assert callable(rule.check)
        expected = Scope.PROJECT if rule.family is Family.COMPLEXITY else Scope.FILE
        assert rule.scope is expected
    # unreadable-file cannot be committed as an example (test_cli covers it)
    if rule.name != "unreadable-file":
        assert (ROOT / "rules" / f"{rule.name}.py").is_file()


def test_no_rule_code_outside_its_own_module() -> None:
    own = {f"gate/checks/{name}.py": RULES_BY_MODULE[name] for name in _rule_modules()}
    offenders = []
    for path in sorted(GATE.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if 'startswith("GATE' in text or "startswith('GATE" in text:
            offenders.append(f"{relative}: routes on a code's spelling")
        for code in set(CODE.findall(text)) - {own.get(relative)}:
            offenders.append(f"{relative}: names {code}")
    assert offenders == []


RULES_BY_MODULE = {rule.name.replace("-", "_"): code for code, rule in RULES.items()}


def test_a_new_rule_module_is_picked_up_without_editing_anything_else(tmp_path: Path) -> None:
    """Adding a rule is adding one module: the registry finds it by itself."""
    script = f"""
import sys, shutil, pathlib
package = pathlib.Path({str(tmp_path)!r}) / "gate"
shutil.copytree({str(GATE)!r}, package)
(package / "checks" / "made_up_rule.py").write_text('''\"\"\"# GATE199 made-up-rule\"\"\"
from gate.model import Family, Severity
from gate.rule import Rule
RULE = Rule(code="GATE199", name="made-up-rule", summary="s", family=Family.TEARDOWN,
            severity=Severity.ERROR, doc=__doc__, check=lambda analysis, locate: iter(()))
''')
sys.path.insert(0, {str(tmp_path)!r})
from gate.checks import RULES, rules_of
from gate.model import Family
assert "GATE199" in RULES, sorted(RULES)
assert RULES["GATE199"] in rules_of(Family.TEARDOWN)
print("ok")
"""
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert completed.stdout.strip() == "ok", completed.stderr


# -- one canonical path --------------------------------------------------------------------------


def _sarif(capsys, *argv: str) -> dict:
    code, out, err = run(capsys, "check", "--format", "sarif", "--no-cache", *argv)
    assert code == 1, err
    return json.loads(out)


def _fingerprints(document: dict) -> list[tuple[str, str]]:
    results = document["runs"][0]["results"]
    return [
        (
            r["partialFingerprints"]["gateFingerprint/v1"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        )
        for r in results
    ]


@pytest.mark.parametrize("table", ["[tool.gate]\n", "[project]\nname = 'x'\n"])
def test_fingerprints_do_not_depend_on_the_working_directory(
    in_tmp: Path, capsys, monkeypatch, table: str
) -> None:
    init_repo(in_tmp)
    write(in_tmp / "pyproject.toml", table)
    write(in_tmp / "src" / "app" / "job.py", BUGGY)
    from_root = _sarif(capsys, "src/app/job.py")
    monkeypatch.chdir(in_tmp / "src" / "app")
    from_inside = _sarif(capsys, "job.py")
    monkeypatch.chdir(in_tmp / "src")
    from_between = _sarif(capsys, ".")
    assert _fingerprints(from_root) == _fingerprints(from_inside) == _fingerprints(from_between)
    assert _fingerprints(from_root)[0][1] == "src/app/job.py"
    # people still see the path relative to where they stand
    _, out, _ = run(capsys, "check", "--no-cache", "app/job.py")
    assert out.startswith("app/job.py:6:9: ")


def test_project_root_without_tool_gate_is_the_nearest_pyproject(in_tmp: Path, capsys) -> None:
    """Run from a subdirectory of a project with no [tool.gate]: the cache and baseline live at
    the project root, not where gate runs."""
    init_repo(in_tmp)
    write(in_tmp / "pyproject.toml", "[project]\nname = 'x'\n")
    write(in_tmp / "pkg" / "job.py", CLEAN)
    os.chdir(in_tmp / "pkg")
    code, _, err = run(capsys, "check", ".")
    assert code == 0, err
    assert (in_tmp / ".gate_cache").is_dir()
    assert not (in_tmp / "pkg" / ".gate_cache").exists()
    code, _, _ = run(capsys, "baseline", "update", ".")
    assert code == 0
    assert (in_tmp / "baselines" / "complexity.json").is_file()
    assert not (in_tmp / "pkg" / "baselines").exists()


# -- discovery never checks nothing in silence ---------------------------------------------------


def test_a_tree_ignored_by_a_parent_repository_is_checked_when_named(in_tmp: Path, capsys) -> None:
    init_repo(in_tmp)
    write(in_tmp / ".gitignore", "vendor/\n")
    write(in_tmp / "vendor" / "lib" / "job.py", BUGGY)
    write(in_tmp / "vendor" / "lib" / "build" / "skipped.py", BUGGY)  # pruned below it
    code, out, _ = run(capsys, "check", "vendor")
    assert code == 1
    assert "1 file checked" in out and "vendor/lib/job.py:6:9: GATE100" in out
    os.chdir(in_tmp / "vendor")
    code, out, _ = run(capsys, "check", ".")
    assert code == 1 and "lib/job.py:6:9: GATE100" in out
    # the repository's own run still honours its ignore rules
    os.chdir(in_tmp)
    write(in_tmp / "main.py", CLEAN)
    code, out, _ = run(capsys, "check", ".")
    assert code == 0 and "(1 file checked)" in out


def test_a_pruned_name_is_checked_when_named(in_tmp: Path, capsys) -> None:
    write(in_tmp / "build" / "job.py", BUGGY)
    code, out, _ = run(capsys, "check", "build")
    assert code == 1 and "build/job.py:6:9: GATE100" in out


def test_a_run_that_finds_no_python_file_is_an_error(in_tmp: Path, capsys) -> None:
    write(in_tmp / "docs" / "readme.txt", "no python here\n")
    code, out, err = run(capsys, "check", "docs")
    assert code == 2
    assert "no Python files to check under docs" in err
    assert out == ""


def test_files_left_out_by_exclude_are_not_an_error(in_tmp: Path, capsys) -> None:
    """pre-commit passes excluded files too; leaving them out is the config's decision."""
    write(in_tmp / "pyproject.toml", '[tool.gate]\nexclude = ["generated/*"]\n')
    write(in_tmp / "generated" / "job.py", BUGGY)
    code, out, _ = run(capsys, "check", "generated/job.py")
    assert code == 0 and "(0 files checked)" in out


def test_a_fifo_named_like_python_does_not_hang(in_tmp: Path, capsys) -> None:
    os.mkfifo(in_tmp / "pipe.py")
    write(in_tmp / "job.py", CLEAN)
    code, out, _ = run(capsys, "check", ".")
    assert code == 1
    assert "pipe.py:1:1: GATE901 cannot read file: not a regular file" in out


def test_a_symlink_loop_named_first_is_a_finding(in_tmp: Path, capsys) -> None:
    os.symlink("loop.py", in_tmp / "loop.py")
    write(in_tmp / "job.py", CLEAN)
    code, out, err = run(capsys, "check", "loop.py", "job.py")
    assert code == 1, err
    assert "loop.py:1:1: GATE901 cannot read file: Too many levels of symbolic links" in out


# -- rule selection ------------------------------------------------------------------------------


def test_unknown_codes_are_usage_errors(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", BUGGY)
    code, _, err = run(capsys, "check", "--select", "GATE999")
    assert code == 2 and "'GATE999' is not a rule code or prefix" in err
    code, _, err = run(capsys, "check", "--ignore", "GATE7")
    assert code == 2 and "'GATE7'" in err
    write(in_tmp / "pyproject.toml", '[tool.gate]\nselect = ["GATE999"]\n')
    code, _, err = run(capsys, "check")
    assert code == 2
    assert "pyproject.toml: tool.gate.select: 'GATE999' is not a rule code" in err


def test_codes_are_case_insensitive(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", BUGGY)
    write(in_tmp / "pyproject.toml", '[tool.gate]\nignore = ["gate100"]\n')
    code, out, _ = run(capsys, "check")
    assert code == 0, out
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    code, out, _ = run(capsys, "check", "--select", "gate1")
    assert code == 1 and "GATE100" in out


# -- positions and noqa follow Python's lines ----------------------------------------------------


def test_noqa_inside_a_string_does_not_suppress(in_tmp: Path, capsys) -> None:
    text = BUGGY.replace("job.write_result()", 'job.write_result("# noqa")')
    write(in_tmp / "job.py", text)
    code, out, _ = run(capsys, "check", "--no-cache")
    assert code == 1 and "job.py:6:9: GATE100" in out
    write(in_tmp / "job.py", BUGGY.replace("job.write_result()", "job.write_result()  # noqa"))
    code, out, _ = run(capsys, "check", "--no-cache")
    assert code == 0, out


SEPARATORS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def _teardown_findings(tmp_path: Path, source: str) -> list[tuple]:
    path = tmp_path / "generated.py"
    path.write_text(source, encoding="utf-8")
    result = check_file(SourceFile(path, "generated.py"), GateConfig())
    return sorted((f.code, f.location, f.related) for f in result.all_findings)


@settings(max_examples=40, deadline=None)
@given(
    body=STATEMENTS,
    separator=st.sampled_from(SEPARATORS),
    where=st.sampled_from(["comment", "docstring"]),
)
def test_line_separator_characters_change_no_finding(
    tmp_path_factory, body: list[str], separator: str, where: str
) -> None:
    def source(extra: str) -> str:
        lines = ["import asyncio, contextlib", "class C:", "    async def run(self):"]
        lines += ['        """doc' + (extra if where == "docstring" else "") + '"""']
        lines += [
            "        try:",
            "            await self.go()  # go" + (extra if where == "comment" else ""),
        ]
        lines += ["        finally:", *("            " + line for line in body)]
        return "\n".join(lines) + "\n"

    plain = _teardown_findings(tmp_path_factory.mktemp("p"), source(""))
    odd = _teardown_findings(tmp_path_factory.mktemp("s"), source(f"a{separator}b"))
    assert odd == plain


def test_noqa_after_a_form_feed_applies_to_its_own_line(in_tmp: Path, capsys) -> None:
    text = "# a form feed\x0c here\n" + BUGGY.replace(
        "job.write_result()", "job.write_result()  # noqa: GATE100"
    )
    write(in_tmp / "job.py", text)
    code, out, _ = run(capsys, "check", "--no-cache")
    assert code == 0, out


# -- workers -------------------------------------------------------------------------------------


def test_workers_are_capped_by_files_and_cores() -> None:
    cores = os.cpu_count() or 1
    assert engine.worker_count(100_000, 5000) == cores
    assert engine.worker_count(0, 3) == min(3, cores)
    assert engine.worker_count(8, 1) == 1


def _death_signal(_: int) -> int:
    import ctypes

    value = ctypes.c_int()
    ctypes.CDLL(None).prctl(2, ctypes.byref(value))  # PR_GET_PDEATHSIG
    return value.value


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_workers_die_with_their_parent() -> None:
    import signal
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(
        1,
        mp_context=engine._pool_context(),
        initializer=engine._die_with_parent,
        initargs=(os.getpid(),),
    ) as pool:
        assert pool.submit(_death_signal, 0).result() == signal.SIGTERM


LINKED_HELPER = """\
import asyncio


async def _drain(job):
    await job.flush()
    job.write_result()


async def run(job):
    try:
        await job.evaluate()
    finally:
        await _drain(job)


async def poll(job):
    try:
        await _drain(job)
    except asyncio.CancelledError:
        pass
"""


def test_a_helper_is_linked_only_to_the_teardown_awaiting_it(tmp_path: Path) -> None:
    """The lines that make a helper's finding new in a change are those of the awaits that make
    it teardown (line 13), not of an await in ordinary code (line 18), though that function's
    body is read for its cancellation handler."""
    path = tmp_path / "helpers.py"
    path.write_text(LINKED_HELPER, encoding="utf-8")
    result = check_file(SourceFile(path, "helpers.py"), GateConfig())
    linked = {
        f.location.line: f.detail.linked_lines for f in result.all_findings if f.code == "GATE100"
    }
    assert linked == {6: ((13, 13),)}
    assert {f.code for f in result.all_findings if f.location.line == 19} == {"GATE109"}
