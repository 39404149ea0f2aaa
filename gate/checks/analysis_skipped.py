"""# GATE902 analysis-skipped

## What it does
Warns when Python parses a file but libcst, the parser the teardown rules run on, rejects an async
function that can hold a teardown region (libcst is handed only those functions). The file's
teardown code was not checked; its complexity still was. Also warns when the Python that runs
gate cannot parse a file that libcst's newer grammar accepts (a 3.12 f-string checked on 3.11):
the file is valid in a newer Python, and none of gate's rules checked it.

## Why is this bad?
It is not a bug in your code: libcst does not accept every valid program (a parenthesized
annotated target such as `(x): int = 1` is one known case). It is reported so that a file does not
silently escape the teardown rules. Code newer than the Python running gate is checked by running
gate on that Python.

## Example
```python
async def run(job):
    (total): int = 0
    try:
        await job.run()
    finally:
        job.cleanup(total)
```

## Use instead
```python
async def run(job):
    total: int = 0
    try:
        await job.run()
    finally:
        job.cleanup(total)
```

## Known problems
This is a warning: it does not change the exit code.

## Options
None.
"""

from __future__ import annotations

import sys

from gate.model import Family, Finding, Location, Severity
from gate.rule import Rule


def finding(path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    """The warning that part of a file was not analysed, and why (`message`)."""
    return RULE.finding(Location(path, line, max(column, 1)), message, "analysis-skipped")


def newer_python(path: str, error: SyntaxError) -> Finding:
    """The warning for a file the Python running gate rejects with `error` that libcst's newer
    grammar parses (`newer_grammar_parses`): valid code in a newer Python, which gate did not
    check."""
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    message = (
        f"gate could not analyse this file: Python {running}, which runs gate, cannot parse it "
        f"({error.msg}), but libcst's newer grammar does, so it is valid in a newer Python: run "
        "gate on the newest Python the project targets"
    )
    return finding(path, message, error.lineno or 1, error.offset or 1)


def newer_grammar_parses(data: bytes) -> bool:
    """Does libcst parse the source? Only asked of a file this Python rejected, on a Python
    older than the newest libcst knows (3.13): f-strings with backslashes or nested quotes
    (3.12), `type X = ...` and generic classes (3.12) fail here and parse there."""
    if sys.version_info >= (3, 13):
        return False
    import libcst as cst  # loaded only for a file that does not parse

    try:
        cst.parse_module(data)
    except Exception:  # any failure means libcst rejects it too
        return False
    return True


RULE = Rule(
    code="GATE902",
    name="analysis-skipped",
    summary="A parser gate runs on rejected valid code, so part of the file was not checked",
    family=Family.FILE,
    severity=Severity.WARNING,
    doc=__doc__ or "",
    fix="Rewrite the construct libcst rejects, or report it upstream to libcst.",
)
