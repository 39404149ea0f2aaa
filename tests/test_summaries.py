"""Callees judged by what they do, project-wide, and the severity tiers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_gate as run
from conftest import write

CALLER = """\
import asyncio
from pkg.helpers import shut_down


class Runner:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            await shut_down(self)
            self.write_result()
"""


# each finding at its own tier: one error per interrupt (`test_one_error_per_interrupt`) would
# make the repeats of an interrupt warnings
TIERS_ALONE = '[tool.gate.teardown]\nrepeat-severity = "error"\n'


def _findings(capsys, *argv: str) -> list[tuple[str, int, str]]:
    code, out, err = run(capsys, "check", "--format", "json", *argv)
    assert code in (0, 1), err
    return [(f["code"], f["line"], f["severity"]) for f in json.loads(out)["findings"]]


def _project(root: Path, helpers: str) -> None:
    write(root / "pyproject.toml", TIERS_ALONE)
    write(root / "pkg" / "__init__.py", "")
    write(root / "pkg" / "runner.py", CALLER)
    write(root / "pkg" / "helpers.py", helpers)


HELPERS = {
    # never suspends: awaiting it cannot be interrupted, and nothing after it is skipped
    "no-suspend": "async def shut_down(runner):\n    runner.close_sandbox()\n",
    # its work is done before it waits: not cut short (the wait still skips what follows)
    "work-first": (
        "async def shut_down(runner):\n    runner.kill_sandbox()\n    await runner.wait()\n"
    ),
    # the work runs on the interrupt's own path
    "own-finally": (
        "async def shut_down(runner):\n"
        "    try:\n        await runner.drain()\n    finally:\n        runner.kill_sandbox()\n"
    ),
    # holds the interrupt and returns: the caller's later steps run
    "holds": (
        "import asyncio\n\n\nasync def shut_down(runner):\n    try:\n"
        "        await runner.kill_sandbox()\n    except asyncio.CancelledError as error:\n"
        "        return error\n"
    ),
    # a cut-short step with nothing guarding it
    "plain": "async def shut_down(runner):\n    await runner.drain()\n    runner.kill_sandbox()\n",
}

EXPECTED = {
    "no-suspend": [],
    "work-first": [("GATE100", 11, "error")],
    "own-finally": [("GATE100", 11, "error")],
    "holds": [],
    # (inside the helper itself nothing is reported: helpers in other modules are judged at
    # the call site by their summary)
    "plain": [("GATE100", 11, "error"), ("GATE101", 10, "error")],
}


@pytest.mark.parametrize("shape", sorted(HELPERS))
def test_a_callee_in_another_module_is_judged_by_its_summary(
    in_tmp: Path, capsys, shape: str
) -> None:
    _project(in_tmp, HELPERS[shape])
    found = sorted(
        (code, line, severity)
        for code, line, severity in _findings(capsys, "--no-cache", "pkg")
        if code.startswith("GATE1")
    )
    assert found == sorted(EXPECTED[shape])


@pytest.mark.parametrize("shape", ["no-suspend", "plain"])
def test_checking_one_file_judges_its_callees_as_a_whole_run_does(
    in_tmp: Path, capsys, shape: str
) -> None:
    """pre-commit passes only the changed files; the modules they import still count."""
    _project(in_tmp, HELPERS[shape])
    alone = _findings(capsys, "--no-cache", "pkg/runner.py")
    assert alone == [f for f in _findings(capsys, "--no-cache", "pkg") if f[1] > 3]
    assert alone == sorted(EXPECTED[shape], key=lambda f: (f[1], f[0]))


def test_a_changed_callee_reopens_its_callers_cached_analysis(in_tmp: Path, capsys) -> None:
    _project(in_tmp, HELPERS["no-suspend"])
    assert [f for f in _findings(capsys, "pkg") if f[0] == "GATE101"] == []
    # only the helper changes; the caller's cached analysis consulted its old summary
    write(in_tmp / "pkg" / "helpers.py", HELPERS["plain"])
    assert ("GATE101", 10, "error") in _findings(capsys, "pkg")


def test_a_project_shield_manager_shields_the_callee(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(
        in_tmp / "pkg" / "shield.py",
        "import anyio\n\n\nclass Shield:\n    def __init__(self):\n"
        "        self._scope = anyio.CancelScope(shield=True)\n\n"
        "    def __enter__(self):\n        return self._scope.__enter__()\n\n"
        "    def __exit__(self, *exc):\n        return self._scope.__exit__(*exc)\n",
    )
    write(
        in_tmp / "pkg" / "pool.py",
        "import anyio\nfrom .shield import Shield\n\n\nclass Pool:\n"
        "    async def close_all(self):\n        with Shield():\n"
        "            await self.release_connections()\n\n"
        "    async def request(self):\n        try:\n            await self.send()\n"
        "        finally:\n            await self.close_all()\n            self.release_lock()\n"
        "            with Shield():\n                await self.release_connections()\n",
    )
    assert [f for f in _findings(capsys, "--no-cache", "pkg") if f[0].startswith("GATE1")] == []


TIERS = """\
import asyncio


async def run(job, sandbox, session):
    try:
        await job.evaluate()
    finally:
        await job.post_run()
        session.close()
        sandbox.close()
        job.write_result()
"""


def test_best_effort_closes_and_test_code_are_warnings(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "src" / "job.py", TIERS)
    write(in_tmp / "tests" / "test_job.py", TIERS)
    found = _findings(capsys, "--no-cache", ".")
    assert ("GATE100", 9, "warning") in found  # session.close(): in-process, best effort
    assert ("GATE100", 10, "error") in found  # sandbox.close(): lives outside the process
    assert ("GATE100", 11, "error") in found  # write_result(): data
    severities = {severity for code, line, severity in found if line in (9, 10, 11)}
    assert severities == {"warning", "error"}
    code, out, _ = run(capsys, "check", "--format", "json", "--no-cache", "tests")
    assert {f["severity"] for f in json.loads(out)["findings"]} == {"warning"}
    assert code == 0  # warnings do not fail the run


def test_a_tests_directory_below_the_root_is_test_code(in_tmp: Path, capsys) -> None:
    """`src/pkg/tests/helpers.py` is test code by default, as `tests/helpers.py` is; a module
    of the package beside it is not."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "src" / "pkg" / "tests" / "helpers.py", TIERS)
    write(in_tmp / "src" / "pkg" / "examples" / "demo.py", TIERS)
    write(in_tmp / "src" / "pkg" / "_testbase" / "fuzzer.py", TIERS)
    write(in_tmp / "src" / "pkg" / "job.py", TIERS)
    write(in_tmp / "src" / "pkg" / "testable.py", TIERS)
    code, out, _ = run(capsys, "check", "--format", "json", "--no-cache", "src")
    severities: dict[str, set[str]] = {}
    for finding in json.loads(out)["findings"]:
        severities.setdefault(finding["path"], set()).add(finding["severity"])
    assert severities["src/pkg/tests/helpers.py"] == {"warning"}
    assert severities["src/pkg/examples/demo.py"] == {"warning"}
    assert severities["src/pkg/_testbase/fuzzer.py"] == {"warning"}  # private test support
    assert "error" in severities["src/pkg/job.py"]
    assert "error" in severities["src/pkg/testable.py"]
    assert code == 1


CLOSED_OBJECT = """\
async def run(job, sandbox):
    try:
        await job.evaluate()
    finally:
        await job.post_run()
        await sandbox.client.aclose()
        await job.close_sandbox_client()
        await job.close_sandbox()
        sandbox.kill()
        sandbox.delete_cache_best_effort()
"""


def test_what_a_close_acts_on_decides_its_tier(in_tmp: Path, capsys) -> None:
    """Judged on real code (openai-agents' vercel sandbox): closing the in-process HTTP client
    of a sandbox is best effort, whatever owns the client; closing the sandbox is not."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "job.py", CLOSED_OBJECT)
    found = {
        (code, line): severity for code, line, severity in _findings(capsys, "--no-cache", ".")
    }
    assert found[("GATE100", 6)] == "warning"  # sandbox.client.aclose(): the client
    assert found[("GATE100", 7)] == "warning"  # close_sandbox_client(): the client
    assert found[("GATE100", 8)] == "error"  # close_sandbox(): the sandbox
    assert found[("GATE100", 9)] == "error"  # sandbox.kill()
    assert found[("GATE100", 10)] == "warning"  # its name says best effort


DROPPED_FAILURES = """\
import contextlib
import logging

logger = logging.getLogger(__name__)


async def run(job, sandbox, transports):
    try:
        await job.evaluate()
    finally:
        for transport in transports:
            try:
                await transport.terminate()
            except Exception:
                logger.debug("could not terminate", exc_info=True)
        with contextlib.suppress(Exception):
            await sandbox.delete()
        try:
            await sandbox.kill()
        except Exception:
            logger.warning("could not kill %s", sandbox)
        try:
            await job.upload()
            await job.save_result()
        except Exception:
            pass
"""


def test_a_step_whose_failure_the_code_drops_is_best_effort(in_tmp: Path, capsys) -> None:
    """Judged on real code (fastmcp's transports, nats' consumer delete): a step that is all a
    `try` runs whose `except Exception:` only passes or logs at debug level, or all that a
    `suppress(Exception)` holds, may fail unnoticed by the code's own word, so a cancel that
    cuts or skips it is best effort. A handler that logs a warning, or a `try` of two steps,
    says nothing of the kind; and the guard that misses the cancel stays an error while a
    later step that matters is at stake."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "job.py", DROPPED_FAILURES)
    found = _findings(capsys, "--no-cache", ".")
    severity = {(code, line): severity for code, line, severity in found}
    assert severity[("GATE101", 13)] == "warning"  # terminate(): dropped, logged at debug
    assert severity[("GATE100", 13)] == "warning"  # the later terminate()s: the same step
    assert severity[("GATE101", 17)] == "warning"  # delete() under suppress(Exception)
    assert severity[("GATE101", 19)] == "error"  # kill(): the failure is logged as a warning
    assert severity[("GATE101", 23)] == "error"  # upload(): one of two steps of the try
    assert severity[("GATE100", 24)] == "error"
    assert severity[("GATE102", 14)] == "error"  # the guard of terminate(): kill() is at stake


RELEASED_OBJECT = """\
async def run(job, lock):
    try:
        await job.evaluate()
    finally:
        await job.post_run()
        await job.response.release()
        await job.release_chunked_response()
        lock.release()
"""


def test_what_a_release_acts_on_decides_its_tier(in_tmp: Path, capsys) -> None:
    """Judged on real code: an HTTP response's own release gives its connection back to a pool
    of this process (aiodocker's log stream); a function named for the response it releases may
    release it in a sandbox (inspect_ai's chunked JSON-RPC transport); a lock outlives the task."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "job.py", RELEASED_OBJECT)
    found = {
        (code, line): severity for code, line, severity in _findings(capsys, "--no-cache", ".")
    }
    assert found[("GATE100", 6)] == "warning"  # job.response.release(): in-process
    assert found[("GATE100", 7)] == "error"  # release_chunked_response(): anywhere
    assert found[("GATE100", 8)] == "error"  # lock.release()


PASSED_OBJECT = """\
class Deployment:
    async def stop(self):
        await self._runtime.close()
        self._client.delete(self._sandbox)
        self._ecs.stop_task(task=self._task_arn, cluster=self._cluster_arn)
        self._client.delete(self._cache_key)


async def serve(deployment):
    try:
        await deployment.run()
    finally:
        await deployment.stop()
"""


def test_what_a_step_is_passed_decides_its_tier(in_tmp: Path, capsys) -> None:
    """Judged on real code (SWE-ReX's deployments): in a teardown method, whose steps are best
    effort unless they name something outside the process, a client's delete of the sandbox it
    is passed, or a stop of a task in a cluster, is a loss."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "deploy.py", PASSED_OBJECT)
    found = {
        (code, line): severity for code, line, severity in _findings(capsys, "--no-cache", ".")
    }
    assert found[("GATE100", 4)] == "error"  # delete(self._sandbox)
    assert found[("GATE100", 5)] == "error"  # stop_task(cluster=...)
    assert found[("GATE100", 6)] == "warning"  # delete(self._cache_key): nothing outside


CONTAINERS = """\
import asyncio


class Pool:
    def __init__(self):
        self._starting = set()

    async def run(self, scheduler, proc):
        self._schedulers: list[Scheduler] = []
        self._schedulers.append(scheduler)
        try:
            await scheduler.run()
        finally:
            await scheduler.aclose()
            self._schedulers.remove(scheduler)
            self._starting.discard(proc)
            self._procs.remove(proc)

    async def start(self, key):
        try:
            await self._spawn(key)
        except Exception:
            self._starting.discard(key)
            raise
"""


def test_a_give_back_on_a_built_in_container_is_best_effort(in_tmp: Path, capsys) -> None:
    """Judged on real code (livekit's filler schedulers, dask's starting nannies, OpenHands'
    starting conversations): removing an item from a list or set the project made is
    bookkeeping in the process's memory; an attribute the project does not record stays a
    step by its name."""
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "pool.py", CONTAINERS)
    found = {
        (code, line): severity for code, line, severity in _findings(capsys, "--no-cache", ".")
    }
    assert found[("GATE100", 15)] == "warning"  # annotated `list[Scheduler]`
    assert found[("GATE100", 16)] == "warning"  # made by `set()`
    assert found[("GATE100", 17)] == "error"  # `self._procs`: nothing says what it holds
    assert found[("GATE105", 23)] == "warning"  # in a handler narrower than cancellation


EXIT_STACKS = """\
import contextlib


class Toolset:
    def __init__(self):
        self._stack = contextlib.AsyncExitStack()

    async def __aexit__(self, *args):
        async with self._enter_lock:
            await self._stack.aclose()
            await self._exit_stack.aclose()
            self._client.close()


async def connect(params):
    session_stack = contextlib.AsyncExitStack()
    try:
        session = await session_stack.enter_async_context(params.client())
        return await session.initialize()
    except Exception:
        await session_stack.aclose()
        raise
"""


def test_closing_an_exit_stack_is_not_best_effort(in_tmp: Path, capsys) -> None:
    """Judged on real code (pydantic-ai's MCP toolset, MCP's session group): an exit stack
    closes what was entered into it, a subprocess or remote session as often as a client, so
    its close is an error, known by the type the project gives the receiver or by its name."""
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "toolset.py", EXIT_STACKS)
    found = {
        (code, line): severity for code, line, severity in _findings(capsys, "--no-cache", ".")
    }
    assert found[("GATE100", 10)] == "error"  # self._stack holds an AsyncExitStack
    assert found[("GATE100", 11)] == "error"  # self._exit_stack, by its name
    assert found[("GATE100", 12)] == "warning"  # an in-process client
    assert found[("GATE105", 21)] == "error"  # a local AsyncExitStack, closed only on error


def test_tiers_can_be_raised_to_errors(in_tmp: Path, capsys) -> None:
    write(
        in_tmp / "pyproject.toml",
        '[tool.gate.teardown]\nbest-effort-severity = "error"\ntest-severity = "error"\n'
        'repeat-severity = "error"\n',
    )
    write(in_tmp / "tests" / "test_job.py", TIERS)
    found = _findings(capsys, "--no-cache", ".")
    assert found and {severity for _, _, severity in found} == {"error"}


CANCEL_ONLY = """\
{imports}


async def run(job):
    try:
        await job.evaluate()
    except {cancelled}:
        await job.post_run()
        job.write_result()
        raise
"""


@pytest.mark.parametrize(
    ("imports", "cancelled", "severity"),
    [
        # asyncio delivers a cancel once: cutting the handler needs a second one
        ("import asyncio", "asyncio.CancelledError", "warning"),
        # any error enters a BaseException handler: a cancel cuts it only when it lands while
        # an error is handled, or as a second cancel (a warning on asyncio too)
        ("import asyncio", "BaseException", "warning"),
        # not known to be asyncio: the first cancel can land in it
        ("import json", "BaseException", "error"),
        # level-triggered: every checkpoint of a cancelled scope raises again
        ("import trio", "trio.Cancelled", "error"),
    ],
)
def test_a_region_entered_by_the_cancel_itself(
    in_tmp: Path, capsys, imports: str, cancelled: str, severity: str
) -> None:
    write(in_tmp / "job.py", CANCEL_ONLY.format(imports=imports, cancelled=cancelled))
    found = _findings(capsys, "--no-cache", "job.py")
    assert ("GATE100", 9, severity) in found


SWALLOWS = """\
import asyncio


class Job:
    async def shutdown(self):
        self._reader.cancel()
        try:
            await asyncio.wait_for(self._reader, 1.0)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            pass

    async def cleanup(self):
        try:
            await asyncio.wait_for(self._task, timeout=1.0)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            self._task.cancel()


async def main(job):
    await job.shutdown()
    await job.cleanup()
"""


def test_swallowed_cancel_tiers(in_tmp: Path, capsys) -> None:
    write(in_tmp / "job.py", SWALLOWS)
    found = _findings(capsys, "--no-cache", "job.py")
    # the wait for a task it has just cancelled: a warning
    assert ("GATE103", 9, "warning") in found
    # the caller's cancel taken for a timeout, the task cancelled only afterwards: an error
    assert ("GATE103", 15, "error") in found
    # trio/anyio: the cancelled scope raises again at the next checkpoint, the cancel is delayed
    write(in_tmp / "job.py", "import anyio\n" + SWALLOWS)
    found = _findings(capsys, "--no-cache", "job.py")
    assert ("GATE103", 16, "warning") in found


SUPPRESSES = """\
import asyncio
import contextlib


class Worker:
    async def stop(self):
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self.write_state()

    async def close(self):
        try:
            await self._conn.flush()
        finally:
            with contextlib.suppress(asyncio.CancelledError):
                await self._conn.wait_closed()
            self.write_state()


async def main(worker):
    await worker.stop()
    await worker.close()
"""


GATHERS = """\
import asyncio
import contextlib


class Transport:
    async def close(self):
        tasks = list(self._streams)
        for task in tasks:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*tasks, return_exceptions=True)
        self.write_state()

    async def stop(self):
        pending = [self._reader]
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*pending)
        self.write_state()


async def main(transport):
    await transport.close()
    await transport.stop()
"""


def test_a_gather_of_tasks_just_cancelled_is_a_warning(in_tmp: Path, capsys) -> None:
    # judged on real code (langgraph's and nats' close): tasks cancelled in a loop, or cancelled
    # and collected in a list, then gathered, are the cancel-then-await idiom; a gather of tasks
    # the function did not cancel keeps its error
    write(in_tmp / "job.py", GATHERS)
    found = _findings(capsys, "--no-cache", "job.py")
    assert ("GATE103", 10, "warning") in found
    assert ("GATE103", 17, "error") in found


def test_a_suppress_around_a_task_just_cancelled_is_a_warning(in_tmp: Path, capsys) -> None:
    # judged on real code (nanobot's channels): the suppress form of cancel-then-await is tiered
    # as the try/except form is; a suppress around any other await keeps its error
    write(in_tmp / "job.py", SUPPRESSES)
    found = _findings(capsys, "--no-cache", "job.py")
    assert ("GATE103", 8, "warning") in found
    assert ("GATE103", 16, "error") in found


BEST_EFFORT_DOC = """\
async def flush_idle(states):
    \"\"\"Flush idle tasks' samples. Failures are logged: this is a convenience, redone at
    finalisation.\"\"\"
    for state in states:
        await state.flush_samples()


async def flush_all(states):
    \"\"\"Flush every task's samples.\"\"\"
    for state in states:
        await state.flush_samples()


class Gate:
    async def __aexit__(self, *exc_info):
        await self._semaphore.release()
        await flush_idle(self.states)
        await self._semaphore.release()
        await flush_all(self.states)
"""


def test_documented_best_effort_is_a_warning(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "gate_.py", BEST_EFFORT_DOC)
    found = _findings(capsys, "--no-cache", "gate_.py")
    assert ("GATE100", 5, "warning") in found  # its own docstring calls it a convenience
    assert ("GATE100", 11, "error") in found  # the same step in a function that does not
    assert ("GATE100", 17, "warning") in found  # awaiting the documented function
    assert ("GATE100", 19, "error") in found


TEARDOWN_METHODS = """\
class Browser:
    async def close(self):
        await self._page.close()
        self._driver_process.kill()


class Shell:
    async def shutdown(self):
        await self._pty.drain()
        self._shell_process.kill()


async def serve(shells):
    try:
        await shells.run()
    finally:
        await asyncio.gather(*(shell.shutdown() for shell in shells))
"""


def test_teardown_method_nothing_calls_is_a_warning(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "tools.py", "import asyncio\n\n\n" + TEARDOWN_METHODS)
    found = _findings(capsys, "--no-cache", ".")
    assert ("GATE100", 7, "warning") in found  # Browser.close: nothing in the project calls it
    assert ("GATE100", 13, "error") in found  # Shell.shutdown: serve() runs it
    # a file named alone (pre-commit): no other project file mentions `close`, so the callers
    # the file holds are all there are, as for the whole tree
    assert _findings(capsys, "--no-cache", "tools.py") == found
    # another file the run does not read mentions the name: its callers are not known
    write(in_tmp / "app.py", "# the app calls close() on exit\n")
    assert ("GATE100", 7, "warning") in _findings(capsys, "--no-cache", ".")
    assert ("GATE100", 7, "error") in _findings(capsys, "--no-cache", "tools.py")


CLOSURE_CALLS_TEARDOWN = """\
import asyncio


class Executor:
    async def stop(self):
        await self._wait_for_jobs()
        self._container.kill()

    async def start(self):
        async def cleanup():
            await self.stop()

        register_at_exit(cleanup)
"""


def test_teardown_method_a_closure_calls_is_called(in_tmp: Path, capsys) -> None:
    # the closure's `self` is its method's: start() hands on a function that runs stop()
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "executor.py", CLOSURE_CALLS_TEARDOWN)
    assert ("GATE100", 7, "error") in _findings(capsys, "--no-cache", ".")


def test_a_local_function_with_its_own_self_runs_no_method_of_the_class() -> None:
    """The summaries' call sites and the teardown candidates agree on what `self` names in a
    function local to a method: the method's instance, unless the function binds its own."""
    import ast

    from gate.analysis.candidates import index_functions
    from gate.analysis.summary import summarise_module
    from gate.analysis.vocabulary import Vocabulary
    from gate.config import TeardownConfig

    source = (
        "class Executor:\n    async def start(self):\n"
        "        async def cleanup():\n            await self.stop()\n\n"
        "        async def adapter(self):\n            await self.stop()\n"
    )
    tree = ast.parse(source)
    summary = summarise_module(tree, "executor.py", Vocabulary.of(TeardownConfig()))
    owners = {site.caller: site.owner for site in summary.sites if site.name == "stop"}
    assert owners == {
        "Executor.start.<locals>.cleanup": "Executor",
        "Executor.start.<locals>.adapter": "",
    }
    spans, _ = index_functions(tree)
    classes = {span.qualname: span.self_class for span in spans}
    assert classes["Executor.start.<locals>.cleanup"] == "Executor"
    assert classes["Executor.start.<locals>.adapter"] == ""


SHIELDED_BY_CALLER = """\
import anyio


class RunLogger:
    async def cleanup(self):
        await self._flush_lock.acquire()
        self._sandbox.remove()
"""

RUNS_IT_SHIELDED = """\
import anyio


async def run_tasks(tasks):
    try:
        await tasks.start()
    finally:
        with anyio.CancelScope(shield=True):
            for task in tasks:
                await task.run_logger.cleanup()
"""


def test_shielded_by_every_caller_needs_the_callers_read(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "pkg" / "__init__.py", "")
    write(in_tmp / "pkg" / "logger.py", SHIELDED_BY_CALLER)
    write(in_tmp / "pkg" / "runner.py", RUNS_IT_SHIELDED)
    assert _findings(capsys, "--no-cache", "pkg") == []
    named = _findings(capsys, "--no-cache", "pkg/logger.py")
    assert ("GATE100", 7, "error") in named  # its caller is not read: the finding stays


# Judged on real code (redis-py's fixed execute_command): the helper's only caller, in the same
# module, runs it under asyncio.shield, so the caller's cancel never reaches its finally.
SHIELDED_IN_ITS_MODULE = """\
import asyncio


class Client:
    async def _try_send(self, conn, command):
        try:
            return await conn.send_and_read(command)
        except asyncio.CancelledError:
            await conn.disconnect(nowait=True)
            raise
        finally:
            await self.pool.release(conn)

    async def execute(self, command):
        conn = await self.pool.get_connection()
        return await asyncio.shield(self._try_send(conn, command))
"""


def test_a_file_named_alone_knows_its_callers_when_no_other_file_names_them(
    in_tmp: Path, capsys
) -> None:
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "pkg" / "__init__.py", "")
    write(in_tmp / "pkg" / "client.py", SHIELDED_IN_ITS_MODULE)
    write(in_tmp / "pkg" / "pipeline.py", "async def run(client):\n    await client.execute(1)\n")
    # no other file of the project mentions `_try_send`: its callers are the ones in its
    # module, as checking the whole tree finds
    assert _findings(capsys, "--no-cache", "pkg") == []
    assert _findings(capsys, "--no-cache", "pkg/client.py") == []
    # a file the run does not read names it: that may be a caller that does not shield it
    write(
        in_tmp / "pkg" / "retry.py",
        "async def retried(client, conn):\n    return await client._try_send(conn, 1)\n",
    )
    assert ("GATE101", 12, "error") in _findings(capsys, "--no-cache", "pkg/client.py")
    assert ("GATE101", 12, "error") in _findings(capsys, "--no-cache", "pkg")


# Judged on real code (nanobot): a channel's cleanup awaited a chain of project methods whose
# only await was a put on an unbounded asyncio.Queue, reached through a parameter annotated
# with the bus class and a dataclass of services: nothing in it can suspend.
BUS = """\
import asyncio


class Bus:
    def __init__(self):
        self.inbound: asyncio.Queue[str] = asyncio.Queue()
        self.bounded = asyncio.Queue(maxsize=10)

    async def publish(self, message):
        await self.inbound.put(message)

    async def publish_bounded(self, message):
        await self.bounded.put(message)
"""

SERVICES = """\
from dataclasses import dataclass

from pkg.bus import Bus
from pkg.chats import Chats


@dataclass
class Services:
    chats: Chats
"""

CHATS = """\
from pkg.bus import Bus


class Chats:
    def __init__(self, bus: Bus | None):
        self._bus = bus

    async def discard(self, chat):
        await self._bus.publish(chat)

    async def discard_bounded(self, chat):
        await self._bus.publish_bounded(chat)
"""

CHANNEL = """\
from pkg.services import Services


class Channel:
    def __init__(self, services: Services):
        self._chats = services.chats

    async def run(self, sandbox):
        try:
            await sandbox.serve()
        finally:
            await self._chats.discard(1)
            sandbox.kill()

    async def run_bounded(self, sandbox):
        try:
            await sandbox.serve()
        finally:
            await self._chats.discard_bounded(1)
            sandbox.kill()
"""


def test_a_chain_that_only_puts_on_an_unbounded_queue_never_suspends(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    for name, text in [("__init__", ""), ("bus", BUS), ("services", SERVICES)]:
        write(in_tmp / "pkg" / f"{name}.py", text)
    write(in_tmp / "pkg" / "chats.py", CHATS)
    write(in_tmp / "pkg" / "channel.py", CHANNEL)
    found = _findings(capsys, "--no-cache", "pkg")
    # the unbounded chain: no interrupt point, nothing to skip; the bounded one still suspends
    assert [f for f in found if f[1] <= 13] == []
    assert ("GATE100", 20, "error") in found
    # the same when only the channel is checked (its imports are read)
    assert _findings(capsys, "--no-cache", "pkg/channel.py") == [f for f in found if f[1] > 13]
    # the summaries' queues, awaited calls and types survive the cache
    assert _findings(capsys, "pkg") == found
    assert _findings(capsys, "pkg") == found


ABSTRACT = """\
import abc


class Sandbox(abc.ABC):
    @abc.abstractmethod
    async def exec(self, command):
        ...

    async def stub(self):
        \"\"\"Implemented by subclasses.\"\"\"
        raise NotImplementedError


class Transport:
    def __init__(self, sandbox: Sandbox):
        self.sandbox = sandbox

    async def call(self, request):
        try:
            return await self.sandbox.exec(request)
        finally:
            await self.sandbox.exec("release")
            self.sandbox.release_handle()

    async def call_stub(self, request):
        try:
            return await self.sandbox.exec(request)
        finally:
            await self.sandbox.stub()
            self.sandbox.release_handle()
"""


def test_an_abstract_callee_is_not_taken_for_one_that_never_suspends(in_tmp: Path, capsys) -> None:
    # judged on real code (inspect_ai): an await of an abstract method says nothing of the
    # implementation that runs, which may suspend
    write(in_tmp / "transport.py", ABSTRACT)
    found = _findings(capsys, "--no-cache", "transport.py")
    assert ("GATE100", 23, "error") in found
    assert ("GATE100", 30, "error") in found


def test_skipping_the_cancel_of_an_in_process_task_is_a_warning(in_tmp: Path, capsys) -> None:
    write(
        in_tmp / "job.py",
        "async def stop(job):\n    try:\n        await job.run()\n    finally:\n"
        "        await job.notify()\n        job._task.cancel()\n        job.kill_sandbox()\n",
    )
    found = _findings(capsys, "--no-cache", "job.py")
    assert ("GATE100", 6, "warning") in found
    assert ("GATE100", 7, "error") in found


NETWORK_AND_LOOPS = """\
async def reply(self, sandbox, workers):
    try:
        await self.handle()
    finally:
        await self.flow.drain()
        self.transport.write(b"HTTP/1.1 500 ...")
        self.results.write(b"failed")
        self._client.stop()
        sandbox.stop()
        for t in list(self.server_state.tasks):
            t.cancel()
        for worker in workers:
            worker.cancel()
        self._sandbox_job.cancel()
"""


def test_network_writes_stops_of_clients_and_looped_tasks_are_warnings(
    in_tmp: Path, capsys
) -> None:
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "server.py", NETWORK_AND_LOOPS)
    found = _findings(capsys, "--no-cache", "server.py")
    assert ("GATE100", 6, "warning") in found  # a reply written to a peer, not data kept
    assert ("GATE100", 7, "error") in found  # written to a results file: data
    assert ("GATE100", 8, "warning") in found  # stopping an in-process client
    assert ("GATE100", 9, "error") in found  # stopping a sandbox: outside the process
    assert ("GATE100", 11, "warning") in found  # `t` is one of `self.server_state.tasks`
    assert ("GATE100", 13, "warning") in found  # a cancel that names nothing outside
    assert ("GATE100", 14, "error") in found  # the cancel of a sandbox's job: outside


HELPER_STAKES = """\
import asyncio


class Channel:
    async def _stop_typing(self, chat):
        task = self._typing.pop(chat, None)
        if task is not None:
            task.cancel()
            await self._send_typing(chat, False)

    async def _stop_all_typing(self):
        for chat in list(self._typing):
            await self._stop_typing(chat)

    async def _stop_worker(self):
        self._task.cancel()
        self._sandbox.kill()

    async def _stop_marked(self):
        self._task.cancel()
        self._results.seal()  # gate: critical

    async def handle(self, message):
        try:
            await self._reply(message)
        except Exception:
            await self._stop_typing(message.chat)
            await self._stop_all_typing()
            await self._stop_worker()
            await self._stop_marked()
            raise
"""


def test_a_helper_that_only_takes_best_effort_steps_is_best_effort(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "channel.py", HELPER_STAKES)
    found = {(code, line): severity for code, line, severity in _findings(capsys, "channel.py")}
    assert found[("GATE105", 27)] == "warning"  # it only cancels an in-process task
    assert found[("GATE105", 28)] == "warning"  # followed through the helper it awaits
    assert found[("GATE105", 29)] == "error"  # it kills a sandbox too
    assert found[("GATE105", 30)] == "error"  # a step its author marked critical


ALIASED_ATTRIBUTE = """\
class Forwarders:
    async def stop(self):
        self._task.cancel()
        await self._drained.wait()


class Connection:
    async def start(self):
        self._forwarders = Forwarders()

    async def _stop_forwarders(self):
        forwarders = self._forwarders
        self._forwarders = None
        await forwarders.stop()

    async def serve(self):
        try:
            await self._serve()
        finally:
            await self._stop_forwarders()
            self.write_log()
"""


def test_a_local_taken_from_an_attribute_holds_what_the_attribute_holds(
    in_tmp: Path, capsys
) -> None:
    write(in_tmp / "connection.py", ALIASED_ATTRIBUTE)
    found = _findings(capsys, "connection.py")
    # `forwarders` is `self._forwarders`, a Forwarders, whose stop() only cancels its task:
    # cutting _stop_forwarders() short costs no more
    assert ("GATE101", 20, "warning") in found
    assert ("GATE100", 21, "error") in found


CUT_COSTS = """\
class Server:
    async def stop(self):
        try:
            for connection in list(self._connections):
                await connection.close()
            self._listener.close()
            await self._listener.wait_closed()
        finally:
            self._socket_path.unlink(missing_ok=True)


class Runner:
    async def stop(self):
        try:
            await self._channel.close()
            self._sandbox.kill()
        finally:
            self._socket_path.unlink(missing_ok=True)


class Exporter:
    async def stop(self):
        await self._channel.close()
        self._socket_path.unlink(missing_ok=True)


async def serve(server: Server, runner: Runner, exporter: Exporter):
    try:
        await server.serve()
    finally:
        await server.stop()
    try:
        await runner.serve()
    finally:
        await runner.stop()
    try:
        await exporter.serve()
    finally:
        await exporter.stop()
"""


def test_a_callee_whose_cut_loses_only_in_process_closes_is_cut_best_effort(
    in_tmp: Path, capsys
) -> None:
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "server.py", CUT_COSTS)
    found = _findings(capsys, "server.py")
    # a cut of Server.stop() leaves in-process connections open: its file goes in `finally:`
    assert ("GATE101", 31, "warning") in found
    # a cut of Runner.stop() can skip killing the sandbox
    assert ("GATE101", 35, "error") in found
    # a cut of Exporter.stop() can skip removing the file
    assert ("GATE101", 39, "error") in found


SKIP_COSTS = """\
class Bot:
    async def shutdown(self):
        await self._request.shutdown()
        self._poller.stop()


class Server:
    async def shutdown(self):
        await self._exit_stack.aclose()
        self._transport.close()


class Worker:
    async def shutdown(self):
        await self._request.shutdown()
        self._remove_temp()

    def _remove_temp(self):
        shutil.rmtree(self._temp)


async def serve(bot: Bot, server: Server, worker: Worker):
    try:
        await bot.send()
    except Exception:
        await bot.shutdown()
        raise
    try:
        await server.send()
    except Exception:
        await server.shutdown()
        raise
    try:
        await worker.send()
    except Exception:
        await worker.shutdown()
        raise
"""


def test_skipping_a_teardown_method_of_in_process_closes_is_best_effort(
    in_tmp: Path, capsys
) -> None:
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "bot.py", SKIP_COSTS)
    found = _findings(capsys, "bot.py")
    # Bot.shutdown() only stops in-process objects, as its own findings judge them
    assert ("GATE105", 26, "warning") in found
    # Server.shutdown() closes an exit stack, which closes whatever was entered on it
    assert ("GATE105", 31, "error") in found
    # Worker.shutdown()'s _remove_temp() is judged by its body: it removes a directory
    assert ("GATE105", 36, "error") in found


SERVE_FOREVER = """\
import asyncio


async def serve(runner, sites):
    try:
        for site in sites:
            await site.start()
        while True:
            await asyncio.sleep(3600)
    finally:
        await runner.cleanup()


async def serve_until_stopped(runner, stopping):
    try:
        while True:
            if stopping.is_set():
                break
            await asyncio.sleep(1)
    finally:
        await runner.cleanup()
"""


def test_the_finally_of_a_serve_forever_loop_is_entered_by_its_cancel(in_tmp: Path, capsys) -> None:
    write(in_tmp / "server.py", SERVE_FOREVER)
    found = _findings(capsys, "server.py")
    # only an exception (on asyncio, the cancel that stops the server) ends the loop
    assert ("GATE101", 11, "warning") in found
    # a break ends the loop: the finally also runs on the way out without an exception
    assert ("GATE101", 21, "error") in found


AFTER_EXCEPTION = """\
import asyncio


async def start_pty(session, entry):
    try:
        await session.register(entry)
    except Exception:
        session.log("register failed")
        raise
    except BaseException:
        await session.terminate_entry(entry)
        raise


async def start_plain(session, entry):
    try:
        await session.register(entry)
    except BaseException:
        await session.terminate_entry(entry)
        raise
"""


@pytest.mark.parametrize(
    ("imports", "plain"), [("import asyncio", "warning"), ("import json", "error")]
)
def test_a_base_exception_handler_after_one_for_exception_is_entered_by_the_cancel(
    in_tmp: Path, capsys, imports: str, plain: str
) -> None:
    write(in_tmp / "pty.py", AFTER_EXCEPTION.replace("import asyncio", imports))
    found = _findings(capsys, "pty.py")
    # only what is no Exception reaches it: the cancel already landed (not trio/anyio)
    assert ("GATE101", 11, "warning") in found
    # any error enters this one: a cancel can still arrive while it runs, which in a module
    # that imports asyncio is a second cancel or one landing while an error is handled
    assert ("GATE101", 19, plain) in found


def test_a_kill_that_escalates_a_terminate_already_sent_is_a_warning(in_tmp: Path, capsys) -> None:
    write(
        in_tmp / "stop.py",
        "import asyncio\n\n\nasync def stop(process, other):\n    process.terminate()\n"
        "    try:\n        await asyncio.wait_for(process.wait(), timeout=2)\n"
        "    except TimeoutError:\n        process.kill()\n        other.kill()\n",
    )
    found = _findings(capsys, "stop.py")
    assert ("GATE105", 9, "warning") in found  # the terminate already asked it to stop
    assert ("GATE105", 10, "error") in found  # nothing asked this one to stop


MAIN_TASK_WITH_SIGNALS = """\
import asyncio
import signal


def install_handlers(loop, stopping):
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)


async def close_runtime(runtime):
    await runtime.stop_channels()
    runtime.kill_workers()


def main(runtime):
    async def run():
        stopping = asyncio.Event()
        install_handlers(asyncio.get_running_loop(), stopping)
        try:
            await stopping.wait()
        finally:
            await close_runtime(runtime)
            runtime.flush_sessions()

    async def run_plain():
        try:
            await runtime.serve()
        finally:
            await close_runtime(runtime)
            runtime.flush_sessions()

    asyncio.run(run())
    asyncio.run(run_plain())
"""


def test_what_only_a_main_task_that_routes_its_signals_awaits_is_uncancelled(
    in_tmp: Path, capsys
) -> None:
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "pkg" / "gateway.py", MAIN_TASK_WITH_SIGNALS)
    found = _findings(capsys, "--no-cache", "pkg")
    # Ctrl-C sets an event instead of cancelling run(): nothing cancels its task, so no
    # interrupt can skip the flush, and no finding is made in its finally
    assert not [f for f in found if f[1] == 23]
    # run_plain() is cancelled by Ctrl-C, and close_runtime() is awaited from it too
    assert ("GATE100", 30, "error") in found
    assert ("GATE100", 12, "error") in found
    _, out, _ = run(capsys, "check", "--format", "json", "--no-cache", "pkg/gateway.py")
    # checking the file alone: run() is local to main(), its only runner is in the file
    lines = {(f["line"], f["severity"]) for f in json.loads(out)["findings"]}
    assert 30 in {line for line, _ in lines}
    assert not [line for line, _ in lines if line == 23]


def test_what_only_an_uncancelled_main_task_awaits_gets_no_finding(in_tmp: Path, capsys) -> None:
    """close_runtime() awaited only from run(), asyncio.run's main coroutine that routes
    Ctrl-C to an event: nothing cancels the task it runs in, so nothing is reported in it."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    kept = MAIN_TASK_WITH_SIGNALS.split("    async def run_plain")[0]
    text = kept + "    asyncio.run(run())\n"
    write(in_tmp / "pkg" / "gateway.py", text)
    found = _findings(capsys, "--no-cache", "pkg")
    assert not [f for f in found if f[1] in (11, 12, 21, 22, 23)], found


FRAMEWORK_MAIN = """\
import asyncio
import signal


async def serve_with_reload(process, stopping):
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, stopping.set)
    try:
        await stopping.wait()
    finally:
        await process.terminate_group()
        process.kill()


async def run_command(process, stopping):  # a CLI command a framework runs
    await serve_with_reload(process, stopping)


async def run_bounded(process, stopping):
    await asyncio.wait_for(serve_with_reload(process, stopping), 60)
"""


@pytest.mark.parametrize(("bounded", "severity"), [(False, "warning"), (True, "error")])
def test_a_main_coroutine_a_framework_starts_that_routes_its_signals_is_uncancelled(
    in_tmp: Path, capsys, bounded: bool, severity: str
) -> None:
    """fastmcp's `run_with_reload`: it routes SIGINT to an event itself and is awaited only by
    CLI commands that cyclopts runs outside the project; a caller that runs it in another task
    (`wait_for`) can cancel it."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    text = FRAMEWORK_MAIN if bounded else FRAMEWORK_MAIN.split("\n\nasync def run_bounded")[0]
    write(in_tmp / "pkg" / "cli.py", text)
    found = _findings(capsys, "--no-cache", "pkg")
    assert ("GATE101", 11, severity) in found  # the terminate, cut short
    assert ("GATE100", 12, severity) in found  # the kill, skipped


RUN_APP_HOOKS = """\
import asyncio

from aiohttp import web

from pkg.sessions import shutdown as shutdown_sessions


async def stop_workers(app):
    await app["pool"].drain()
    app["pool"].kill_workers()


async def stop_workers_too_early(app):
    await app["pool"].drain()
    app["pool"].kill_workers()


def main():
    app = web.Application()
    app.on_cleanup.append(stop_workers)
    app.on_shutdown.append(shutdown_sessions)
    web.run_app(app)


def build():
    app = web.Application()
    app.on_cleanup.append(stop_workers_too_early)
    return app
"""

SESSIONS = """\
async def shutdown(app):
    sessions = app["sessions"]
    try:
        await sessions.drain()
    finally:
        await sessions.notify_peers()
        sessions.kill()
"""


def test_hooks_that_run_app_runs_after_its_cancel_are_entered_by_it(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "pkg" / "server.py", RUN_APP_HOOKS)
    write(in_tmp / "pkg" / "sessions.py", SESSIONS)
    # a test that runs a hook itself does not say how the application runs it
    write(
        in_tmp / "tests" / "test_server.py",
        "from pkg import server\n\n\n"
        "async def test_stop(app):\n    await server.stop_workers(app)\n",
    )
    found = _findings(capsys, "--no-cache", "pkg", "tests")
    # run_app cancels its main task once, then runs the hooks: a second signal cuts them
    assert ("GATE100", 10, "warning") in found
    # the hooks of an app that this function does not run: who runs them is unknown
    assert ("GATE100", 15, "error") in found
    # registered under another name through an import: still run_app's hook
    assert ("GATE100", 7, "warning") in found


THREAD_LOCK = """\
class ThreadLock:
    \"\"\"Thread safety for sync code, a no-op under `async with`.\"\"\"

    def __enter__(self):
        self.lock.acquire()

    def __exit__(self, *exc_info):
        self.lock.release()

    async def __aenter__(self):
        pass

    async def __aexit__(self, *exc_info):
        pass
"""

POOL = """\
import abc

from pkg.lock import ThreadLock


class AsyncSemaphore(abc.ABC):
    async def release(self):
        pass


class NullSemaphore:
    async def release(self):
        return


class Pool:
    def __init__(self, semaphore: SEMAPHORE):
        self._thread_lock = ThreadLock()
        self._semaphore = semaphore

    @property
    def _connection_semaphore(self) -> SEMAPHORE:
        return self._semaphore

    async def _remove_from_pool(self, connection):
        async with self._thread_lock:
            self._connections.remove(connection)
            await self._connection_semaphore.release()

    async def request(self, connection):
        try:
            return await connection.send()
        except BaseException:
            await self._remove_from_pool(connection)
            raise

    async def drop(self, connection):
        try:
            return await connection.send()
        except BaseException:
            async with self._thread_lock:
                self._connections.remove(connection)
            raise
"""


@pytest.mark.parametrize("semaphore", ["AsyncSemaphore", "NullSemaphore"])
def test_an_async_with_whose_enter_and_exit_never_suspend_is_no_interrupt(
    in_tmp: Path, capsys, semaphore: str
) -> None:
    # judged on real code (httpcore's ThreadLock, a no-op under `async with`): entering it
    # cannot be interrupted, in the project's other modules too
    write(in_tmp / "pkg" / "__init__.py", "")
    write(in_tmp / "pkg" / "lock.py", THREAD_LOCK)
    write(in_tmp / "pkg" / "pool.py", POOL.replace("SEMAPHORE", semaphore))
    found = _findings(capsys, "--no-cache", "pkg/pool.py")
    # the lock is no interrupt point: nothing in the helper or in drop() is skipped
    assert [f for f in found if f[0] == "GATE100" or f[1] > 34] == []
    # what the property's annotation names decides the semaphore's release(): an abstract base
    # class's empty method says nothing of the one that runs, which may suspend and cut the
    # helper short; a concrete class's empty method never suspends. The cut lands at the
    # release inside the helper (28), the error; the caller's await (34) repeats it
    suspends = semaphore == "AsyncSemaphore"
    assert (("GATE101", 28, "error") in found) == suspends
    assert (("GATE101", 34, "warning") in found) == suspends
    assert _findings(capsys, "--no-cache", "pkg") == found


# Judged on real code (fastmcp's fixed lifespan manager, on anyio): a mixin's method, its `self`
# annotated with the server class, takes the server's asyncio.Lock in a finally; no holder keeps
# it across an await, so taking it never suspends and a cancelled scope cannot interrupt it.
SERVER = """\
import asyncio

from pkg.mixin import LifespanMixin


class Server(LifespanMixin):
    def __init__(self):
        self._lifespan_lock: asyncio.Lock = asyncio.Lock()
        self._ref_count = 0
"""

MIXIN = """\
from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from pkg.server import Server


class LifespanMixin:
    async def lifespan(self: Server, stack):
        async with self._lifespan_lock:
            self._ref_count += 1
        try:
            yield
        finally:
            try:
                with anyio.CancelScope(shield=True):
                    await stack.aclose()
            finally:
                async with self._lifespan_lock:
                    self._ref_count -= 1
"""


def test_an_asyncio_lock_no_holder_keeps_across_an_await_never_blocks(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "pkg" / "__init__.py", "")
    write(in_tmp / "pkg" / "server.py", SERVER)
    write(in_tmp / "pkg" / "mixin.py", MIXIN)
    assert _findings(capsys, "--no-cache", "pkg") == []
    assert _findings(capsys, "--no-cache", "pkg/mixin.py") == []
    # a holder elsewhere in the project awaits while it holds the lock: taking it may wait
    write(
        in_tmp / "pkg" / "reload.py",
        "async def reload(server):\n    async with server._lifespan_lock:\n"
        "        await server.restart()\n",
    )
    assert ("GATE104", 22, "warning") in _findings(capsys, "--no-cache", "pkg/mixin.py")
    assert ("GATE104", 22, "warning") in _findings(capsys, "--no-cache", "pkg")


# Judged on real code (openai-agents' MCP server and sandbox session cleanup): an asyncio.Lock
# that only methods named cleanup() take, in two classes, blocks only while another cleanup() of
# the same object holds it, which does the steps a cancel while waiting would skip.
CLEANUP_LOCK = """\
import asyncio


class Server:
    def __init__(self):
        self._cleanup_lock: asyncio.Lock = asyncio.Lock()

    async def cleanup(self):
        async with self._cleanup_lock:
            await self.exit_stack.aclose()
            self._session.kill_process()


class Resources:
    def __init__(self):
        self._cleanup_lock = asyncio.Lock()

    async def cleanup(self):
        async with self._cleanup_lock:
            await self._sandbox.stop()
            self._sandbox.delete_sandbox()
"""


def test_a_lock_only_one_teardown_method_takes_is_no_interrupt(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "pkg" / "__init__.py", "")
    write(in_tmp / "pkg" / "server.py", CLEANUP_LOCK)
    found = _findings(capsys, "--no-cache", "pkg")
    # nothing is skipped by a cancel at the lock: the close at 10, the stop at 20
    assert [f for f in found if f[0] == "GATE100" and f[1] in (10, 20)] == []
    # the awaits in the body are interrupts still: the kill after the exit stack's close
    assert ("GATE100", 11) in {f[:2] for f in found}
    # another method takes the lock too, and holds it across an await: a cancel while waiting
    # for it skips the cleanup, which nobody else is doing
    write(
        in_tmp / "pkg" / "send.py",
        "async def send(server, message):\n    async with server._cleanup_lock:\n"
        "        await server.write(message)\n",
    )
    found = _findings(capsys, "--no-cache", "pkg")
    assert ("GATE100", 10) in {f[:2] for f in found}


SLOTTED_LOCK = """\
import asyncio


class WebhookServer:
    __slots__ = ("_shutdown_lock", "_http_server", "is_running")

    def __init__(self):
        self._shutdown_lock = asyncio.Lock()

    async def shutdown(self):
        async with self._shutdown_lock:
            self._http_server.stop()
            await self._http_server.close_all_connections()
"""


@pytest.mark.parametrize(
    ("extra", "skipped"), [("", False), ("getattr(s, '_shutdown_lock')", True)]
)
def test_a_slots_entry_does_not_take_the_lock_it_declares(
    in_tmp: Path, capsys, extra: str, skipped: bool
) -> None:
    """Judged on real code (python-telegram-bot's WebhookServer, whose `__slots__` names its
    `_shutdown_lock`): the declaration is no use of the lock, so only shutdown() takes it and a
    cancel while waiting for it skips nothing; a string that may hand the lock on still counts."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "pkg" / "__init__.py", "")
    text = SLOTTED_LOCK + (f"\n\ndef peek(s):\n    return {extra}\n" if extra else "")
    write(in_tmp / "pkg" / "server.py", text)
    found = {f[:2] for f in _findings(capsys, "--no-cache", "pkg")}
    assert (("GATE100", 13) in found) is skipped


RUNNER = """\
async def after_run(models):
    try:
        await models.run()
    finally:
        await models.flush_log()
        for model in models:
            await model._cleanup_on_run_end()
"""


@pytest.mark.parametrize(
    ("implementation", "severity"),
    [
        (
            "    async def _cleanup_on_run_end(self):\n        await self._response.aclose()\n",
            "warning",
        ),
        ("    async def _cleanup_on_run_end(self):\n        await self._sandbox.kill()\n", "error"),
    ],
)
def test_a_private_method_on_an_untyped_receiver_costs_what_its_methods_do(
    in_tmp: Path, capsys, implementation: str, severity: str
) -> None:
    """Judged on real code (openai-agents' `model._cleanup_on_run_end()`, a no-op in the base
    model and a websocket close in one model): a private name is the project's own, so the
    methods of that name are all a call of it can run, and skipping it costs what they do. A
    test's fake of the name is no implementation."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "runner.py", RUNNER)
    base = "class Model:\n    async def _cleanup_on_run_end(self):\n        return None\n"
    write(in_tmp / "model.py", base)
    write(in_tmp / "hosted.py", "class Hosted:\n" + implementation)
    write(
        in_tmp / "tests" / "test_fake.py",
        "class Fake:\n    async def _cleanup_on_run_end(self):\n        pass\n",
    )
    found = {(code, line): sev for code, line, sev in _findings(capsys, "--no-cache", ".")}
    assert found[("GATE100", 7)] == severity


LIFECYCLE = """\
async def lifecycle(run, *, finalize):
    try:
        await run.body()
    finally:
        await finalize(run.result)
        run.write_result()


async def record(result):
    result.done = True


async def upload(result):
    await result.upload()


async def main(run):
    await lifecycle(run, finalize=record)
"""


@pytest.mark.parametrize(("other", "reported"), [("record", False), ("upload", True)])
def test_an_awaited_parameter_runs_what_its_callers_pass(
    in_tmp: Path, capsys, other: str, reported: bool
) -> None:
    """Judged on real code (pydantic-ai's `await finalize(result)`, a callback every caller
    passes as an async def that never awaits): awaiting a parameter runs what every place
    that calls the function passes for it; it suspends only when one of those does."""
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(
        in_tmp / "job.py",
        LIFECYCLE + f"\n\nasync def other(run):\n    await lifecycle(run, finalize={other})\n",
    )
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", ".")}
    assert (("GATE100", 6) in found) is reported


HANDLER = """\
{imports}


async def run(job):
    try:
        await job.evaluate()
    except BaseException:
        await job.post_run()
        job.write_result()
        raise
"""


@pytest.mark.parametrize(
    ("imports", "severity"),
    [("import asyncio", "warning"), ("import anyio", "error"), ("import json", "error")],
)
def test_a_handler_entered_by_cancel_or_error_is_a_warning_on_asyncio(
    in_tmp: Path, capsys, imports: str, severity: str
) -> None:
    """Judged on real code (openai-agents' session saves in `except (Exception,
    CancelledError)`): on asyncio such a handler runs because a cancel already landed or an
    error is being handled, so cutting its steps needs a second cancel or one in that window.
    Under trio/anyio a cancelled scope cuts it at once, and a module that imports neither is
    not known to be asyncio."""
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "job.py", HANDLER.format(imports=imports))
    found = {(code, line): sev for code, line, sev in _findings(capsys, "--no-cache", ".")}
    assert found[("GATE100", 9)] == severity


ARGUMENT_AWAIT = """\
import trio


async def run(job, task):
    try:
        await job.evaluate()
    finally:
        await job.upload(await task.result())
"""


def test_an_await_in_a_steps_arguments_does_not_cut_the_step(in_tmp: Path, capsys) -> None:
    """Judged on real code (pydantic-ai's `await _finalize_result(await _wrap_task)`): cut in
    its arguments, the step has nothing to act on yet, so nothing of it is lost there; the
    await is still reported (it is exposed), as a warning, and the step's own await as an
    error."""
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "job.py", ARGUMENT_AWAIT)
    _, out, _ = run(capsys, "check", "--format", "json", "--no-cache", ".")
    found = {(f["message"].split("`")[1], f["severity"]) for f in json.loads(out)["findings"]}
    assert ("await task.result()", "warning") in found
    assert ("await job.upload(await task.result())", "error") in found


MEMORY_STREAMS = """\
import anyio
from anyio.streams.memory import MemoryObjectSendStream


async def serve(job, writer: MemoryObjectSendStream[int]):
    send, receive = {made}
    try:
        await job.run(send)
    finally:
        await send.aclose()
        await receive.aclose()
        await writer.aclose()
        job.write_result()
"""


@pytest.mark.parametrize(
    ("made", "reported"),
    [("anyio.create_memory_object_stream[int](0)", False), ("job.streams()", True)],
)
def test_closing_an_anyio_memory_stream_never_suspends(
    in_tmp: Path, capsys, made: str, reported: bool
) -> None:
    """Judged on real code (MCP's streamable HTTP transports): an anyio memory object stream's
    `aclose()` closes it without a checkpoint, so nothing after it can be skipped there. Known
    by a parameter's annotation or by `create_memory_object_stream`; other streams may
    suspend."""
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "serve.py", MEMORY_STREAMS.format(made=made))
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", ".")}
    assert (("GATE100", 13) in found) is reported


SIGNALS_AND_WAITS = """\
class Worker:
    async def shutdown(self):
        self._stopping.set()
        await {awaited}

    async def __aexit__(self, *exc):
        await self.shutdown()
        self._sandbox.kill()
"""


@pytest.mark.parametrize(
    ("awaited", "cut"), [("self._stopped.wait()", False), ("self._drain_queue()", True)]
)
def test_a_callee_that_signals_then_only_waits_is_not_cut_short(
    in_tmp: Path, capsys, awaited: str, cut: bool
) -> None:
    """Judged on real code (temporal's `Worker.shutdown()`: set an event, then wait for the run
    task to finish shutting down): cutting the wait loses none of the callee's work, which
    another task does; the steps after the await can still be skipped."""
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "worker.py", SIGNALS_AND_WAITS.format(awaited=awaited))
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", ".")}
    assert (("GATE101", 7) in found) is cut
    assert ("GATE100", 8) in found


TORNADO = """\
from tornado import gen


class Batched:
    @gen.coroutine
    def close(self):
        yield self.comm.flush()
        self.comm.abort()


class Client:
    def start(self):
        batched = Batched()
        self.comm = batched

    async def _close(self, job):
        try:
            await job.run()
        finally:
            await self.comm.close()
            self.sandbox.kill()
"""


@pytest.mark.parametrize("tornado", [True, False])
def test_a_tornado_coroutine_runs_on_when_its_waiter_is_cancelled(
    in_tmp: Path, capsys, tornado: bool
) -> None:
    """Judged on real code (dask's `BatchedSend.close`, a `@gen.coroutine`): tornado's IOLoop
    drives it to the end whatever happens to the task awaiting it, so it is not cut short; the
    steps after the await are still skipped. Found through `self.comm = batched` of a local
    made as `Batched()`, in a module with no `async def`. The same close as an `async def` is
    cut short."""
    batched, client = TORNADO.split("class Client")
    if not tornado:
        batched = batched.replace("    @gen.coroutine\n    def close", "    async def close")
        batched = batched.replace("yield self.comm.flush()", "await self.comm.flush()")
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "batched.py", batched)
    write(in_tmp / "client.py", "from batched import Batched\n\n\nclass Client" + client)
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", ".")}
    assert (("GATE101", 13) in found) is not tornado
    assert ("GATE100", 14) in found


MANAGER_THAT_KEEPS_CANCELS = """\
import asyncio
from contextlib import asynccontextmanager, suppress


class Client:
    @asynccontextmanager
    async def _waiting(self):
        with suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._task), 0.1)
        yield
        with suppress({caught}):
            await asyncio.wait_for(self._task, 2)

    async def shutdown(self):
        async with self._waiting():
            pass
        self.sandbox.kill()
        assert self.sandbox.closed()
"""


@pytest.mark.parametrize(
    ("caught", "held"), [("TimeoutError, asyncio.CancelledError", True), ("TimeoutError", False)]
)
def test_an_async_context_manager_that_keeps_every_cancel_holds_it(
    in_tmp: Path, capsys, caught: str, held: bool
) -> None:
    """Judged on real code (dask's `Client._wait_for_handle_report_task`): an
    `@asynccontextmanager` whose awaits all sit in `suppress(CancelledError)` keeps a cancel in
    its enter and exit, so the steps after the `async with` run. `closed()` asks a state, and an
    `assert` takes no step."""
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "client.py", MANAGER_THAT_KEEPS_CANCELS.format(caught=caught))
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", ".")}
    assert (("GATE100", 17) in found) is not held
    assert not any(line == 18 for _, line in found)


@pytest.mark.parametrize(
    ("source", "imports"),
    [
        ("import asyncio\n", True),
        ("import os, asyncio\n", True),
        ("import asyncio.subprocess\n", True),
        ("from asyncio import sleep\n", True),
        ("    import asyncio as aio\n", True),
        ("import asyncio_extras\n", False),
        ("import foo.asyncio\n", False),
        ("# import asyncio\n", False),
        ("import anyio\n", False),
    ],
)
def test_which_modules_import_asyncio(source: str, imports: bool) -> None:
    from gate.analysis.cancellation import imports_asyncio

    assert imports_asyncio(source) is imports


SUPER_CLOSE = """\
class Process:
    async def close(self):
        {body}


class Remote(Process):
    async def close(self):
        try:
            await self.proc.wait()
        finally:
            await super().close()
            self.sandbox.kill()
"""


@pytest.mark.parametrize(
    ("body", "reported"), [("self._closed = True", False), ("await self._flush_logs()", True)]
)
def test_super_calls_resolve_to_the_base_method(
    in_tmp: Path, capsys, body: str, reported: bool
) -> None:
    """Judged on real code (dask's `SSHCluster` and aiohttp's connectors): `await
    super().close()` runs the first project base's `close`; one that never suspends cannot be
    cut short, nor skip what follows it."""
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "remote.py", SUPER_CLOSE.format(body=body))
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", ".")}
    assert (("GATE100", 12) in found) is reported


FACTORIES = {
    # a factory whose `return` makes the class
    "made": "def open_stream(response):\n    stream = Stream(response)\n    return stream\n",
    # a factory whose return annotation names the class
    "annotated": "def open_stream(response) -> Stream:\n    return make(Stream, response)\n",
    # the annotation names an instance of a generic class
    "generic": "def open_stream(response) -> Stream[bytes]:\n    return make(Stream, response)\n",
}
STREAMS = """\
class Stream:
    def __init__(self, response):
        self._response = response

    async def aclose_stream(self):
        self._response.close()


def make(cls, response):
    return cls(response)


{factory}"""
EVENTS = """\
from pkg.streams import open_stream


class Events:
    async def run(self, response):
        self._stream = open_stream(response)
        try:
            await self.dispatch()
        finally:
            await self._stream.aclose_stream()
            self.write_result()
"""


@pytest.mark.parametrize("factory", sorted(FACTORIES))
def test_a_name_a_project_factory_made_holds_the_class_it_returns(
    in_tmp: Path, capsys, factory: str
) -> None:
    write(in_tmp / "pkg" / "__init__.py", "")
    write(in_tmp / "pkg" / "streams.py", STREAMS.format(factory=FACTORIES[factory]))
    write(in_tmp / "pkg" / "events.py", EVENTS)
    # Stream.aclose_stream never suspends: nothing is cut short and nothing after it skipped
    assert [f for f in _findings(capsys, "--no-cache", "pkg") if f[0].startswith("GATE1")] == []
    # a factory the project cannot read says nothing of what its name holds
    write(in_tmp / "pkg" / "streams.py", STREAMS.format(factory="from lib import open_stream\n"))
    found = _findings(capsys, "--no-cache", "pkg")
    assert ("GATE101", 10, "warning") in found and ("GATE100", 11, "error") in found


KEPT_OR_DESTROYED = """\
class Session:
    async def close(self):
        await self._stop_typing()
        self._client.close()
        self._save_state()
        self.kill()
        shutil.rmtree(self._workdir)


async def serve(session):
    try:
        await session.run()
    finally:
        await session.close()
"""


def test_a_teardown_methods_steps_that_keep_data_or_destroy_are_a_loss(
    in_tmp: Path, capsys
) -> None:
    """Judged on real code (nanobot's channels, dask's nanny and cluster): in a teardown method,
    whose steps are best effort unless they name something outside the process, a step whose
    name keeps data or destroys something is a loss whatever it acts on."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "session.py", KEPT_OR_DESTROYED)
    found = {
        (code, line): severity for code, line, severity in _findings(capsys, "--no-cache", ".")
    }
    assert found[("GATE100", 4)] == "warning"  # a client's close: in-process
    assert found[("GATE100", 5)] == "error"  # save
    assert found[("GATE100", 6)] == "error"  # kill
    assert found[("GATE100", 7)] == "error"  # rmtree


EXTENSION_POINT = """\
import abc


class BaseRequest(abc.ABC):
    async def __aenter__(self):
        try:
            await self.initialize()
        except Exception:
            await self.shutdown()
            raise
        return self

    @abc.abstractmethod
    async def initialize(self): ...

    @abc.abstractmethod
    async def shutdown(self): ...
"""

IMPLEMENTATION = """\
from pkg.base import BaseRequest


class HTTPXRequest(BaseRequest):
    async def initialize(self):
        self._client = self._build_client()

    async def shutdown(self):
        self._client.close_pools()
"""


def test_an_extension_point_runs_the_implementations_the_project_ships(
    in_tmp: Path, capsys
) -> None:
    # judged on real code (python-telegram-bot's BaseRequest.__aenter__): the only shipped
    # initialize() never suspends, so no cancel lands in the `try`
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "pkg" / "__init__.py", "")
    write(in_tmp / "pkg" / "base.py", EXTENSION_POINT)
    write(in_tmp / "pkg" / "http.py", IMPLEMENTATION)
    assert _findings(capsys, "--no-cache", "pkg") == []
    # the stubs survive the cache
    assert _findings(capsys, "pkg") == []
    assert _findings(capsys, "pkg") == []
    # a test's fake is no implementation; with one that suspends, the cancel can land there
    write(in_tmp / "tests" / "test_base.py", IMPLEMENTATION.replace("self._client =", "await"))
    assert _findings(capsys, "--no-cache", "pkg", "tests") == []
    write(in_tmp / "pkg" / "remote.py", IMPLEMENTATION.replace("self._client =", "await"))
    assert [f[:2] for f in _findings(capsys, "--no-cache", "pkg")] == [("GATE105", 9)]
    # a run of one file (pre-commit's) reads the implementations too: the sources naming the
    # class, and those naming a class derived from it
    found = _findings(capsys, "--no-cache", "pkg/base.py")
    assert [f[:2] for f in found] == [("GATE105", 9)]
    (in_tmp / "pkg" / "remote.py").unlink()
    assert _findings(capsys, "--no-cache", "pkg/base.py") == []
    write(in_tmp / "pkg" / "retrying.py", RETRYING)
    found = _findings(capsys, "--no-cache", "pkg/base.py")
    assert [f[:2] for f in found] == [("GATE105", 9)]


RUNTIME_SESSIONS = """\
import abc


class Session(abc.ABC):
    @abc.abstractmethod
    async def close(self): ...


class ShellSession(Session):
    async def close(self):
        self._shell.close()


class Runtime:
    def __init__(self):
        self._sessions: dict[str, Session] = {}

    @property
    def sessions(self) -> dict[str, Session]:
        return self._sessions

    async def close(self):
        for session in self.sessions.values():
            await session.close()


class Deployment:
    async def start(self):
        self._runtime = Runtime()

    async def stop(self):
        await self._runtime.close()
        self._container.kill()
"""


def test_a_callee_that_only_awaits_extension_points_that_never_suspend_never_suspends(
    in_tmp: Path, capsys
) -> None:
    """Judged on real code (SWE-ReX's LocalRuntime.close): the loop's items come from a
    property annotated as a container of one class, whose `close()` is abstract and whose only
    shipped implementation never suspends. So no cancel lands in the loop, and none in the
    caller's `await self._runtime.close()` either; with an implementation that suspends, the
    cancel can land in both, and the kill after it can be skipped."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "pkg" / "__init__.py", "")
    write(in_tmp / "pkg" / "runtime.py", RUNTIME_SESSIONS)
    assert _findings(capsys, "--no-cache", "pkg") == []
    remote = "from pkg.runtime import Session\n\n\nclass RemoteSession(Session):\n"
    write(in_tmp / "pkg" / "remote.py", remote + "    async def close(self):\n        await x()\n")
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", "pkg")}
    assert found == {("GATE100", 24), ("GATE101", 24), ("GATE101", 32), ("GATE100", 33)}


REEXPORTED_CONTROLLER = """\
class AgentController:
    async def close(self):
        await self.set_state("stopped")
        self._closed = True

    async def set_state(self, state):
        self._state = state
"""

SESSION_OF_CONTROLLER = """\
from pkg.controller import AgentController


class AgentSession:
    controller: AgentController | None = None

    async def close(self):
        if self.controller is not None:
            await self.controller.close()
        self._sandbox.kill()
"""


def test_a_class_a_package_re_exports_is_the_class_it_imports(in_tmp: Path, capsys) -> None:
    """Judged on real code (OpenHands' `from openhands.controller import AgentController`,
    which the package's `__init__.py` re-exports from `.agent_controller`): the attribute's
    class is found through the re-export, and its close() never suspends, so no cancel lands
    in the teardown method before the kill; with an await that suspends, one can."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "pkg" / "__init__.py", "")
    write(
        in_tmp / "pkg" / "controller" / "__init__.py",
        "from .agent_controller import AgentController\n\n__all__ = ['AgentController']\n",
    )
    write(in_tmp / "pkg" / "controller" / "agent_controller.py", REEXPORTED_CONTROLLER)
    write(in_tmp / "pkg" / "session.py", SESSION_OF_CONTROLLER)
    assert _findings(capsys, "--no-cache", "pkg") == []
    suspending = REEXPORTED_CONTROLLER.replace("self._state = state", "await self._bus.put(state)")
    write(in_tmp / "pkg" / "controller" / "agent_controller.py", suspending)
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", "pkg")}
    assert found == {("GATE101", 9), ("GATE100", 10)}


RETRYING = """\
from pkg.http import HTTPXRequest


class RetryingRequest(HTTPXRequest):
    async def initialize(self):
        await self._connect()
"""


FLAGGED = """\
class Updater:
    async def __aenter__(self):
        try:
            await self.initialize()
        except Exception:
            await self.shutdown()
            raise
        return self

    async def initialize(self):
        if self._initialized:
            return
        await self.bot.initialize()
        for handler in self.handlers:
            if handler.persistent:
                self._initialized = True
                return
        await self.persistence.load()
        self._initialized = True

    async def shutdown(self):
        if self.running:
            raise RuntimeError("still running")
        if not self._initialized:
            log.debug("already shut down")
            return
        self.bot.close_pools()
"""


@pytest.mark.parametrize(
    ("old", "new", "reported"),
    [
        ("", "", False),
        # set in a loop whose next iteration awaits
        ("                return\n        await", "                continue\n        await", True),
        # set, then an await after it
        (
            "        self._initialized = True\n\n",
            "        self._initialized = True\n        await self.bot.get_me()\n\n",
            True,
        ),
        # no opening guard: a second call suspends with the flag already set
        ("        if self._initialized:\n            return\n", "", True),
        # shutdown() does its work without that flag
        ("        if not self._initialized:", "        if not self._started:", True),
    ],
)
def test_a_shutdown_that_needs_the_flag_initialize_sets_last_has_nothing_to_undo(
    in_tmp: Path, capsys, old: str, new: str, reported: bool
) -> None:
    # judged on real code (python-telegram-bot's Application and Updater): a cancel inside
    # initialize() lands before the flag is set, and shutdown() then returns at once
    assert old in FLAGGED
    write(in_tmp / "updater.py", FLAGGED.replace(old, new) if old else FLAGGED)
    found = _findings(capsys, "--no-cache", "updater.py")
    assert any(f[:2] == ("GATE105", 6) for f in found) is reported


LOOPED = """\
class Site:
    async def stop(self):
        self._server.close()


class Runner:
    def __init__(self, sites: list[Site] | None = None):
        self._sites: list[Site] = list(sites or ())
        self._named: dict[str, Site] = {}
        self._others = []

    async def cleanup(self, extra: tuple[Site, ...] = ()):
        for site in list(self._sites):
            await site.stop()
        for _, site in enumerate(extra):
            await site.stop()
        for site in self._named.values():
            await site.stop()
        for key, site in sorted(self._named.items()):
            await site.stop()
        for OTHER in self._others:
            await OTHER.stop()
        self._save_state()
"""


def test_a_loop_over_a_container_of_one_class_binds_that_class(in_tmp: Path, capsys) -> None:
    # judged on real code (aiohttp's BaseRunner.cleanup: `self._sites: list[BaseSite]`):
    # BaseSite.stop never suspends, so no cancel lands in the loops
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "runner.py", LOOPED.replace("OTHER", "other"))
    assert [f[:2] for f in _findings(capsys, "--no-cache", "runner.py")] == [
        ("GATE100", 22),
        ("GATE101", 22),
        ("GATE100", 23),
    ]
    # a name another loop binds to what gate does not know holds nothing known
    write(in_tmp / "runner.py", LOOPED.replace("OTHER", "site"))
    found = {f[:2] for f in _findings(capsys, "--no-cache", "runner.py")}
    assert {("GATE101", 14), ("GATE101", 16), ("GATE101", 22), ("GATE100", 23)} <= found


CANCEL_TEST_AND_COUNT = """\
import asyncio


class Worker:
    async def run_job(self, job):
        try:
            await job.run()
        except Exception as error:
            if isinstance(error, asyncio.CancelledError):
                self.requeue(job)

    async def launch(self, job):
        self._waiting += 1
        proc = await self._idle.get()
        self._waiting -= 1
        return proc
"""


def test_a_dead_cancel_branch_and_a_count_left_raised_say_so(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "worker.py", CANCEL_TEST_AND_COUNT)
    code, out, err = run(capsys, "check", "--no-cache", "--format", "json", "worker.py")
    assert code == 1, err
    found = {(f["code"], f["line"]): f["message"] for f in json.loads(out)["findings"]}
    assert found[("GATE102", 8)] == (
        "this except clause tests the error for cancellation (line 9) but does not catch it: "
        "a CancelledError is a BaseException, so a cancel at line 7 (`await job.run()`) never "
        "reaches that branch"
    )
    assert found[("GATE107", 15)] == (
        "`self._waiting -= 1` runs only on the normal path: a cancel at line 14 "
        "(`await self._idle.get()`) leaves the function before it, and no finally block undoes "
        "line 13's change"
    )


ENTERED_BY_HAND = """\
from contextlib import AsyncExitStack


class Server:
    async def start(self):
        await self._portal.__aenter__()
        await self._thread_start()

    async def __aenter__(self):
        self._exit_stack = AsyncExitStack()
        await self._exit_stack.__aenter__()
        await self._session.initialize()
        return self


class Client:
    def __init__(self):
        self._resources = AsyncExitStack()

    async def open(self):
        await self._resources.__aenter__()
        await self._session.initialize()
"""


def test_a_context_entered_by_hand_says_where_the_cancel_lands(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "server.py", ENTERED_BY_HAND)
    code, out, err = run(capsys, "check", "--no-cache", "--format", "json", "server.py")
    assert code == 1, err
    found = {
        (f["code"], f["line"]): (f["severity"], f["message"])
        for f in json.loads(out)["findings"]
        if f["code"] == "GATE108"
    }
    # a portal is a warning; an exit stack, named as one, an error
    assert found == {
        ("GATE108", 6): (
            "warning",
            "`self._portal` is entered by hand and a cancel at line 7 "
            "(`await self._thread_start()`) leaves the function with it entered: nothing here "
            "exits it on that path, and its owner's exit never runs",
        ),
        ("GATE108", 11): (
            "error",
            "`self._exit_stack` is entered by hand and a cancel at line 12 "
            "(`await self._session.initialize()`) leaves the function with it entered: nothing "
            "here exits it on that path, and its owner's exit never runs",
        ),
        # an exit stack by what was assigned to it, whatever its name
        ("GATE108", 21): (
            "error",
            "`self._resources` is entered by hand and a cancel at line 22 "
            "(`await self._session.initialize()`) leaves the function with it entered: nothing "
            "here exits it on that path, and its owner's exit never runs",
        ),
    }


RAISED_FIRST = """\
import asyncio


class Manager:
    async def connect(self, server):
        try:
            await server.connect()
        except asyncio.CancelledError as exc:
            if not self.suppress:
                raise
            self._record_failure(server, exc)
            self._notify(server)
        except BaseException as exc:
            self._record_failure(server, exc)
            raise
"""


def test_a_cancel_handler_that_re_raises_before_the_bookkeeping(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    write(in_tmp / "manager.py", RAISED_FIRST)
    code, out, err = run(capsys, "check", "--no-cache", "--format", "json", "manager.py")
    assert code == 1, err
    found = [f for f in json.loads(out)["findings"] if f["code"] == "GATE105"]
    # only the step the other handler takes before re-raising; `_notify` is the suppress path's
    assert [(f["line"], f["severity"]) for f in found] == [(11, "error")]
    assert found[0]["message"] == (
        "`self._record_failure()` runs in the cancellation handler only when it does not "
        "re-raise: a cancel at line 7 (`await server.connect()`) that takes the raise at line 9 "
        "skips it, though another handler of this `try` runs it before re-raising"
    )
    assert [r["line"] for r in found[0]["related"]] == [7, 9]


ALIASED_GUARD = """\
import asyncio

GUARDED = {value}


class Runner:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                await self.post_commands()
            except GUARDED as error:
                interrupt = error
            self.write_result()
            if interrupt is not None:
                raise interrupt
"""


def test_a_changed_exception_constant_is_read_again_from_the_cache(in_tmp: Path, capsys) -> None:
    """psycopg_pool's `except CLIENT_EXCEPTIONS:`: a module constant naming exception classes is
    read for what it holds, and an edit of the constant alone (outside every function) is not
    answered from the cached teardown findings of the old text."""
    write(in_tmp / "pyproject.toml", "[tool.gate]\n")
    target = in_tmp / "runner.py"
    write(target, ALIASED_GUARD.format(value="(Exception, asyncio.CancelledError)"))
    assert ("GATE102", 13) not in {(c, line) for c, line, _ in _findings(capsys, ".")}
    write(target, ALIASED_GUARD.format(value="(OSError, TimeoutError)"))
    assert ("GATE102", 13) in {(c, line) for c, line, _ in _findings(capsys, ".")}


COMMENTED_WITH = """\
import anyio


class Client:
    async def _disconnect(self):
        # only one session at a time
        async with self._lock:
            self._stop.set()
        self._sandbox.kill()

    async def close(self):
        await self._disconnect()
"""


def test_an_interrupt_at_an_async_with_is_quoted_by_its_code_not_the_comment_above(
    in_tmp: Path, capsys
) -> None:
    """fastmcp's `Client._disconnect`: the comment line above an `async with` was quoted as the
    interrupt point."""
    write(in_tmp / "client.py", COMMENTED_WITH)
    code, out, _ = run(capsys, "check", "--no-cache", "client.py")
    assert code == 1
    assert "at line 7 (`async with self._lock:`)" in out
    assert "one session" not in out


RETURNING_BRANCH = """\
import asyncio


class Pool:
    async def close_all(self):
        if self._dead:
            await self._drain()
            return
        self._proc.kill()
        await self._done.wait()

    async def run(self):
        try:
            await self.serve()
        finally:
            await self.close_all()
            self.write_result()
"""


def test_a_suspension_in_a_branch_that_returns_precedes_nothing_after_it(
    in_tmp: Path, capsys
) -> None:
    """nats' `Client.flush()`: `if dead: await self._flush_pending(); return` exposes nothing
    to the code after the `if`, so the kill after it is no step a cut loses: close_all() only
    waits once it has killed."""
    write(in_tmp / "pool.py", RETURNING_BRANCH)
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", "pool.py")}
    assert ("GATE101", 16) not in found
    assert ("GATE100", 17) in found  # close_all() is still an interrupt point for what follows


TIMEOUT_PATH_STEP = """\
import asyncio


class Waiter:
    async def stop_waiting(self, future):
        try:
            await asyncio.wait_for(future, 5)
        except TimeoutError:
            future.cancel()

    async def run(self, future):
        try:
            await self.serve()
        finally:
            await self.stop_waiting(future)
            self.write_result()
"""


def test_a_best_effort_step_on_a_timeout_path_is_not_cut_by_a_cancel(in_tmp: Path, capsys) -> None:
    """nats' `Client.flush()`: `except TimeoutError: future.cancel()` runs only on a timeout,
    and is best effort: a cancel of the wait loses nothing the callee does on the cancel's
    path, so the callee only waits."""
    write(in_tmp / "waiter.py", TIMEOUT_PATH_STEP)
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", "waiter.py")}
    assert ("GATE101", 15) not in found
    assert ("GATE100", 16) in found


ONE_INTERRUPT = """\
async def run(job):
    try:
        await job.evaluate()
    finally:
        try:
            await job.unmount_volume()
        except Exception:
            pass
        job.kill_sandbox()
        await job.flush_log()
        job.write_result()
"""


def test_one_error_per_interrupt(in_tmp: Path, capsys) -> None:
    # the cancel at line 6 slips past the handler (GATE102, 7) and skips three steps (GATE100,
    # 9-11); the await at line 10 is cut short (GATE101) and skips the write too: two interrupt
    # points, two errors, each chosen where it names the fewest interrupt points
    write(in_tmp / "job.py", ONE_INTERRUPT)
    code, out, err = run(capsys, "check", "--format", "json", "--no-cache", "job.py")
    assert code == 1, err
    found = {(f["code"], f["line"]): f for f in json.loads(out)["findings"]}
    severities = {key: finding["severity"] for key, finding in found.items()}
    assert severities == {
        ("GATE102", 7): "warning",
        ("GATE100", 9): "error",
        ("GATE100", 10): "warning",
        ("GATE101", 10): "error",
        ("GATE100", 11): "warning",
    }
    repeated = [
        (r["line"], r["message"])
        for r in found[("GATE100", 11)]["related"]
        if r["message"] == "the error for this interrupt"
    ]
    assert repeated == [(9, "the error for this interrupt"), (10, "the error for this interrupt")]


HELPER_INTERRUPTS = """\
class Sandbox:
    async def __aexit__(self, *exc_info):
        await self.kill()
        self.write_result()

    async def kill(self):
        async with self._lock:
            await self._api.delete_sandbox(self.id)
"""


def test_one_error_per_interrupt_follows_helpers(in_tmp: Path, capsys) -> None:
    # e2b's and psycopg's `__aexit__`: `await self.kill()` (3) is cut short exactly where a
    # cancel lands in kill(): at the lock (7, which skips the delete: GATE100 at 8) or in the
    # delete (GATE101 at 8). Those two are the errors; the caller's await and the write it
    # skips repeat them, and name them
    write(in_tmp / "sandbox.py", HELPER_INTERRUPTS)
    code, out, err = run(capsys, "check", "--format", "json", "--no-cache", "sandbox.py")
    assert code == 1, err
    found = {(f["code"], f["line"]): f for f in json.loads(out)["findings"]}
    severities = {key: finding["severity"] for key, finding in found.items()}
    assert severities == {
        ("GATE101", 3): "warning",
        ("GATE100", 4): "warning",
        ("GATE100", 8): "error",
        ("GATE101", 8): "error",
    }
    repeated = {
        r["line"] for r in found[("GATE101", 3)]["related"] if r["message"].startswith("the error")
    }
    assert repeated == {8}


def test_repeats_can_stay_errors(in_tmp: Path, capsys) -> None:
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "job.py", ONE_INTERRUPT)
    found = _findings(capsys, "--no-cache", "job.py")
    assert len(found) == 5 and {severity for _, _, severity in found} == {"error"}


GENERIC_LIMITER = """\
import abc
from typing import Generic, TypeVar

T = TypeVar("T")


class BaseLimiter(abc.ABC, Generic[T]):
    @abc.abstractmethod
    async def shutdown(self): ...


class LocalLimiter(BaseLimiter[int]):
    async def shutdown(self):
        self._buckets.clear()
"""

LIMITED_BOT = """\
from typing import Optional, Union

from pkg.limiter import BaseLimiter


class Bot:
    def __init__(self, limiter: "Optional[BaseLimiter[int]]", other: Union[BaseLimiter, None]):
        self._limiter = limiter
        self._other = other

    @property
    def limiter(self) -> "BaseLimiter[int] | None":
        return self._limiter

    async def shutdown(self):
        await self.limiter.shutdown()
        await self._limiter.shutdown()
        await self._other.shutdown()
        self._process.kill()
"""


@pytest.mark.parametrize("base", ["BaseLimiter[int]", "BaseLimiter"])
def test_annotations_as_strings_and_generic_bases_name_their_class(
    in_tmp: Path, capsys, base: str
) -> None:
    """Judged on real code (python-telegram-bot's `rate_limiter` property, annotated
    `"BaseRateLimiter[RLARGS] | None"`, and `class AIORateLimiter(BaseRateLimiter[int])`): a
    forward reference, `Optional[...]`, `Union[..., None]` and a generic's subscript name the
    class, and a class derived from a subscripted generic is an implementation of it. The one
    shipped shutdown never suspends, so no cancel lands before the kill; once it does, one can."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "pkg" / "__init__.py", "")
    write(in_tmp / "pkg" / "limiter.py", GENERIC_LIMITER.replace("BaseLimiter[int])", f"{base})"))
    write(in_tmp / "pkg" / "bot.py", LIMITED_BOT)
    assert _findings(capsys, "--no-cache", "pkg") == []
    suspending = GENERIC_LIMITER.replace("self._buckets.clear()", "await self._flush()")
    write(in_tmp / "pkg" / "limiter.py", suspending)
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", "pkg")}
    assert ("GATE100", 19) in found


STREAMS_BY_REQUEST = """\
import asyncio

from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream


class Site:
    async def stop(self):
        self._listening = False


class Transport:
    def __init__(self):
        self._streams: dict[
            str, tuple[MemoryObjectSendStream[bytes], MemoryObjectReceiveStream[bytes]]
        ] = {}
        self._sites: list[Site] = []

    async def _drop_streams(self, request_id):
        await self._streams[request_id][0].aclose()
        await self._streams[request_id][1].aclose()

    async def close(self):
        await self._drop_streams("get")
        await self._sites[0].stop()
        self._process.kill()
"""


@pytest.mark.parametrize(
    ("change", "line"),
    [(None, None), ("[request_id][1].aclose()", 25), ("self._listening = False", 25)],
)
def test_an_item_of_an_annotated_container_is_of_its_class(
    in_tmp: Path, capsys, change: str | None, line: int | None
) -> None:
    """Judged on real code (mcp's StreamableHTTPServerTransport: `self._request_streams[id][0]
    .aclose()` on a `dict[RequestId, tuple[MemoryObjectSendStream[...], ...]]`): a subscript
    of a container annotated with one class, or with tuples of classes, is of that class, so
    the memory streams' aclose() and the site's stop() never suspend and nothing is skipped
    before the kill. With a receive end gate cannot type, or a stop that suspends, it is."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    text = STREAMS_BY_REQUEST
    if change == "[request_id][1].aclose()":
        text = text.replace("[request_id][1].aclose()", "[request_id][2].aclose()")
    elif change is not None:
        text = text.replace(change, "await asyncio.sleep(1)")
    write(in_tmp / "pkg" / "transport.py", text)
    found = {(code, found_line) for code, found_line, _ in _findings(capsys, "--no-cache", "pkg")}
    if line is None:
        assert found == set()
    else:
        assert ("GATE100", line) in found


BASE_SESSION = """\
class BaseSession:
    async def stop(self):
        await self._persist_snapshot()
        self._container.kill()
"""

DELEGATING_SESSIONS = """\
from pkg.base import BaseSession


class GuardedSession(BaseSession):
    async def stop(self):
        if self._closed:
            return
        await super().stop()


class WrappedSession:
    def __init__(self, inner: BaseSession):
        self._inner = inner

    async def stop(self):
        await self._inner.stop()

    async def close(self):
        await self._inner.flush()
"""


def test_a_teardown_method_that_only_awaits_a_project_teardown_method_delegates(
    in_tmp: Path, capsys
) -> None:
    """Judged on real code (openai-agents' `BlaxelSandboxSession.stop`, only `await
    super().stop()`, and `SandboxSession.stop`, only `await self._inner.stop()`): the
    awaited method, of a base class or of a wrapped object in another module, is a region of
    its own, where the cut is reported; a guard that returns early changes nothing. An await of
    a method of another name (`flush`) is still reported where it is awaited."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "pkg" / "__init__.py", "")
    write(in_tmp / "pkg" / "base.py", BASE_SESSION)
    write(in_tmp / "pkg" / "sessions.py", DELEGATING_SESSIONS)
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", "pkg")}
    assert ("GATE101", 3) in found  # in the base's stop, which does the work
    assert ("GATE100", 4) in found
    assert ("GATE101", 8) not in found
    assert ("GATE101", 16) not in found
    assert ("GATE101", 19) in found


FLAGGED_WAIT = """\
import asyncio


class Connection:
    async def disconnect(self, nowait=False):
        self._writer.close()
        async with asyncio.timeout(5):
            if not nowait:
                await self._writer.wait_closed()
        self._writer = None

    async def send(self, data):
        try:
            await self._writer.drain()
        except BaseException:
            await self.disconnect(nowait=True)
            self._pool.release_connection(self)
            raise

    async def close(self):
        await self.disconnect(nowait=False)
        self._pool.release_connection(self)
"""


def test_a_call_that_passes_a_flag_that_skips_the_callees_waits_never_suspends(
    in_tmp: Path, capsys
) -> None:
    """Judged on real code (redis-py's `disconnect(nowait=True)`, whose only suspension apart
    from `asyncio.timeout()`'s enter and exit is `if not nowait: await wait_closed()`): the
    call never suspends, so nothing is cut and nothing after it can be skipped; passing
    `nowait=False` leaves the wait, and the release after it can be skipped."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "pkg" / "connection.py", FLAGGED_WAIT)
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", "pkg")}
    assert not {line for _, line in found} & {16, 17}, found
    assert ("GATE100", 22) in found


BOUND_CONNECTION = """\
from typing import TypeVar

CT = TypeVar("CT", bound="Connection")


class Connection:
    async def close(self):
        self._closed = True
"""

POOL_OF_BOUND = """\
from .abc import CT


class Pool:
    async def close(self, conn: CT):
        await conn.close()
        self._process.kill()
"""


@pytest.mark.parametrize("bound", ['bound="Connection"', "bound=Connection", None])
def test_a_type_variable_names_its_bound(in_tmp: Path, capsys, bound: str | None) -> None:
    """Judged on real code (psycopg_pool's `conn: ACT`, `ACT = TypeVar("ACT",
    bound="AsyncConnection[Any]")` in another module): a parameter annotated with a type
    variable is of its bound's class, whose close never suspends, so no cancel lands before the
    kill. A type variable without a bound names no class."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "pkg" / "__init__.py", "")
    declared = (
        BOUND_CONNECTION.replace('bound="Connection"', bound)
        if bound
        else (BOUND_CONNECTION.replace(', bound="Connection"', ""))
    )
    write(in_tmp / "pkg" / "abc.py", declared)
    write(in_tmp / "pkg" / "pool.py", POOL_OF_BOUND)
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", "pkg")}
    assert (("GATE100", 7) in found) is (bound is None)


def test_a_type_variable_of_a_module_without_classes_names_its_bound(in_tmp: Path, capsys) -> None:
    """The module declaring the type variable imports the bound's class and defines none (it
    is summarised for its imports alone, as psycopg_pool's `abc.py` is)."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "pkg" / "__init__.py", "")
    write(in_tmp / "pkg" / "conn.py", BOUND_CONNECTION.split("\n\n\n")[1])
    declared = (
        "from typing import TypeVar\n\nfrom .conn import Connection\n\n"
        'CT = TypeVar("CT", bound="Connection")\n'
    )
    write(in_tmp / "pkg" / "abc.py", declared)
    write(in_tmp / "pkg" / "pool.py", POOL_OF_BOUND)
    assert _findings(capsys, "--no-cache", "pkg") == []


CLOSURE_OF_A_METHOD = """\
import asyncio


class Transport:
    async def _drop(self):
        self._streams.clear()

    async def serve(self, events, tasks):
        async def writer({own}):
            try:
                await events.get()
            finally:
                await self._drop()
                self._process.kill()

        tasks.append(asyncio.ensure_future(writer({passed})))
"""


@pytest.mark.parametrize(("own", "passed", "skippable"), [("", "", False), ("self", "0", True)])
def test_a_local_function_sees_its_methods_self_unless_it_binds_its_own(
    in_tmp: Path, capsys, own: str, passed: str, skippable: bool
) -> None:
    """Judged on real code (mcp's standalone SSE writer, local to a method): `self._drop()` in a
    function local to a method runs the class's `_drop`, which never suspends, so nothing skips
    the kill. A local function with a `self` parameter of its own is passed something else,
    which gate does not know."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "mod.py", CLOSURE_OF_A_METHOD.format(own=own, passed=passed))
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", "mod.py")}
    assert (("GATE100", 14) in found) is skippable


AWAITED_CLOSURE = """\
class Transport:
    async def _drop(self):
        self._streams.clear()

    async def close(self):
        async def drop_all({own}):
            await self._drop()

        await drop_all({passed})
        self._process.kill()
"""


@pytest.mark.parametrize(("own", "passed", "skippable"), [("", "", False), ("self", "0", True)])
def test_an_awaited_local_function_is_summarised_with_its_methods_self(
    in_tmp: Path, capsys, own: str, passed: str, skippable: bool
) -> None:
    """The summary of a function local to a method resolves its `self.x()` in the method's
    class as the walker does: `drop_all()` awaits only `_drop`, which never suspends, so the
    kill after it cannot be skipped."""
    write(in_tmp / "pyproject.toml", TIERS_ALONE)
    write(in_tmp / "mod.py", AWAITED_CLOSURE.format(own=own, passed=passed))
    found = {(code, line) for code, line, _ in _findings(capsys, "--no-cache", "mod.py")}
    assert (("GATE100", 10) in found) is skippable
