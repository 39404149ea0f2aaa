"""# GATE201 complexity-regressed

## What it does
Flags a function the baseline grandfathers whose complexity rose above the value recorded for it.

## Why is this bad?
A grandfathered function is debt the team agreed to carry, not a licence to add more. Each rise is
where a function that is already hard to follow gets harder.

## Example
With a baseline that records `example.py::settle` at 11:
```python
def settle(order, a, b, c, d, e, f, g, h, i, j, k):
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
    if k:
        return 11
    return 0
```

## Use instead
Keep the function at or under its recorded value (here, one branch fewer):
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

## Known problems
`gate baseline update` refuses to raise an entry; a deliberate increase must be named with
`--allow-increase KEY`, so that it shows up in review.

## Options
Those of complexity-over-threshold.
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.complexity.facts import RatchetFacts
from gate.model import ComplexityDetail, Family, Finding, Severity
from gate.rule import Rule, Scope


def check(facts: RatchetFacts) -> Iterator[Finding]:
    for judged in facts.judged:
        function, allowed = judged.function, judged.allowed
        cc = function.complexity
        if allowed is None or cc <= judged.threshold or cc <= allowed:
            continue
        message = (
            f"{function.qualname}: complexity {cc} (radon {function.rank}) rose above its "
            f"baseline {allowed} (threshold {judged.threshold})"
        )
        detail = ComplexityDetail(function.key, cc, judged.threshold, allowed)
        yield RULE.finding(judged.location, message, function.key, detail=detail)


RULE = Rule(
    code="GATE201",
    name="complexity-regressed",
    summary="A baselined function's complexity rose above its recorded value",
    family=Family.COMPLEXITY,
    severity=Severity.ERROR,
    doc=__doc__ or "",
    fix="Bring the function back to its recorded complexity; a deliberate rise needs "
    "`gate baseline update --allow-increase KEY`.",
    scope=Scope.PROJECT,
    check=check,
    example_baseline=(("example.py::settle", 11), ("fixed.py::settle", 11)),
)
