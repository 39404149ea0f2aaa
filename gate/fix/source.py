"""Fixing one file's text: analyse it again, plan each region's rewrite, apply, verify.

`fix_source` is pure: (path, text, the findings reported for it) in, the findings with their
`Fix` and the fixed text out. A rewrite is kept only if the fixed text compiles and the
analysis run on it no longer reports what the rewrite was for.
"""

from __future__ import annotations

import ast
import difflib
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import libcst as cst

from gate.analysis.candidates import index_functions, is_candidate
from gate.analysis.facts import ModuleAnalysis
from gate.analysis.file_pass import judge
from gate.analysis.walker import AnalysisError, Snippet, analyse_functions
from gate.config import GateConfig
from gate.filters import Selection, without_noqa
from gate.fix.plan import (
    FactIndex,
    RegionTargets,
    Unsafe,
    autofix_of,
    block_edit,
    check_exits,
    hold_boundaries,
    keep_handler,
    keep_suppress,
    match,
    shield_range,
)
from gate.fix.rewrite import Edits, Rewriter
from gate.fix.tree import FunctionTree, all_names, fresh_name
from gate.model import Finding, Fix, Location
from gate.source import source_lines, suppressions

LIBRARIES = ("anyio", "trio")  # anyio first: its scope works on either backend
BUG_NOTE = "gate's rewrite would not clear this finding (a bug in gate: please report it)"


@dataclass
class Analysed:
    """One text through the teardown analysis: its facts, parsed functions and findings."""

    analysis: ModuleAnalysis
    trees: dict[int, FunctionTree]
    findings: list[Finding]
    level_triggered: bool
    shield_scope: tuple[str, str] | None


def _shield_scope(tree: ast.Module) -> tuple[str, str] | None:
    """How this module spells a trio/anyio `CancelScope`: (expression, library)."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in LIBRARIES:
                    found.setdefault(alias.name, f"{alias.asname or alias.name}.CancelScope")
        elif isinstance(node, ast.ImportFrom) and node.module in LIBRARIES and not node.level:
            for alias in node.names:
                if alias.name == "CancelScope":
                    found[node.module] = alias.asname or alias.name
    for library in LIBRARIES:
        if library in found:
            return found[library], library
    return None


def analyse(path: str, text: str, settings: GateConfig) -> Analysed | None:
    """The teardown analysis of `text`, as the file rules run it; None when it does not parse
    (with `ast`, or with libcst)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    spans, level_triggered = index_functions(tree)
    candidates = [span for span in spans if is_candidate(span, settings.teardown)]
    try:
        analysis = analyse_functions(
            source_lines(text), spans, level_triggered, settings.teardown, candidates
        )
    except (AnalysisError, RecursionError):
        return None
    trees: dict[int, FunctionTree] = {}
    for snippet in analysis.node_snippets.values():
        assert isinstance(snippet, Snippet)
        if id(snippet) not in trees:
            trees[id(snippet)] = FunctionTree(snippet)

    def locate(node: object) -> Location:
        found = trees[id(analysis.node_snippets[id(node)])].span(node)  # type: ignore[arg-type]
        return Location(path, found.line, found.column, found.end_line, found.end_column)

    findings = judge(analysis, locate)
    return Analysed(analysis, trees, findings, level_triggered, _shield_scope(tree))


# ---------------------------------------------------------------------------------------------
# Planning one group of overlapping regions (usually one region)


@dataclass(eq=False)
class Component:
    """Regions of one function whose blocks overlap (a helper's body around a finally block):
    they are rewritten together, as one Fix."""

    regions: list[RegionTargets]
    fix: Fix | None = None
    spans: tuple[int, int] = (0, 0)

    @property
    def tree(self) -> FunctionTree:
        return self.regions[0].tree

    @property
    def findings(self) -> list[Finding]:
        return [finding for targets in self.regions for finding in targets.findings]


def components(targets: list[RegionTargets]) -> list[Component]:
    grouped: list[Component] = []
    for entry in sorted(targets, key=lambda t: t.lines()[0] - t.lines()[1]):
        first, last = entry.lines()
        for component in grouped:
            outer_first, outer_last = component.regions[0].lines()
            if component.tree is entry.tree and outer_first <= first and last <= outer_last:
                component.regions.append(entry)
                break
        else:
            grouped.append(Component([entry], spans=(first, last)))
    return grouped


def _region_edits(
    targets: RegionTargets, edits: Edits, taken: set[str], analysed: Analysed
) -> None:
    """Add one region's edits; raises Unsafe."""
    shielding = analysed.level_triggered
    held = targets.points if not shielding else []
    if held or targets.handlers or targets.suppresses:
        check_exits(targets)
    boundaries = hold_boundaries(targets) if held else {}
    edited = [node for node, _ in boundaries.values()]
    edited += [handler.node for handler in targets.handlers]
    edited += [enclosure.node for enclosure in targets.suppresses]
    candidate = fresh_name(("interrupt", "held_interrupt"), taken)
    block, hold = block_edit(targets, edited, candidate)
    taken.add(hold or candidate)
    if targets.points and shielding:
        if analysed.shield_scope is None:
            raise Unsafe(
                "the module imports neither `trio` nor `anyio` by name (nor `CancelScope` "
                "from them), so there is no shielded scope to use"
            )
        block.shield = shield_range(targets, *analysed.shield_scope)
    for boundary, as_handler in boundaries.values():
        assert hold is not None
        (edits.add_handler if as_handler else edits.wrap)[id(boundary)] = hold
    for handler in targets.handlers:
        assert hold is not None
        edits.keep[id(handler.node)] = keep_handler(handler, targets.tree, hold)
    module = targets.tree.snippet.module
    for enclosure in targets.suppresses:
        assert hold is not None
        edits.suppress[id(enclosure.node)] = keep_suppress(enclosure, module, targets.tree, hold)
    edits.blocks[id(targets.body)] = block


def _note(component: Component, analysed: Analysed) -> str:
    parts = []
    for targets in component.regions:
        lines = sorted({targets.tree.span(point.node).line for point in targets.points})
        words = targets.region.kind.words
        if lines and analysed.level_triggered and analysed.shield_scope:
            scope = analysed.shield_scope[0]
            parts.append(f"shield the awaits at line(s) {_listed(lines)} in `{scope}(shield=True)`")
        elif lines:
            parts.append(
                f"hold the interrupt at line(s) {_listed(lines)}, run the rest of the {words}, "
                "then re-raise the first one held"
            )
        kept = [targets.tree.span(h.node).line for h in targets.handlers]
        kept += [targets.tree.span(e.node).line for e in targets.suppresses]
        if kept:
            parts.append(
                f"keep the cancellation caught at line(s) {_listed(sorted(kept))} and re-raise "
                f"it after the {words}"
            )
    return "; ".join(parts)


def _listed(lines: Sequence[int]) -> str:
    return ", ".join(str(line) for line in lines)


def _lost(component: Component) -> tuple[str, ...]:
    where = {(f.location.line, f.location.column) for f in component.findings}
    lost: list[str] = []
    for targets in component.regions:
        for step in targets.region.steps:
            span = targets.tree.span(step.statement)
            if (span.line, span.column) in where and step.label not in lost:
                lost.append(step.label)
    return tuple(lost)


# ---------------------------------------------------------------------------------------------
# From a rewritten function to a Fix on whole lines of the file


def _function_code(module: cst.Module, snippet: Snippet) -> tuple[str, int]:
    """The function's code as the file has it, and its first line."""
    code = module.code
    indented = snippet.module.body[0] is not snippet.function
    if indented:
        code = code.split("\n", 1)[1]
    return code, snippet.line_offset + (2 if indented else 1)


def _changed(old: list[str], new: list[str]) -> tuple[int, int, int]:
    """The changed lines: old [start, end), and how many lines the new text adds."""
    codes = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()]
    changed = [op for op in codes if op[0] != "equal"]
    if not changed:
        return 0, 0, 0
    return changed[0][1], changed[-1][2], len(new) - len(old)


def _as_file(replacement: str, original: str) -> str:
    """The replacement in the file's own line endings, and without a final newline where the
    file had none."""
    if "\r\n" in original:
        replacement = re.sub(r"(?<!\r)\n", "\r\n", replacement)
    if not original.endswith(("\n", "\r")):
        replacement = replacement.rstrip("\r\n")
    return replacement


def make_fix(component: Component, edits: Edits, lines: list[str], note: str, where: str) -> Fix:
    snippet = component.tree.snippet
    old_code, first_line = _function_code(snippet.module, snippet)
    rewritten = snippet.module.visit(Rewriter(snippet.module, edits))
    new_code, _ = _function_code(rewritten, snippet)
    old, new = old_code.splitlines(keepends=True), new_code.splitlines(keepends=True)
    start, end, added = _changed(old, new)
    region_first, region_last = component.spans
    start = min(start, region_first - first_line)
    end = max(end, region_last - first_line + 1)
    original = "".join(lines[first_line - 1 + start : first_line - 1 + end])
    replacement = _as_file("".join(new[start : end + added]), original)
    return Fix(
        first_line + start,
        first_line + end - 1,
        original,
        replacement,
        note,
        where,
        _lost(component),
    )


def unfixable(component: Component, lines: list[str], reason: str, where: str) -> Fix:
    first, last = component.spans
    original = "".join(lines[first - 1 : last])
    return Fix(first, last, original, None, reason, where, _lost(component))


def plan_component(component: Component, analysed: Analysed, lines: list[str]) -> Fix:
    outer = component.regions[0].region
    where = f"{outer.kind.words} of `{outer.function}`"
    taken = all_names(component.tree.snippet.function)
    edits = Edits(error=fresh_name(("error", "exc", "caught"), taken))
    taken.add(edits.error)
    try:
        for targets in component.regions:
            _region_edits(targets, edits, taken, analysed)
    except Unsafe as reason:
        return unfixable(component, lines, str(reason), where)
    return make_fix(component, edits, lines, _note(component, analysed), where)


# ---------------------------------------------------------------------------------------------
# The file


@dataclass
class SourceFixes:
    """The reported findings with their Fix (same order), and the text with every available
    fix applied (None when nothing changes)."""

    findings: list[Finding]
    fixed: str | None = None
    components: list[Component] = field(default_factory=list)


def apply_fixes(text: str, fixes: Sequence[Fix]) -> str:
    """`text` with each fix's lines replaced; fixes must not overlap."""
    lines = source_lines(text)
    for fix in sorted(fixes, key=lambda f: f.start_line, reverse=True):
        assert fix.replacement is not None
        lines[fix.start_line - 1 : fix.end_line] = [fix.replacement]
    return "".join(lines)


def _base_anchor(anchor: str) -> str:
    return re.sub(r"#\d+$", "", anchor)


def _failing(
    path: str,
    text: str,
    fixed: list[Component],
    analysed: Analysed,
    settings: GateConfig,
    chosen: Selection,
) -> list[Component]:
    """The components whose rewrite leaves a finding it was for (all of them when the fixed
    text does not compile)."""
    new_text = apply_fixes(text, [c.fix for c in fixed if c.fix is not None])
    again = analyse(path, new_text, settings)
    if again is None:
        return fixed
    targeted = {f.fingerprint for c in fixed for f in c.findings}
    left = without_noqa(chosen.apply(again.findings), {path: suppressions(new_text)})
    left = [f for f in left if autofix_of(f) is not None]
    failing, shift = [], 0
    for component in sorted(fixed, key=lambda c: c.fix.start_line):  # type: ignore[union-attr]
        fix = component.fix
        assert fix is not None and fix.replacement is not None
        first, last = fix.start_line, fix.end_line
        before = {
            (f.code, _base_anchor(f.anchor))
            for f in analysed.findings
            if first <= f.location.line <= last and f.fingerprint not in targeted
        }
        size = len(source_lines(fix.replacement))
        inside = [f for f in left if first + shift <= f.location.line < first + shift + size]
        if any((f.code, _base_anchor(f.anchor)) not in before for f in inside):
            failing.append(component)
        shift += size - (last - first + 1)
    return failing


def fix_source(
    path: str,
    text: str,
    reported: Sequence[Finding],
    settings: GateConfig,
    chosen: Selection,
) -> SourceFixes:
    """Plan a fix for every reported finding whose rule has one; see the module docs."""
    wanted = {f.fingerprint for f in reported if autofix_of(f) is not None}
    analysed = analyse(path, text, settings) if wanted else None
    if analysed is None:
        return SourceFixes(list(reported))
    lines = source_lines(text)
    targeted = [f for f in analysed.findings if f.fingerprint in wanted]
    index = FactIndex(analysed.analysis, analysed.trees)
    grouped = components(match(index, targeted))
    for component in grouped:
        component.fix = plan_component(component, analysed, lines)
    fixed = [c for c in grouped if c.fix is not None and c.fix.available]
    while fixed:
        failing = _failing(path, text, fixed, analysed, settings, chosen)
        if not failing:
            break
        for component in failing:
            assert component.fix is not None
            component.fix = replace(component.fix, replacement=None, note=BUG_NOTE)
        fixed = [c for c in fixed if c not in failing]
    by_fingerprint = {f.fingerprint: c.fix for c in grouped for f in c.findings}
    findings = [replace(f, fix=by_fingerprint.get(f.fingerprint, f.fix)) for f in reported]
    new_text = apply_fixes(text, [c.fix for c in fixed if c.fix is not None]) if fixed else None
    return SourceFixes(findings, new_text if new_text != text else None, grouped)
