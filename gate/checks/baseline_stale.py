"""# GATE202 baseline-stale

## What it does
Flags a baseline entry that no longer matches the code: the function improved, fell to or under
its threshold, or no longer exists. When gate is given only some files (as pre-commit does), only
those files' entries are judged.

## Why is this bad?
A ratchet only works if improvements stick. An entry left at its old value lets the function grow
back to it unnoticed; an entry for a deleted function is an allowance waiting for a new function
of the same name.

## Example
With a baseline that records `example.py::settle` at 14:
```python
def settle(order, a, b, c, d, e, f, g, h, i, j):
    if a:
        return 1
    if b:
        return 2
    if c:
        return 3
    if d:
        return 4
    if e:
        return 5
    if f:
        return 6
    if g:
        return 7
    if h:
        return 8
    if i:
        return 9
    if j:
        return 10
    return 0
```

## Use instead
Run `gate baseline update`: it tightens the entry to 11 (and removes entries of functions that
are gone or within the threshold). Or keep the baseline in step by hand, as here:
```python
def settle(order, *flags):
    for value, flag in enumerate(flags, start=1):
        if flag:
            return value
    return 0
```

## Known problems
A function whose file git reports as renamed keeps its entry; a function that vanished while an
identical body appeared elsewhere is reported as a likely rename, not carried over silently.

## Options
`tool.gate.complexity.stale-severity`: `"error"` (default) or `"warning"`.
"""

from gate.checks.base import Rule
from gate.model import Severity

RULE = Rule(
    code="GATE202",
    name="baseline-stale",
    summary="A baselined function improved, fell under the threshold or vanished",
    severity=Severity.ERROR,
    doc=__doc__ or "",
    fix="Run `gate baseline update` and commit the tightened baseline.",
    example_baseline=(("example.py::settle", 14),),
)
