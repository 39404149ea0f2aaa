"""The complexity ratchet, tried as a new user would, in throwaway git repositories."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import hypothesmith
import pytest
from conftest import git, init_repo, write
from conftest import run_gate as run
from hypothesis import HealthCheck, given, settings

from gate.complexity.baseline import render_baseline
from gate.complexity.measure import measure


def branches(name: str, count: int, indent: str = "") -> str:
    """A function with cyclomatic complexity `count` (count - 1 ifs)."""
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(1, count))
    return textwrap.indent(f"def {name}(x):\n{body}    return 0\n", indent)


@pytest.fixture
def repo(in_tmp: Path) -> Path:
    init_repo(in_tmp)
    write(in_tmp / "pyproject.toml", "[tool.gate.complexity]\nthreshold = 3\n")
    write(in_tmp / "app" / "jobs.py", branches("tangled", 5) + "\n\n" + branches("simple", 2))
    git(in_tmp, "add", "-A")
    git(in_tmp, "commit", "-qm", "start")
    return in_tmp


def test_the_new_user_walkthrough(repo: Path, capsys) -> None:
    jobs = repo / "app" / "jobs.py"
    baseline = repo / "baselines" / "complexity.json"

    # 1. before any baseline, the over-threshold function fails the check
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "app/jobs.py:1:1: GATE200 tangled: complexity 5 (radon A) exceeds 3" in out

    # 2. the first update grandfathers it; the check passes
    code, out, _ = run(capsys, "baseline", "update")
    assert code == 0
    assert "added: app/jobs.py::tangled = 5" in out
    assert json.loads(baseline.read_text())["functions"] == {"app/jobs.py::tangled": 5}
    assert run(capsys, "check")[0] == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "baseline")

    # 3. a new crossing fails with GATE200, and says it is new
    write(repo / "app" / "more.py", branches("fresh", 4))
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "GATE200 fresh: complexity 4 (radon A) exceeds 3; new in this change" in out
    (repo / "app" / "more.py").unlink()

    # 4. a regression fails with GATE201, and the update refuses to raise it
    jobs.write_text(branches("tangled", 6) + "\n\n" + branches("simple", 2))
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "GATE201 tangled: complexity 6 (radon B) rose above its baseline 5 (threshold 3)" in out
    before = baseline.read_bytes()
    code, out, _ = run(capsys, "baseline", "update")
    assert code == 1
    assert "refused: app/jobs.py::tangled rose from 5 to 6" in out
    assert baseline.read_bytes() == before
    code, out, _ = run(capsys, "baseline", "update", "--allow-increase", "app/jobs.py::tangled")
    assert code == 0
    assert "raised (allowed): app/jobs.py::tangled 5 -> 6" in out
    baseline.write_bytes(before)

    # 5. an improvement shows GATE202, and the update tightens the entry
    jobs.write_text(branches("tangled", 4) + "\n\n" + branches("simple", 2))
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "GATE202 tangled: complexity 4 (radon A) is below its baseline 5" in out
    code, out, _ = run(capsys, "baseline", "update")
    assert code == 0
    assert "tightened: app/jobs.py::tangled 5 -> 4" in out
    assert json.loads(baseline.read_text())["functions"] == {"app/jobs.py::tangled": 4}
    assert run(capsys, "check")[0] == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "tighten")

    # 6. a git mv keeps the allowance; the update re-keys it
    git(repo, "mv", "app/jobs.py", "app/work.py")
    code, out, _ = run(capsys, "check")
    assert (code, out) == (0, "All checks passed (1 file checked).\n")
    code, out, _ = run(capsys, "baseline", "update")
    assert "moved: app/jobs.py::tangled -> app/work.py::tangled" in out
    assert json.loads(baseline.read_text())["functions"] == {"app/work.py::tangled": 4}

    # 7. a corrupted baseline exits 2 and names the file
    baseline.write_text(baseline.read_text()[:40])
    code, _, err = run(capsys, "check")
    assert code == 2
    assert "baselines/complexity.json:" in err
    assert "not valid JSON" in err


def test_regenerating_is_byte_identical(repo: Path, capsys) -> None:
    write(repo / "app" / "b.py", branches("second", 7) + "\n\n" + branches("third", 4))
    assert run(capsys, "baseline", "update")[0] == 0
    first = (repo / "baselines" / "complexity.json").read_bytes()
    (repo / "baselines" / "complexity.json").unlink()
    assert run(capsys, "baseline", "update")[0] == 0
    second = (repo / "baselines" / "complexity.json").read_bytes()
    assert first == second
    text = first.decode()
    assert text.endswith("}\n")
    assert '    "app/b.py::second": 7,\n    "app/b.py::third": 4,\n' in text
    assert "time" not in text
    code, out, _ = run(capsys, "baseline", "update")
    assert (code, out) == (
        0,
        "baselines/complexity.json: up to date (3 entries)\n"
        "baselines/findings.json: up to date (0 entries)\n",
    )


def test_update_without_accept_new_leaves_new_debt_out(repo: Path, capsys) -> None:
    run(capsys, "baseline", "update")
    write(repo / "app" / "more.py", branches("fresh", 4))
    code, out, _ = run(capsys, "baseline", "update")
    assert code == 0
    assert "not added: app/more.py::fresh = 4" in out
    assert run(capsys, "check")[0] == 1
    code, out, _ = run(capsys, "baseline", "update", "--accept-new")
    assert "added: app/more.py::fresh = 4" in out
    assert run(capsys, "check")[0] == 0


def test_vanished_function_and_likely_rename(repo: Path, capsys) -> None:
    run(capsys, "baseline", "update")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "baseline")
    source = (repo / "app" / "jobs.py").read_text().replace("def tangled", "def renamed")
    write(repo / "app" / "jobs.py", source)
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert (
        "GATE200 renamed: complexity 5 (radon A) exceeds 3; new in this change; likely a "
        "rename of `app/jobs.py::tangled` (identical body)"
    ) in out
    assert (
        "baselines/complexity.json:3:1: GATE202 app/jobs.py::tangled: in the baseline but no "
        "longer exists; run `gate baseline update` (likely renamed to `app/jobs.py::renamed`)"
    ) in out


def test_partial_run_judges_only_given_files(repo: Path, capsys) -> None:
    write(repo / "app" / "other.py", branches("other", 6))
    run(capsys, "baseline", "update")
    write(repo / "app" / "other.py", branches("other", 5))  # improved: stale entry
    assert run(capsys, "check", "app/jobs.py")[0] == 0
    assert run(capsys, "check", "app/other.py")[0] == 1
    (repo / "app" / "other.py").unlink()
    code, out, _ = run(capsys, "check", "app/jobs.py")
    assert code == 0
    code, out, _ = run(capsys, "check")
    assert "GATE202 app/other.py::other: in the baseline but no longer exists" in out


def test_per_path_thresholds_and_stale_warning(repo: Path, capsys) -> None:
    write(
        repo / "pyproject.toml",
        "[tool.gate.complexity]\nthreshold = 10\nstale-severity = 'warning'\n"
        "[[tool.gate.complexity.paths]]\nglob = 'app/*'\nthreshold = 4\n",
    )
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "tangled: complexity 5 (radon A) exceeds 4" in out
    run(capsys, "baseline", "update")
    write(repo / "app" / "jobs.py", branches("tangled", 5 - 0) + "\n" + branches("simple", 2))
    assert run(capsys, "check")[0] == 0
    write(repo / "app" / "jobs.py", branches("tangled", 3))
    code, out, _ = run(capsys, "check")
    assert code == 0  # a stale entry is only a warning here
    assert "GATE202 tangled: complexity 3 is now within the threshold 4" in out


def test_was_before_this_change(repo: Path, capsys) -> None:
    write(repo / "pyproject.toml", "[tool.gate.complexity]\nthreshold = 5\n")
    git(repo, "commit", "-qam", "threshold 5")
    write(repo / "app" / "jobs.py", branches("tangled", 7) + "\n\n" + branches("simple", 2))
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "GATE200 tangled: complexity 7 (radon B) exceeds 5; was 5 before this change" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{\n<<<<<<< HEAD\n", "baselines/complexity.json:2: merge-conflict marker"),
        ("[1, 2]\n", "baselines/complexity.json: the baseline must be a JSON object"),
        ('{"functions": {}, "extra": 1}\n', "baselines/complexity.json: extra: unknown key"),
        ('{"functions": {"a.py::f": "x"}}\n', "functions.a.py::f: Input should be a valid"),
        ('{"functions": {"nokey": 3}}\n', "functions.nokey: expected 'path::Qualname'"),
        ('{"schema": 9}\n', "this gate reads schema 1"),
        ('{"radon": "5.1.0"}\n', "re-baseline deliberately"),
    ],
)
def test_broken_baselines_exit_2(repo: Path, capsys, content: str, message: str) -> None:
    write(repo / "baselines" / "complexity.json", content)
    code, _, err = run(capsys, "check")
    assert code == 2
    assert message in err


def test_rebaseline_after_radon_change(repo: Path, capsys) -> None:
    write(repo / "baselines" / "complexity.json", '{"radon": "5.1.0"}\n')
    assert run(capsys, "baseline", "update")[0] == 2
    code, out, _ = run(capsys, "baseline", "update", "--rebaseline")
    assert code == 0
    assert "added: app/jobs.py::tangled = 5" in out
    assert json.loads((repo / "baselines/complexity.json").read_text())["radon"] == "6.0.1"


def test_baseline_show(repo: Path, capsys) -> None:
    code, _, err = run(capsys, "baseline", "show")
    assert code == 2
    assert "no baseline yet" in err
    run(capsys, "baseline", "update")
    code, out, _ = run(capsys, "baseline", "show")
    assert code == 0
    assert "app/jobs.py::tangled" in out
    assert "headroom" in out


def test_check_never_writes_the_baseline(repo: Path, capsys) -> None:
    run(capsys, "check")
    assert not (repo / "baselines").exists()


def test_syntax_error_keeps_entries(repo: Path, capsys) -> None:
    run(capsys, "baseline", "update")
    write(repo / "app" / "jobs.py", "def broken(:\n")
    code, out, err = run(capsys, "baseline", "update")
    assert code == 0
    assert "up to date" in out
    assert "GATE900" in err
    data = json.loads((repo / "baselines" / "complexity.json").read_text())
    assert data["functions"] == {"app/jobs.py::tangled": 5}


# -- radon's naming pitfalls


def keys(source: str) -> dict[str, int]:
    tree = ast.parse(textwrap.dedent(source))
    return {f.key.split("::")[1]: f.complexity for f in measure(tree, "m.py")}


def test_closures_in_two_classes_are_distinct() -> None:
    found = keys(
        """
        class A:
            def run(self):
                def x(y):
                    return 1 if y else 2
                return x
        class B:
            def run(self):
                def x(y):
                    return y
                return x
        """
    )
    assert found == {"A.run": 1, "A.run.<locals>.x": 2, "B.run": 1, "B.run.<locals>.x": 1}


def test_class_inside_function_is_kept() -> None:
    found = keys(
        """
        def factory(flag):
            class Local:
                def method(self, z):
                    if z:
                        return 1
                    return 2
            return Local if flag else None
        """
    )
    assert found == {"factory": 2, "factory.<locals>.Local.method": 2}


def test_match_async_and_decorators() -> None:
    found = keys(
        """
        import functools

        class Service:
            @property
            def value(self):
                return 1

            @value.setter
            def value(self, new):
                if new:
                    pass

            @functools.cache
            async def handle(self, event):
                match event:
                    case 1:
                        return "a"
                    case 2:
                        return "b"
                    case _:
                        return "c"
        """
    )
    # radon counts each case but a final wildcard `case _`
    assert found == {"Service.value": 1, "Service.value#2": 2, "Service.handle": 3}


def test_render_is_sorted_one_per_line() -> None:
    text = render_baseline({"b.py::f": 12, "a.py::g": 11})
    assert text.index("a.py::g") < text.index("b.py::f")
    assert text.count("\n") == len(text.splitlines())


def test_entry_within_a_raised_threshold_is_stale(repo: Path, capsys) -> None:
    run(capsys, "baseline", "update")
    write(repo / "pyproject.toml", "[tool.gate.complexity]\nthreshold = 8\n")
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "GATE202 tangled: complexity 5 is now within the threshold 8" in out
    code, out, _ = run(capsys, "baseline", "update")
    assert "removed: app/jobs.py::tangled (was 5)" in out
    assert run(capsys, "check")[0] == 0


# -- the flat count gives radon's numbers


def _radon_view(tree: ast.Module) -> dict[tuple[int, int], int]:
    """radon's own number for every function node of the tree."""
    from gate.complexity import measure as measuring

    numbers = measuring._radon_numbers(tree)
    return {
        (node.lineno, node.col_offset): numbers.get((node.lineno, node.col_offset))
        or measuring._single(node)
        for _, node in measuring._walk(tree, "")
    }


ROOT = Path(__file__).resolve().parent.parent
OWN_CODE = sorted((ROOT / "gate").rglob("*.py")) + sorted((ROOT / "rules").glob("*.py"))


def test_flat_count_equals_radon_on_gates_own_code_and_rules() -> None:
    from gate.complexity.measure import _counted_numbers

    functions = 0
    for path in OWN_CODE + sorted((ROOT / "tests").glob("*.py")):
        try:
            tree = ast.parse(path.read_bytes())
        except SyntaxError:
            continue  # a rule example that is broken on purpose
        expected = _radon_view(tree)
        assert _counted_numbers(tree) == expected, path
        functions += len(expected)
    assert functions > 1000


SHAPES = textwrap.dedent(
    """\
    def shapes(x, y=lambda z: z if z else 0):
        assert x and (y or x), [a for a in x if a if not a]
        while x:
            x -= 1
        else:
            pass
        try:
            pass
        except ValueError:
            pass
        except* TypeError:
            pass
        else:
            pass
        try:
            pass
        except* KeyError:
            pass
        match x:
            case [1, *rest] if rest or x:
                pass
            case {"k": v} | (1 | 2):
                pass
            case other:
                pass
        f = lambda: (x if y else {k: v for k, v in y if k for v in k})
        async def inner():
            async for item in x:
                return [i async for i in item if i]
        class Local:
            def method(self):
                return x or y or self
        return x and y and f
    """
)


def test_flat_count_equals_radon_on_every_counted_shape() -> None:
    from gate.complexity.measure import _counted_numbers

    tree = ast.parse(SHAPES.replace("except* TypeError", "except TypeError"))
    assert _counted_numbers(tree) == _radon_view(tree)
    starred = ast.parse("def f():\n    try:\n        pass\n    except* E:\n        pass\n")
    assert _counted_numbers(starred) == _radon_view(starred) == {(1, 0): 1}


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=hypothesmith.from_node())
def test_flat_count_equals_radon_on_generated_code(source: str) -> None:
    from gate.complexity.measure import _counted_numbers

    tree = ast.parse(source)
    assert _counted_numbers(tree) == _radon_view(tree)


def test_a_tree_too_deep_for_the_flat_count_goes_to_radon() -> None:
    from gate.complexity.measure import SAFE_DEPTH, _counted_numbers

    source = "def deep(x):\n    return " + " + ".join(["x"] * (SAFE_DEPTH + 10)) + "\n"
    tree = ast.parse(source)
    assert _counted_numbers(tree) is None
    assert [f.complexity for f in measure(tree, "deep.py")] == [1]
