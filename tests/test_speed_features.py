"""The prefilter, the cache, parallel workers and the progress bar change speed, not results."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import BUGGY, write
from hypothesis import given, settings
from test_properties import STATEMENTS

from gate import engine, filecheck
from gate.cache import CACHE_DIR, CACHE_FILE
from gate.cli import main
from gate.config import GateConfig
from gate.discovery import SourceFile
from gate.filecheck import check_file
from gate.progress import progress_bar

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "rules").glob("*.py")) + sorted((ROOT / "examples").glob("*.py"))


def findings(path: Path, prefilter: bool) -> list[tuple]:
    result = check_file(SourceFile(path, path.name), GateConfig(), prefilter=prefilter)
    return [(f.code, f.location, f.message, f.related) for f in result.all_findings]


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_prefilter_changes_no_finding_on_the_corpus(path: Path) -> None:
    assert findings(path, True) == findings(path, False)


def test_prefilter_with_a_redefined_function(tmp_path: Path) -> None:
    # found by the property test below: two nested functions with one qualname
    body = [
        "async def inner():",
        "    await self.notify()",
        "async def inner():",
        "    try:",
        "        await self.notify()",
        "    finally:",
        "        await self.notify()",
    ]
    lines = ["import trio", "class C:", "    async def run(self):", "        try:"]
    lines += ["            pass", "        finally:", *("            " + line for line in body)]
    path = tmp_path / "redefined.py"
    path.write_text("\n".join(lines) + "\n")
    assert findings(path, True) == findings(path, False) != []


@settings(max_examples=100, deadline=None)
@given(body=STATEMENTS)
def test_prefilter_changes_no_finding_on_generated_code(tmp_path_factory, body) -> None:
    lines = ["import asyncio, contextlib, trio", "class C:", "    async def run(self):"]
    lines += ["        await self.go()", "        try:", "            pass", "        finally:"]
    lines += ["            " + line for line in body]
    lines += ["    async def helper(self):", "        await self.cleanup()", "        self.save()"]
    path = tmp_path_factory.mktemp("p") / "generated.py"
    path.write_text("\n".join(lines) + "\n")
    assert findings(path, True) == findings(path, False)


def run_json(capsys, *argv: str) -> dict:
    code = main(["check", "--format", "json", *argv])
    assert code in (0, 1)
    return json.loads(capsys.readouterr().out)


def test_warm_run_reads_the_cache(in_tmp: Path, capsys, monkeypatch) -> None:
    write(in_tmp / "job.py", BUGGY)
    cold = run_json(capsys)
    assert (in_tmp / CACHE_DIR / CACHE_FILE).is_file()
    assert (in_tmp / CACHE_DIR / ".gitignore").read_text().endswith("*\n")

    def no_work(job):
        raise AssertionError("a cached file was checked again")

    monkeypatch.setattr(engine, "_first_stage", no_work)
    monkeypatch.setattr(engine, "_teardown_stage", no_work)
    assert run_json(capsys) == cold


SYNC_HELPER = "\n\ndef describe(job):\n    return str(job)\n"


def test_an_edit_outside_async_functions_keeps_the_teardown_analysis(
    in_tmp: Path, capsys, monkeypatch
) -> None:
    write(in_tmp / "job.py", BUGGY + SYNC_HELPER)
    run_json(capsys)
    edited = BUGGY + SYNC_HELPER.replace("str(job)", "repr(job)  # changed") + "# the end\n"
    write(in_tmp / "job.py", edited)
    cold = run_json(capsys, "--no-cache")

    def no_analysis(job):
        raise AssertionError("the teardown rules ran again on an edit they do not read")

    monkeypatch.setattr(engine, "_teardown_stage", no_analysis)
    assert run_json(capsys) == cold
    assert cold["summary"]["findings"] == 1


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: text.replace("job.write_result()", "job.save_result()"),  # in the function
        lambda text: "import trio\n" + text,  # level-triggered now, and every line moves
        lambda text: text + "\n\ndef run(job):\n    pass\n",  # a sync `run` shadows the async one
    ],
)
def test_an_edit_the_teardown_rules_read_analyses_again(in_tmp: Path, capsys, edit) -> None:
    write(in_tmp / "job.py", BUGGY + SYNC_HELPER)
    run_json(capsys)
    write(in_tmp / "job.py", edit(BUGGY + SYNC_HELPER))
    assert run_json(capsys) == run_json(capsys, "--no-cache")


BRIDGED = """\
import asyncio


class Connection:
    def terminate(self):
        try:
            await_only(self._connection.close())
        except (asyncio.TimeoutError, OSError):
            self._connection.terminate()
"""


def test_an_edit_inside_a_bridged_sync_function_analyses_again(in_tmp: Path, capsys) -> None:
    # a sync function that awaits through a greenlet bridge is read by the teardown rules: an
    # edit that keeps every line in place must still reach them
    write(in_tmp / "job.py", BRIDGED)
    assert [f["code"] for f in run_json(capsys)["findings"]] == ["GATE105"]
    write(in_tmp / "job.py", BRIDGED.replace("OSError)", "asyncio.CancelledError)"))
    assert run_json(capsys)["summary"]["findings"] == 0


def test_changed_file_misses_the_cache(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", BUGGY)
    assert run_json(capsys)["summary"]["findings"] == 1
    write(in_tmp / "job.py", BUGGY.replace("        await job.post_run()\n", ""))
    assert run_json(capsys)["summary"]["findings"] == 0


def test_corrupt_cache_is_ignored_and_rewritten(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", BUGGY)
    cold = run_json(capsys)
    cache = in_tmp / CACHE_DIR / CACHE_FILE
    cache.write_bytes(cache.read_bytes()[:100])
    assert run_json(capsys) == cold
    cache.write_bytes(b"\x00garbage")
    assert run_json(capsys) == cold
    assert cache.stat().st_size > 100  # rewritten


def test_no_cache_writes_nothing(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", BUGGY)
    run_json(capsys, "--no-cache")
    assert not (in_tmp / CACHE_DIR).exists()


def test_settings_change_misses_the_cache(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", BUGGY.replace("write_result", "archive_run"))
    assert run_json(capsys)["summary"]["findings"] == 0
    write(in_tmp / "pyproject.toml", '[tool.gate.teardown]\nextend-critical-tokens = ["archive"]\n')
    assert run_json(capsys)["summary"]["findings"] == 1


def _corpus(root: Path, count: int) -> None:
    for number in range(count):
        body = BUGGY if number % 3 == 0 else f"def f{number}(x):\n    return x\n"
        write(root / f"pkg{number % 4}" / f"mod{number}.py", body)
    write(root / "pkg0" / "broken.py", "def f(:\n")


def test_parallel_workers_give_the_same_report(in_tmp: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(engine, "BYTES_FOR_WORKERS", 0)  # both stages on workers
    monkeypatch.setattr(engine, "TEARDOWN_LINES_FOR_WORKERS", 0)
    _corpus(in_tmp, 60)
    serial = run_json(capsys, "--no-cache", "--jobs", "1")
    parallel = run_json(capsys, "--no-cache", "--jobs", "2")
    assert parallel == serial
    assert serial["summary"] == {"files": 61, "findings": 21}


def test_concurrent_runs_leave_a_usable_cache(in_tmp: Path, capsys) -> None:
    _corpus(in_tmp, 40)
    command = [sys.executable, "-m", "gate", "check", "--format", "json", "--jobs", "1"]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE) for _ in range(3)]
    outputs = [json.loads(run.communicate()[0]) for run in runs]
    assert all(output == outputs[0] for output in outputs)
    assert run_json(capsys) == outputs[0]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal() -> None:
    assert progress_bar(io.StringIO()) is None
    stream = FakeTerminal()
    progress = progress_bar(stream, delay=0)
    assert progress is not None
    for done in range(1, 11):
        progress(done, 10)
    assert "gate check" in stream.getvalue()
    quiet = FakeTerminal()
    short = progress_bar(quiet, delay=60)
    for done in range(1, 11):
        short(done, 10)
    assert quiet.getvalue() == ""  # a run shorter than the delay shows no bar


def test_unchanged_old_files_are_not_read_again(in_tmp: Path, capsys, monkeypatch) -> None:

    path = write(in_tmp / "job.py", BUGGY)
    later = time.time_ns() + 10_000_000_000

    def no_reading(path: Path) -> tuple[bytes | None, str]:
        raise AssertionError(f"{path} was read although its stat signature is unchanged")

    with monkeypatch.context() as patch:
        # the file was written "ten seconds ago", well outside the timestamp-granularity window
        patch.setattr("gate.cache.time.time_ns", lambda: later)
        cold = run_json(capsys)
        patch.setattr(engine, "read_source", no_reading)
        patch.setattr(filecheck, "read_source", no_reading)
        assert run_json(capsys) == cold
    write(path, BUGGY.replace("write_result", "note_result"))  # new mtime: read and hashed
    assert run_json(capsys)["summary"]["findings"] == 0


# -- reading libcst trees without visitors gives what the visitors give


def _visited(module) -> list[int]:
    import libcst as cst

    from gate.analysis.cstwalk import LAYOUT

    seen: list[int] = []

    class Every(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if type(node) in LAYOUT:
                return False
            seen.append(id(node))
            return True

    module.visit(Every())
    return seen


def _parsed(paths: list[Path]) -> Iterator[tuple[Path, object]]:
    """Each file with its libcst module, leaving out the rule examples broken on purpose."""
    import libcst as cst

    for path in paths:
        try:
            yield path, cst.parse_module(path.read_bytes())
        except cst.ParserSyntaxError:
            continue


def test_descendants_and_positions_match_libcsts_visitors() -> None:
    from libcst.metadata import MetadataWrapper, PositionProvider

    from gate.analysis.cstwalk import code_ranges, descendants, node_positions

    checked = 0
    for path, module in _parsed(sorted((ROOT / "gate").rglob("*.py"))[:40] + CORPUS):
        found = [id(node) for node in descendants(module)]
        assert len(found) == len(set(found)), path
        assert sorted(found) == sorted(_visited(module)), path
        wrapped = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        assert dict(code_ranges(module)) == dict(wrapped), path
        spans = node_positions(module)
        assert len(spans) == len(wrapped), path
        for node, code_range in wrapped.items():
            start, end = code_range.start, code_range.end
            assert spans[id(node)] == ((start.line, start.column), (end.line, end.column)), path
        checked += 1
    assert checked > 40


def _libcst_events(module) -> list[tuple[str, int]]:
    import libcst as cst

    from gate.analysis.cstwalk import LAYOUT

    events: list[tuple[str, int]] = []

    class Every(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if type(node) in LAYOUT:
                return False
            events.append(("visit", id(node)))
            return not isinstance(node, cst.Lambda)  # a visit_ that returns False

        def on_leave(self, original_node: cst.CSTNode) -> None:
            if type(original_node) not in LAYOUT:
                events.append(("leave", id(original_node)))

    module.visit(Every())
    return events


def _walked_events(module) -> list[tuple[str, int]]:
    import libcst as cst

    from gate.analysis.cstwalk import walk

    events: list[tuple[str, int]] = []

    def visit(self, node: cst.CSTNode) -> bool:
        events.append(("visit", id(node)))
        return not isinstance(node, cst.Lambda)

    def leave(self, node: cst.CSTNode) -> None:
        events.append(("leave", id(node)))

    kinds = [kind for kind in vars(cst).values() if isinstance(kind, type)]
    methods = {}
    for kind in kinds:
        if issubclass(kind, cst.CSTNode):
            methods[f"visit_{kind.__name__}"] = visit
            methods[f"leave_{kind.__name__}"] = leave
    walk(module, type("Every", (), methods)())
    return events


def test_walk_calls_what_libcsts_visitors_call_in_their_order() -> None:

    checked = 0
    for path, module in _parsed(sorted((ROOT / "gate").rglob("*.py")) + CORPUS):
        assert _walked_events(module) == _libcst_events(module), path
        checked += 1
    assert checked > 100


def test_collect_meets_awaits_and_calls_in_a_visitors_order() -> None:
    # the teardown walk takes "the first await" and interrupt points in order from `collect`,
    # which reads fields instead of visiting; a visitor is the reference
    import libcst as cst

    from gate.analysis.walker import collect

    class Visited(cst.CSTVisitor):
        def __init__(self) -> None:
            self.awaits: list[int] = []
            self.calls: list[int] = []

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Await(self, node: cst.Await) -> None:
            self.awaits.append(id(node))

        def visit_Call(self, node: cst.Call) -> None:
            self.calls.append(id(node))

    ordered = """\
async def f(x):
    match await g(x):
        case [a, b] if await h(a):
            await k(b(c()))
    try:
        pass
    except* (a(), b()) as e:
        await q(r())
    v = [await p(i) for i in await s() if await t(i)]
    u = f"{await a()}{b()!r:{c()}}"
    return (yield await z()) if x() else y()
"""
    modules = [cst.parse_module(ordered)]
    modules += [
        module for _, module in _parsed(sorted((ROOT / "gate").rglob("*.py"))[:40] + CORPUS)
    ]
    checked = 0
    for module in modules:
        pending: list[cst.CSTNode] = [module]
        while pending:
            node = pending.pop()
            pending.extend(node.children)
            if not isinstance(node, cst.BaseStatement | cst.BaseExpression):
                continue
            visited = Visited()
            node.visit(visited)
            found = collect(node)
            assert [id(n) for n in found.awaits] == visited.awaits
            assert [id(n) for n in found.calls] == visited.calls
            checked += 1
    assert checked > 10_000


NOQA_SOURCES = [
    "x = 1  # noqa\ny = '# noqa: GATE100'\n",
    "s = 'a # b'  # noqa: GATE100, GATE101\n",
    "s = '''\n# noqa\n'''  # NOQA: GATE200\n",
    "s = (\n    'one'  # noqa: GATE100\n    'two'\n)\n",
    "f = f'{x!r} # {y}'  # noqa\nb = b'#'  # noqa: GATE900\n",
    "@decorator('# noqa')  # noqa: GATE100\ndef run():\n    return 'é # x'  # noqa\n",
    "def f():\n    '''Docstring # noqa.'''\n    pass  # noqa: GATE101\n",
    "x = 1 \\\n    + 2  # noqa\n# noqa: GATE100 on its own line\n",
    "x = 1  # noqa\r\ny = 2  # noqa: GATE100\r\n",
    "x = '#'; y = \"# noqa\"  # real noqa: GATE102\n",
]


@pytest.mark.parametrize("text", NOQA_SOURCES)
def test_noqa_from_the_tree_is_the_tokenizers(text: str) -> None:
    import ast

    from gate.source import suppressions

    assert suppressions(text, ast.parse(text)) == suppressions(text)


def test_noqa_from_the_tree_reads_lines_without_tokenizing() -> None:
    import ast

    from gate.source import _comment_suppressions

    text = NOQA_SOURCES[1]
    assert _comment_suppressions(text, ast.parse(text)) == {1: frozenset({"GATE100", "GATE101"})}
    multi_line = NOQA_SOURCES[2]
    assert _comment_suppressions(multi_line, ast.parse(multi_line)) is None  # tokenized


def test_parsing_without_validation_builds_the_same_trees() -> None:
    import libcst as cst

    from gate.analysis.cstwalk import parse_module

    for path, validated in _parsed([*CORPUS, *sorted((ROOT / "gate").rglob("*.py"))]):
        text = path.read_text(encoding="utf-8")
        built = parse_module(text)
        assert built.deep_equals(validated), path
        assert built.code == text
    with pytest.raises(cst.CSTValidationError):  # validation is back once parsing is done
        cst.Name("not a name")


# -- the forked workers


def _doubled(number: int) -> int:
    if number == 13:
        raise ValueError("thirteen")
    return 2 * number


def _killed(number: int) -> int:
    import os
    import signal

    if number == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return number


def test_workers_answer_every_job_in_order_and_run_meanwhile_beside() -> None:
    from gate import workers

    jobs = list(range(12))
    seen: list[str] = []
    done: list[int] = []
    order = sorted(jobs, reverse=True)
    results = workers.run(
        _doubled,
        jobs,
        order,
        2,
        lambda: None,
        lambda: done.append(1),
        lambda: seen.append("meanwhile"),
    )
    assert results == [2 * number for number in jobs]
    assert seen == ["meanwhile"] and len(done) == len(jobs)
    assert not workers._OPEN  # every pipe closed, every worker waited for


def test_workers_raise_what_a_job_raised_and_when_one_dies() -> None:
    from gate import workers

    with pytest.raises(ValueError, match="thirteen"):
        workers.run(_doubled, list(range(20)), list(range(20)), 2, lambda: None, lambda: None)
    with pytest.raises(workers.WorkerDied):
        workers.run(_killed, list(range(8)), list(range(8)), 2, lambda: None, lambda: None)

    def fails() -> None:
        raise RuntimeError("meanwhile failed")

    with pytest.raises(RuntimeError, match="meanwhile failed"):
        workers.run(_doubled, [1, 2], [0, 1], 2, lambda: None, lambda: None, fails)
    assert not workers._OPEN


def test_workers_pass_large_jobs_and_results_without_waiting_on_each_other() -> None:
    from gate import workers

    jobs = [bytes([number]) * 300_000 for number in range(8)]  # each larger than a pipe holds
    results = workers.run(
        lambda data: data * 2, jobs, list(range(8)), 2, lambda: None, lambda: None
    )
    assert results == [data * 2 for data in jobs]


def test_a_warm_run_does_not_load_libcst(in_tmp: Path) -> None:
    """A warm run of unchanged files takes every teardown finding from the cache, so it never
    imports libcst (a tenth of a second on its own)."""
    write(in_tmp / "job.py", BUGGY)
    script = (
        "import sys\nfrom gate.cli import main\n"
        "code = main(['check', '--format', 'json', '.'])\n"
        "print('libcst' in sys.modules)\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], cwd=in_tmp, capture_output=True, text=True, check=False
        )
        for _ in range(2)
    ]
    cold, warm = (run.stdout.strip().splitlines()[-1] for run in runs)
    assert (cold, warm) == ("True", "False"), [run.stderr for run in runs]
