"""Property tests: whatever valid Python comes in, gate reports and never crashes."""

from __future__ import annotations

from pathlib import Path

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gate.config import GateConfig
from gate.discovery import SourceFile
from gate.filecheck import check_file
from gate.model import Family

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def check_source(tmp_path: Path, source: str) -> list:
    path = tmp_path / "generated.py"
    path.write_text(source, encoding="utf-8")
    return check_file(SourceFile(path, "generated.py"), GateConfig()).all_findings


@SETTINGS
@given(source=hypothesmith.from_grammar())
def test_grammar_generated_code_never_crashes(tmp_path_factory, source: str) -> None:
    findings = check_source(tmp_path_factory.mktemp("g"), "async def _f(): pass\n" + source)
    assert all(f.location.line >= 1 and f.location.column >= 1 for f in findings)


@SETTINGS
@given(source=hypothesmith.from_node())
def test_node_generated_code_never_crashes(tmp_path_factory, source: str) -> None:
    findings = check_source(tmp_path_factory.mktemp("n"), source)
    assert all(f.location.line >= 1 for f in findings)


# Teardown-shaped code: random nesting of the constructs the analysis cares about.
SIMPLE = st.sampled_from(
    [
        "await self.notify()",
        "await self.cleanup()",
        "self.write_result()",
        "await asyncio.shield(self.close())",
        "x = await self.fetch()",
        "self.log('x')",
        "interrupt = None",
        "raise",
        "pass",
    ]
)


def _block(children: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    def indent(lines: list[str]) -> list[str]:
        return ["    " + line for line in lines] or ["    pass"]

    def wrap(kind: str, body: list[str], other: list[str]) -> list[str]:
        if kind == "try-finally":
            return ["try:", *indent(body), "finally:", *indent(other)]
        if kind == "try-cancel":
            return ["try:", *indent(body), "except asyncio.CancelledError as e:", *indent(other)]
        if kind == "try-exception":
            return ["try:", *indent(body), "except Exception:", *indent(other)]
        if kind == "if":
            return ["if x:", *indent(body), "else:", *indent(other)]
        if kind == "for":
            return ["for c in cs:", *indent(body)]
        if kind == "async-for":
            return ["async for c in cs:", *indent(body)]
        if kind == "async-with":
            return ["async with lock:", *indent(body)]
        if kind == "suppress":
            return ["with contextlib.suppress(asyncio.CancelledError):", *indent(body)]
        if kind == "shield":
            return ["with trio.move_on_after(1, shield=True):", *indent(body)]
        return ["async def inner():", *indent(body)]

    kinds = st.sampled_from(
        [
            "try-finally",
            "try-cancel",
            "try-exception",
            "if",
            "for",
            "async-for",
            "async-with",
            "suppress",
            "shield",
            "def",
        ]
    )
    return st.builds(wrap, kinds, children, children)


def _flatten(groups: list[list[str]]) -> list[str]:
    return [line for group in groups for line in group]


STATEMENTS = st.recursive(
    st.lists(SIMPLE.map(lambda s: [s]), min_size=1, max_size=4).map(_flatten),
    lambda children: st.lists(_block(children), min_size=1, max_size=3).map(_flatten),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(body=STATEMENTS, trio=st.booleans())
def test_teardown_shaped_code_never_crashes(tmp_path_factory, body: list[str], trio: bool) -> None:
    header = "import asyncio, contextlib\n" + ("import trio\n" if trio else "")
    lines = ["class C:", "    async def run(self):", "        try:", "            await self.go()"]
    lines += ["        finally:", *("            " + line for line in body)]
    source = header + "\n".join(lines) + "\n"
    compile(source, "generated.py", "exec")
    findings = check_source(tmp_path_factory.mktemp("t"), source)
    for finding in findings:
        assert finding.family is Family.TEARDOWN, finding
        assert 1 <= finding.location.line <= len(source.splitlines())
