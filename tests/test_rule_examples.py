"""Every rule's annotated examples in rules/ and its docs are its tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from annotations import Expectation, compare, config_table, parse

from gate.checks import RULES, RULES_BY_NAME, rules_of
from gate.complexity.baseline import read_baseline
from gate.complexity.ratchet import RatchetInputs, judge
from gate.config import GateConfig, parse_config, tomllib
from gate.discovery import SourceFile
from gate.filecheck import check_file
from gate.filters import without_noqa
from gate.model import Family

ROOT = Path(__file__).resolve().parent.parent
# `<rule-name>.fixed.py` is what `gate check --fix` makes of `<rule-name>.py` (tests/test_fix.py)
EXAMPLES = sorted(p for p in (ROOT / "rules").glob("*.py") if not p.name.endswith(".fixed.py"))
SECTIONS = (
    "What it does",
    "Why is this bad?",
    "Example",
    "Use instead",
    "Known problems",
    "Options",
)


def findings_for(
    path: Path, text: str | None = None, baseline: dict[str, int] | None = None
) -> set[tuple[str, int]]:
    """(rule name, line) of every finding, teardown rules and complexity ratchet together.

    A stale entry for a function that no longer exists is reported in the baseline file; it is
    returned at line 0.
    """
    if text is not None:
        path.write_text(text, encoding="utf-8")
    config = example_config(path.read_text(encoding="utf-8"))
    result = check_file(SourceFile(path, path.name), config)
    findings = list(result.all_findings)
    if result.functions is not None:
        inputs = RatchetInputs(baseline=baseline or {}, judged_paths={path.name})
        facts = judge(result.functions, inputs, config.complexity)
        for rule in rules_of(Family.COMPLEXITY):
            assert rule.check is not None
            findings.extend(rule.check(facts))
    findings = without_noqa(findings, {path.name: result.noqa})
    return {(f.name, f.location.line if f.location.path == path.name else 0) for f in findings}


def example_config(text: str) -> GateConfig:
    """The settings an example file asks for with its `# gate-config:` lines."""
    table = config_table(text)
    return parse_config(tomllib.loads(table), "gate-config") if table else GateConfig()


def sidecar_baseline(example: Path) -> dict[str, int]:
    sidecar = example.with_suffix(".baseline.json")
    baseline = read_baseline(sidecar, sidecar.name)
    return dict(baseline.functions) if baseline is not None else {}


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_annotated_examples(example: Path) -> None:
    expectations = parse(example.read_text(encoding="utf-8"))
    assert expectations, "an example file with no markers tests nothing"
    for item in expectations:
        assert item.rule in RULES_BY_NAME, f"unknown rule name {item.rule}"
    found = findings_for(example, baseline=sidecar_baseline(example))
    vanished = {item for item in found if item[1] == 0}
    found -= vanished
    assert compare(expectations, found) == []
    if example.stem == "baseline-stale":
        assert vanished == {("baseline-stale", 0)}
    else:
        assert vanished == set()


TEARDOWN_RULE_NAMES = {rule.name for rule in rules_of(Family.TEARDOWN)}
NESTINGS = {
    "in-function": "def _enclosing_function():\n",
    "in-class": "class _EnclosingClass:\n",
}


@pytest.mark.parametrize("nesting", sorted(NESTINGS))
@pytest.mark.parametrize(
    "example",
    # Nesting is about teardown scopes; the complexity keys would change with it.
    [p for p in EXAMPLES if p.stem in TEARDOWN_RULE_NAMES],
    ids=lambda p: p.stem,
)
def test_examples_hold_when_nested(example: Path, nesting: str, tmp_path: Path) -> None:
    text = example.read_text(encoding="utf-8")
    nested = NESTINGS[nesting] + textwrap.indent(text, "    ")
    expectations = [Expectation(e.kind, e.rule, e.line + 1) for e in parse(text)]
    found = findings_for(tmp_path / example.name, nested)
    assert compare(expectations, found) == []


def test_every_rule_has_an_example_file() -> None:
    names = {path.stem for path in EXAMPLES}
    # An unreadable file cannot be committed as an example; test_cli covers GATE901.
    missing = {rule.name for rule in RULES.values()} - names - {"unreadable-file"}
    assert missing == set()


@pytest.mark.parametrize("code", sorted(RULES))
def test_docs_have_every_section(code: str) -> None:
    rule = RULES[code]
    assert rule.doc.startswith(f"# {code} {rule.name}\n")
    for title in SECTIONS:
        assert rule.section(title), f"{code} docs lack a '## {title}' section"
    if rule.autofix is not None:
        assert rule.section("Fix"), f"{code} has a fix but its docs lack a '## Fix' section"


@pytest.mark.parametrize("code", [f"GATE10{n}" for n in range(8)])
def test_teardown_rules_document_their_severity_tiers(code: str) -> None:
    # every teardown rule reports errors and warnings by the same tiers
    assert RULES[code].section("Severity").startswith("An error when a step whose loss loses data")


@pytest.mark.parametrize("code", sorted(c for c in RULES if RULES[c].examples("Example")))
def test_docs_example_is_reported_and_fix_is_clean(code: str, tmp_path: Path) -> None:
    rule = RULES[code]
    baseline = dict(rule.example_baseline)
    for example in rule.examples("Example"):
        codes = {c for c, _ in findings_for(tmp_path / "example.py", example, baseline)}
        assert rule.name in codes
    fixes = rule.examples("Use instead")
    assert fixes, f"{code} has an Example but no Use instead code"
    for fix in fixes:
        assert findings_for(tmp_path / "fixed.py", fix, baseline) == set()
