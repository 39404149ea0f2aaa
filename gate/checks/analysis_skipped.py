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

from gate.model import Family, Finding, Location, Severity
from gate.rule import Rule


def finding(path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    """The warning that part of a file was not analysed, and why (`message`)."""
    return RULE.finding(Location(path, line, max(column, 1)), message, "analysis-skipped")


RULE = Rule(
    code="GATE902",
    name="analysis-skipped",
    summary="A parser gate runs on rejected valid code, so part of the file was not checked",
    family=Family.FILE,
    severity=Severity.WARNING,
    doc=__doc__ or "",
    fix="Rewrite the construct libcst rejects, or report it upstream to libcst.",
)
