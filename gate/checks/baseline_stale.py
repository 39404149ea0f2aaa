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

from __future__ import annotations

from collections.abc import Iterator

from gate.complexity.facts import Judged, RatchetFacts
from gate.model import ComplexityDetail, Family, Finding, Severity
from gate.rule import Rule, Scope


def _message(judged: Judged) -> str | None:
    function, allowed = judged.function, judged.allowed
    cc = function.complexity
    if allowed is None:
        return None
    if cc <= judged.threshold:
        return (
            f"{function.qualname}: complexity {cc} is now within the threshold "
            f"{judged.threshold}; its baseline entry ({allowed}) is stale: run "
            "`gate baseline update` to remove it"
        )
    if cc < allowed:
        return (
            f"{function.qualname}: complexity {cc} (radon {function.rank}) is below its "
            f"baseline {allowed}; run `gate baseline update` to tighten the entry to {cc}"
        )
    return None


def check(facts: RatchetFacts) -> Iterator[Finding]:
    severity = facts.stale_severity
    for judged in facts.judged:
        message = _message(judged)
        if message is not None:
            function = judged.function
            detail = ComplexityDetail(
                function.key, function.complexity, judged.threshold, judged.allowed
            )
            yield RULE.finding(judged.location, message, function.key, (), detail, severity)
    for gone in facts.vanished:
        message = f"{gone.key}: in the baseline but no longer exists; run `gate baseline update`"
        if gone.renamed_to is not None:
            message += f" (likely renamed to `{gone.renamed_to}`)"
        detail = ComplexityDetail(gone.key, None, baseline=gone.allowed)
        yield RULE.finding(gone.location, message, gone.key, (), detail, severity)


RULE = Rule(
    code="GATE202",
    name="baseline-stale",
    summary="A baselined function improved, fell under the threshold or vanished",
    family=Family.COMPLEXITY,
    severity=Severity.ERROR,
    doc=__doc__ or "",
    fix="Run `gate baseline update` and commit the tightened baseline.",
    scope=Scope.PROJECT,
    check=check,
    example_baseline=(("example.py::settle", 14),),
)
