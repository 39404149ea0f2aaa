"""A small evaluation orchestrator with the teardown bug gate exists to catch.

`run()` evaluates a task, then in its `finally:` runs post-run commands, removes the sandbox's temp
dir and writes `task.json`. A watchdog's cancel that lands in `_run_post_commands()` or in
`_cleanup()` skips the rest: the temp dir leaks and the result row is never written.
`run_fixed()` is the same teardown written to hold the interrupt and re-raise it.
`gate check examples/` finds the bug statically; `gate seams examples/scenario.py:buggy --check
examples/scenario.py:check` shows it at run time.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import time
from pathlib import Path


class Sandbox:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.temp: Path | None = None

    async def start(self) -> None:
        await asyncio.sleep(0)
        self.temp = Path(tempfile.mkdtemp(dir=self.root, prefix="sandbox-"))

    async def run_command(self, command: str) -> str:
        await asyncio.sleep(0)
        return f"ran {command}"

    async def stop(self) -> None:
        try:
            await asyncio.sleep(0)  # stands in for stopping the sandbox's processes
        finally:
            self._remove_temp()

    def _remove_temp(self) -> None:
        if self.temp is not None:
            shutil.rmtree(self.temp, ignore_errors=True)
            self.temp = None


class Orchestrator:
    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self.sandbox = Sandbox(self.run_dir)
        self.result: dict[str, object] = {"status": "started"}

    async def run(self) -> None:
        started = time.monotonic()
        try:
            await self.sandbox.start()
            self.result["output"] = await self.sandbox.run_command("evaluate")
            self.result["status"] = self._classify(str(self.result["output"]))
        finally:
            self._refresh_tool_versions()
            await self._run_post_commands()
            await self._cleanup()
            self._finalize_result(started)

    async def run_fixed(self) -> None:
        started = time.monotonic()
        try:
            await self.sandbox.start()
            self.result["output"] = await self.sandbox.run_command("evaluate")
            self.result["status"] = "done"
        finally:
            interrupt: BaseException | None = None
            self._refresh_tool_versions()
            try:
                await self._run_post_commands()
            except BaseException as error:  # a cancel, or a failing command
                interrupt = error
            try:
                await self._cleanup()
            except BaseException as error:
                interrupt = interrupt or error
            self._finalize_result(started)
            if interrupt is not None:
                raise interrupt

    def _classify(self, output: str) -> str:
        """Grew one branch per incident; the complexity ratchet flags it (GATE200)."""
        if not output:
            return "empty"
        if "timeout" in output:
            return "timeout"
        if "oom" in output or "killed" in output:
            return "oom"
        if "refused" in output:
            return "network"
        if "denied" in output:
            return "permissions"
        if "assert" in output:
            return "test-failure"
        if "syntax" in output:
            return "syntax"
        if output.startswith("ran"):
            return "ok"
        return "unknown" if len(output) < 80 else "unknown-long"

    def _refresh_tool_versions(self) -> None:
        self.result["tools"] = {"python": "3"}

    async def _run_post_commands(self) -> None:
        self.result["post"] = await self.sandbox.run_command("post-run")

    async def _cleanup(self) -> None:
        # stop() removes the temp dir in its own finally, so a cut-short stop still cleans up.
        await self.sandbox.stop()  # noqa: GATE101

    def _finalize_result(self, started: float) -> None:
        self.result["seconds"] = round(time.monotonic() - started, 3)
        (self.run_dir / "task.json").write_text(json.dumps(self.result))


async def main() -> None:
    run_dir = Path(tempfile.mkdtemp())
    await Orchestrator(run_dir).run()
    print((run_dir / "task.json").read_text())


if __name__ == "__main__":
    asyncio.run(main())
