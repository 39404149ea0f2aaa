"""# GATE200 complexity-over-threshold

## What it does
Flags a function whose cyclomatic complexity (as radon counts it) exceeds its threshold and that
the baseline does not grandfather: a new function, or an existing one that just crossed the line.
Closures count as their own functions, so moving branches into an inner function does not hide
them. Where git can tell, the message says what the complexity was before this change.

## Why is this bad?
Complexity creeps up one fix at a time: `Orchestrator.run` went from 19 to 21 in a module held to
20. A threshold alone either fails on all of today's debt or gets raised until it means nothing;
the baseline keeps today's debt and fails every new crossing.

## Example
```python
def route(event, a, b, c, d, e, f, g, h, i, j):
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
```python
def route(event, *flags):
    for value, flag in enumerate(flags, start=1):
        if flag:
            return value
    return 0
```

## Known problems
radon's numbers differ from ruff's C901 for about half of all functions (radon counts boolean
operators, conditional expressions, comprehensions and asserts). A baseline is tied to one radon
version; gate refuses to compare across versions.

## Options
- `tool.gate.complexity.threshold` (default 10).
- `[[tool.gate.complexity.paths]]` with `glob` and `threshold`: tighter (or looser) limits per
  path; the last matching entry wins.
- `tool.gate.complexity.baseline` (default `baselines/complexity.json`).
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.complexity.facts import Judged, RatchetFacts
from gate.model import ComplexityDetail, Family, Finding, Severity
from gate.rule import Rule, Scope


def applies(judged: Judged) -> bool:
    """A function the baseline does not know, over its threshold."""
    return judged.allowed is None and judged.function.complexity > judged.threshold


def _message(judged: Judged) -> str:
    function = judged.function
    message = (
        f"{function.qualname}: complexity {function.complexity} (radon {function.rank}) "
        f"exceeds {judged.threshold}"
    )
    if judged.history_known:
        if judged.before is None:
            message += "; new in this change"
        elif judged.before != function.complexity:
            message += f"; was {judged.before} before this change"
    if judged.likely_rename_of is not None:
        message += (
            f"; likely a rename of `{judged.likely_rename_of}` (identical body), which the "
            f"baseline allows {judged.rename_allowance}: accept it with "
            "`gate baseline update --accept-new`"
        )
    return message


def check(facts: RatchetFacts) -> Iterator[Finding]:
    for judged in facts.judged:
        if applies(judged):
            function = judged.function
            detail = ComplexityDetail(
                function.key, function.complexity, judged.threshold, None, judged.before
            )
            yield RULE.finding(judged.location, _message(judged), function.key, detail=detail)


RULE = Rule(
    code="GATE200",
    name="complexity-over-threshold",
    summary="A function not in the baseline is over its complexity threshold",
    family=Family.COMPLEXITY,
    severity=Severity.ERROR,
    doc=__doc__ or "",
    fix="Split the function; or, if the debt is accepted, `gate baseline update --accept-new`.",
    scope=Scope.PROJECT,
    check=check,
)
