"""Cleanup that only an error handler runs: the handlers narrower than cancellation, after a
`try` body a cancel can interrupt, and what they give back (facts for cleanup-only-on-error)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import libcst as cst

from gate.analysis.candidates import GREENLET_BRIDGES, FunctionSpan
from gate.analysis.cstwalk import descendants
from gate.analysis.facts import Consequence, HandlerStep, NarrowHandler
from gate.analysis.summary import FunctionSummary
from gate.analysis.vocabulary import Vocabulary
from gate.analysis.walker import (
    _unconditional_raise,
    bookkeeping,
    cancel_handler_index,
    child_suites,
    collect,
    dotted_name,
    ends_with,
    exception_names,
    final_name,
    loop_receivers,
    statements,
)

if TYPE_CHECKING:
    from gate.analysis.walker import _Analyser as Analyser


def narrow_handlers(analyser: Analyser, span: FunctionSpan) -> list[NarrowHandler]:
    """The narrow handlers of one function, with the cleanup they do."""
    return _NarrowHandlers(analyser, span).found


LOGGING_NAMES = frozenset(
    {"log", "logger", "logging", "LOGGER", "_LOGGER", "_logger", "warnings", "print"}
)


LOG_LEVELS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "trace"}
)


def _logs(call: cst.Call) -> bool:
    """A logging call: of a logger (`logger.warning(...)`, `log.error(...)`), at a level, or
    of a method whose name starts with the word log (`self.log("error", m)`, `self._log_it(m)`)."""
    name = dotted_name(call.func) or ""
    method = name.split(".")[-1]
    return (
        name.split(".")[0] in LOGGING_NAMES
        or method in LOG_LEVELS
        or method.lstrip("_").split("_")[0] == "log"
    )


def _release(
    vocabulary: Vocabulary,
    call: cst.Call,
    name: str,
    source: str | None,
    exit_stack: Callable[[str], bool] | None = None,
) -> Consequence | None:
    """What skipping a give-back step costs; None when the call gives nothing back. `source`:
    what the loop around the call iterates over, when its receiver is the loop's item;
    `exit_stack`: whether the project records that a receiver holds an exit stack."""
    if not vocabulary.releases(name):
        return None
    receiver = dotted_name(call.func.value) if isinstance(call.func, cst.Attribute) else None
    stack = receiver is not None and exit_stack is not None and exit_stack(receiver)
    return vocabulary.consequence(name, receiver, source, exit_stack=stack)


# What a handler may catch that abandons the work as a cancel does: a timeout, and Ctrl-C, which
# a sync program gets as KeyboardInterrupt where asyncio delivers a cancel to the main task
ABANDONING = frozenset({"Exception", "TimeoutError", "KeyboardInterrupt"})


def _broad_or_timeout(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """`except Exception:`, `except TimeoutError:` (a timeout abandons the work as a cancel
    does), `except KeyboardInterrupt:` (under asyncio, Ctrl-C reaches the awaiting task as a
    cancel, so the handler never runs), a tuple with one; a bare or BaseException handler
    catches cancellation anyway."""
    return any(name in ABANDONING for name in exception_names(handler.type))


def _goes_on(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """An `except Exception:` (or a tuple with it) whose block does not always end by leaving
    (a raise, return, break or continue): after an error, the function goes on past the `try`."""
    return "Exception" in exception_names(handler.type) and not _leaves(handler.body)


LEAVING = (cst.Raise, cst.Return, cst.Break, cst.Continue)


def _leaves(body: cst.BaseSuite) -> bool:
    """Does the block end by leaving on every path: a raise, return, break or continue last, or
    an `if` whose every arm, `else` included, leaves?"""
    if ends_with(body, LEAVING):
        return True
    listed = statements(body)
    last = listed[-1] if listed else None
    while isinstance(last, cst.If):
        if not _leaves(last.body) or last.orelse is None:
            return False
        if isinstance(last.orelse, cst.Else):
            return _leaves(last.orelse.body)
        last = last.orelse
    return False


def _give_backs(listed: Sequence[cst.BaseStatement]) -> Iterator[tuple[cst.Call, str]]:
    """The calls that may give something back by name in the statements right after a `try`, up
    to the first that awaits: not a logging call, one whose result decides a branch, or one in
    an `except` clause (which runs for an error of its own)."""
    for statement in listed:
        if isinstance(statement, cst.FunctionDef | cst.ClassDef):
            continue
        skipped = _tested_calls(statement) | _handled_calls(statement)
        found = collect(statement)
        for call in found.calls:
            name = final_name(call.func)
            if name is not None and not _logs(call) and id(call) not in skipped:
                yield call, name
        if found.awaits or isinstance(statement, cst.Try | cst.TryStar):
            return


def _handled_calls(statement: cst.CSTNode) -> set[int]:
    """The calls in the `except` clauses at or below the statement, by id."""
    return {
        id(call)
        for node in descendants(statement)
        if isinstance(node, cst.ExceptHandler | cst.ExceptStarHandler)
        for call in collect(node.body).calls
    }


def _dotted_names(nodes: Sequence[cst.CSTNode]) -> set[str]:
    """The dotted names the code reads or binds (`lc`, `self._room`, `self`)."""
    return {
        name
        for node in nodes
        for below in descendants(node)
        if isinstance(below, cst.Name | cst.Attribute) and (name := dotted_name(below))
    }


def _acts_on(call: cst.Call) -> set[str]:
    """The dotted names of what a call acts on: its receiver and its named arguments."""
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    values = [receiver, *(arg.value for arg in call.args)]
    return {name for value in values if value is not None and (name := dotted_name(value))}


def _catches_timeout(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    return "TimeoutError" in exception_names(handler.type)


def _reraises(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """Does the handler end by re-raising what it caught (a bare `raise`, or `raise name` of the
    name it binds)? A handler that raises something else translates the error instead."""
    caught = _caught_name(handler)
    for statement in statements(handler.body):
        if not isinstance(statement, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            continue
        for small in statement.body:
            if not isinstance(small, cst.Raise):
                continue
            if small.exc is None or (isinstance(small.exc, cst.Name) and small.exc.value == caught):
                return True
    return False


def _caught_name(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> str | None:
    """The name an `except ... as name:` binds."""
    if handler.name is not None and isinstance(handler.name.name, cst.Name):
        return handler.name.name.value
    return None


def _handles_the_error(
    handler: cst.ExceptHandler | cst.ExceptStarHandler, call: cst.Call, made: bool = True
) -> bool:
    """Is the call handed the caught exception and nothing else but constants
    (`discard_frames(exc)`, `self._wrap_stop_error(e)`, `errors.append(("cancel", exc))`)?
    With `made`, what the handler made of the error counts as the error too
    (`self._signal_error(Wrapped.from_exception(e))`, `error = str(e)` then `report(error)`).
    It reports, keeps or translates the error: nothing the `try` acquired is given back."""
    caught = _caught_name(handler)
    if caught is None or not call.args:
        return False
    errors = _made_of_the_error(handler, caught) if made else {caught}
    seen = False
    for value in _flattened_arguments(call):
        if _names_any(value, errors) if made else _is_name(value, caught):
            seen = True
        elif not _constant(value):
            return False
    return seen


def _flattened_arguments(call: cst.Call) -> list[cst.BaseExpression]:
    """The call's argument values, with the elements of a tuple or list in place of it."""
    flat = []
    values = [arg.value for arg in call.args]
    while values:
        value = values.pop()
        if isinstance(value, cst.Tuple | cst.List):
            values += [element.value for element in value.elements]
        else:
            flat.append(value)
    return flat


def _is_name(value: cst.BaseExpression, name: str) -> bool:
    return isinstance(value, cst.Name) and value.value == name


def _made_of_the_error(handler: cst.ExceptHandler | cst.ExceptStarHandler, caught: str) -> set[str]:
    """The caught name and the names the handler binds, at its top, to a value made of it
    (`error = SerializableException.from_exception(e)`)."""
    made = {caught}
    for statement in statements(handler.body):
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                    and _names_any(small.value, made)
                ):
                    made.add(small.targets[0].target.value)
    return made


def _names_any(value: cst.BaseExpression, names: set[str]) -> bool:
    """Is the value one of `names`, or an expression that reads one of them (`str(e)`,
    `f"{e}"`, `make(e)`), not a lambda or comprehension that only may?"""
    if isinstance(value, cst.Name):
        return value.value in names
    pending: list[cst.CSTNode] = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Name) and node.value in names:
            return True
        if isinstance(node, cst.Attribute):
            pending.append(node.value)  # `.attr` and a keyword's name are no reads
        elif isinstance(node, cst.Arg):
            pending.append(node.value)
        elif not isinstance(node, cst.Lambda | cst.BaseComp | cst.Name):
            pending.extend(node.children)
    return False


def _constant(value: cst.BaseExpression) -> bool:
    """A string, a number, None, True or False."""
    if isinstance(value, cst.Name):
        return value.value in ("None", "True", "False")
    return isinstance(value, cst.BaseString | cst.Integer | cst.Float)


def _is_statement_call(handler: cst.ExceptHandler | cst.ExceptStarHandler, call: cst.Call) -> bool:
    """Is the call a statement of its own (`x.release(conn)`, `await pool.discard(c)`) at the top
    of the handler, not an argument or a condition?"""
    for statement in statements(handler.body):
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                value = small.value if isinstance(small, cst.Expr) else None
                if isinstance(value, cst.Await):
                    value = value.expression
                if value is call:
                    return True
    return False


def _undoes(handler: cst.ExceptHandler | cst.ExceptStarHandler, call: cst.Call) -> bool:
    """A call statement of the handler on `self` itself (`self._abort()`,
    `self.fail_connection(1011)`) that is not handed the caught error (which reports it)."""
    func = call.func
    if not (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value == "self"
        and _is_statement_call(handler, call)
    ):
        return False
    caught = _caught_name(handler)
    return not any(
        isinstance(arg.value, cst.Name) and arg.value.value == caught for arg in call.args
    )


def _attribute_targets(small: cst.BaseSmallStatement) -> list[str]:
    """The attributes of `self` an assignment statement sets (`self.error`): state of the
    object itself, which other code reads (a local object's flag is the timeout's own business)."""
    if isinstance(small, cst.Assign):
        targets = [target.target for target in small.targets]
    elif isinstance(small, cst.AnnAssign | cst.AugAssign):
        targets = [small.target]
    else:
        return []
    names = [dotted_name(t) for t in targets if isinstance(t, cst.Attribute)]
    return [name for name in names if name and name.startswith("self.")]


# The names of the cancellation exceptions a handler may test the caught error for
CANCEL_CLASS_NAMES = frozenset({"CancelledError", "Cancelled"})


def _cancel_test(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> cst.Call | None:
    """The handler's `isinstance(error, CancelledError)` (or `(CancelledError, Other)`) of
    the name it binds, not negated: a branch for what the handler, narrower than cancellation,
    never catches."""
    caught = _caught_name(handler)
    if caught is None:
        return None
    # `if not isinstance(error, CancelledError):` leaves out what never comes: no bug
    negated = {
        id(node.expression)
        for node in descendants(handler.body)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not)
    }
    calls = collect(handler.body).calls
    return next((c for c in calls if id(c) not in negated and _tests_for(c, caught)), None)


def _tests_for(call: cst.Call, caught: str) -> bool:
    """Is the call `isinstance(caught, ...)` with a cancellation exception among the classes?"""
    if final_name(call.func) != "isinstance" or len(call.args) != 2:
        return False
    tested = call.args[0].value
    return (
        isinstance(tested, cst.Name)
        and tested.value == caught
        and _names_cancel(call.args[1].value)
    )


def _names_cancel(classes: cst.BaseExpression) -> bool:
    """Does `isinstance`'s second argument name a cancellation exception (alone or in a tuple)?"""
    listed = [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
    return any(final_name(listed_class) in CANCEL_CLASS_NAMES for listed_class in listed)


def _resets(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> list[HandlerStep]:
    """The attributes of `self` a handler that re-raises sets to None at its top
    (`self._connection = None`): the object forgets what the failed work left half made, so a
    cancel that bypasses the handler leaves it claiming it (`Already connected`)."""
    steps = []
    for statement in statements(handler.body):
        if not isinstance(statement, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            continue
        for small in statement.body:
            targets = _attribute_targets(small) if isinstance(small, cst.Assign) else []
            if targets and _is_none(small.value):  # type: ignore[attr-defined]
                steps.append(HandlerStep(small, f"{targets[0]} = None", Consequence.BEST_EFFORT))
    return steps


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _awaited_names(body: cst.CSTNode) -> set[str]:
    """Names the function binds to an awaited value: `conn = await pool.acquire()`."""
    names: set[str] = set()
    for node in descendants(body):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Await):
            for target in node.targets:
                names |= _bound(target.target)
    return names


def _bound(target: cst.BaseExpression) -> set[str]:
    """The names an assignment target binds: `conn`, `a, *rest`; none for `self._conn` or
    `items[0]`, which set a part of another object."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, cst.Tuple | cst.List):
        return {name for element in target.elements for name in _bound(element.value)}
    if isinstance(target, cst.StarredElement):
        return _bound(target.value)
    return set()


def _tested_calls(body: cst.CSTNode) -> set[int]:
    """The calls whose result decides a branch (`if lease.begin_shutdown():`): they ask, and
    the cleanup is what the branch then does."""
    return {
        id(call)
        for node in descendants(body)
        if isinstance(node, cst.If | cst.While)
        for call in collect(node.test).calls
    }


def _released_on(
    statement: cst.BaseStatement, receiver: str | None, vocabulary: Vocabulary
) -> bool:
    """Is the statement a release of `receiver` run to its end: `receiver.terminate()` alone on
    its line, or alone in a `with` block (`with suppress(ProcessLookupError):`)?"""
    if isinstance(statement, cst.With) and len(statements(statement.body)) == 1:
        statement = statements(statement.body)[0]
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    call = small.value if isinstance(small, cst.Expr) else None
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and receiver is not None
        and dotted_name(call.func.value) == receiver
        and vocabulary.releases(call.func.attr.value)
    )


def _binds(statement: cst.CSTNode, receiver: str | None) -> bool:
    """Does the statement assign to `receiver` (`self._con = None`)?"""
    return any(
        isinstance(node, cst.AssignTarget) and dotted_name(node.target) == receiver
        for node in descendants(statement)
    )


def _raise_branch(
    statement: cst.BaseStatement, handler: cst.ExceptHandler | cst.ExceptStarHandler
) -> bool:
    """Is the statement an `if` with no `else` whose body re-raises what the handler caught
    (`if not self.suppress_cancelled_error: raise`)?"""
    return (
        isinstance(statement, cst.If)
        and statement.orelse is None
        and _unconditional_raise(statement.body)
        and _reraises_in(statement.body, _caught_name(handler))
    )


def _reraises_in(body: cst.BaseSuite, caught: str | None) -> bool:
    """Does a raise at the top of the block re-raise the caught error (a bare `raise`, or
    `raise name` of the name the handler binds)?"""
    for statement in statements(body):
        if isinstance(statement, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            for small in statement.body:
                if isinstance(small, cst.Raise) and (
                    small.exc is None
                    or (isinstance(small.exc, cst.Name) and small.exc.value == caught)
                ):
                    return True
    return False


def _call_statement(statement: cst.BaseStatement) -> cst.Call | None:
    """The call a statement of its own makes (`self._record(s)`, `await pool.discard(c)`)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    value = small.value if isinstance(small, cst.Expr) else None
    if isinstance(value, cst.Await):
        value = value.expression
    return value if isinstance(value, cst.Call) else None


def _kept_by_other_handlers(statement: cst.Try | cst.TryStar, index: int) -> set[str]:
    """The dotted names the `try`'s handlers other than `index` call before they re-raise,
    less those its `finally:` calls anyway."""
    kept = set().union(
        *(_calls_before_reraise(h) for i, h in enumerate(statement.handlers) if i != index)
    )
    if statement.finalbody is not None:
        kept -= {dotted_name(c.func) for c in collect(statement.finalbody.body).calls}
    return kept


def _named_calls(listed: Sequence[cst.BaseStatement]) -> list[tuple[cst.Call, str]]:
    """The calls the statements make as statements of their own, with their dotted names."""
    found = []
    for statement in listed:
        call = _call_statement(statement)
        name = dotted_name(call.func) if call is not None else None
        if call is not None and name is not None:
            found.append((call, name))
    return found


def _calls_before_reraise(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> set[str]:
    """The dotted names a handler that ends by re-raising calls, as statements of its own,
    before that raise (none when it does not re-raise at its top level)."""
    listed = statements(handler.body)
    caught = _caught_name(handler)
    for index, statement in enumerate(listed):
        block = cst.IndentedBlock(body=[statement])
        if isinstance(statement, cst.SimpleStatementLine) and _reraises_in(block, caught):
            return {name for _, name in _named_calls(listed[:index])}
    return set()


def _cancels(step: HandlerStep) -> bool:
    """Is the step a `x.cancel()`?"""
    return step.label.endswith(".cancel()")


def _waits_for(node: cst.Await, name: str) -> bool:
    """Is the await `asyncio.wait_for(name, ...)`?"""
    call = node.expression
    if not isinstance(call, cst.Call) or final_name(call.func) != "wait_for" or not call.args:
        return False
    return dotted_name(call.args[0].value) == name


def _first_bridge(calls: list[cst.Call]) -> cst.Call | None:
    return next((call for call in calls if final_name(call.func) in GREENLET_BRIDGES), None)


class _NarrowHandlers:
    """The handlers narrower than cancellation, after an interruptible `try` body, in one
    function (not in nested definitions), with the cleanup they do."""

    def __init__(self, analyser: Analyser, span: FunctionSpan) -> None:
        self.analyser = analyser
        self.span = span
        snippet = analyser.snippet_of(span)
        self.module = snippet.module
        self.body = snippet.function.body
        self.found: list[NarrowHandler] = []
        self.cancel_paths: set[str] = set()
        self.tries: list[cst.Try | cst.TryStar] = []
        # the statements before and after each `try` in its block, by id of the `try`
        self.before: dict[int, Sequence[cst.BaseStatement]] = {}
        self.after: dict[int, Sequence[cst.BaseStatement]] = {}
        self._collect(snippet.function.body)
        for statement in [] if self._shielded_by_callers() else self.tries:
            self._judge(statement)
        analyser.node_snippets.update(
            (id(node), snippet)
            for found in self.found
            for node in (found.handler, found.interrupt, *(step.node for step in found.steps))
        )
        analyser.node_snippets.update(
            (id(node), snippet)
            for found in self.found
            for node in (found.cancel_test, found.raised_at)
            if node is not None
        )

    def _shielded_by_callers(self) -> bool:
        """Does every place in the project that runs the function shield it (a task it runs
        in that is only waited on through `asyncio.shield` or `asyncio.wait`)? Then no cancel
        lands inside it, and a handler narrower than cancellation misses nothing."""
        project = self.analyser.project
        return (
            self.span.is_async
            and project is not None
            and project.shielded_by_callers(self.span.qualname)
        )

    @functools.cached_property
    def loop_receivers(self) -> dict[int, str]:
        return loop_receivers(self.body)

    @functools.cached_property
    def awaited_names(self) -> set[str]:
        """Read only for a handler's candidate give-back calls: most functions have none."""
        return _awaited_names(self.body)

    def _collect(self, body: cst.BaseSuite) -> None:
        listed = statements(body)
        for index, statement in enumerate(listed):
            if isinstance(statement, cst.FunctionDef | cst.ClassDef):
                continue
            if isinstance(statement, cst.Try | cst.TryStar):
                self._note_try(statement)
                self.before[id(statement)] = listed[:index]
                self.after[id(statement)] = listed[index + 1 :]
            for suite in child_suites(statement):
                self._collect(suite)

    def _note_try(self, statement: cst.Try | cst.TryStar) -> None:
        """Keep the `try`, and the names its cancellation handler and `finally:` call."""
        self.tries.append(statement)
        index = cancel_handler_index(statement)
        cancel_bodies = [statement.handlers[index].body] if index is not None else []
        if statement.finalbody is not None:
            cancel_bodies.append(statement.finalbody.body)
        for block in cancel_bodies:
            self.cancel_paths |= {final_name(call.func) or "" for call in collect(block).calls}

    def _interrupt(self, statement: cst.Try | cst.TryStar) -> cst.Await | cst.Call | None:
        """The first await of the try body that can suspend; in a sync function, the first call
        of a greenlet bridge (`await_only(conn.close())`)."""
        if not self.span.is_async:
            return _first_bridge(collect(statement.body).calls)
        return next(self._cancel_exits(statement), None)

    def _cancel_exits(self, statement: cst.Try | cst.TryStar) -> Iterator[cst.Await]:
        """The awaits of the try body a cancel can come out of: each that can suspend, unless
        it runs a project function that keeps every cancel landing in it."""
        for node in collect(statement.body).awaits:
            call = node.expression if isinstance(node.expression, cst.Call) else None
            summary = self._callee(dotted_name(call.func) if call is not None else None)
            if summary is None or (
                summary.suspends and not summary.shielded and not summary.keeps_cancel
            ):
                yield node

    def _not_done_by_the_wait(
        self,
        statement: cst.Try | cst.TryStar,
        interrupt: cst.Await | cst.Call,
        steps: list[HandlerStep],
    ) -> list[HandlerStep]:
        """The steps but each `x.cancel()` of what every await a cancel can come out of waits
        for with `asyncio.wait_for(x, ...)`: wait_for cancels what it waits for when it is
        cancelled. In a sync function the interrupt is a greenlet bridge's call: none is."""
        if not isinstance(interrupt, cst.Await) or not any(map(_cancels, steps)):
            return steps
        exits = list(self._cancel_exits(statement))
        return [
            step
            for step in steps
            if not _cancels(step)
            or not all(_waits_for(node, step.label.removesuffix(".cancel()")) for node in exits)
        ]

    def _container(self, receiver: str) -> bool:
        project = self.analyser.project
        return project is not None and project.container(
            self.span.qualname, self.span.self_class, receiver
        )

    def _exit_stack(self, receiver: str) -> bool:
        project = self.analyser.project
        return project is not None and project.exit_stack(
            self.span.qualname, self.span.self_class, receiver
        )

    def _callee(self, awaited: str | None) -> FunctionSummary | None:
        project = self.analyser.project
        if project is None or not awaited:
            return None
        return project.callee(self.span.qualname, self.span.self_class, awaited)

    def _judge(self, statement: cst.Try | cst.TryStar) -> None:
        index = cancel_handler_index(statement)
        interrupt = self._interrupt(statement)
        if interrupt is None:
            return
        if index is not None:
            self._raised_first(statement, index, interrupt)
            return  # the cancel has a handler of its own
        self._after_the_try(statement, interrupt)
        for handler in statement.handlers:
            test = _cancel_test(handler)
            if test is not None:
                self.found.append(self._tested(handler, interrupt, test))
            steps = self._not_done_by_the_wait(
                statement, interrupt, self._steps(statement, handler, _broad_or_timeout(handler))
            )
            if steps and not self._nothing_to_undo(statement, steps):
                self.found.append(self._cleaning(handler, interrupt, steps))

    def _cleaning(
        self,
        handler: cst.ExceptHandler | cst.ExceptStarHandler,
        interrupt: cst.CSTNode,
        steps: Sequence[HandlerStep] = (),
        **facts: Any,
    ) -> NarrowHandler:
        """The handler, the first await a cancel can come out of, and the cleanup steps that
        cancel skips, not counting those the function also runs on the cancel's own path
        (unless `facts` says otherwise)."""
        cleaned = {s.label.removesuffix("()").rsplit(".", 1)[-1] for s in steps}
        facts.setdefault("cleaned_elsewhere", bool(cleaned & self.cancel_paths))
        return NarrowHandler(
            function=self.span.qualname,
            function_lines=(self.span.first_line, self.span.last_line),
            handler=handler,
            interrupt=interrupt,
            interrupt_text=self._code(interrupt),
            steps=tuple(steps),
            **facts,
        )

    def _after_the_try(self, statement: cst.Try | cst.TryStar, interrupt: cst.CSTNode) -> None:
        """The give-back steps that follow a `try` with no `finally:` whose `except Exception:`
        lets the function go on: placed to run whether the work succeeds or fails, they do not
        run when a cancel, no Exception, leaves the `try` body."""
        handler = next((h for h in statement.handlers if _goes_on(h)), None)
        if handler is None or statement.finalbody is not None:
            return
        steps = self._steps_after(statement)
        if steps:
            self.found.append(self._cleaning(handler, interrupt, steps, after=True))

    def _steps_after(self, statement: cst.Try | cst.TryStar) -> list[HandlerStep]:
        """The give-back steps right after the `try`, of what was there in or before it."""
        steps = [
            HandlerStep(call, f"{dotted_name(call.func) or name}()", consequence)
            for call, name in _give_backs(self.after.get(id(statement), ()))
            if (consequence := self._released(statement, call, name)) is not None
        ]
        if not steps:
            return steps
        seen = _dotted_names([*self.before.get(id(statement), ()), statement])
        return [step for step in steps if _acts_on(step.node) & seen]  # type: ignore[arg-type]

    def _raised_first(
        self, statement: cst.Try | cst.TryStar, index: int, interrupt: cst.Await | cst.Call
    ) -> None:
        """The steps of a cancellation handler placed after a re-raise it may take (`if not
        self.suppress: raise`), which another handler of the same `try` takes before it
        re-raises (`except BaseException: self._record_failure(s, e); raise`): the error paths
        do the bookkeeping, the cancel that takes the raise skips it."""
        handler = statement.handlers[index]
        listed = statements(handler.body)
        gate_at = next((i for i, s in enumerate(listed) if _raise_branch(s, handler)), None)
        if gate_at is None:
            return
        kept_by_others = _kept_by_other_handlers(statement, index)
        steps = [
            HandlerStep(call, f"{name}()", self._bookkeeping_cost(name))
            for call, name in _named_calls(listed[gate_at + 1 :])
            if name in kept_by_others
        ]
        if steps:
            self.found.append(
                self._cleaning(
                    handler, interrupt, steps, cleaned_elsewhere=False, raised_at=listed[gate_at]
                )
            )

    def _bookkeeping_cost(self, name: str) -> Consequence:
        """What skipping a step the error paths take costs: as its name says, best effort for
        one whose name says nothing."""
        receiver, _, method = name.rpartition(".")
        cost = self.analyser.vocabulary.consequence(method, receiver or None)
        return cost or Consequence.BEST_EFFORT

    def _tested(
        self,
        handler: cst.ExceptHandler | cst.ExceptStarHandler,
        interrupt: cst.CSTNode,
        test: cst.CSTNode,
    ) -> NarrowHandler:
        return self._cleaning(handler, interrupt, cancel_test=test)

    def _nothing_to_undo(self, statement: cst.Try | cst.TryStar, steps: list[HandlerStep]) -> bool:
        """Would the handler's steps do nothing on a cancel's path? So when each is a method of
        `self` that returns unless a flag of `self` is set (`shutdown()`: `if not
        self._initialized: return`), and every await of the `try` body that can suspend is a
        method of `self` that sets that flag only once its work is done (`initialize()`): the
        cancel lands while the flag is still false (gate.analysis.state_flags)."""
        flag = self._flag_required(steps)
        return bool(flag) and all(
            self._suspends_before_setting(node, flag) for node in collect(statement.body).awaits
        )

    def _flag_required(self, steps: list[HandlerStep]) -> str:
        """The one flag of `self` every step's method returns early without ("" for none)."""
        required = set()
        for step in steps:
            node = step.node
            summary = self._own_method(node.func) if isinstance(node, cst.Call) else None
            required.add(summary.requires if summary is not None else "")
        return required.pop() if len(required) == 1 else ""

    def _suspends_before_setting(self, node: cst.Await, flag: str) -> bool:
        """Does this await never suspend, or only inside a method of `self` before it sets
        `flag`?"""
        call = node.expression
        summary = self._own_method(call.func) if isinstance(call, cst.Call) else None
        return summary is not None and (not summary.suspends or summary.completes == flag)

    def _own_method(self, func: cst.BaseExpression) -> FunctionSummary | None:
        """The summary of `self.name`, a method the call runs on the same object."""
        name = dotted_name(func) or ""
        receiver, _, method = name.rpartition(".")
        return self._callee(name) if receiver == "self" and method else None

    def _steps(
        self,
        statement: cst.Try | cst.TryStar,
        handler: cst.ExceptHandler | cst.ExceptStarHandler,
        broad: bool,
    ) -> list[HandlerStep]:
        """Steps that give something back, by name, in a broad or timeout handler; a call that
        hands back something the function acquired with an await, in a handler that cleans up
        and re-raises or in a broad one; in a broad handler that re-raises, a call on `self` that
        undoes the object's state (`self._abort()`); in a timeout handler, a state change (a
        cancel abandons the wait as the timeout does). A handler for one other error is that
        error's own branch."""
        steps = []
        asked = _tested_calls(handler.body)
        for call in collect(handler.body).calls:
            name = final_name(call.func)
            if name is None or _logs(call) or id(call) in asked:
                continue
            consequence = self._cost(statement, handler, call, name, broad)
            if consequence is not None:
                label = f"{dotted_name(call.func) or name}()"
                steps.append(HandlerStep(call, label, consequence))
        if _catches_timeout(handler):
            steps += self._state_changes(handler)
        elif broad and _reraises(handler):
            steps += _resets(handler)
        return steps

    def _cost(
        self,
        statement: cst.Try | cst.TryStar,
        handler: cst.ExceptHandler | cst.ExceptStarHandler,
        call: cst.Call,
        name: str,
        broad: bool,
    ) -> Consequence | None:
        """What skipping this call of the handler costs, None when it is no cleanup."""
        if self._handles_only_the_error(handler, call, name):
            return None
        consequence = self._released(statement, call, name) if broad else None
        if consequence is not None:
            return consequence
        reraises = _unconditional_raise(handler.body)
        if (reraises or broad) and self._gives_back(handler, call):
            return Consequence.LOSES_WORK
        if broad and _reraises(handler) and _undoes(handler, call):
            return Consequence.BEST_EFFORT
        return None

    def _released(
        self, statement: cst.Try | cst.TryStar, call: cst.Call, name: str
    ) -> Consequence | None:
        """What skipping a give-back step by name costs: best effort when what it runs in the
        project only takes best-effort steps itself, or when it escalates a release the code
        already made on the same object (`process.terminate()`, then `process.kill()` in the
        handler for the wait that timed out)."""
        source = self.loop_receivers.get(id(call))
        consequence = _release(self.analyser.vocabulary, call, name, source, self._exit_stack)
        receiver = dotted_name(call.func.value) if isinstance(call.func, cst.Attribute) else None
        if consequence is Consequence.LOSES_WORK and bookkeeping(name, receiver, self._container):
            return Consequence.BEST_EFFORT
        if consequence is Consequence.LOSES_WORK and (
            self._runs_best_effort(call) or self._released_before(statement, call)
        ):
            return Consequence.BEST_EFFORT
        return consequence

    def _released_before(self, statement: cst.Try | cst.TryStar, call: cst.Call) -> bool:
        """Did the code release the object the call releases just before, with a call of its
        own that has finished (`process.terminate()` as a statement, in the `try`'s block or
        at the top of its body), and not bind the name to another object since?"""
        if not isinstance(call.func, cst.Attribute):
            return False
        receiver = dotted_name(call.func.value)
        leading = itertools.takewhile(lambda s: not collect(s).awaits, statements(statement.body))
        earlier = [*self.before.get(id(statement), ()), *leading]
        for index, previous in enumerate(earlier):
            released = _released_on(previous, receiver, self.analyser.vocabulary)
            if released and not any(_binds(later, receiver) for later in earlier[index + 1 :]):
                return True
        return False

    def _runs_best_effort(self, call: cst.Call) -> bool:
        """Does the call run a project function whose own steps are all best effort?"""
        summary = self._callee(dotted_name(call.func))
        return summary is not None and summary.steps_best_effort

    def _state_changes(
        self, handler: cst.ExceptHandler | cst.ExceptStarHandler
    ) -> list[HandlerStep]:
        """Assignments to an attribute at the top of the handler (`self.error = PoolTimeout()`):
        state other code reads to learn that this wait was given up. Not one that keeps the
        caught error (`self._err = e`): it records what failed, and a cancel is no failure."""
        steps = []
        caught = _caught_name(handler)
        made = _made_of_the_error(handler, caught) if caught is not None else set()
        for statement in statements(handler.body):
            if not isinstance(statement, cst.SimpleStatementLine | cst.SimpleStatementSuite):
                continue
            for small in statement.body:
                targets = _attribute_targets(small)
                value = getattr(small, "value", None)
                if targets and not (value is not None and _names_any(value, made)):
                    label = f"{targets[0]} = ..."
                    steps.append(HandlerStep(small, label, Consequence.BEST_EFFORT))
        return steps

    def _handles_only_the_error(
        self, handler: cst.ExceptHandler | cst.ExceptStarHandler, call: cst.Call, name: str
    ) -> bool:
        """Is the call handed only the caught error, and not a release by name of a value the
        function bound to an await (`conn.terminate(exc)` after `conn = await pool.acquire()`)?"""
        # an exit handed the error (`ctx.__aexit__(type(e), e, e.__traceback__)`) still exits
        if not _handles_the_error(handler, call, made=not self.analyser.vocabulary.releases(name)):
            return False
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        return not (
            isinstance(receiver, cst.Name)
            and receiver.value in self.awaited_names
            and self.analyser.vocabulary.releases(name)
        )

    def _gives_back(
        self, handler: cst.ExceptHandler | cst.ExceptStarHandler, call: cst.Call
    ) -> bool:
        """A call statement of the handler whose receiver or argument is a name the function
        bound to an awaited value (`ch = await queue.get()` ... `queue.put_nowait(ch)`), of a
        function the code calls only when something failed: a call it also makes on its way
        without an error (a reply sent with a token it refreshed) uses the value."""
        if not _is_statement_call(handler, call):
            return False
        if dotted_name(call.func) in self.unhandled_callees:
            return False  # the function makes this call on its way without an error too: a use
        names = {arg.value.value for arg in call.args if isinstance(arg.value, cst.Name)}
        if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name):
            names.add(call.func.value.value)
        return bool(names & self.awaited_names)

    @functools.cached_property
    def unhandled_callees(self) -> set[str]:
        """The dotted names the function calls outside its `except` clauses (read only for a
        handler's candidate give-back calls)."""
        handled = {
            id(call)
            for node in descendants(self.body)
            if isinstance(node, cst.ExceptHandler | cst.ExceptStarHandler)
            for call in collect(node.body).calls
        }
        return {
            name
            for call in collect(self.body).calls
            if id(call) not in handled and (name := dotted_name(call.func)) is not None
        }

    def _code(self, node: cst.CSTNode) -> str:
        text = self.module.code_for_node(node).strip()
        first = text.splitlines()[0] if text else ""
        return first if len(first) <= 80 else first[:77] + "..."
