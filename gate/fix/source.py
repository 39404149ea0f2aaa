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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import libcst as cst

from gate.analysis.facts import ModuleAnalysis
from gate.analysis.file_pass import analyse as analyse_file
from gate.analysis.file_pass import judge
from gate.analysis.summary import (
    ModuleSummary,
    ProjectIndex,
    ProjectView,
    module_name,
    summarise_module,
)
from gate.analysis.walker import AnalysisError, Snippet
from gate.config import GateConfig
from gate.filecheck import teardown_functions, vocabulary_of
from gate.filters import Selection, without_noqa
from gate.fix.plan import (
    FactIndex,
    Hold,
    RegionTargets,
    Unsafe,
    autofix_of,
    block_edit,
    exits,
    held_from,
    hold_boundaries,
    keep_handler,
    keep_suppress,
    match,
    shield_range,
    statements_of,
    useful_holds,
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
    shield_scopes: dict[str, str]


def _shield_scopes(tree: ast.Module) -> dict[str, str]:
    """How this module spells each trio/anyio `CancelScope` it can reach, by library."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in LIBRARIES:
                    found.setdefault(alias.name, f"{alias.asname or alias.name}.CancelScope")
        elif isinstance(node, ast.ImportFrom):
            found.update(_imported_scope(node))
    return found


def _imported_scope(node: ast.ImportFrom) -> dict[str, str]:
    """`from trio import CancelScope [as name]`: {library: name}."""
    if node.module not in LIBRARIES or node.level:
        return {}
    names = [alias.asname or alias.name for alias in node.names if alias.name == "CancelScope"]
    return {node.module: names[0]} if names else {}  # type: ignore[dict-item]


def shield_scope(scopes: dict[str, str], function_code: str) -> tuple[str, str] | None:
    """The (scope expression, library) for one function: the library it spells out when the
    module has both, else anyio's (its scope works on either backend)."""
    named = [lib for lib in LIBRARIES if lib in scopes and f"{lib}." in function_code]
    for library in [*named, *LIBRARIES]:
        if library in scopes:
            return scopes[library], library
    return None


def _project(
    tree: ast.Module, path: str, settings: GateConfig, summaries: Sequence[ModuleSummary]
) -> ProjectView:
    """The project as the file rules saw it, with this text's own summary in place of the
    file's (a fix changes what its functions do)."""
    try:
        own = summarise_module(tree, path, vocabulary_of(settings.teardown))
    except RecursionError:
        own = None
    name = module_name(path)
    modules = [m for m in summaries if m.module != name]
    return ProjectView(ProjectIndex([*modules, own] if own is not None else modules), name)


def analyse(
    path: str, text: str, settings: GateConfig, summaries: Sequence[ModuleSummary] = ()
) -> Analysed | None:
    """The teardown analysis of `text`, as the file rules run it (awaited callees resolved in
    the project's `summaries`); None when it does not parse (with `ast`, or with libcst)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    data = text.encode("utf-8", "surrogateescape")
    spans, level_triggered, candidates = teardown_functions(tree, data, settings)
    project = _project(tree, path, settings, summaries)
    try:
        analysis = analyse_file(path, text, spans, level_triggered, candidates, settings, project)
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
    return Analysed(analysis, trees, findings, level_triggered, _shield_scopes(tree))


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
    def rewrite(self) -> Fix:
        """The Fix, known to be available."""
        assert self.fix is not None and self.fix.replacement is not None
        return self.fix

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
    leaving, boundaries = _holds(targets, not shielding)
    candidate = fresh_name(("interrupt", "held_interrupt"), taken)
    block, hold = block_edit(targets, _edited(targets, boundaries.values()), candidate)
    taken.add(hold or candidate)
    if targets.points and shielding:
        block.shield = shield_range(targets, *_scope_for(targets, analysed))
    if hold is not None:
        _hold_edits(targets, edits, hold, boundaries.values())
        _guard_exits(targets, edits, hold, leaving, held_from(targets, block))
    edits.blocks[id(targets.body)] = block


def _holds(
    targets: RegionTargets, holding: bool
) -> tuple[list[cst.CSTNode], dict[int, tuple[cst.CSTNode, Hold]]]:
    """The region's exits and, when its points are held rather than shielded, where; raises
    Unsafe when a hold could be lost or would change nothing."""
    held = targets.points if holding else []
    leaving = exits(targets) if held or targets.handlers or targets.suppresses else []
    boundaries = hold_boundaries(targets) if held else {}
    useful_holds(targets, (node for node, _ in boundaries.values()))
    return leaving, boundaries


def _guard_exits(
    targets: RegionTargets, edits: Edits, hold: str, leaving: list[cst.CSTNode], start: int
) -> None:
    """A `return`/`break`/`continue` that leaves the region once the hold is set re-raises
    the held interrupt first."""
    for exit_ in leaving:
        if _top_index(targets, exit_) >= start:
            edits.guard[id(exit_)] = hold


def _top_index(targets: RegionTargets, node: cst.CSTNode) -> int:
    top = targets.tree.child_of(node, targets.body)
    return next(i for i, s in enumerate(statements_of(targets.body)) if s is top)


def _edited(
    targets: RegionTargets, boundaries: Iterable[tuple[cst.CSTNode, Hold]]
) -> list[cst.CSTNode]:
    """The nodes whose edits use the region's hold variable."""
    edited = [node for node, _ in boundaries]
    edited += [handler.node for handler in targets.handlers]
    return edited + [enclosure.node for enclosure in targets.suppresses]


def _scope_for(targets: RegionTargets, analysed: Analysed) -> tuple[str, str]:
    snippet = targets.tree.snippet
    scope = shield_scope(analysed.shield_scopes, snippet.module.code_for_node(snippet.function))
    if scope is None:
        raise Unsafe(
            "the module imports neither `trio` nor `anyio` by name (nor `CancelScope` "
            "from them), so there is no shielded scope to use"
        )
    return scope


def _hold_edits(
    targets: RegionTargets,
    edits: Edits,
    hold: str,
    boundaries: Iterable[tuple[cst.CSTNode, Hold]],
) -> None:
    """The edits that use the region's hold variable: holding statements and handlers, and
    handlers and suppresses that keep what they catch."""
    for boundary, mode in boundaries:
        if mode is Hold.HANDLER:
            edits.add_handler[id(boundary)] = hold
        else:
            edits.wrap[id(boundary)] = hold
        if mode is Hold.PASSING:
            edits.passing.add(id(boundary))
    for handler in targets.handlers:
        edits.keep[id(handler.node)] = keep_handler(handler, targets.tree, hold)
    module = targets.tree.snippet.module
    for enclosure in targets.suppresses:
        edits.suppress[id(enclosure.node)] = keep_suppress(enclosure, module, targets.tree, hold)


def _note(component: Component, edits: Edits) -> str:
    """What the rewrite does, in a sentence a reviewer reads."""
    parts = []
    for targets in component.regions:
        lines = sorted({targets.tree.span(point.node).line for point in targets.points})
        words = targets.region.kind.words
        shield = edits.blocks[id(targets.body)].shield
        if lines and shield is not None:
            parts.append(
                f"run the awaits at line(s) {_listed(lines)} in `{shield.scope}(shield=True)` "
                "so that a cancel cannot cut them short"
            )
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


def _indent(snippet: Snippet) -> str:
    """The function's own indentation step (the wrapper a nested function is parsed in sets
    the module's default to the function's whole indentation)."""
    body = snippet.function.body
    if isinstance(body, cst.IndentedBlock) and body.indent is not None:
        return body.indent
    indented = snippet.module.body[0] is not snippet.function
    return "    " if indented else snippet.module.default_indent


def make_fix(component: Component, edits: Edits, lines: list[str], note: str, where: str) -> Fix:
    """The rewrite as a replacement of the whole lines it changes."""
    snippet = component.tree.snippet
    old_code, first_line = _function_code(snippet.module, snippet)
    rewritten = snippet.module.visit(Rewriter(snippet.module, edits, _indent(snippet)))
    new_code, _ = _function_code(rewritten, snippet)
    old, new = old_code.splitlines(keepends=True), new_code.splitlines(keepends=True)
    start, end, added = _changed(old, new)
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
    return make_fix(component, edits, lines, _note(component, edits), where)


# ---------------------------------------------------------------------------------------------
# The file


@dataclass
class SourceFixes:
    """The reported findings with their Fix (same order), and the text with every available
    fix applied (None when nothing changes)."""

    findings: list[Finding]
    fixed: str | None = None


def apply_fixes(text: str, fixes: Sequence[Fix]) -> str:
    """`text` with each fix's lines replaced; fixes must not overlap."""
    lines = source_lines(text)
    for fix in sorted(fixes, key=lambda f: f.start_line, reverse=True):
        assert fix.replacement is not None
        lines[fix.start_line - 1 : fix.end_line] = [fix.replacement]
    return "".join(lines)


def _key(finding: Finding) -> tuple[str, str]:
    """What identifies a finding across rewrites: its code and anchor (function and text)."""
    return finding.code, re.sub(r"#\d+$", "", finding.anchor)


def _failing(
    path: str, text: str, fixed: list[Component], analysed: Analysed, options: _Options
) -> list[Component]:
    """The components whose rewrite leaves a finding it was for (all of them when the fixed
    text does not compile)."""
    new_text = apply_fixes(text, [c.rewrite for c in fixed])
    again = analyse(path, new_text, options.settings, options.summaries)
    if again is None:
        return fixed
    targeted = {f.fingerprint for c in fixed for f in c.findings}
    untargeted = [f for f in analysed.findings if f.fingerprint not in targeted]
    left = _fixable(path, new_text, again.findings, options)
    failing, shift = [], 0
    for component in sorted(fixed, key=lambda c: c.rewrite.start_line):
        fix = component.rewrite
        size = len(source_lines(fix.replacement or ""))
        if _leaves(fix, fix.start_line + shift, size, untargeted, left):
            failing.append(component)
        shift += size - (fix.end_line - fix.start_line + 1)
    return failing


def _fixable(path: str, text: str, findings: list[Finding], options: _Options) -> list[Finding]:
    """The findings a run would report (selected, not `# noqa`ed) whose rule has a fix."""
    reported = without_noqa(options.chosen.apply(findings), {path: suppressions(text)})
    return [f for f in reported if autofix_of(f) is not None]


def _leaves(fix: Fix, start: int, size: int, untargeted: list[Finding], left: list[Finding]):
    """Is a finding left in the fixed lines (`size` lines from `start`) that was not one the
    fix left alone on purpose (deselected, suppressed, outside `--diff`)?"""
    before = {_key(f) for f in untargeted if fix.start_line <= f.location.line <= fix.end_line}
    inside = [f for f in left if start <= f.location.line < start + size]
    return any(_key(f) not in before for f in inside)


def _overlapping(grouped: list[Component]) -> None:
    """Fixes whose lines overlap (a nested function's and its enclosing region's) cannot be
    applied at once: the inner one goes first, the outer one in the next round."""
    taken: list[Fix] = []
    for component in sorted(grouped, key=lambda c: c.fix.end_line - c.fix.start_line):  # type: ignore[union-attr]
        fix = component.fix
        if fix is None or not fix.available:
            continue
        clash = next(
            (t for t in taken if t.start_line <= fix.end_line and fix.start_line <= t.end_line),
            None,
        )
        if clash is None:
            taken.append(fix)
            continue
        component.fix = replace(
            fix,
            replacement=None,
            note=f"the fix at lines {clash.start_line}-{clash.end_line} (a nested function) "
            "overlaps this one; `gate check --fix` applies them one after the other",
        )


@dataclass(frozen=True)
class _Options:
    settings: GateConfig
    chosen: Selection
    summaries: Sequence[ModuleSummary] = ()


def _round(path: str, text: str, wanted: set[tuple[str, str]], options: _Options):
    """One round of planning on `text` for the findings whose key is `wanted`: the components
    with their Fix, and the text with the available ones applied (None: nothing changes)."""
    analysed = analyse(path, text, options.settings, options.summaries)
    if analysed is None:
        return [], None
    lines = source_lines(text)
    targeted = [f for f in analysed.findings if _key(f) in wanted]
    grouped = components(match(FactIndex(analysed.analysis, analysed.trees), targeted))
    for component in grouped:
        component.fix = plan_component(component, analysed, lines)
    _overlapping(grouped)
    fixed = _verified(path, text, grouped, analysed, options)
    new_text = apply_fixes(text, [c.fix for c in fixed if c.fix is not None])
    return grouped, new_text if fixed and new_text != text else None


def _verified(
    path: str, text: str, grouped: list[Component], analysed: Analysed, options: _Options
) -> list[Component]:
    """The components whose fix is proven: applied together, the text compiles and no longer
    has what they were for. The others lose their rewrite and say that gate failed."""
    fixed = [c for c in grouped if c.fix is not None and c.fix.available]
    while fixed:
        failing = _failing(path, text, fixed, analysed, options)
        if not failing:
            break
        for component in failing:
            component.fix = replace(component.fix, replacement=None, note=BUG_NOTE)  # type: ignore[arg-type]
        fixed = [c for c in fixed if all(c is not f for f in failing)]
    return fixed


ROUNDS = 3  # nested functions with fixes of their own need one round per level


def fix_source(
    path: str,
    text: str,
    reported: Sequence[Finding],
    settings: GateConfig,
    chosen: Selection,
    rounds: int = ROUNDS,
    summaries: Sequence[ModuleSummary] = (),
) -> SourceFixes:
    """Plan a fix for every reported finding whose rule has one; see the module docs.

    The findings come back with the Fix planned on `text` (what a review suggests); `fixed` is
    the text after up to `rounds` rounds of fixes (what `--fix` writes). `summaries` are the
    project's, as the run that reported the findings had them.
    """
    wanted = {_key(f) for f in reported if autofix_of(f) is not None}
    if not wanted:
        return SourceFixes(list(reported))
    options = _Options(settings, chosen, summaries)
    grouped, fixed = _round(path, text, wanted, options)
    by_fingerprint = {f.fingerprint: c.fix for c in grouped for f in c.findings}
    findings = [replace(f, fix=by_fingerprint.get(f.fingerprint, f.fix)) for f in reported]
    current = fixed
    for _ in range(rounds - 1):
        if current is None:
            break
        fixed = current
        _, current = _round(path, current, wanted, options)
    return SourceFixes(findings, current or fixed)
