"""Judge measured complexity against the baseline, and plan baseline updates.

Both work on plain data (measurements, the baseline's mapping, renames, earlier values); reading
files and asking git is the caller's job, so every decision here is testable without a repo.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gate.complexity.facts import Judged, RatchetFacts, Vanished
from gate.complexity.measure import FunctionComplexity
from gate.config import ComplexityConfig
from gate.model import Location, Severity


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
    Both are None when git cannot tell. `body_hash(function)`: the body hash of a measured
    function measured without one (None: the measurements carry theirs).
    """

    baseline: dict[str, int]
    judged_paths: set[str]
    baseline_path: str = "baselines/complexity.json"  # project-relative
    baseline_lines: dict[str, int] = field(default_factory=dict)
    renamed: dict[str, str] = field(default_factory=dict)
    previous: Callable[[str], int | None] | None = None
    vanished_bodies: Callable[[str], str | None] | None = None
    body_hash: Callable[[FunctionComplexity], str] | None = None


def judge(
    measured: Iterable[FunctionComplexity], inputs: RatchetInputs, config: ComplexityConfig
) -> RatchetFacts:
    """Every measured function with its threshold, baseline entry and history, and the
    baselined functions of the judged files that no longer exist."""
    moved = rekey(inputs.baseline, inputs.renamed)
    allowance = {moved.get(key, key): value for key, value in inputs.baseline.items()}
    origin = {moved.get(key, key): key for key in inputs.baseline}
    measured = list(measured)
    present = {function.key for function in measured}
    vanished = [
        key for key in allowance if key not in present and key_path(key) in inputs.judged_paths
    ]
    bodies: dict[str, str] = {}
    if inputs.vanished_bodies is not None:
        for key in vanished:
            body = inputs.vanished_bodies(origin[key])
            if body is not None:
                bodies[body] = origin[key]
    judged: list[Judged] = []
    renamed_to: dict[str, str] = {}
    # by path, matched against the globs once: a file's functions share it
    threshold_of = functools.cache(lambda path: threshold_for(path, config))
    for function in measured:
        threshold = threshold_of(function.path)
        allowed = allowance.get(function.key)
        if allowed is not None or function.complexity <= threshold:
            judged.append(Judged(function, threshold, allowed))
            continue
        before = inputs.previous(function.key) if inputs.previous is not None else None
        likely = _likely_rename(function, bodies, inputs)
        if likely is not None:
            renamed_to[likely] = function.key
        judged.append(
            Judged(
                function,
                threshold,
                None,
                before,
                history_known=inputs.previous is not None,
                likely_rename_of=likely,
                rename_allowance=inputs.baseline[likely] if likely is not None else None,
            )
        )
    gone = tuple(
        Vanished(
            origin[key],
            inputs.baseline[origin[key]],
            Location(inputs.baseline_path, inputs.baseline_lines.get(origin[key], 1), 1),
            renamed_to.get(origin[key]),
        )
        for key in vanished
    )
    return RatchetFacts(tuple(judged), gone, Severity(config.stale_severity))


def _likely_rename(
    function: FunctionComplexity, bodies: dict[str, str], inputs: RatchetInputs
) -> str | None:
    """The vanished baseline key whose body the function has, if any (its body is hashed only
    when there are vanished bodies to match)."""
    if not bodies:
        return None
    if function.body_hash or inputs.body_hash is None:
        return bodies.get(function.body_hash)
    return bodies.get(inputs.body_hash(function))


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
