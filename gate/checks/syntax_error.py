"""# GATE900 syntax-error

## What it does
Reports a file that Python cannot parse (as `compile()` decides it), with the line, column and
Python's own message. Also reports source that is not valid in its declared encoding (UTF-8 unless
a `# -*- coding: ... -*-` line says otherwise) and source with NUL bytes.

## Why is this bad?
A file gate cannot parse is a file none of its rules looked at. Skipping it silently would let a
broken teardown through; crashing would hide every other finding.

## Example
```python
async def run(self:
    await self.cleanup()
```

## Use instead
```python
async def run(self):
    await self.cleanup()
```

## Known problems
The parse uses the Python that runs gate. Syntax newer than that Python (a 3.12 f-string checked
on 3.11) that libcst's grammar, which knows newer Python, accepts is not reported here: the file is
valid in a newer Python, so gate reports analysis-skipped, a warning, instead. Run gate on
the newest Python your code targets to check such files.

## Options
None; this finding cannot be switched off by `--ignore`, only with `--exit-zero`.
"""

from __future__ import annotations

from gate.model import Family, Finding, Location, Severity
from gate.rule import Rule


def finding(path: str, error: Exception) -> Finding:
    """The finding for a file `compile()` rejected with `error` (SyntaxError or ValueError)."""
    if isinstance(error, SyntaxError):
        line, column, message = error.lineno or 1, error.offset or 1, error.msg
    else:
        line, column, message = 1, 1, str(error)
    location = Location(path, line, max(column, 1))
    return RULE.finding(location, f"syntax error: {message}", "syntax-error")


RULE = Rule(
    code="GATE900",
    name="syntax-error",
    summary="The file does not parse, so no rule could check it",
    family=Family.FILE,
    severity=Severity.ERROR,
    doc=__doc__ or "",
    fix="Fix the syntax error; gate checks the file once it parses.",
    always_reported=True,
)
