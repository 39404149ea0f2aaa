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
The parse uses the Python that runs gate: syntax newer than that Python (a 3.13 feature checked on
3.10) is reported as a syntax error. Run gate on the newest Python your code targets.

## Options
None; this finding cannot be switched off by `--ignore`, only with `--exit-zero`.
"""

from gate.checks.base import Rule
from gate.model import Severity

RULE = Rule(
    code="GATE900",
    name="syntax-error",
    summary="The file does not parse, so no rule could check it",
    severity=Severity.ERROR,
    doc=__doc__ or "",
    fix="Fix the syntax error; gate checks the file once it parses.",
)
