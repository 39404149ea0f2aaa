"""One group of overlapping teardown regions (usually one) planned as one Fix: the edits for
the rewriter, and the rewritten function turned into a replacement of whole lines."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import libcst as cst

from gate.analysis.walker import Snippet
from gate.fix.analysed import Analysed, shield_scope
from gate.fix.plan import (
    Hold,
    RegionTargets,
    Unsafe,
    block_edit,
    exits,
    held_from,
    hold_boundaries,
    keep_handler,
    keep_suppress,
    shield_range,
    statements_of,
    useful_holds,
)
from gate.fix.rewrite import Edits, Rewriter
from gate.fix.tree import FunctionTree, all_names, fresh_name
from gate.model import Finding, Fix


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
        held = {id(node) for node, _ in boundaries.values()}
        leaving = [n for n in leaving if not _caught_by_hold(targets, n, held)]
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


def _caught_by_hold(targets: RegionTargets, node: cst.CSTNode, held: set[int]) -> bool:
    """Is `node` a `raise` inside a statement the fix wraps in a hold (which catches it)?"""
    if not isinstance(node, cst.Raise):
        return False
    return any(id(parent) in held for parent in targets.tree.ancestors(node))


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
