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

import sys

from gate.checks import analysis_skipped
from gate.model import Family, Finding, Location, Severity
from gate.rule import Rule


def finding(path: str, error: Exception, data: bytes | None = None) -> Finding:
    """The finding for a file `compile()` rejected with `error` (SyntaxError or ValueError).
    With the file's bytes, a syntax error that libcst's grammar (which knows newer Python than
    the one running gate may) accepts is an analysis-skipped warning: valid code gate could not
    check."""
    if isinstance(error, SyntaxError):
        line, column, message = error.lineno or 1, error.offset or 1, error.msg
        if data is not None and _newer_grammar_parses(data):
            running = f"{sys.version_info.major}.{sys.version_info.minor}"
            return analysis_skipped.finding(
                path,
                f"gate could not analyse this file: Python {running}, which runs gate, cannot "
                f"parse it ({message}), but libcst's newer grammar does, so it is valid in a "
                "newer Python: run gate on the newest Python the project targets",
                line,
                column,
            )
    else:
        line, column, message = 1, 1, str(error)
    location = Location(path, line, max(column, 1))
    return RULE.finding(location, f"syntax error: {message}", "syntax-error")


def _newer_grammar_parses(data: bytes) -> bool:
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
    code="GATE900",
    name="syntax-error",
    summary="The file does not parse, so no rule could check it",
    family=Family.FILE,
    severity=Severity.ERROR,
    doc=__doc__ or "",
    fix="Fix the syntax error; gate checks the file once it parses.",
    always_reported=True,
)
