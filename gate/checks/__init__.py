"""The rule registry: every module in this package defines one rule, `RULE`, and nothing else
in gate names a rule code. Adding a rule is adding a module here (and its examples in rules/)."""

from __future__ import annotations

import importlib
import pkgutil

from gate.model import Family
from gate.rule import Rule


def _load() -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        rule = module.RULE
        if rule.code in rules:
            raise RuntimeError(f"{module.__name__}: rule code {rule.code} is already taken")
        rules[rule.code] = rule
    return dict(sorted(rules.items()))


RULES: dict[str, Rule] = _load()
RULES_BY_NAME: dict[str, Rule] = {rule.name: rule for rule in RULES.values()}


def rules_of(family: Family) -> tuple[Rule, ...]:
    """The rules of one family, by code."""
    return tuple(rule for rule in RULES.values() if rule.family is family)
