"""The rule registry: every rule gate knows, by code."""

from __future__ import annotations

from gate.checks import (
    analysis_skipped,
    baseline_stale,
    cancellation_swallowed,
    complexity_over_threshold,
    complexity_regressed,
    guard_misses_cancellation,
    skippable_teardown_step,
    syntax_error,
    unguarded_cleanup_await,
    unreadable_file,
    unshielded_teardown_await,
)
from gate.checks.base import Rule

TEARDOWN_CHECKS = (
    skippable_teardown_step,
    unguarded_cleanup_await,
    guard_misses_cancellation,
    cancellation_swallowed,
    unshielded_teardown_await,
)

COMPLEXITY_RULES = (complexity_over_threshold, complexity_regressed, baseline_stale)

_MODULES = (
    *TEARDOWN_CHECKS,
    *COMPLEXITY_RULES,
    syntax_error,
    unreadable_file,
    analysis_skipped,
)

RULES: dict[str, Rule] = {module.RULE.code: module.RULE for module in _MODULES}
RULES_BY_NAME: dict[str, Rule] = {rule.name: rule for rule in RULES.values()}
