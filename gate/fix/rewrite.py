"""The libcst transformer that applies planned edits to one parsed function.

Edits are keyed by `id()` of the original nodes the plan chose, so the transformer never
searches: it rebuilds exactly the blocks, handlers and statements it was told about and hands
every other node back untouched, comments and formatting included.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

SHIELD_COMMENT = (
    "# Shielded: a cancel cannot cut this teardown short. If it can hang, bound it instead:",
    "# with {library}.move_on_after(SECONDS, shield=True):",
)


@dataclass(frozen=True)
class Keep:
    """A handler that keeps what it catches in `hold`; `only_cancellation` when it also
    catches ordinary exceptions, which it keeps swallowing."""

    hold: str
    only_cancellation: bool


@dataclass(frozen=True)
class SuppressToTry:
    """A `with suppress(...)` that becomes a `try`: `others` stay suppressed, cancellation is
    kept in `hold` (`catch` is the handler's type)."""

    hold: str
    others: tuple[str, ...]
    catch: str
    also_exception: bool  # suppress(BaseException): ordinary exceptions stay suppressed


@dataclass(frozen=True)
class Shield:
    """Statements `first`..`last` of a block go under `scope` (e.g. `trio.CancelScope`)."""

    first: int
    last: int
    scope: str
    library: str


@dataclass
class BlockEdit:
    """What changes in a region's own block: the hold variable's start before statement
    `init_before`, its re-raise at the end (or before the trailing `raise` at `reraise_before`),
    and a shielded range."""

    hold: str | None = None
    init_before: int | None = None
    reraise_before: int | None = None
    shield: Shield | None = None


@dataclass
class Edits:
    """Every change to one function, by id() of the original node."""

    error: str = "error"
    wrap: dict[int, str] = field(default_factory=dict)  # statement -> hold variable
    passing: set[int] = field(default_factory=set)  # wrapped statements that pass Exceptions on
    add_handler: dict[int, str] = field(default_factory=dict)  # try -> hold variable
    keep: dict[int, Keep] = field(default_factory=dict)  # except handler
    suppress: dict[int, SuppressToTry] = field(default_factory=dict)  # with statement
    blocks: dict[int, BlockEdit] = field(default_factory=dict)  # region block
    # a `return`/`break`/`continue` leaving a region: the hold is re-raised before it
    guard: dict[int, str] = field(default_factory=dict)

    def splits(self, small: cst.CSTNode) -> bool:
        """Must this small statement stand on a line of its own?"""
        return id(small) in self.wrap or id(small) in self.guard


class _Templates:
    """Statements parsed in the function's own indentation."""

    def __init__(self, module: cst.Module, error: str, indent: str) -> None:
        self.config = module.config_for_parsing
        self.indent = indent
        self.error = error

    def block(self, body: Sequence[cst.BaseStatement]) -> cst.IndentedBlock:
        return cst.IndentedBlock(body=body, indent=self.indent)

    def statement(self, code: str) -> cst.BaseStatement:
        return cst.parse_statement(code, self.config)

    def handlers(self, code: str) -> Sequence[cst.ExceptHandler]:
        parsed = self.statement(f"try:\n{self.indent}pass\n{code}")
        assert isinstance(parsed, cst.Try)
        return parsed.handlers

    def hold_handler(self, hold: str, passing: bool = False) -> cst.ExceptHandler:
        """`except BaseException as error: hold = hold or error`; when `passing`, an
        `Exception` is re-raised first, for the guards around to see."""
        pass_on = (
            f"{self.indent}if isinstance({self.error}, Exception):\n{self.indent * 2}raise\n"
            if passing
            else ""
        )
        return self.handlers(
            f"except BaseException as {self.error}:\n{pass_on}"
            f"{self.indent}{hold} = {hold} or {self.error}\n"
        )[0]

    def keep_statement(self, hold: str, name: str, only_cancellation: bool) -> cst.BaseStatement:
        keep = f"{hold} = {hold} or {name}\n"
        if only_cancellation:
            return self.statement(f"if not isinstance({name}, Exception):\n{self.indent}{keep}")
        return self.statement(keep)

    def init(self, hold: str) -> cst.BaseStatement:
        return self.statement(f"{hold}: BaseException | None = None\n")

    def reraise(self, hold: str) -> cst.BaseStatement:
        return self.statement(f"if {hold} is not None:\n{self.indent}raise {hold}\n")


def split_leading(
    lines: Sequence[cst.EmptyLine],
) -> tuple[list[cst.EmptyLine], list[cst.EmptyLine]]:
    """Leading lines cut after the last blank one: (the blank-separated part that stays above
    a new enclosing statement, the comments right above the statement that stay with it)."""
    cut = max((index + 1 for index, line in enumerate(lines) if line.comment is None), default=0)
    return list(lines[:cut]), list(lines[cut:])


def _with_leading(statement: cst.BaseStatement, lines: list[cst.EmptyLine]) -> cst.BaseStatement:
    return statement.with_changes(leading_lines=lines)


def _lines_of_suite(suite: cst.SimpleStatementSuite) -> list[cst.BaseStatement]:
    """A one-line block's statements, each on its own line."""
    smalls = list(suite.body)
    lines: list[cst.BaseStatement] = []
    for index, small in enumerate(smalls):
        last = index == len(smalls) - 1
        alone = small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        line = cst.SimpleStatementLine(body=[alone])
        if last:
            line = line.with_changes(trailing_whitespace=suite.trailing_whitespace)
        lines.append(line)
    return lines


class Rewriter(cst.CSTTransformer):
    """Applies `Edits` to the function they were planned on."""

    def __init__(self, module: cst.Module, edits: Edits, indent: str) -> None:
        super().__init__()
        self.edits = edits
        self.templates = _Templates(module, edits.error, indent)
        self.guards: set[int] = set()  # the re-raises put before a `return` (by id)

    # -- statements that change in place

    def leave_ExceptHandler(
        self, original_node: cst.ExceptHandler, updated_node: cst.ExceptHandler
    ) -> cst.ExceptHandler:
        keep = self.edits.keep.get(id(original_node))
        if keep is None:
            return updated_node
        name = original_node.name
        if name is not None and isinstance(name.name, cst.Name):
            bound = name.name.value
        else:
            bound = self.edits.error
            updated_node = updated_node.with_changes(
                type=updated_node.type or cst.Name("BaseException"),
                whitespace_after_except=cst.SimpleWhitespace(" "),
                name=cst.AsName(name=cst.Name(bound)),
            )
        statement = self.templates.keep_statement(keep.hold, bound, keep.only_cancellation)
        body = _append(updated_node.body, statement, self.templates.indent, self.guards)
        return updated_node.with_changes(body=body)

    def leave_Try(self, original_node: cst.Try, updated_node: cst.Try) -> cst.Try:
        hold = self.edits.add_handler.get(id(original_node))
        if hold is None:
            return updated_node
        handler = self.templates.hold_handler(hold)
        return updated_node.with_changes(handlers=[*updated_node.handlers, handler])

    def leave_With(self, original_node: cst.With, updated_node: cst.With) -> cst.BaseStatement:
        plan = self.edits.suppress.get(id(original_node))
        if plan is None:
            return updated_node
        indent, error = self.templates.indent, self.edits.error
        code = ""
        if plan.others:
            others = plan.others[0] if len(plan.others) == 1 else f"({', '.join(plan.others)})"
            code += f"except {others}:\n{indent}pass\n"
        if plan.also_exception:
            code += f"except Exception:\n{indent}pass\n"
        code += f"except {plan.catch} as {error}:\n{indent}{plan.hold} = {plan.hold} or {error}\n"
        handlers = self.templates.handlers(code)
        return cst.Try(
            body=updated_node.body, handlers=handlers, leading_lines=updated_node.leading_lines
        )

    # -- blocks

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        groups = [
            self._statement(original, updated)
            for original, updated in zip(original_node.body, updated_node.body, strict=True)
        ]
        groups = self._block_edit(original_node, groups)
        return updated_node.with_changes(body=[s for group in groups for s in group])

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.BaseSuite:
        split = any(self.edits.splits(small) for small in original_node.body)
        if not split and id(original_node) not in self.edits.blocks:
            return updated_node
        lines = _lines_of_suite(updated_node)
        groups = [
            self._alone(original, line)
            for original, line in zip(original_node.body, lines, strict=True)
        ]
        groups = self._block_edit(original_node, groups)
        return self.templates.block([s for group in groups for s in group])

    def _statement(
        self, original: cst.BaseStatement, updated: cst.BaseStatement
    ) -> list[cst.BaseStatement]:
        if isinstance(original, cst.SimpleStatementLine) and isinstance(
            updated, cst.SimpleStatementLine
        ):
            if any(self.edits.splits(small) for small in original.body):
                return self._split_line(original, updated)
            return [updated]
        hold = self.edits.wrap.get(id(original))
        if hold is None:
            return [updated]
        return [self._wrap(updated, hold, id(original) in self.edits.passing)]

    def _split_line(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> list[cst.BaseStatement]:
        """A line of `;`-separated statements, cut so that each wrapped or guarded one stands
        alone."""
        pieces: list[tuple[cst.CSTNode | None, list[cst.BaseSmallStatement]]] = []
        for small, new in zip(original.body, updated.body, strict=True):
            alone = self.edits.splits(small)
            if alone or not pieces or pieces[-1][0] is not None:
                pieces.append((small if alone else None, []))
            pieces[-1][1].append(new)
        statements: list[cst.BaseStatement] = []
        for index, (small, smalls) in enumerate(pieces):
            smalls[-1] = smalls[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            line = cst.SimpleStatementLine(body=smalls)
            if index == 0:
                line = line.with_changes(leading_lines=updated.leading_lines)
            if index == len(pieces) - 1:
                line = line.with_changes(trailing_whitespace=updated.trailing_whitespace)
            statements += self._alone(small, line) if small is not None else [line]
        return statements

    def _alone(self, small: cst.CSTNode, line: cst.BaseStatement) -> list[cst.BaseStatement]:
        """The line of one small statement, wrapped in a hold or guarded by a re-raise."""
        hold = self.edits.wrap.get(id(small))
        if hold is not None:
            return [self._wrap(line, hold, id(small) in self.edits.passing)]
        hold = self.edits.guard.get(id(small))
        if hold is not None:
            above, own = split_leading(line.leading_lines)
            guard = _with_leading(self.templates.reraise(hold), above)
            self.guards.add(id(guard))
            return [guard, _with_leading(line, own)]
        return [line]

    def _wrap(self, statement: cst.BaseStatement, hold: str, passing: bool = False) -> cst.Try:
        above, own = split_leading(statement.leading_lines)
        return cst.Try(
            body=self.templates.block([_with_leading(statement, own)]),
            handlers=[self.templates.hold_handler(hold, passing)],
            leading_lines=above,
        )

    def _block_edit(
        self, original: cst.BaseSuite, groups: list[list[cst.BaseStatement]]
    ) -> list[list[cst.BaseStatement]]:
        edit = self.edits.blocks.get(id(original))
        if edit is None:
            return groups
        if edit.hold is not None:
            if edit.init_before is not None:
                groups[edit.init_before] = self._before(groups[edit.init_before], edit.hold)
            reraise = self.templates.reraise(edit.hold)
            if edit.reraise_before is not None:
                groups[edit.reraise_before] = [reraise, *groups[edit.reraise_before]]
            else:
                groups.append([reraise])
        if edit.shield is not None:
            groups = self._shield(groups, edit.shield)
        return groups

    def _before(self, group: list[cst.BaseStatement], hold: str) -> list[cst.BaseStatement]:
        """The hold variable's start, placed above the group and below any blank line that
        separated the group from what came before."""
        first = group[0]
        above, own = split_leading(first.leading_lines)
        init = _with_leading(self.templates.init(hold), above)
        return [init, _with_leading(first, own), *group[1:]]

    def _shield(
        self, groups: list[list[cst.BaseStatement]], shield: Shield
    ) -> list[list[cst.BaseStatement]]:
        inside = [s for group in groups[shield.first : shield.last + 1] for s in group]
        above, own = split_leading(inside[0].leading_lines)
        inside[0] = _with_leading(inside[0], own)
        comments = [
            cst.EmptyLine(comment=cst.Comment(text.format(library=shield.library)))
            for text in SHIELD_COMMENT
        ]
        scope = cst.parse_expression(f"{shield.scope}(shield=True)")
        statement = cst.With(
            items=[cst.WithItem(item=scope)],
            body=self.templates.block(inside),
            leading_lines=[*above, *comments],
        )
        return [*groups[: shield.first], [statement], *groups[shield.last + 1 :]]


def _append(
    body: cst.BaseSuite, statement: cst.BaseStatement, indent: str, guards: set[int]
) -> cst.BaseSuite:
    """`statement` added at the end of a block, before a final `return`/`break`/`continue`
    (and the re-raise guarding it, whose id is in `guards`); a block that is only a bare
    `pass` is replaced."""
    single = isinstance(body, cst.SimpleStatementSuite)
    lines = _lines_of_suite(body) if single else list(body.body)  # type: ignore[arg-type]
    if len(lines) == 1 and _bare_pass(lines[0]):
        kept = lines[0]
        lines = [statement.with_changes(leading_lines=kept.leading_lines)]
    else:
        at = len(lines)
        if at and _exits(lines[at - 1]):
            at -= 1
            if at and id(lines[at - 1]) in guards:
                at -= 1
        lines.insert(at, statement)
    if isinstance(body, cst.IndentedBlock):
        return body.with_changes(body=lines)
    return cst.IndentedBlock(body=lines, indent=indent)


def _exits(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(
        statement.body[-1], cst.Return | cst.Break | cst.Continue
    )


def _bare_pass(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Pass)
        and statement.trailing_whitespace.comment is None
    )
