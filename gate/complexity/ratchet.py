"""Judge measured complexity against the baseline, and plan baseline updates.

Both work on plain data (measurements, the baseline's mapping, renames, earlier values); reading
files and asking git is the caller's job, so every decision here is testable without a repo.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gate.checks import RULES
from gate.complexity.measure import FunctionComplexity
from gate.config import ComplexityConfig
from gate.model import Finding, Location, Severity


def threshold_for(path: str, config: ComplexityConfig) -> int:
    """The threshold of a repo-relative path: the last matching `paths` glob wins."""
    threshold = config.threshold
    for override in config.paths:
        if fnmatch.fnmatchcase(path, override.glob):
            threshold = override.threshold
    return threshold


def key_path(key: str) -> str:
    return key.split("::", 1)[0]


def rekey(functions: dict[str, int], renamed: dict[str, str]) -> dict[str, str]:
    """Map each baseline key to the key it has after file renames: {old key: new key}."""
    moved = {}
    for key in functions:
        path, qualname = key.split("::", 1)
        if path in renamed:
            moved[key] = f"{renamed[path]}::{qualname}"
    return moved


@dataclass
class RatchetInputs:
    """What judging needs besides the measurements.

    `judged_paths`: the files whose entries are judged (the files checked, plus covered files
    that no longer exist). `previous(key)`: the complexity before this change (None for a
    function that did not exist); `vanished_bodies(key)`: the body hash a baselined function had.
    Both are None when git cannot tell.
    """

    baseline: dict[str, int]
    judged_paths: set[str]
    baseline_shown: str = "baselines/complexity.json"
    baseline_lines: dict[str, int] = field(default_factory=dict)
    renamed: dict[str, str] = field(default_factory=dict)
    previous: Callable[[str], int | None] | None = None
    vanished_bodies: Callable[[str], str | None] | None = None


def _finding(
    code: str,
    message: str,
    location: Location,
    anchor: str,
    severity: Severity | None = None,
    extra: dict[str, object] | None = None,
) -> Finding:
    rule = RULES[code]
    return Finding(
        code, rule.name, severity or rule.severity, location, message, anchor, (), extra or {}
    )


def _location(function: FunctionComplexity) -> Location:
    """The def line, spanning to the function's last line (for diff-aware runs)."""
    return Location(
        function.shown or function.path, function.line, function.column, function.end_line
    )


def _values(
    function: FunctionComplexity, threshold: int, allowed: int | None, before: int | None = None
) -> dict[str, object]:
    """What the markdown report's complexity table shows for one function."""
    return {
        "function": function.key,
        "complexity": function.complexity,
        "threshold": threshold,
        "baseline": allowed,
        "before": before,
    }


def _suppressed(function: FunctionComplexity, code: str) -> bool:
    return function.noqa is not None and (not function.noqa or code in function.noqa)


def _judge_baselined(
    function: FunctionComplexity, allowed: int, threshold: int, stale_severity: Severity
) -> Finding | None:
    """GATE201 for a rise, GATE202 for an entry that is no longer needed as it stands."""
    cc, rank = function.complexity, function.rank
    if cc <= threshold:
        code = "GATE202"
        message = (
            f"{function.qualname}: complexity {cc} is now within the threshold {threshold}; "
            f"its baseline entry ({allowed}) is stale: run `gate baseline update` to remove it"
        )
    elif cc > allowed:
        code = "GATE201"
        message = (
            f"{function.qualname}: complexity {cc} (radon {rank}) rose above its baseline "
            f"{allowed} (threshold {threshold})"
        )
    elif cc < allowed:
        code = "GATE202"
        message = (
            f"{function.qualname}: complexity {cc} (radon {rank}) is below its baseline "
            f"{allowed}; run `gate baseline update` to tighten the entry to {cc}"
        )
    else:
        return None
    if _suppressed(function, code):
        return None
    severity = stale_severity if code == "GATE202" else None
    extra = _values(function, threshold, allowed)
    return _finding(code, message, _location(function), function.key, severity, extra)


def judge(
    measured: Iterable[FunctionComplexity], inputs: RatchetInputs, config: ComplexityConfig
) -> list[Finding]:
    """GATE200/201/202 findings for the measured functions against the baseline."""
    moved = rekey(inputs.baseline, inputs.renamed)
    allowance = {moved.get(key, key): value for key, value in inputs.baseline.items()}
    origin = {moved.get(key, key): key for key in inputs.baseline}
    stale_severity = Severity(config.stale_severity)
    findings: list[Finding] = []
    present: set[str] = set()
    new_crossings: list[FunctionComplexity] = []

    for function in measured:
        present.add(function.key)
        threshold = threshold_for(function.path, config)
        allowed = allowance.get(function.key)
        if allowed is None:
            if function.complexity > threshold and not _suppressed(function, "GATE200"):
                new_crossings.append(function)
            continue
        finding = _judge_baselined(function, allowed, threshold, stale_severity)
        if finding is not None:
            findings.append(finding)

    vanished = [
        key for key in allowance if key not in present and key_path(key) in inputs.judged_paths
    ]
    bodies: dict[str, str] = {}
    if inputs.vanished_bodies is not None:
        for key in vanished:
            body = inputs.vanished_bodies(origin[key])
            if body is not None:
                bodies[body] = origin[key]
    renamed_to: dict[str, str] = {}

    for function in new_crossings:
        threshold = threshold_for(function.path, config)
        message = (
            f"{function.qualname}: complexity {function.complexity} (radon {function.rank}) "
            f"exceeds {threshold}"
        )
        before = None
        if inputs.previous is not None:
            before = inputs.previous(function.key)
            if before is None:
                message += "; new in this change"
            elif before != function.complexity:
                message += f"; was {before} before this change"
        likely = bodies.get(function.body_hash)
        if likely is not None:
            renamed_to[likely] = function.key
            message += (
                f"; likely a rename of `{likely}` (identical body), which the baseline allows "
                f"{inputs.baseline[likely]}: accept it with `gate baseline update --accept-new`"
            )
        extra = _values(function, threshold, None, before)
        findings.append(
            _finding("GATE200", message, _location(function), function.key, extra=extra)
        )

    for key in vanished:
        old = origin[key]
        line = inputs.baseline_lines.get(old, 1)
        message = f"{old}: in the baseline but no longer exists; run `gate baseline update`"
        if old in renamed_to:
            message += f" (likely renamed to `{renamed_to[old]}`)"
        location = Location(inputs.baseline_shown, line, 1)
        extra = {"function": old, "complexity": None, "baseline": inputs.baseline[old]}
        findings.append(_finding("GATE202", message, location, old, stale_severity, extra))
    return findings


@dataclass
class UpdatePlan:
    """What `gate baseline update` will write, and why."""

    functions: dict[str, int]
    added: list[tuple[str, int]] = field(default_factory=list)
    lowered: list[tuple[str, int, int]] = field(default_factory=list)
    raised: list[tuple[str, int, int]] = field(default_factory=list)
    removed: list[tuple[str, int]] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)
    refused: list[tuple[str, int, int]] = field(default_factory=list)
    not_accepted: list[tuple[str, int]] = field(default_factory=list)


def plan_update(
    measured: Iterable[FunctionComplexity],
    existing: dict[str, int] | None,
    judged_paths: set[str],
    config: ComplexityConfig,
    accept_new: bool = False,
    allow_increase: Iterable[str] = (),
    renamed: dict[str, str] | None = None,
) -> UpdatePlan:
    """The new baseline: lowers improved entries, drops stale ones, adds new crossings only when
    accepted (or when there is no baseline yet), and raises an entry only when named."""
    first = existing is None
    old = dict(existing or {})
    moved = rekey(old, renamed or {})
    plan = UpdatePlan(functions={})
    for key, value in old.items():
        if key_path(moved.get(key, key)) not in judged_paths:
            plan.functions[key] = value  # outside this update's paths: untouched
    current = {}
    for function in measured:
        current[function.key] = function
    allowed_raise = set(allow_increase)
    origin = {moved.get(key, key): key for key in old}
    for key, function in current.items():
        cc = function.complexity
        threshold = threshold_for(function.path, config)
        before_key = origin.get(key)
        if before_key is None:
            if cc > threshold:
                if accept_new or first:
                    plan.functions[key] = cc
                    plan.added.append((key, cc))
                else:
                    plan.not_accepted.append((key, cc))
            continue
        allowed = old[before_key]
        if before_key != key:
            plan.moved.append((before_key, key))
        if cc <= threshold:
            plan.removed.append((before_key, allowed))
        elif cc < allowed:
            plan.functions[key] = cc
            plan.lowered.append((key, allowed, cc))
        elif cc > allowed:
            if key in allowed_raise or before_key in allowed_raise:
                plan.functions[key] = cc
                plan.raised.append((key, allowed, cc))
            else:
                plan.functions[key] = allowed
                plan.refused.append((key, allowed, cc))
        else:
            plan.functions[key] = allowed
    for key, value in old.items():
        new_key = moved.get(key, key)
        if new_key not in current and key_path(new_key) in judged_paths:
            plan.removed.append((key, value))
    return plan
