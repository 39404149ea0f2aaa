"""A summary of every function in the project, so that an awaited call can be judged by what its
callee does: does awaiting it suspend at all, does a shield cover all of it, do its own steps
survive a cancel landing inside it, does it hold the interrupt and return.

Summaries come from a cheap `ast` pass over each file (cached with the file's other per-file
results); calls are resolved across the project through imports (absolute and relative),
`self`/`cls` methods and base classes defined in the project.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import ClassVar, NamedTuple, Protocol

from gate.analysis.cancellation import catches_cancellation, opens_shield
from gate.analysis.candidates import named_teardown
from gate.analysis.facts import Consequence
from gate.analysis.locks import (
    NEVER_BLOCKING_WHEN_FREE,
    entered_only_in,
    never_held_across_suspension,
)
from gate.analysis.state_flags import completing_flag, required_flag
from gate.analysis.vocabulary import (
    CONTAINER_TYPES,
    EXIT_STACK_TYPES,
    THREAD_WRAPPERS,
    Vocabulary,
    documents_best_effort,
    name_words,
    names_exit_stack,
    only_waits,
)
from gate.astwalk import (
    HOLDS_STATEMENTS,
    LEAVES,
    PerType,
    child_nodes,
    child_statements,
    dotted,
    node_fields,
    parameters_of,
    self_class_of,
    walk_nodes,
)
from gate.config import TeardownConfig


@dataclass(frozen=True)
class FunctionSummary:
    """What awaiting a function does, as far as a caller's teardown is concerned.

    `suspends`: its own body can suspend (an await, `async for`, `async with`). `shielded`: every
    suspension is inside a shielded trio/anyio scope (or a project context manager that opens
    one). `cut_safe`: an interrupt inside it loses none of its work: nothing leaves a suspension
    exposed, or it has steps of its own and none can be skipped or cut (they come before the
    first exposed suspension, or run on the interrupt's own path, in a `finally:` or the handler
    the cancel lands in). `holds`: every suspension is inside a `try`
    whose cancellation handler keeps the interrupt and does not re-raise it, so it returns
    normally. `shield_managers`: the names of the context managers it relies on for `shielded`,
    resolved against the project when it is looked up. `best_effort`: its docstring says so.
    `own_steps` and `steps_best_effort`: what skipping it costs, judged by what it does rather
    than by its name.
    """

    suspends: bool
    shielded: bool
    cut_safe: bool
    holds: bool
    shield_managers: tuple[str, ...] = ()
    # a step of its own comes after a suspension (in an earlier statement) a cancel can land
    # in, off the interrupt's path: the work it does after that suspension is lost
    steps_cut: bool = False
    best_effort: bool = False  # its docstring calls it best effort
    # the dotted names of the calls it awaits, when every suspension of its body is such an
    # await (None otherwise): it never suspends when none of them does, which the project
    # decides when it is looked up
    awaits: tuple[str, ...] | None = None
    # the dotted names of the calls awaited where no handler holds the interrupt and no shield
    # covers it, when every such suspension is an await of a call (None otherwise): it holds
    # every interrupt when none of them suspends, which the project decides when it is looked up
    unheld: tuple[str, ...] | None = None
    # its own steps, in source order: (the dotted name called, whether its name says it is
    # best effort); a `# gate: critical` line in its body is a step of no name
    own_steps: tuple[tuple[str, bool], ...] = ()
    # per own step: it names nothing outside the process and neither keeps nor destroys
    # anything, which makes it best effort in a teardown method
    steps_in_process: tuple[bool, ...] = ()
    # set when the project looks it up: it takes steps, and every one is best effort, by its
    # name or (a project function) by what it does in turn
    steps_best_effort: bool = False
    # it routes the loop's signals to handlers of its own (`loop.add_signal_handler`, itself
    # or through a function of its module it calls): run as `asyncio.run`'s main coroutine,
    # Ctrl-C no longer cancels it
    routes_signals: bool = False
    # its parameters' names, positional ones first in order: what a call site passes a
    # callback as (`finalize=_finalize_result`) is matched to the name the body awaits
    params: tuple[str, ...] = ()
    # an attribute of `self` without which it returns before doing anything (`if not
    # self._initialized: return`), and one it sets true only once its work is done (see
    # gate.analysis.state_flags)
    requires: str = ""
    completes: str = ""
    # when it is not cut-safe: the calls it awaits, exposed and doing work, without which it
    # would be (None otherwise); it is cut-safe when each holds every interrupt, which the
    # project decides when it is looked up (nats' `flush()`: `await self._send_ping(f)`, whose
    # `_flush_pending()` swallows a cancel, then `await asyncio.wait_for(f, timeout)`, a wait)
    cut_safe_if_held: tuple[str, ...] | None = None
    # when a suspension runs only as a parameter says (`if not nowait: await w.wait_closed()`):
    # each suspension's dotted name ("" for one of no call) and the (parameter, truthiness) its
    # `if`s require; empty when none depends on a parameter. A call that passes the parameter
    # as a constant skips the suspensions it rules out (`disconnect(nowait=True)`).
    awaits_when: tuple[tuple[str, tuple[tuple[str, bool], ...]], ...] = ()
    # when it is not cut-safe: what an interrupt inside it can lose, the steps a cut skips or
    # stops and the exposed awaits that do work, each as (the dotted name, whether its name
    # says it is best effort, whether it names nothing outside the process and neither keeps
    # nor destroys anything); None when one of those has no name
    cut_loses: tuple[tuple[str, bool, bool], ...] | None = None
    # set when the project looks it up: everything a cut can lose is best effort, by its name,
    # as an in-process step of a teardown method, or (a project function) by what it does
    cut_best_effort: bool = False
    # it raises an exception it holds in a name, or re-raises one (`raise cancellation`, a bare
    # `raise`): a cancel its handlers keep may still come out of it
    raises_kept: bool = False
    # set when the project looks it up: no cancel comes out of it, its own handlers or the
    # project functions it awaits keep each one and none raises it again (nats'
    # `_send_ping`, whose `_flush_pending` ends in `except CancelledError: pass`)
    keeps_cancel: bool = False


# In which task a call site runs what it calls: the caller's own (an await), the main task of
# `asyncio.run(...)` (or `loop.run_until_complete(...)`), or another one (a task it creates, a
# function handed on as a value). AFTER_CANCEL: a hook that aiohttp's `run_app` runs from its
# main task's `finally:`, entered by the one cancel it delivers on SIGINT or SIGTERM.
SAME_TASK, MAIN_TASK, OTHER_TASK, AFTER_CANCEL = "same", "main", "other", "after-cancel"


class CallSite(NamedTuple):
    """Where a function may be run from: an awaited call (`shielded` when a shield covers the
    await, or `asyncio.shield(...)` runs it to completion), or a call or name passed on as an
    argument (`tg.start_soon(self.close)`, `create_task(self.close())`), never shielded."""

    name: str  # the final name called
    receiver: str | None  # `self._logger` in `self._logger.cleanup()`; None for a bare name
    caller: str  # qualname of the function it is in ("" at module level)
    owner: str  # that function's class qualname ("" outside a class)
    shielded: bool
    task: str = OTHER_TASK  # SAME_TASK, MAIN_TASK, OTHER_TASK or AFTER_CANCEL
    # the names it passes that may be functions: (position as digits, or keyword; dotted name)
    arguments: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ModuleSummary:
    """One file's functions and classes, and how its names resolve."""

    module: str  # dotted module name, from the project-relative path
    functions: Mapping[str, FunctionSummary]  # by qualname
    classes: Mapping[str, tuple[str, ...]]  # qualname -> base names, resolved to dotted names
    shield_managers: frozenset[str]  # qualnames of classes whose __enter__ opens a shield scope
    imports: Mapping[str, str]  # local name -> dotted target
    # what `self.name = Cls(...)` in a class's methods, and `name = Cls(...)` in a function,
    # say a name holds: (class or function qualname, name) -> the called name as written
    types: Mapping[tuple[str, str], str] = field(default_factory=dict)
    sites: tuple[CallSite, ...] = ()
    # unbounded asyncio queues, whose `await q.put(x)` never suspends: (class qualname, attr)
    # for `self.attr = asyncio.Queue()`, (function qualname, name) for a local
    queues: frozenset[tuple[str, str]] = frozenset()
    # qualnames of the async methods that are stubs (abstract, `...`, `raise
    # NotImplementedError`): extension points, run through the project's implementations
    stubs: frozenset[str] = frozenset()


def module_name(relative: str) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod`; a package's `__init__.py` is the package."""
    parts = relative.removesuffix(".pyi").removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(part for part in parts if part)


def _final(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def call_name(node: ast.expr) -> str | None:
    """How the project looks up an awaited call: its dotted name, with a subscript of the
    receiver kept as `[N]` for an integer and `[]` for any other key
    (`self._request_streams[request_id][0].aclose` -> `self._request_streams[][0].aclose`)."""
    if isinstance(node, ast.Attribute):
        base = call_name(node.value)
        return None if base is None else f"{base}.{node.attr}"
    if isinstance(node, ast.Subscript):
        base = call_name(node.value)
        key = node.slice
        index = key.value if isinstance(key, ast.Constant) and type(key.value) is int else ""
        return None if base is None else f"{base}[{index}]"
    return dotted(node)


def _handler_names(handler: ast.ExceptHandler) -> list[str | None]:
    node = handler.type
    if node is None:
        return [None]
    elements = node.elts if isinstance(node, ast.Tuple) else [node]
    return [f"{_final(e.func)}()" if isinstance(e, ast.Call) else _final(e) for e in elements]


def _ends_raising(body: list[ast.stmt]) -> bool:
    return any(isinstance(statement, ast.Raise) for statement in body)


def _shield_call(call: ast.expr) -> bool:
    if not isinstance(call, ast.Call):
        return False
    values = [
        False if isinstance(keyword.value, ast.Constant) and keyword.value.value is False else None
        for keyword in call.keywords
        if keyword.arg == "shield"
    ]
    return opens_shield(_final(call.func), values)


# What a walk has exposed so far: an unguarded suspension, one that does work, a statement after
# one, and the `try` statements each such suspension was in (`_Walk`'s fields of those names)
Exposure = tuple[bool, bool, bool, tuple[tuple[int, ...], ...]]


@dataclass
class _Context:
    """What encloses the code being walked."""

    shielded: bool = False
    managers: tuple[str, ...] = ()  # with-item calls that might open a shield scope
    holding: bool = False
    protected: tuple[int, ...] = ()  # ids of try statements whose finally/cancel handler we're in
    # in a handler that does not catch the cancel: another exception's path
    other_path: bool = False
    # the (parameter, truthiness) the enclosing `if`s require (`if not nowait:`)
    when: tuple[tuple[str, bool], ...] = ()


@dataclass
class _Walk:
    """One function body in source order: its suspensions and steps, with what encloses them."""

    vocabulary: Vocabulary
    # whether a called name is a step's, remembered for the module being summarised
    step_names: dict[str, bool] = field(default_factory=dict)
    suspensions: list[_Context] = field(default_factory=list)
    # per suspension that neither holds nor is shielded: the dotted name of the call it awaits
    # (None for an `async with`, an `async for` or an await of no call)
    unheld: list[str | None] = field(default_factory=list)
    exposed: bool = False  # an unguarded suspension was seen
    exposed_work: bool = False  # one that does more than wait (`event.wait()`, `task.join()`)
    after_exposed: bool = False  # a statement runs after an unguarded suspension
    exposed_in: list[tuple[int, ...]] = field(default_factory=list)
    cut: bool = False  # a step came after an exposed suspension, off the interrupt's path
    # the indices in own_steps of the steps that came after an exposed suspension, off the
    # interrupt's path
    cut_steps: list[int] = field(default_factory=list)
    # per own step: it names nothing outside the process and neither keeps nor destroys
    in_process: list[bool] = field(default_factory=list)
    steps: int = 0
    tries: list[int] = field(default_factory=list)
    # a step came after an exposed suspension of an earlier statement (its own await is its
    # callee's business), off the interrupt's path
    cut_later: bool = False
    exposed_earlier: bool = False
    awaited: list[tuple[ast.Call, bool]] = field(default_factory=list)  # (call, shielded)
    own_steps: list[tuple[str, bool]] = field(default_factory=list)
    # an awaited call that never suspends (a put on an unbounded asyncio.Queue)
    never_suspends: Callable[[ast.Call], bool] = lambda call: False
    opens_shield: Callable[[str], bool] = lambda name: False
    # awaited calls walked as if they held every interrupt (`_cut_safe_if_held`)
    held_calls: frozenset[str] = frozenset()
    # the exposed awaited calls that do more than wait, by dotted name (None for no name)
    working: list[str | None] = field(default_factory=list)
    params: frozenset[str] = frozenset()  # the function's parameters' names
    # per suspension, what it awaits and the parameter conditions it runs under: the dotted
    # name of the call, or of each `async with` manager's enter and exit (`manager.__aenter__`);
    # "" for one of no name (`async for`, `await x`, a manager of no name)
    suspended_on: list[tuple[str, tuple[tuple[str, bool], ...]]] = field(default_factory=list)

    def cut_safe(self) -> bool:
        """Does an interrupt inside the function lose none of its work? With no step of its
        own, the work is whatever the exposed await does: none when it only waits and no step
        comes after it (`self._stop.set(); await self._stopped.wait()`, and then attributes
        reset for a later start: fastmcp's `StdioTransport.disconnect`)."""
        if not self.exposed or (not self.exposed_work and not (self.after_exposed and self.cut)):
            return True
        return self.steps > 0 and not self.cut

    def suspend(self, context: _Context, waits: bool = False, call: ast.Call | None = None) -> None:
        """A suspension; `waits`: an await that only waits (`self._done.wait()`), whose cut
        loses no work of this function's own; `call`: the call it awaits."""
        self.suspensions.append(context)
        name = call_name(call.func) if call is not None else None
        self.suspended_on.append((name or "", context.when))
        if name is not None and name in self.held_calls:
            return
        if not (context.shielded or context.holding):
            self.unheld.append(name)
            self.exposed = True
            self.exposed_in.append(tuple(self.tries))
            self.exposed_work = self.exposed_work or not waits
            if not waits:
                self.working.append(name)

    def step(self, context: _Context, best_effort: bool = False) -> None:
        self.steps += 1
        if not self.exposed:
            return
        # a step survives an interrupt that landed inside a try whose finally/handler it is in
        survives = all(
            any(try_id in context.protected for try_id in tries) for tries in self.exposed_in
        )
        # a best-effort step on another exception's path (`except TimeoutError:
        # future.cancel()`) loses nothing the cancel's own path needed
        survives = survives or (best_effort and context.other_path)
        if not survives and not context.shielded:
            self.cut = True
            self.cut_later = self.cut_later or self.exposed_earlier
            self.cut_steps.append(len(self.own_steps))

    def expression(self, node: ast.AST, context: _Context) -> None:
        """Suspensions and steps inside one statement's expressions, in evaluation order."""
        built: set[int] | None = None  # found when a step is: most statements take none
        for child in _awaits_and_calls(node):
            if isinstance(child, ast.Await):
                self._await(child, context)
            elif isinstance(child, ast.Call) and self._is_step(child):
                built = _built_calls(node) if built is None else built
                self._take_step(child, context, built)

    def _await(self, node: ast.Await, context: _Context) -> None:
        """An await: a suspension unless the call it awaits never suspends."""
        if isinstance(node.value, ast.Call) and self.never_suspends(node.value):
            return
        call = node.value if isinstance(node.value, ast.Call) else None
        self.suspend(context, call is not None and _loses_no_work(call), call)
        if call is not None:
            self.awaited.append((call, context.shielded))

    def _take_step(self, call: ast.Call, context: _Context, built: set[int]) -> None:
        """A call that is a step by its name, unless it builds a value (`_built_calls`)."""
        if id(call) not in built:
            taken = self._step_of(call)
            self.step(context, best_effort=taken[1])
            self.own_steps.append(taken)
            self.in_process.append(self._in_process(call, taken[0]))

    def _is_step(self, call: ast.Call) -> bool:
        # `consequence(name, receiver)` is None exactly when `matched(name)` is
        name = _final(call.func)
        if not name:
            return False
        known = self.step_names.get(name)
        if known is None:
            known = self.step_names[name] = self.vocabulary.matched(name) is not None
        return known

    def _step_of(self, call: ast.Call) -> tuple[str, bool]:
        name = _final(call.func)
        receiver = dotted(call.func.value) if isinstance(call.func, ast.Attribute) else None
        cost = self.vocabulary.consequence(name, receiver)
        return dotted(call.func) or name, cost is Consequence.BEST_EFFORT

    def _in_process(self, call: ast.Call, label: str) -> bool:
        """Does the step name nothing outside the process, by its call or what it passes, and
        neither keep data nor destroy something by its name (as a teardown method's steps are
        judged: `self._server.close()` is; `self._sandbox.kill()` and
        `self._exit_stack.aclose()` are not)? A call of the function's own object or module
        (`self._remove_temp()`) is not either: it is the project's, judged by its body."""
        passed = "_".join(filter(None, (dotted(argument) for argument in call.args)))
        receiver = dotted(call.func.value) if isinstance(call.func, ast.Attribute) else None
        if not isinstance(call.func, ast.Attribute) or receiver in ("self", "cls"):
            return False  # the project's own code, judged by its body where it is summarised
        closes_stack = names_exit_stack(receiver)
        return self.vocabulary.in_process(label, passed, call.func.attr, closes_stack)

    def body(self, statements: list[ast.stmt], context: _Context) -> None:
        for statement in statements:
            self.exposed_earlier = self.exposed
            if self.exposed and not isinstance(statement, ast.Return | ast.Pass):
                self.after_exposed = True
            self.statement(statement, context)
            if _sets_shield(statement):
                context = _replace(context, shielded=True)

    def statement(self, node: ast.stmt, context: _Context) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return
        if isinstance(node, ast.Try | _TRY_STAR):
            self._try(node, context)
        elif isinstance(node, ast.With | ast.AsyncWith):
            self._with(node, context)
        elif isinstance(node, ast.AsyncFor):
            self.expression(node.iter, context)
            self.suspend(context)
            self.body(node.body, context)
            self.body(node.orelse, context)
        elif isinstance(node, ast.If):
            self.expression(node.test, context)
            self._branches(node, context)
        elif isinstance(node, ast.For | ast.While):
            self.expression(node.iter if isinstance(node, ast.For) else node.test, context)
            self.body(node.body, context)
            self.body(node.orelse, context)
        elif isinstance(node, ast.Match):
            self.expression(node.subject, context)
            for case in node.cases:
                self.body(case.body, context)
        else:
            self.expression(node, context)

    def _branches(self, node: ast.If, context: _Context) -> None:
        """The two arms of an `if`, each from the state before it: what follows the `if` is
        preceded by the suspensions of the arms that do not leave the function (`if dead:
        await self._flush_pending(); return` exposes nothing to the code after it)."""
        tested = _parameter_test(node.test, self.params)
        body_context, else_context = context, context
        if tested is not None:
            name, truthy = tested
            body_context = _replace(context, when=(*context.when, (name, truthy)))
            else_context = _replace(context, when=(*context.when, (name, not truthy)))
        before = self._exposure()
        self.body(node.body, body_context)
        after_body = self._exposure()
        self._restore(before)
        self.body(node.orelse, else_context)
        after_else = self._exposure()
        ways_on = [
            state
            for state, arm in ((after_body, node.body), (after_else, node.orelse))
            if not _leaves(arm)
        ]
        self._restore(_merged_exposure(ways_on or [before]))

    def _exposure(self) -> Exposure:
        return self.exposed, self.exposed_work, self.after_exposed, tuple(self.exposed_in)

    def _restore(self, state: Exposure) -> None:
        self.exposed, self.exposed_work, self.after_exposed = state[0], state[1], state[2]
        self.exposed_in = list(state[3])

    def _with(self, node: ast.With | ast.AsyncWith, context: _Context) -> None:
        inner = context
        for item in node.items:
            self.expression(item.context_expr, context)
            inner = self._entered(item.context_expr, inner)
        if isinstance(node, ast.AsyncWith):
            self.suspend(context)
            names = [manager_name(item.context_expr) for item in node.items]
            if None not in names:  # what the suspension awaits: each manager's enter and exit
                entered = [f"{name}.{method}" for name in names for method in MANAGER_METHODS]
                self.suspended_on[-1:] = [(name, context.when) for name in entered]
        self.body(node.body, inner)

    def _entered(self, manager: ast.expr, inner: _Context) -> _Context:
        """The context a `with` item's body runs in: shielded by a shield call or by a
        manager that opens one, holding under `suppress(CancelledError)`, else with the
        manager's name kept for the project to resolve."""
        name = dotted(manager.func) if isinstance(manager, ast.Call) else None
        if _shield_call(manager) or (name and self.opens_shield(name)):
            return _replace(inner, shielded=True)
        if _suppresses_cancellation(manager):
            return _replace(inner, holding=True)  # `with suppress(CancelledError):`
        if name:
            return _replace(inner, managers=(*inner.managers, name))
        return inner

    def _try(self, node: ast.Try, context: _Context) -> None:
        cancel = next((h for h in node.handlers if catches_cancellation(_handler_names(h))), None)
        holds = cancel is not None and not _ends_raising(cancel.body)
        self.tries.append(id(node))
        self.body(node.body, _replace(context, holding=context.holding or holds))
        self.tries.pop()
        protected = _replace(context, protected=(*context.protected, id(node)))
        for handler in node.handlers:
            # with a cancel handler, the other handlers are the other exceptions' paths: what
            # they do is not lost on a cancel, which takes its own
            alternative = cancel is not None and handler is not cancel
            entered = protected if handler is cancel or alternative else context
            if handler is not cancel:
                entered = _replace(entered, other_path=True)
            self.body(handler.body, entered)
        self.body(node.orelse, context)
        self.body(node.finalbody, protected)


_TRY_STAR: type = getattr(ast, "TryStar", ast.Try)


def _loses_no_work(call: ast.Call) -> bool:
    """Does a cut of this awaited call lose no work: it only waits (`self._done.wait()`), or
    hands the work to a thread that finishes it (`loop.run_in_executor(None, cleanup)`), or to
    a task a cancel of the waiter does not reach (`asyncio.shield(ch.release(timeout))`)?"""
    name = dotted(call.func)
    return only_waits(name) or _final(call.func) in THREAD_WRAPPERS or name in SHIELD_CALLS


# Awaits that run their argument on in a task of its own when the awaiting task is cancelled
SHIELD_CALLS = frozenset({"asyncio.shield", "shield"})


def _parameter_test(test: ast.expr, params: frozenset[str]) -> tuple[str, bool] | None:
    """(parameter, the truthiness the `if` body needs) for `if nowait:` and `if not nowait:`."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if negated else test  # type: ignore[attr-defined]
    if isinstance(inner, ast.Name) and inner.id in params:
        return inner.id, not negated
    return None


def _leaves(body: list[ast.stmt]) -> bool:
    """Does the block always leave the function (it ends with a `return` or a `raise`)?"""
    return bool(body) and isinstance(body[-1], ast.Return | ast.Raise)


def _merged_exposure(states: list[Exposure]) -> Exposure:
    """The exposure after paths that join: what any of them exposed."""
    exposed_in = tuple(dict.fromkeys(tries for state in states for tries in state[3]))
    return (
        any(state[0] for state in states),
        any(state[1] for state in states),
        any(state[2] for state in states),
        exposed_in,
    )


def _replace(context: _Context, **changes: object) -> _Context:
    values = {**context.__dict__, **changes}
    return _Context(**values)  # type: ignore[arg-type]


def _sets_shield(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Assign)
        and not (isinstance(statement.value, ast.Constant) and statement.value.value is False)
        and any(isinstance(t, ast.Attribute) and t.attr == "shield" for t in statement.targets)
    )


def _built_calls(statement: ast.AST) -> set[int]:
    """The calls of a statement that build a value rather than take a step (by id): what a
    `raise` raises (`raise self.connection_closed_exc()`), and a call whose result is called on
    in turn (`table.delete().where(...)`, a statement being built)."""
    if type(statement) is ast.Raise:
        return {id(n) for n in ast.walk(statement) if type(n) is ast.Call}
    return {
        id(n.value)
        for n in ast.walk(statement)
        if type(n) is ast.Attribute and type(n.value) is ast.Call
    }


def _awaits_and_calls(node: ast.AST) -> list[ast.AST]:
    """The awaits and calls of a statement's expressions in source order (the node first, then
    its fields in order), not entering nested functions or lambdas. Loops over per-type tables
    rather than `isinstance`: this runs once per statement of every summarised function."""
    entered, fields = _ENTERED, _FIELDS_LAST_FIRST
    found: list[ast.AST] = []
    pending = [node]
    pop, push, add = pending.pop, pending.append, found.append
    while pending:
        current = pop()
        kind = type(current)
        if kind is ast.Await or kind is ast.Call:
            add(current)
        for name in fields[kind]:  # popped first-to-last
            value = getattr(current, name)
            if type(value) is list:
                for item in reversed(value):
                    if entered[type(item)]:
                        push(item)
            elif entered[type(value)]:
                push(value)
    return found


_NOT_ENTERED = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)

# Whether `_awaits_and_calls` enters a value of a type, and the fields it reads of a node type
# (last first, as they are pushed)
_ENTERED = PerType(
    lambda kind: (
        issubclass(kind, ast.AST) and not issubclass(kind, _NOT_ENTERED) and kind not in LEAVES
    )
)
_FIELDS_LAST_FIRST = PerType(lambda kind: tuple(reversed(node_fields(kind))))


def summarise_function(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    vocabulary: Vocabulary,
    step_names: dict[str, bool] | None = None,
) -> FunctionSummary:
    return _summarised(function, vocabulary, step_names)[0]


def _summarised(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    vocabulary: Vocabulary,
    step_names: dict[str, bool] | None = None,
    never_suspends: Callable[[ast.Call], bool] | None = None,
    marked: bool = False,
    opens_shield: Callable[[str], bool] | None = None,
) -> tuple[FunctionSummary, list[tuple[ast.Call, bool]]]:
    """The function's summary, and its awaited calls with whether a shield covers each.
    `marked`: a line of its body is marked `# gate: critical`; `opens_shield`: whether a
    context manager called by that name opens a shield scope."""
    walk = _Walk(vocabulary, {} if step_names is None else step_names)
    walk.params = frozenset(_parameters(function.args))
    walk.never_suspends = never_suspends or walk.never_suspends
    walk.opens_shield = opens_shield or walk.opens_shield
    walk.body(function.body, _Context())
    contexts = walk.suspensions
    shielded, managers = _shielding(contexts)
    cut_safe = walk.cut_safe()
    summary = FunctionSummary(
        suspends=bool(contexts),
        shielded=shielded,
        cut_safe=cut_safe,
        holds=bool(contexts) and all(c.holding or c.shielded for c in contexts),
        shield_managers=managers,
        steps_cut=walk.cut_later,
        best_effort=documents_best_effort(ast.get_docstring(function)),
        awaits=_awaited_calls(walk),
        unheld=None if None in walk.unheld else tuple(sorted(set(walk.unheld))),  # type: ignore[arg-type]
        **_own_steps(walk, marked),
        params=_parameters(function.args),
        **_flags(function),
        awaits_when=_awaits_when(walk),
        **({} if cut_safe else _when_cut(function, walk)),
        raises_kept=_raises_kept(function),
    )
    return summary, walk.awaited


def _raises_kept(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Does the function raise an exception it holds in a name, or re-raise one (`raise
    cancellation from None`, a bare `raise`), in its own body?"""
    return any(
        type(node) is ast.Raise and (node.exc is None or type(node.exc) is ast.Name)
        for node in _statements_breadth_first(function)
    )


def _own_steps(walk: _Walk, marked: bool) -> dict[str, tuple[object, ...]]:
    """The function's own steps and whether each is in-process; a line marked `# gate:
    critical` is one more, of no name and not in-process."""
    extra = 1 if marked else 0
    return {
        "own_steps": (*walk.own_steps, *(("", False),) * extra),
        "steps_in_process": (*walk.in_process, *(False,) * extra),
    }


def _when_cut(
    function: ast.FunctionDef | ast.AsyncFunctionDef, walk: _Walk
) -> dict[str, tuple[str, ...] | tuple[tuple[str, bool, bool], ...] | None]:
    """What a summary says of a function an interrupt can cut: the calls without which it
    would not be, and what the cut can lose."""
    return {"cut_safe_if_held": _cut_safe_if_held(function, walk), "cut_loses": _cut_loses(walk)}


def _cut_loses(walk: _Walk) -> tuple[tuple[str, bool, bool], ...] | None:
    """What an interrupt inside the function can lose: its steps that a cut skips or stops,
    then its exposed awaits that do work and are no step of its own, by dotted name (None when
    one has no name: what it loses cannot be judged)."""
    lost = [(*walk.own_steps[i], walk.in_process[i]) for i in walk.cut_steps]
    stepped = {name for name, _ in walk.own_steps}
    for name in walk.working:
        if name is None:
            return None
        if name not in stepped:
            lost.append((name, False, False))
    return tuple(lost) or None


def _awaits_when(walk: _Walk) -> tuple[tuple[str, tuple[tuple[str, bool], ...]], ...]:
    """Each suspension with the parameter conditions it runs under, when one has any."""
    suspended_on = walk.suspended_on
    return tuple(suspended_on) if any(when for _, when in suspended_on) else ()


def _cut_safe_if_held(
    function: ast.FunctionDef | ast.AsyncFunctionDef, walk: _Walk
) -> tuple[str, ...] | None:
    """The calls without whose suspensions the function would be cut-safe: its exposed awaits
    that do work, when each is of a named call and walking the body again with them held
    leaves nothing to lose."""
    if not walk.working or None in walk.working:
        return None
    held = frozenset(walk.working)  # type: ignore[arg-type]
    again = _Walk(
        walk.vocabulary,
        walk.step_names,
        never_suspends=walk.never_suspends,
        opens_shield=walk.opens_shield,
        held_calls=held,
    )
    again.body(function.body, _Context())
    return tuple(sorted(held)) if again.cut_safe() else None


def _flags(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """The flags of `self` an async function returns early without, and sets once done."""
    if not isinstance(function, ast.AsyncFunctionDef):
        return {"requires": "", "completes": ""}
    return {"requires": required_flag(function), "completes": completing_flag(function)}


def _parameters(arguments: ast.arguments) -> tuple[str, ...]:
    """The names of a function's parameters: positional ones in order, then keyword-only."""
    return tuple(argument.arg for argument in parameters_of(arguments))


def _suppresses_cancellation(expression: ast.expr) -> bool:
    """`suppress(asyncio.CancelledError, TimeoutError)`: a cancel inside it is kept there."""
    if not isinstance(expression, ast.Call) or _final(expression.func) != "suppress":
        return False
    return catches_cancellation(_final(argument) for argument in expression.args)


def _awaited_calls(walk: _Walk) -> tuple[str, ...] | None:
    """The dotted names of the awaited calls and of the enter and exit methods of the managers
    `async with` enters (`manager.__aenter__`), when they are all the body's suspensions."""
    names = {name for name, _ in walk.suspended_on}
    return None if "" in names else tuple(sorted(names))


# What `async with` awaits of the manager it enters
MANAGER_METHODS = ("__aenter__", "__aexit__")

# A manager written as a call (`async with Lock():`) is named with this suffix (`Lock()`): the
# instance that call makes
MADE_BY_CALL = "()"


def manager_name(node: ast.expr) -> str | None:
    """How an `async with` item names its manager: `self._lock` for a name or attribute that
    holds it, `Lock()` for a call that makes it; None otherwise."""
    if isinstance(node, ast.Call):
        called = dotted(node.func)
        return called + MADE_BY_CALL if called else None
    return dotted(node)


def _shielding(contexts: list[_Context]) -> tuple[bool, tuple[str, ...]]:
    """Is every suspension shielded, given that the context managers named (to be resolved
    in the project) open shielded scopes?"""
    if not contexts or not all(c.shielded or c.managers for c in contexts):
        return False, ()
    return True, tuple(sorted({m for c in contexts if not c.shielded for m in c.managers}))


def _resolve_import(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".") if package else []
    parts = parts[: len(parts) - node.level + 1] if node.level > 1 else parts
    base = ".".join(parts)
    return f"{base}.{node.module}" if node.module and base else (node.module or base)


@dataclass
class _ModuleWalk:
    """Collects one module's summary while walking its statements."""

    vocabulary: Vocabulary
    package: str
    imports: dict[str, str] = field(default_factory=dict)
    functions: dict[str, FunctionSummary] = field(default_factory=dict)
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    managers: set[str] = field(default_factory=set)
    types: dict[tuple[str, str], str] = field(default_factory=dict)
    sites: list[CallSite] = field(default_factory=list)
    step_names: dict[str, bool] = field(default_factory=dict)
    queues: frozenset[tuple[str, str]] = frozenset()
    marked: frozenset[int] = frozenset()  # lines with a `# gate: critical` comment
    # `add_signal_handler` and the names of the module's functions that call it
    signal_routers: frozenset[str] = frozenset()
    interfaces: set[str] = field(default_factory=set)  # abstract base classes and protocols
    stubs: set[str] = field(default_factory=set)  # async methods that are stubs, by qualname
    # only the classes, imports and what names hold: a module with no async code, read for
    # the types of what other modules' async code calls (a services container's fields)
    light: bool = False
    may_shield: bool = True  # the source can open a shield scope (it says `shield`)
    # the module's `@asynccontextmanager` functions that open a shield scope before they
    # yield, by qualname: the body of an `async with` of one runs shielded
    shielding_managers: frozenset[str] = frozenset()
    # calls whose coroutine runs as a task that is only waited on shielded (by id)
    shielded_tasks: frozenset[int] = frozenset()
    # (class name, position, owner): a method of `owner` passes `self` to a call of the name
    constructions: list[tuple[str, int, str]] = field(default_factory=list)
    initialisers: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    closure_owner: str = ""  # the class of the method whose local functions are being walked

    def record_constructed_with_self(self) -> None:
        """`self._producer = producer` in `__init__` of a class that the module's methods of
        one class construct with `self` in that position (`TransactionContext(self)` in a
        method of `AIOKafkaProducer`): the attribute holds that class, unless it is known."""
        passed: dict[tuple[str, int], set[str]] = {}
        for name, index, owner in self.constructions:
            passed.setdefault((name, index), set()).add(owner)
        for cls, init in self.initialisers.items():
            positional = [a.arg for a in [*init.args.posonlyargs, *init.args.args]][1:]
            holds = {
                parameter: owners.pop()
                for index, parameter in enumerate(positional)
                if len(owners := set(passed.get((cls.rpartition(".")[2], index), ()))) == 1
            }
            if not holds:
                continue
            for target, made in _assignments(init, holds, cls):
                if isinstance(target, ast.Attribute) and dotted(target.value) == "self":
                    self.types.setdefault((cls, target.attr), made)

    def walk(self, node: ast.AST, prefix: str, owner: str | None) -> None:
        for child in child_statements(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                self.imported(child)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                self.function(child, prefix, owner)
            elif isinstance(child, ast.ClassDef):
                self.class_def(child, prefix)
            elif type(child) in HOLDS_STATEMENTS:
                self.walk(child, prefix, owner)
            elif not prefix and (bound := _typevar_bound(child)):
                self.types[(bound[0], BOUND)] = bound[1]

    def class_def(self, node: ast.ClassDef, prefix: str) -> None:
        qualname = prefix + node.name
        self.classes[qualname] = tuple(b for b in map(_base_name, node.bases) if b)
        if _is_interface(node):
            self.interfaces.add(qualname)
        for name, annotated in _annotated_fields(node):
            self.types[(qualname, name)] = annotated
        self.walk(node, f"{qualname}.", qualname)

    def imported(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                self.imports[local] = alias.name if alias.asname else local
            return
        source = _resolve_import(node, self.package)
        for alias in node.names:
            self.imports[alias.asname or alias.name] = f"{source}.{alias.name}"

    def function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str, owner: str | None
    ) -> None:
        qualname = prefix + node.name
        if _runs_to_completion(node, self.imports):  # also in a module with no `async def`
            self.functions[qualname] = RUNS_ON
        if self.light:
            self.record_types(node, qualname, owner)
            return
        awaited: list[tuple[ast.Call, bool]] = []
        if isinstance(node, ast.AsyncFunctionDef):
            if not _is_stub(node, owner in self.interfaces):
                self.functions[qualname], awaited = self.summarised(node, qualname, owner or "")
            elif owner is not None:
                self.stubs.add(qualname)
        on_call = functools.partial(self.passes_self, owner) if owner is not None else None
        # a closure's `self` is its method's (`async def cleanup(): await self.stop()`)
        site_owner = self_class_of(node, owner, self.closure_owner) or ""
        self.sites += call_sites(node, awaited, qualname, site_owner, self.shielded_tasks, on_call)
        if owner is not None:
            self.method(node, owner)
        self.record_types(node, qualname, owner)
        enclosing, self.closure_owner = self.closure_owner, site_owner
        self.walk(node, f"{qualname}.<locals>.", None)
        self.closure_owner = enclosing

    def summarised(
        self, node: ast.AsyncFunctionDef, qualname: str, owner: str
    ) -> tuple[FunctionSummary, list[tuple[ast.Call, bool]]]:
        never = _puts_on_unbounded(self.queues, qualname, owner) if self.queues else None
        marked = any(node.lineno <= line <= (node.end_lineno or 0) for line in self.marked)
        opens = functools.partial(_opens_local_shield, self.shielding_managers, owner)
        summary, awaited = _summarised(
            node, self.vocabulary, self.step_names, never, marked, opens_shield=opens
        )
        if self.signal_routers and _calls_any(node, self.signal_routers):
            summary = replace(summary, routes_signals=True)
        return summary, awaited

    def method(self, node: ast.FunctionDef | ast.AsyncFunctionDef, owner: str) -> None:
        if node.name in SHIELD_MANAGER_METHODS:
            self.shield_manager(node, owner)
        if node.name == "__init__":
            self.initialisers[owner] = node

    def passes_self(self, owner: str, call: ast.Call) -> None:
        """A call of a bare name in a method of `owner` that passes `self` by position
        (`TransactionContext(self)`) is recorded as (name, position, owner)."""
        if type(call.func) is not ast.Name:
            return
        for index, argument in enumerate(call.args):
            if type(argument) is ast.Name and argument.id == "self":
                self.constructions.append((call.func.id, index, owner))

    def shield_manager(self, node: ast.FunctionDef | ast.AsyncFunctionDef, owner: str) -> None:
        """A class whose `__init__`/`__enter__`/`__aenter__` opens a shield scope is a shield
        manager (a source that never says `shield` has none)."""
        if self.may_shield and _opens_shield(node):
            self.managers.add(owner)

    def record_types(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, owner: str | None
    ) -> None:
        parameters = _annotated_parameters(node)
        for name, annotated in parameters.items():
            self.types.setdefault((qualname, name), annotated)
        for target, made in _assignments(node, parameters, owner):
            if isinstance(target, ast.Name):
                self.types[(qualname, target.id)] = made
            elif owner is not None and dotted(target.value) == "self":  # type: ignore[attr-defined]
                self.types[(owner, target.attr)] = made  # type: ignore[attr-defined]
        self.record_containers(node, qualname, owner)
        self.record_returns(node, qualname, owner)
        if owner is not None:
            self.record_member_types(node, qualname, owner)

    def record_returns(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, owner: str | None
    ) -> None:
        """The class the function returns, and each place of the tuple it is annotated to
        return (a class's `__new__`: what calling the class gives)."""
        returned = _returned_class(node, qualname, self.types)
        if returned is not None:
            self.types[(qualname, RETURNED)] = returned
        for place, held in _returned_places(node):
            self.types[(qualname, place)] = held
            if owner is not None and node.name == "__new__":
                self.types[(owner, place)] = held

    def record_member_types(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, owner: str
    ) -> None:
        """What a method says of its class's attributes (a property's return annotation) and
        of its `self` (a mixin's annotation)."""
        returned = _property_class(node)
        if returned is not None:
            self.types.setdefault((owner, node.name), returned)
        contained = _property_contents(node)
        if contained is not None:  # `def sessions(self) -> dict[str, Session]`
            self.types.setdefault((owner, node.name + contained[0]), contained[1])
        host = _self_annotation(node)
        if host is not None:
            self.types[(qualname, "self")] = host

    def record_containers(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, owner: str | None
    ) -> None:
        """What the function's containers of one class hold, and its loops over them bind."""
        for scope, name, contains in _annotated_containers(node, qualname, owner):
            self.types.setdefault((scope, name), contains)
        for target, item in _loop_items(node, qualname, owner, self.types):
            self.types.setdefault((qualname, target), item)


# Decorators that make a method an attribute holding what it returns
PROPERTY_DECORATORS = frozenset({"property", "cached_property"})


def _property_class(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The class a property's return annotation names (`def lock(self) -> AsyncLock`): what
    the attribute holds."""
    return _annotated_class(function.returns) if _is_property(function) else None


def _property_contents(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, str] | None:
    """(suffix, class) for a property whose return annotation is a container of one class
    (`def sessions(self) -> dict[str, Session]`): what the attribute's items hold."""
    return _contained(function.returns) if _is_property(function) else None


def _is_property(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(_final(d) in PROPERTY_DECORATORS for d in function.decorator_list)


# The name under which a function's recorded types keep the class it returns (no identifier
# can clash with it): what a name made by calling the function holds
RETURNED = "<return>"
# What the types of a module keep for a type variable with a bound (`ACT = TypeVar("ACT",
# bound="AsyncConnection[Any]")`), under its name: a value annotated with it is of that class
BOUND = "<bound>"


def _named_further(home: ModuleSummary, qualname: str) -> bool:
    """Does the module name a class under `qualname` elsewhere: a type variable with a bound,
    or a name it imports (a package's re-export)?"""
    return (qualname, BOUND) in home.types or qualname.split(".")[0] in home.imports


def _typevar_bound(statement: ast.stmt) -> tuple[str, str] | None:
    """(type variable, the class its bound names) for `T = TypeVar("T", bound=Cls)`."""
    if type(statement) is not ast.Assign or len(statement.targets) != 1:
        return None
    target, value = statement.targets[0], statement.value
    if type(target) is not ast.Name or type(value) is not ast.Call:
        return None
    if _final(value.func) != "TypeVar":
        return None
    bound = next((k.value for k in value.keywords if k.arg == "bound"), None)
    named = _annotated_class(bound)
    return (target.id, named) if named and named != target.id else None


def _returned_class(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    qualname: str,
    types: Mapping[tuple[str, str], str],
) -> str | None:
    """The class a function returns, as written in it: its return annotation's (`->
    Connection`), else the one class every `return` of its own body makes (`return
    Result(...)`, or a local made so)."""
    returns = function.returns
    if isinstance(returns, ast.Subscript) and _final(returns.value) != "Optional":
        return dotted(returns.value)  # `-> AgentStream[Deps, T]`, an instance of a generic class
    annotated = _annotated_class(returns)
    if annotated is not None:
        return annotated
    made = {_made_by(node.value, qualname, types) for node in _own_returns(function)}
    return made.pop() if len(made) == 1 else None


def _returned_places(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[str, str]]:
    """(`<return>N`, class) for each place of the tuple a function's return annotation names
    (`-> tuple[SendStream, ReceiveStream]`): what `send, receive = make()` binds."""
    parts = _generic_parts(_without_none(function.returns))
    if parts is None or parts[0] not in ("tuple", "Tuple"):
        return
    for position, place in enumerate(parts[1]):
        named = _annotated_class(place)
        if named:
            yield f"{RETURNED}{position}", named


def _made_by(
    value: ast.expr | None, qualname: str, types: Mapping[tuple[str, str], str]
) -> str | None:
    if isinstance(value, ast.Name):
        return types.get((qualname, value.id))
    return _called(value)


def _own_returns(node: ast.AST) -> Iterator[ast.Return]:
    """The `return` statements of a function's own body, not of the functions it defines."""
    for child in child_statements(node):
        if isinstance(child, ast.Return):
            yield child
        elif type(child) in HOLDS_STATEMENTS and not isinstance(child, _DEFINITIONS):
            yield from _own_returns(child)


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _self_annotation(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The class a method's `self` is annotated with (a mixin's `self: Server`)."""
    arguments = [*function.args.posonlyargs, *function.args.args]
    if not arguments or arguments[0].arg != "self":
        return None
    return _annotated_class(arguments[0].annotation)


def _is_stub(function: ast.AsyncFunctionDef, interface: bool = False) -> bool:
    """An abstract method or a protocol's stub: it says nothing of what the code that runs
    does, so it is not summarised (a call that resolves to it stays unknown). That is a method
    marked abstract, a body that is only `...` or `raise NotImplementedError` (after any
    docstring), or, in an abstract base class or a protocol (`interface`), an empty body (only a
    docstring or `pass`). An empty method of any other class is code that runs: it does nothing
    (a no-op `__aenter__`)."""
    if any(_final(decorator) == "abstractmethod" for decorator in function.decorator_list):
        return True
    kinds = [_stub_kind(statement) for statement in function.body]
    if "code" in kinds:
        return False
    return "marker" in kinds or interface


def _stub_kind(statement: ast.stmt) -> str:
    """`filler` (a docstring, `pass`), `marker` (`...`, `raise NotImplementedError`) or
    `code`."""
    if isinstance(statement, ast.Pass):
        return "filler"
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return "marker" if statement.value.value is Ellipsis else "filler"
    raised = statement.exc if isinstance(statement, ast.Raise) else None
    if raised is not None and _final(_called_or_named(raised)) == "NotImplementedError":
        return "marker"
    return "code"


# Base classes and metaclasses that make a class an interface: its empty methods are stubs
INTERFACE_BASES = frozenset({"ABC", "Protocol", "ABCMeta"})


def _is_interface(cls: ast.ClassDef) -> bool:
    """An abstract base class or a protocol (`ABC`, `Protocol[T]`, `metaclass=ABCMeta`)."""
    named = [b.value if isinstance(b, ast.Subscript) else b for b in cls.bases]
    named += [keyword.value for keyword in cls.keywords if keyword.arg == "metaclass"]
    return any(_final(node) in INTERFACE_BASES for node in named)


def _called_or_named(node: ast.expr) -> ast.expr:
    return node.func if isinstance(node, ast.Call) else node


def call_sites(
    node: ast.AST,
    awaited: list[tuple[ast.Call, bool]],
    caller: str,
    owner: str,
    shielded_tasks: frozenset[int] = frozenset(),
    on_call: Callable[[ast.Call], None] | None = None,
) -> tuple[CallSite, ...]:
    """The places in one function (or a module's top level) that may run another function: its
    awaited calls, the calls whose coroutine it hands on (`gather(*(p.stop() for p in ps))`,
    `return self.stop()`) and the functions it hands on as values (`tg.start_soon(self.stop)`,
    `hooks = (self.stop,)`). `on_call` is given each call of a name."""
    shielded_by_call = _shielded_by_call(awaited)
    nodes = _own_nodes(node)
    tasks = _tasks_of(nodes, awaited)
    hooks = _run_app_hooks(nodes)
    sites: list[CallSite] = []
    add = sites.append
    for child in nodes:
        kind = type(child)
        if kind not in _HANDS_ON:  # most nodes: names, attributes, constants, operators
            continue
        for passed in _handed_on(child, kind):
            if type(passed) in _NAMED:
                add(_site(passed, caller, owner, False, hooks.get(id(passed), OTHER_TASK)))
        if kind is ast.Call and type(child.func) in _NAMED:  # type: ignore[attr-defined]
            if on_call is not None:
                on_call(child)  # type: ignore[arg-type]
            task = tasks.get(id(child))
            if task:
                shielded = shielded_by_call.get(id(child), False) or id(child) in shielded_tasks
                add(_call_site(child, caller, owner, shielded, task))  # type: ignore[arg-type]
    return tuple(sites)


def _call_site(call: ast.Call, caller: str, owner: str, shielded: bool, task: str) -> CallSite:
    site = _site(call.func, caller, owner, shielded, task)
    passed = _passed_names(call)
    return site._replace(arguments=passed) if passed else site


def _tasks_of(nodes: list[ast.AST], awaited: list[tuple[ast.Call, bool]]) -> dict[int, str]:
    """The calls of a function's nodes that may run another function, by id, with the task
    each runs it in: an awaited call in the caller's own, `asyncio.shield(f())`'s f() in one of
    its own, the coroutine of `asyncio.run(main())` in the main task. A call that is a
    statement of its own is a plain function's (a coroutine made that way would never run)."""
    tasks: dict[int, str] = {}
    for child in nodes:
        kind = type(child)
        if kind is ast.Call:
            tasks.setdefault(id(child), OTHER_TASK)
            for call in _main_coroutine(child):
                tasks[id(call)] = MAIN_TASK
        elif kind is ast.Expr:
            tasks[id(child.value)] = ""  # type: ignore[attr-defined]
    tasks.update((id(call), OTHER_TASK) for call in _shielded_by_call(awaited))
    tasks.update((id(call), SAME_TASK) for call, _ in awaited)
    return tasks


# aiohttp's application signals whose hooks `AppRunner.cleanup()` runs
APP_HOOK_LISTS = frozenset({"on_shutdown", "on_cleanup"})


def _run_app_hooks(nodes: list[ast.AST]) -> dict[int, str]:
    """The functions a function registers as shutdown or cleanup hooks of an aiohttp app it
    also runs with `run_app(app)` (`app.on_cleanup.append(close_db)`), by id: AFTER_CANCEL.
    run_app stops on SIGINT or SIGTERM by cancelling its main task once, and that task runs the
    hooks in its `finally:`; on asyncio only a second signal (which cancels every task left)
    cuts them short."""
    calls = [node for node in nodes if type(node) is ast.Call]
    apps = {dotted(call.args[0]) for call in calls if call.args and _final(call.func) == "run_app"}
    if not apps:
        return {}
    return {
        id(arg): AFTER_CANCEL for call in calls if _hooked_app(call) in apps for arg in call.args
    }


def _hooked_app(call: ast.Call) -> str | None:
    """`app` in `app.on_cleanup.append(hook)` (or `insert`, or `on_shutdown`)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in ("append", "insert"):
        return None
    hooks = func.value
    if isinstance(hooks, ast.Attribute) and hooks.attr in APP_HOOK_LISTS:
        return dotted(hooks.value)
    return None


def _shielded_by_call(awaited: list[tuple[ast.Call, bool]]) -> dict[int, bool]:
    """Whether a shield covers each awaited call, by id; `await asyncio.shield(f())` shields
    f(), which runs to completion."""
    found = {}
    for call, shielded in awaited:
        if _final(call.func) == "shield" and call.args and isinstance(call.args[0], ast.Call):
            call, shielded = call.args[0], True
        found[id(call)] = shielded
    return found


# What a name handed on as a value is written as, when it can name a function.
_NAMED = frozenset({ast.Name, ast.Attribute})
_HANDS_ON_VALUE = frozenset({ast.Assign, ast.AnnAssign, ast.Return, ast.Yield, ast.NamedExpr})
_HANDS_ON_ELEMENTS = frozenset({ast.Tuple, ast.List, ast.Set})
_HANDS_ON = frozenset({ast.Call, ast.Dict, *_HANDS_ON_VALUE, *_HANDS_ON_ELEMENTS})


def _handed_on(node: ast.AST, kind: type) -> list[ast.expr]:
    """The expressions a node (of type `kind`) hands on as values: call arguments
    (`start_soon(self.stop)`), assigned and returned values, container elements
    (`(("mcp", shutdown_sessions),)`)."""
    if kind is ast.Call:
        if not node.keywords:  # type: ignore[attr-defined]
            return node.args  # type: ignore[attr-defined]
        return [*node.args, *(keyword.value for keyword in node.keywords)]  # type: ignore[attr-defined]
    if kind in _HANDS_ON_VALUE:
        return [node.value] if node.value is not None else []  # type: ignore[attr-defined]
    if kind in _HANDS_ON_ELEMENTS:
        return node.elts  # type: ignore[attr-defined]
    if kind is ast.Dict:
        return node.values  # type: ignore[attr-defined]
    return []


def _passed_names(call: ast.Call) -> tuple[tuple[str, str], ...]:
    """The names a call passes that may be functions, by position or keyword; a `*args` or
    `**kwargs` ends what can be matched."""
    passed = []
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            break
        name = dotted(argument) if type(argument) in _NAMED else None
        if name:
            passed.append((str(index), name))
    for keyword in call.keywords:
        name = dotted(keyword.value) if type(keyword.value) in _NAMED else None
        if keyword.arg and name:
            passed.append((keyword.arg, name))
    return tuple(passed)


def _site(
    named: ast.expr, caller: str, owner: str, shielded: bool, task: str = OTHER_TASK
) -> CallSite:
    if isinstance(named, ast.Attribute):
        return CallSite(named.attr, dotted(named.value) or "?", caller, owner, shielded, task)
    return CallSite(_final(named), None, caller, owner, shielded, task)


def _main_coroutine(node: ast.AST) -> list[ast.Call]:
    """The call whose coroutine `asyncio.run(main())` (or `loop.run_until_complete(main())`,
    `runner.run(main())`) runs as its main task, when `node` is such a run."""
    if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Call):
        return []
    name = dotted(node.func) or ""
    runs = name == "asyncio.run" or name.endswith(".run_until_complete")
    runs = runs or (name.endswith(".run") and "runner" in name.rsplit(".", 1)[0].lower())
    return [node.args[0]] if runs else []


def _own_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes of a function's body (or a module's top level), not entering nested functions
    or classes, depth first (each node's fields in order, the last one's nodes first). Loops
    rather than `child_nodes`: this runs once per node of every summarised file."""
    pending = [child for child in getattr(node, "body", []) if _WALKED[type(child)]]
    return walk_nodes(pending, _WALKED)


# Nested scopes, and leaves that hold no call and hand nothing on by themselves (a name handed
# on is found from the node that hands it: the call, assignment or container around it).
_NOT_WALKED = frozenset(
    {
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.ClassDef,
        ast.Lambda,
        ast.Name,
        ast.Constant,
        ast.Pass,
        ast.Break,
        ast.Continue,
        *(
            kind
            for base in (ast.operator, ast.boolop, ast.cmpop, ast.unaryop)
            for kind in base.__subclasses__()
        ),
    }
)


# Whether `_own_nodes` enters a value of a type: a node, not of the `_NOT_WALKED` types
_WALKED = PerType(lambda kind: issubclass(kind, ast.AST) and kind not in _NOT_WALKED)

# Methods where a context manager class opens the shielded scope it enters.
SHIELD_MANAGER_METHODS = frozenset({"__init__", "__enter__", "__aenter__"})


def _annotated_parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """The function's parameters annotated with a class (`bus: MessageBus`, `bus: Bus | None`,
    `Optional[Bus]`): name -> the class name as written."""
    annotated = {}
    for argument in parameters_of(function.args):
        named = _annotated_class(argument.annotation)
        if named:
            annotated[argument.arg] = named
    return annotated


def _base_name(base: ast.expr) -> str | None:
    """The class a base of a class statement names, a generic's too (`BaseRateLimiter[int]`)."""
    return dotted(base.value if isinstance(base, ast.Subscript) else base)


def _annotated_class(annotation: ast.expr | None) -> str | None:
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation.left, annotation.right]
        kept = [side for side in sides if not _is_none(side)]
        return _annotated_class(kept[0]) if len(kept) == 1 else None
    if isinstance(annotation, ast.Subscript):
        return _subscripted_class(annotation)
    if isinstance(annotation, ast.Name | ast.Attribute):
        return dotted(annotation)
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return _annotated_class(_forward_reference(annotation.value))
    return None


@functools.lru_cache(maxsize=4096)
def _forward_reference(text: str) -> ast.expr | None:
    """The annotation a string spells (`"BaseRateLimiter[RLARGS] | None"`), None when it
    does not parse as one."""
    try:
        parsed = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    return None if isinstance(parsed, ast.Constant) else parsed


def _subscripted_class(annotation: ast.Subscript) -> str | None:
    """`Optional[Bus]`, `Union[Bus, None]` -> Bus; `MemoryObjectSendStream[Message]` -> the
    stream class; a generic class of the project (`BaseRateLimiter[RLARGS]`) -> that class.
    Containers, callables and the like name no class of the value."""
    generic = _final(annotation.value)
    inner = annotation.slice
    if generic == "Optional":
        return _annotated_class(inner)
    if generic == "Union" and isinstance(inner, ast.Tuple):
        kept = [side for side in inner.elts if not _is_none(side)]
        return _annotated_class(kept[0]) if len(kept) == 1 else None
    if generic in STREAM_CLASSES or _generic_class(generic):
        return dotted(annotation.value)
    return None


def _generic_class(name: str) -> bool:
    """Does a subscripted name read as a generic class of the value (`BaseRateLimiter[int]`),
    not a container, a callable or a typing form?"""
    if name[:1].islower() or name in NOT_A_CLASS_OF_THE_VALUE:
        return False
    return name not in SEQUENCE_GENERICS and name not in MAPPING_GENERICS


# Subscripted names whose subscript says what the value holds or returns, not its class
NOT_A_CLASS_OF_THE_VALUE = frozenset(
    {
        "Union", "Callable", "Awaitable", "Coroutine", "Type", "Literal", "Iterator",
        "AsyncIterator", "Iterable", "AsyncIterable", "Generator", "AsyncGenerator", "Tuple",
        "ClassVar", "Final", "Annotated", "TypeGuard", "Required", "NotRequired", "Unpack",
    }
)  # fmt: skip


# The suffixes under which a module's types keep what a container a name or an attribute
# holds contains: its items (`self._sites: list[Site]`, kept as `_sites[]`) and a mapping's
# values (`dict[str, Site]`, kept as `_sites{}`)
ITEMS = "[]"
VALUES = "{}"

# Generic containers whose one parameter is what iterating them gives
SEQUENCE_GENERICS = frozenset(
    {
        "list", "List", "set", "Set", "frozenset", "FrozenSet", "Sequence", "MutableSequence",
        "Iterable", "Collection", "AbstractSet", "MutableSet", "deque", "Deque", "WeakSet",
    }
)  # fmt: skip
# Generic mappings whose second parameter is what `.values()` gives
MAPPING_GENERICS = frozenset(
    {
        "dict", "Dict", "Mapping", "MutableMapping", "defaultdict", "DefaultDict",
        "OrderedDict", "WeakValueDictionary",
    }
)  # fmt: skip


def _contained(annotation: ast.expr | None) -> tuple[str, str] | None:
    """(suffix, class) for an annotation of a container of one class, `None` aside:
    `list[Site]` and `tuple[Site, ...]` hold `Site` items (`[]`), `dict[str, Site]` `Site`
    values (`{}`); a tuple of one class in each place (`tuple[Req, Req]`) holds it too."""
    parts = _generic_parts(_without_none(annotation))
    if parts is None:
        return None
    generic, listed = parts
    if generic in MAPPING_GENERICS:
        value = _annotated_class(listed[1]) if len(listed) == 2 else None
        return (VALUES, value) if value else None
    item = _item_class(generic, listed)
    return (ITEMS, item) if item else None


def _generic_parts(annotation: ast.expr | None) -> tuple[str, list[ast.expr]] | None:
    """(the generic's final name, its parameters) of a subscripted annotation
    (`dict[str, Site]` -> `dict`, [str, Site]); None for any other annotation."""
    if not isinstance(annotation, ast.Subscript):
        return None
    parameters = annotation.slice
    listed = parameters.elts if isinstance(parameters, ast.Tuple) else [parameters]
    return _final(annotation.value), listed


def _item_class(generic: str, parameters: list[ast.expr]) -> str | None:
    """The class of the items of a sequence or tuple of one class (`tuple[Site, ...]`)."""
    if generic in ("tuple", "Tuple"):
        variadic = len(parameters) == 2 and _is_ellipsis(parameters[1])
        return _one_class(parameters[:1] if variadic else parameters)
    return _one_class(parameters) if generic in SEQUENCE_GENERICS else None


def _one_class(annotations: list[ast.expr]) -> str | None:
    """The class every one of the annotations names, if they name one and the same."""
    named = {_annotated_class(annotation) for annotation in annotations}
    return named.pop() if len(named) == 1 else None


def _without_none(annotation: ast.expr | None) -> ast.expr | None:
    """The annotation `Optional[...]` or `... | None` wraps, or the annotation itself."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        kept = [side for side in (annotation.left, annotation.right) if not _is_none(side)]
        return _without_none(kept[0]) if len(kept) == 1 else None
    if isinstance(annotation, ast.Subscript) and _final(annotation.value) == "Optional":
        return _without_none(annotation.slice)
    return annotation


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _annotated_containers(
    function: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, owner: str | None
) -> Iterator[tuple[str, str, str]]:
    """(scope, suffixed name, class) for the function's parameters, locals and (in a method)
    attributes of `self` annotated as containers of one class: `sites: list[Site]` and
    `self._sites: list[Site] = []` hold `Site` items."""
    annotated: list[tuple[ast.expr, ast.expr | None]] = [
        (ast.Name(argument.arg), argument.annotation) for argument in parameters_of(function.args)
    ]
    annotated += [
        (statement.target, statement.annotation)
        for statement in _statements_breadth_first(function)
        if isinstance(statement, ast.AnnAssign)
    ]
    for target, annotation in annotated:
        for suffix, item in _contents(annotation):
            if isinstance(target, ast.Name):
                yield qualname, target.id + suffix, item
            elif owner is not None and (attribute := _self_attribute(target)) is not None:
                yield owner, attribute + suffix, item


def _contents(annotation: ast.expr | None) -> list[tuple[str, str]]:
    """(suffix, class) for what a container holds: its items or values of one class
    (`_contained`), and each place of the tuples it holds by its position
    (`dict[Id, tuple[SendStream, ReceiveStream]]`: `{}0` is a SendStream, `{}1` a
    ReceiveStream)."""
    contained = _contained(annotation)
    found = [contained] if contained is not None else []
    held = _held_tuples(_generic_parts(_without_none(annotation)))
    if held is None:
        return found
    suffix, places = held
    for position, place in enumerate(places):
        named = _annotated_class(place)
        if named:
            found.append((f"{suffix}{position}", named))
    return found


def _held_tuples(
    parts: tuple[str, list[ast.expr]] | None,
) -> tuple[str, list[ast.expr]] | None:
    """(suffix, the annotations of each place) for a mapping or a sequence of tuples, by its
    generic's parts (`dict[Id, tuple[Send, Receive]]` -> `{}`, [Send, Receive])."""
    if parts is None:
        return None
    generic, listed = parts
    if generic in MAPPING_GENERICS and len(listed) == 2:
        suffix, held = VALUES, listed[1]
    elif generic in SEQUENCE_GENERICS and len(listed) == 1:
        suffix, held = ITEMS, listed[0]
    else:
        return None
    places = _generic_parts(held)
    if places is None or places[0] not in ("tuple", "Tuple"):
        return None
    return suffix, places[1]


# Calls that give what they are passed to iterate, in its order or another
ITERATION_WRAPPERS = frozenset({"list", "tuple", "sorted", "reversed", "set", "frozenset"})


def _loop_items(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    qualname: str,
    owner: str | None,
    types: Mapping[tuple[str, str], str],
) -> Iterator[tuple[str, str]]:
    """(name, what it holds) for the names a `for` loop of the function binds to the items of
    a container of one class: `for site in self._sites` (`Owner::_sites[]`, resolved when
    looked up), `for name, site in self._by_name.items()`, `for site in list(sites)` of a
    parameter `sites: list[Site]`. A name that another loop binds to something else, or to
    what gate does not know, holds nothing known. A local bound once to a copy of a container
    (`items = list(self._by_name.items())`) is iterated as that container."""
    found: dict[str, set[str]] = {}
    statements = _statements_breadth_first(function)
    copies = _container_copies(statements)
    for statement in statements:
        if type(statement) in (ast.For, ast.AsyncFor):
            loop = statement
            if type(loop.iter) is ast.Name and loop.iter.id in copies:  # type: ignore[attr-defined]
                loop = ast.For(loop.target, copies[loop.iter.id], [], [])  # type: ignore[attr-defined]
            for name, held in _loop_bindings(loop, qualname, owner, types):  # type: ignore[arg-type]
                found.setdefault(name, set()).add(held)
    for name, held in found.items():
        if len(held) == 1 and "" not in held:
            yield name, held.pop()


def _container_copies(statements: list[ast.AST]) -> dict[str, ast.expr]:
    """The locals bound once, to a copy of a container or of one of its views: `items =
    list(self._by_name.items())`, `sites = sorted(self._sites)`."""
    bound: dict[str, list[ast.expr | None]] = {}
    for statement in statements:
        for target, value in _bindings(statement):
            if isinstance(target, ast.Name):
                bound.setdefault(target.id, []).append(value)
    return {
        name: value
        for name, (value, *others) in bound.items()
        if not others and _copies_container(value)
    }


def _copies_container(value: ast.expr | None) -> bool:
    """`list(x)`, `sorted(x.items())`, `tuple(x.values())`: a call of an iteration wrapper."""
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ITERATION_WRAPPERS
        and len(value.args) == 1
    )


def _loop_bindings(
    loop: ast.For | ast.AsyncFor,
    qualname: str,
    owner: str | None,
    types: Mapping[tuple[str, str], str],
) -> Iterator[tuple[str, str]]:
    """Each name the loop binds, with the class it holds ("" when not known)."""
    known: dict[str, str] = {}
    if type(loop) is ast.For:
        known = dict(_iterated_items(loop.target, loop.iter, qualname, owner, types))
    for bound in ast.walk(loop.target):
        if type(bound) is ast.Name:
            yield bound.id, known.get(bound.id, "")


def _iterated_items(
    target: ast.expr,
    iterated: ast.expr,
    qualname: str,
    owner: str | None,
    types: Mapping[tuple[str, str], str],
) -> Iterator[tuple[str, str]]:
    """(name, class) for what a loop binds when `iterated` is a container of one class
    (through `list(...)`, `sorted(...)`, `enumerate(...)`, `.values()`, `.items()`,
    `.copy()`), or for each name of a tuple target over a container of tuples whose places are
    recorded (`for conn, _ in self._held.values()` of `dict[str, tuple[Conn, float]]`)."""
    target, iterated = _unwrapped(target, iterated)
    target, iterated, suffix = _viewed(target, iterated)
    if isinstance(target, ast.Name):
        bound = [(target, suffix)]
    elif isinstance(target, ast.Tuple):
        bound = [(name, f"{suffix}{place}") for place, name in enumerate(target.elts)]
    else:
        return
    for name, kept_as in bound:
        held = _item_held(name, iterated, kept_as, qualname, owner, types)
        if held is not None:
            yield held


def _item_held(
    target: ast.expr,
    iterated: ast.expr,
    suffix: str,
    qualname: str,
    owner: str | None,
    types: Mapping[tuple[str, str], str],
) -> tuple[str, str] | None:
    """The name a loop binds to what `iterated` holds under `suffix` (its items, its values, a
    place of the tuples it holds) and that class, when the project records it."""
    if not isinstance(target, ast.Name):
        return None
    if isinstance(iterated, ast.Name):
        held = types.get((qualname, iterated.id + suffix))
        return (target.id, held) if held else None
    attribute = _self_attribute(iterated) if owner is not None else None
    if attribute is None:
        return None
    # known already (declared in the class body or an earlier method), or looked up later
    held = types.get((owner, attribute + suffix))  # type: ignore[arg-type]
    return target.id, held or f"{owner}{ATTRIBUTE_OF}{attribute}{suffix}"


def _unwrapped(target: ast.expr, iterated: ast.expr) -> tuple[ast.expr, ast.expr]:
    """The loop's target and iterable without the calls that pass the items on: `list(x)`,
    `sorted(x)`; `enumerate(x)` with an `i, item` target."""
    while isinstance(iterated, ast.Call) and iterated.args:
        pair = _pair_target(target)
        if _final(iterated.func) == "enumerate" and pair is not None:
            target, iterated = pair[1], iterated.args[0]
        elif isinstance(iterated.func, ast.Name) and iterated.func.id in ITERATION_WRAPPERS:
            iterated = iterated.args[0]
        else:
            break
    return target, iterated


def _viewed(target: ast.expr, iterated: ast.expr) -> tuple[ast.expr, ast.expr, str]:
    """The target, the container and what of it the loop takes: a mapping's values for
    `.values()` and the second name of `for key, value in x.items()`, the items otherwise
    (also of `x.copy()`)."""
    if not isinstance(iterated, ast.Call) or not isinstance(iterated.func, ast.Attribute):
        return target, iterated, ITEMS
    method, container = iterated.func.attr, iterated.func.value
    pair = _pair_target(target)
    if method == "items" and pair is not None:
        return pair[1], container, VALUES
    if method in ("values", "copy"):
        return target, container, VALUES if method == "values" else ITEMS
    return target, iterated, ITEMS


def _pair_target(target: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """The two names of a loop's `a, b` target."""
    if isinstance(target, ast.Tuple) and len(target.elts) == 2:
        return target.elts[0], target.elts[1]
    return None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _assignments(
    function: ast.AST, parameters: Mapping[str, str] | None = None, owner: str | None = None
) -> Iterator[tuple[ast.expr, str]]:
    """(target, called name) for `x = Cls(...)`, `self.x = Cls(...)` and `with Cls() as x`,
    anywhere below the function, in the order `ast.walk` meets them; (target, class) for
    `self.x = param` of a parameter annotated with a class (`parameters`); and, in a method of
    class `owner`, `x = self.attr` holds what the attribute does (`Owner::attr`); `self.x =
    local` holds what the local was made as (`bcomm = BatchedSend(); self.comm = bcomm`)."""
    made_here: dict[str, str] = {}
    for node in _statements_breadth_first(function):
        yield from _unpacked(node)
        for target, value in _bindings(node):
            made = (
                _called(value)
                or _passed_in(value, target, parameters or {})
                or _taken_from_self(value, target, owner)
                or _local_made(value, target, made_here)
            )
            if made and isinstance(target, ast.Name | ast.Attribute):
                if isinstance(target, ast.Name):
                    made_here[target.id] = made
                yield target, made


def _unpacked(node: ast.AST) -> list[tuple[ast.expr, str]]:
    """What the names an unpacking assignment binds hold: the ends of an anyio memory object
    stream, else the places of the tuple the call returns."""
    return list(_memory_stream_ends(node)) or list(_unpacked_returns(node))


def _unpacked_returns(node: ast.AST) -> Iterator[tuple[ast.expr, str]]:
    """(name, `called<return>N`) for each name `a, b = make(...)` (or `= await make(...)`)
    binds to a place of what the call returns, looked up in the callee's return annotation."""
    if type(node) is not ast.Assign or len(node.targets) != 1:
        return
    target = node.targets[0]
    called = _called(node.value) if type(target) is ast.Tuple else None
    if called is None:
        return
    for position, bound in enumerate(target.elts):  # type: ignore[attr-defined]
        if type(bound) is ast.Name:
            yield bound, f"{called}{RETURNED}{position}"


def _local_made(
    value: ast.expr | None, target: ast.expr, made_here: Mapping[str, str]
) -> str | None:
    """`self.comm = bcomm` of a local the function made with a call: what it was made as."""
    if isinstance(value, ast.Name) and isinstance(target, ast.Attribute):
        return made_here.get(value.id)
    return None


# What the two names of `send, receive = anyio.create_memory_object_stream(...)` hold, written
# after the call's dotted name as the project's types write a class
MEMORY_STREAM_ENDS = ("MemoryObjectSendStream", "MemoryObjectReceiveStream")


def _memory_stream_ends(node: ast.AST) -> Iterator[tuple[ast.expr, str]]:
    """(name, what it holds) for both ends of `a, b = create_memory_object_stream[T](0)`:
    `anyio.create_memory_object_stream.MemoryObjectSendStream` as written, resolved through
    the module's imports when looked up."""
    pair = _pair_assigned(node)
    if pair is None:
        return
    target, value = pair
    made = value.func.value if isinstance(value.func, ast.Subscript) else value.func
    name = dotted(made)
    if not name or _final(made) != "create_memory_object_stream":
        return
    for element, end in zip(target.elts, MEMORY_STREAM_ENDS, strict=True):
        if isinstance(element, ast.Name):
            yield element, f"{name}.{end}"


def _pair_assigned(node: ast.AST) -> tuple[ast.Tuple, ast.Call] | None:
    """`a, b = call(...)`: the two targets and the call."""
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return None
    target, value = node.targets[0], node.value
    if isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(value, ast.Call):
        return target, value
    return None


def _taken_from_self(value: ast.expr | None, target: ast.expr, owner: str | None) -> str | None:
    """`forwarders = self._forwarders` in a method: the local holds what the attribute holds."""
    if owner is None or not isinstance(target, ast.Name) or not isinstance(value, ast.Attribute):
        return None
    if isinstance(value.value, ast.Name) and value.value.id == "self":
        return f"{owner}{ATTRIBUTE_OF}{value.attr}"
    return None


def _bindings(node: ast.AST) -> list[tuple[ast.expr | None, ast.expr | None]]:
    """(target, value) of an assignment or a `with` statement's items."""
    if isinstance(node, ast.Assign):
        return [(target, node.value) for target in node.targets]
    if isinstance(node, ast.AnnAssign):
        return [(node.target, node.value)]
    if isinstance(node, ast.With | ast.AsyncWith):
        return [(item.optional_vars, item.context_expr) for item in node.items]
    return []


def _passed_in(
    value: ast.expr | None, target: ast.expr, parameters: Mapping[str, str]
) -> str | None:
    """What a parameter annotated with a class, or one of its attributes, stored on `self`
    holds: `self._bus = bus` the class; `self._chats = services.chats` the class's attribute
    `chats`, written `Class::chats` and resolved when looked up."""
    if not isinstance(target, ast.Attribute) or dotted(target.value) != "self":
        return None
    if isinstance(value, ast.Name):
        return parameters.get(value.id)
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        owner = parameters.get(value.value.id)
        return f"{owner}{ATTRIBUTE_OF}{value.attr}" if owner else None
    return None


# A receiver with subscripts, as `call_name` writes it: the name, then its `[N]` and `[]` keys
_SUBSCRIPTED = re.compile(r"([\w.]+)((?:\[\d*\])+)")
_KEY = re.compile(r"\[(\d*)\]")

# How a type names an attribute of a class (`Services::chats`), resolved when looked up
ATTRIBUTE_OF = "::"


def _annotated_fields(cls: ast.ClassDef) -> Iterator[tuple[str, str]]:
    """Fields a class body declares with a class annotation (`chats: TemporaryChats`, as a
    dataclass does)."""
    for statement in cls.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            annotated = _annotated_class(statement.annotation)
            if annotated:
                yield statement.target.id, annotated
            # a container of one class (`sites: list[Site]`) as `sites[]`, and of tuples
            for suffix, item in _contents(statement.annotation):
                yield statement.target.id + suffix, item


def _statements_breadth_first(node: ast.AST) -> list[ast.AST]:
    """The statements below `node` in `ast.walk`'s order (breadth first, fields in order),
    without visiting expressions: no statement lies inside an expression, and the handlers
    and match cases that hold statements keep their place in the order."""
    found = [node]
    position = 0
    while position < len(found):
        current = found[position]
        position += 1
        kind = type(current)
        names = _HOLDING_FIELDS.get(kind)
        if names is None:
            declared = getattr(kind, "_fields", ())
            names = _HOLDING_FIELDS[kind] = tuple(n for n in _STATEMENT_FIELDS if n in declared)
        for name in names:
            block = getattr(current, name)
            if isinstance(block, list):
                found.extend(block)
    return found


# The fields of statements, handlers and match cases that hold statements, handlers or cases,
# in the order `ast` lists them: body, handlers, orelse, finalbody (Try); cases (Match).
_STATEMENT_FIELDS = ("body", "handlers", "cases", "orelse", "finalbody")
_HOLDING_FIELDS: dict[type, tuple[str, ...]] = {}  # each node type's fields among those


def _called(value: ast.expr | None) -> str | None:
    """The dotted name a value is made by calling: `Cls(...)`, `make[T](...)`, `await f()`."""
    if isinstance(value, ast.Await):
        value = value.value
    if not isinstance(value, ast.Call):
        return None
    called = value.func
    return dotted(called.value if isinstance(called, ast.Subscript) else called)


def summarise_module(
    tree: ast.Module,
    relative: str,
    vocabulary: Vocabulary,
    light: bool = False,
    source: bytes | None = None,
) -> ModuleSummary:
    """The summary of one parsed file at project-relative path `relative`; `light`: only its
    classes, imports and the types of what names hold (a module with no async code). With the
    file's `source` bytes, passes that look for words the source does not contain (`shield`,
    `Queue`, `add_signal_handler`) are skipped, and its `# gate: critical` lines are known."""
    module = module_name(relative)
    package = module if relative.endswith("__init__.py") else module.rpartition(".")[0]
    walk = _module_walk(tree, vocabulary, package, light, source)
    walk.walk(tree, "", None)
    if walk.constructions:
        walk.record_constructed_with_self()
    sites = () if light else tuple(walk.sites) + call_sites(tree, [], "", "")
    return ModuleSummary(
        module,
        walk.functions,
        walk.classes,
        frozenset(walk.managers),
        walk.imports,
        walk.types,
        sites,
        walk.queues,
        frozenset(walk.stubs),
    )


def summarise_imports(tree: ast.Module, relative: str, vocabulary: Vocabulary) -> ModuleSummary:
    """The summary of a module with neither classes nor async code: only what it imports, so
    that a name it re-exports (a package's `__init__.py`: `from .utils import cancel_and_wait`)
    is followed to the module that defines it."""
    module = module_name(relative)
    package = module if relative.endswith("__init__.py") else module.rpartition(".")[0]
    walk = _ModuleWalk(vocabulary, package, light=True, may_shield=False)
    pending: list[ast.AST] = [tree]
    while pending:
        for child in child_statements(pending.pop()):
            if isinstance(child, ast.Import | ast.ImportFrom):
                walk.imported(child)
            elif type(child) in HOLDS_STATEMENTS:  # `if TYPE_CHECKING:`, `try:` around imports
                pending.append(child)
            elif bound := _typevar_bound(child):
                walk.types[(bound[0], BOUND)] = bound[1]
    return ModuleSummary(
        module, {}, {}, frozenset(), walk.imports, walk.types, (), frozenset(), frozenset()
    )


def _module_walk(
    tree: ast.Module, vocabulary: Vocabulary, package: str, light: bool, source: bytes | None
) -> _ModuleWalk:
    """A walk set up with what the module's source says it needs (all of it without one)."""

    def says(word: bytes) -> bool:
        return not light and (source is None or word in source)

    marked = marked_lines(source) if source is not None else frozenset()
    walk = _ModuleWalk(vocabulary, package, light=light, may_shield=says(b"shield"), marked=marked)
    if says(b"shield") and says(b"contextmanager"):
        walk.shielding_managers = _shielding_generators(tree)
        walk.managers |= walk.shielding_managers
    if says(SIGNAL_ROUTER.encode()):
        walk.signal_routers = _signal_routers(tree)
    if says(b"Queue") and _imports_asyncio(tree):  # every class of QUEUE_CLASSES says Queue
        walk.queues = unbounded_queues(tree)
    if says(b"shield") and (says(b"ensure_future") or says(b"create_task")):
        walk.shielded_tasks = tasks_awaited_only_shielded(tree)
    return walk


TASK_MAKERS = frozenset({"ensure_future", "create_task"})
# what reading a task attribute may do without cancelling the task or waiting on it unshielded
_TASK_QUERIES = frozenset({"done", "cancelled", "result", "exception", "add_done_callback"})


def tasks_awaited_only_shielded(tree: ast.Module) -> frozenset[int]:
    """The calls whose coroutine a class runs as a task it keeps in an attribute and only ever
    waits on through `asyncio.shield(...)` (`self._close_task = ensure_future(self._close())`,
    `await asyncio.shield(self._close_task)`), by id: no waiter's cancel reaches the task and
    nothing cancels it, so it runs to completion. Any other use of the attribute (a bare
    `await`, `.cancel()`, handing it on) keeps the task exposed."""
    found: set[int] = set()
    classes, makers = [], []
    for node in ast.walk(tree):
        if type(node) is ast.ClassDef:
            classes.append(node)
        elif type(node) is ast.Assign and _makes_task_of_call(node.value):
            makers.append(node.lineno)
    for cls in classes:
        if not any(cls.lineno <= line <= (cls.end_lineno or line) for line in makers):
            continue  # no task made in it: nothing to walk it for
        made, stores = _task_attributes(cls)
        if made:
            found |= _only_shielded(cls, made, stores)
    return frozenset(found)


def _only_shielded(
    cls: ast.ClassDef, made: dict[str, list[ast.Call]], stores: set[int]
) -> set[int]:
    """The calls of `made` whose task attribute the class only shields, tests or queries."""
    parents = {id(child): node for node in ast.walk(cls) for child in ast.iter_child_nodes(node)}
    exposed = _exposed_through_locals(cls, made, parents)
    for node in ast.walk(cls):
        attribute = _self_attribute(node)
        if (
            attribute in made
            and id(node) not in stores
            and not _only_shields_or_asks(node, parents)
        ):
            exposed.add(attribute)  # type: ignore[arg-type]
    return {
        id(call) for attribute, calls in made.items() if attribute not in exposed for call in calls
    }


def _exposed_through_locals(
    cls: ast.ClassDef, made: dict[str, list[ast.Call]], parents: dict[int, ast.AST]
) -> set[str]:
    """The task attributes a method exposes through a local that holds the task (`task =
    self._close_task`, or the `task = create_task(...)` it stores there): a use of the local
    other than a shield, a test, a query or storing it back."""
    exposed: set[str] = set()
    for function in _methods(cls):
        held = _locals_holding(function, made)
        for node in ast.walk(function):
            if type(node) is not ast.Name or node.id not in held or type(node.ctx) is ast.Store:
                continue
            parent = parents.get(id(node))
            stored = isinstance(parent, ast.Assign) and _self_attribute(parent.targets[0]) in made
            if not (stored or _only_shields_or_asks(node, parents)):
                exposed |= held[node.id]
    return exposed


def _locals_holding(
    function: ast.FunctionDef | ast.AsyncFunctionDef, made: dict[str, list[ast.Call]]
) -> dict[str, set[str]]:
    """The locals of a method that hold one of the task attributes' tasks, each with those
    attributes: read from one (`task = self._close_task`), or made and stored in one."""
    held: dict[str, set[str]] = {}
    for node in ast.walk(function):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and (attribute := _self_attribute(value)) in made:
            held.setdefault(target.id, set()).add(attribute)  # type: ignore[arg-type]
        elif isinstance(value, ast.Name) and (attribute := _self_attribute(target)) in made:
            held.setdefault(value.id, set()).add(attribute)  # type: ignore[arg-type]
    return held


def _task_attributes(cls: ast.ClassDef) -> tuple[dict[str, list[ast.Call]], set[int]]:
    """The attributes a class's methods set to a task of a call (`self.t = create_task(f())`):
    the calls by attribute, and the ids of those assignment targets."""
    made: dict[str, list[ast.Call]] = {}
    stores: set[int] = set()
    for node in ast.walk(cls):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        attribute, value = _self_attribute(node.targets[0]), node.value
        if attribute and _makes_task_of_call(value):
            made.setdefault(attribute, []).append(value.args[0])  # type: ignore[attr-defined]
            stores.add(id(node.targets[0]))
    for function in _methods(cls):
        _stored_local_tasks(function, made, stores)
    return made, stores


def _methods(cls: ast.ClassDef) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    return (n for n in ast.walk(cls) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


def _stored_local_tasks(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    made: dict[str, list[ast.Call]],
    stores: set[int],
) -> None:
    """`task = create_task(self._close()); self._close_task = task` in one method: the
    attribute holds the task of that call."""
    assignments = [(n.targets[0], n.value) for n in ast.walk(function) if type(n) is ast.Assign]
    local_tasks = _local_tasks(assignments)
    if not local_tasks:
        return
    for target, value in assignments:
        attribute = _self_attribute(target)
        if attribute and isinstance(value, ast.Name) and value.id in local_tasks:
            made.setdefault(attribute, []).extend(local_tasks[value.id])
            stores.add(id(target))


def _local_tasks(assignments: list[tuple[ast.expr, ast.expr]]) -> dict[str, list[ast.Call]]:
    """The calls whose task each local is assigned (`task = create_task(self._close())`)."""
    found: dict[str, list[ast.Call]] = {}
    for target, value in assignments:
        if isinstance(target, ast.Name) and _makes_task_of_call(value):
            found.setdefault(target.id, []).append(value.args[0])  # type: ignore[attr-defined]
    return found


def _makes_task_of_call(value: ast.expr) -> bool:
    """`asyncio.ensure_future(self._close())`, `loop.create_task(run())`."""
    return (
        isinstance(value, ast.Call)
        and _final(value.func) in TASK_MAKERS
        and bool(value.args)
        and isinstance(value.args[0], ast.Call)
    )


def _self_attribute(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == "self" else None
    return None


def _only_shields_or_asks(use: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Is this read of a task attribute `asyncio.shield(self.t)`, `asyncio.wait([self.t])`
    (which a cancel of the waiter does not pass on), a test of it (`self.t is None`, `if
    self.t:`) or a query (`self.t.done()`), not a wait that passes a cancel on or a cancel?"""
    parent = parents.get(id(use))
    if isinstance(parent, ast.Call) and _final(parent.func) == "shield":
        return bool(parent.args) and parent.args[0] is use
    if isinstance(parent, ast.List | ast.Set | ast.Tuple):
        return _waited_apart(parent, parents)
    if isinstance(parent, ast.Compare | ast.If | ast.While | ast.BoolOp | ast.UnaryOp):
        return True
    if isinstance(parent, ast.Attribute) and parent.attr in _TASK_QUERIES:
        return True
    if isinstance(parent, ast.AnnAssign):
        return parent.target is use  # `self.t: Task | None = None`
    return isinstance(parent, ast.Assign) and _assigned_or_aliased(use, parent)


def _waited_apart(tasks: ast.expr, parents: dict[int, ast.AST]) -> bool:
    """Are these tasks what `asyncio.wait(...)` is given? It waits for them without cancelling
    them when it is cancelled itself."""
    call = parents.get(id(tasks))
    if not isinstance(call, ast.Call) or not call.args or call.args[0] is not tasks:
        return False
    return dotted(call.func) in ("asyncio.wait", "wait")


def _assigned_or_aliased(use: ast.AST, parent: ast.Assign) -> bool:
    """`self.t = ...`, or `task = self.t`, whose local's own uses _exposed_through_locals
    checks."""
    if parent.value is use:
        return len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)
    return use in parent.targets


_MARKER = re.compile(rb"#\s*gate:\s*critical\b")


def marked_lines(data: bytes) -> frozenset[int]:
    """The lines holding a `# gate: critical` comment (or text that looks like one: a function
    with such a line is judged by its name, which is the cautious side)."""
    if b"critical" not in data:
        return frozenset()
    return frozenset(
        number
        for number, line in enumerate(data.splitlines(), 1)
        if _MARKER.search(line) is not None
    )


SIGNAL_ROUTER = "add_signal_handler"


def _signal_routers(tree: ast.Module) -> frozenset[str]:
    """`add_signal_handler`, and the names of the functions of the module that call it."""
    names = {SIGNAL_ROUTER}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _calls_any(node, names):
            names.add(node.name)
    return frozenset(names)


def _calls_any(function: ast.AST, names: frozenset[str] | set[str]) -> bool:
    """Does the function's own body call one of `names` (a bare name, or a method of self or
    another receiver)?"""
    return any(
        isinstance(node, ast.Call) and _final(node.func) in names for node in _own_nodes(function)
    )


def _imports_asyncio(tree: ast.Module) -> bool:
    """Does the module import asyncio (or a name from it) at its top level?"""
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            if any(alias.name == "asyncio" for alias in statement.names):
                return True
        elif isinstance(statement, ast.ImportFrom) and statement.module == "asyncio":
            return True
    return False


# asyncio's queues: `put` suspends only while a bounded queue is full
QUEUE_CLASSES = frozenset({"Queue", "LifoQueue", "PriorityQueue"})


def unbounded_queues(tree: ast.Module) -> frozenset[tuple[str, str]]:
    """Where the module keeps an unbounded asyncio queue (`self.inbound = asyncio.Queue()`,
    `queue = Queue(maxsize=0)`): (class qualname, attribute) and (function qualname, name)."""
    found: set[tuple[str, str]] = set()

    def visit(node: ast.AST, prefix: str, owner: str | None) -> None:
        for child in child_statements(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qualname = prefix + child.name
                found.update(_queues_made(child, qualname, owner))
                visit(child, f"{qualname}.<locals>.", None)
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.", prefix + child.name)
            elif type(child) in HOLDS_STATEMENTS:
                visit(child, prefix, owner)

    visit(tree, "", None)
    return frozenset(found)


def _queues_made(function: ast.AST, qualname: str, owner: str | None) -> Iterator[tuple[str, str]]:
    for node in _statements_breadth_first(function):
        if not isinstance(node, ast.Assign | ast.AnnAssign) or not _unbounded(node.value):
            continue
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            if isinstance(target, ast.Name):
                yield qualname, target.id
            elif isinstance(target, ast.Attribute) and owner and dotted(target.value) == "self":
                yield owner, target.attr


def _unbounded(value: ast.expr | None) -> bool:
    """Is this `asyncio.Queue()` (or `Queue(maxsize=0)`, `Queue(0)`): a queue with no bound?"""
    if not isinstance(value, ast.Call) or _final(value.func) not in QUEUE_CLASSES:
        return False
    sizes = [*value.args[:1], *(k.value for k in value.keywords if k.arg == "maxsize")]
    return all(
        isinstance(size, ast.Constant) and isinstance(size.value, int) and size.value <= 0
        for size in sizes
    )


def _puts_on_unbounded(
    queues: frozenset[tuple[str, str]], qualname: str, owner: str
) -> Callable[[ast.Call], bool]:
    """Is an awaited call a `put` on an unbounded queue of this function or its class?"""

    def never_suspends(call: ast.Call) -> bool:
        if not isinstance(call.func, ast.Attribute) or call.func.attr != "put":
            return False
        return is_unbounded_queue(queues, qualname, owner, dotted(call.func.value))

    return never_suspends


def is_unbounded_queue(
    queues: frozenset[tuple[str, str]], qualname: str, owner: str, receiver: str | None
) -> bool:
    """Does `receiver` (`self.inbound`, `queue`) name an unbounded queue where it is used?"""
    if not receiver:
        return False
    base, _, attribute = receiver.partition(".")
    if base == "self" and owner and "." not in attribute:
        return (owner, attribute) in queues
    return not attribute and (qualname, base) in queues


# The decorators that make a generator function a context manager
CONTEXT_MANAGER_DECORATORS = frozenset({"asynccontextmanager", "contextmanager"})


def _shielding_generators(tree: ast.Module) -> frozenset[str]:
    """The qualnames of the module's generator context managers (at its top level or in its
    classes) that open a shield scope before their first `yield`: apscheduler's
    `_begin_transaction`, which enters `CancelScope(shield=True)` on its exit stack and then
    yields the connection. The body of an `async with` of one runs shielded."""
    found = set()
    pending: list[tuple[str, ast.AST]] = [("", tree)]
    while pending:
        prefix, node = pending.pop()
        for child in child_statements(node):
            if isinstance(child, ast.ClassDef):
                pending.append((f"{prefix}{child.name}.", child))
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                decorated = {_final(d) for d in child.decorator_list}
                if decorated & CONTEXT_MANAGER_DECORATORS and _shields_before_yield(child):
                    found.add(prefix + child.name)
                pending.append((f"{prefix}{child.name}.<locals>.", child))
    return frozenset(found)


def _shields_before_yield(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Does a shield call come before the function's first `yield`, in source order?"""
    nodes = list(ast.walk(function))
    yields = [n.lineno for n in nodes if isinstance(n, ast.Yield)]
    if not yields:
        return False
    first = min(yields)
    return any(isinstance(n, ast.Call) and _shield_call(n) and n.lineno < first for n in nodes)


def _opens_local_shield(shielding: frozenset[str], owner: str, name: str) -> bool:
    """Is `name` (`self._begin_transaction`, `transaction`) one of the module's shielding
    generator context managers, a method of `owner` or a function at its top level?"""
    if not shielding:
        return False
    receiver, _, method = name.rpartition(".")
    if receiver in ("self", "cls"):
        return f"{owner}.{method}" in shielding
    return not receiver and name in shielding


def _opens_shield(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Does a shield call appear anywhere below the function (what `ast.walk` would find)?"""
    pending: list[ast.AST] = [function]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Call) and _shield_call(current):
            return True
        pending.extend(child_nodes(current))
    return False


# what awaiting a call that never suspends does: nothing a cancel can land in
NEVER_SUSPENDS = FunctionSummary(suspends=False, shielded=False, cut_safe=True, holds=False)

# what awaiting a tornado `@gen.coroutine` does: the IOLoop drives its generator to the end
# whatever happens to the task awaiting it, so none of its work is cut, but the await itself
# raises the waiter's cancel (what comes after it is skipped)
RUNS_ON = FunctionSummary(suspends=True, shielded=False, cut_safe=True, holds=False)

# the decorators that make a generator function a coroutine its event loop runs to the end
RUN_TO_COMPLETION_DECORATORS = frozenset({"tornado.gen.coroutine"})


def _runs_to_completion(
    function: ast.FunctionDef | ast.AsyncFunctionDef, imports: Mapping[str, str]
) -> bool:
    """A plain generator function decorated with tornado's `@gen.coroutine` (through the
    module's imports: `from tornado import gen`, `from tornado.gen import coroutine`)."""
    if not isinstance(function, ast.FunctionDef):
        return False
    return any(
        _as_imported(imports, dotted(decorator) or "") in RUN_TO_COMPLETION_DECORATORS
        for decorator in function.decorator_list
    )


def _as_imported(imports: Mapping[str, str], written: str) -> str:
    """A dotted name as written in a module, its first part resolved through the module's
    imports (`gen.coroutine` after `from tornado import gen` -> `tornado.gen.coroutine`)."""
    first, dot, rest = written.partition(".")
    return imports.get(first, first) + dot + rest


def _declaring(module: ModuleSummary, caller: str, name: str) -> str:
    """The caller, or the innermost function it is local to, that has a parameter `name` ("" for
    none)."""
    scope = caller
    while scope and name not in getattr(module.functions.get(scope), "params", ()):
        scope = scope.rsplit(".<locals>.", 1)[0] if ".<locals>." in scope else ""
    return scope


# What a qualname says of a function local to another (`Transport.serve.<locals>.writer`)
LOCAL_SCOPE = ".<locals>."


def _self_class(home: ModuleSummary, qualname: str) -> str:
    """The class whose methods `self.x()` runs in a function of `home`: the method's class, or
    for a function local to a method the method's, unless it (or a function between them)
    binds a `self` or `cls` of its own. "" for none."""
    scope = qualname
    while True:
        owner = scope.rpartition(".")[0]
        if owner in home.classes:
            return owner
        bound = getattr(home.functions.get(scope), "params", ())
        if LOCAL_SCOPE not in scope or "self" in bound or "cls" in bound:
            return ""
        scope = scope.rsplit(LOCAL_SCOPE, 1)[0]


def _merged(found: list[FunctionSummary]) -> FunctionSummary:
    """What awaiting a call that may run any of these functions does: it suspends when one
    does, holds or is shielded when each that suspends does, its steps are best effort when
    each that acts takes only such steps."""
    if len(found) == 1:
        return found[0]
    acting = [summary for summary in found if summary.suspends or summary.own_steps]
    if not acting:
        return NEVER_SUSPENDS
    suspending = [summary for summary in acting if summary.suspends]
    return FunctionSummary(
        suspends=bool(suspending),
        shielded=_each("shielded", suspending),
        cut_safe=_each("cut_safe", acting),
        holds=_each("holds", suspending),
        steps_cut=not _each("steps_cut", acting, negated=True),
        best_effort=_each("best_effort", acting),
        steps_best_effort=_each("steps_best_effort", acting),
        cut_best_effort=_each("cut_best_effort", [s for s in acting if not s.cut_safe]),
    )


def _each(fact: str, among: list[FunctionSummary], negated: bool = False) -> bool:
    """Is `fact` true of every summary listed (and is one listed)? `negated`: is it false of
    every one instead (empty: true)?"""
    if negated:
        return not any(getattr(summary, fact) for summary in among)
    return bool(among) and all(getattr(summary, fact) for summary in among)


# (kind, module, caller qualname, caller's class qualname, dotted name): kind "call" asks for
# the summary of the function an awaited call runs, "with" whether a `with` item's call opens a
# shielded scope, "callers" whether every place that runs the caller shields it, "called"
# whether any place runs it, "uncancelled" whether nothing cancels the task it runs in, "stack"
# whether a receiver holds an (Async)ExitStack.
LookupKey = tuple[str, str, str, str, str]
Lookup = FunctionSummary | bool | None


@dataclass(frozen=True)
class ProjectSummaries:
    """What a run knew of the project: the summaries of every module it read (the checked files
    and the project modules they import) and whether the callers of their functions are among
    them (not so for single files named). The fixer analyses a file again against these."""

    modules: tuple[ModuleSummary, ...] = ()
    callers_known: bool = True
    sources: SourceSearch | None = None


class SourceSearch(Protocol):
    """The text of the project's Python files, for the few questions summaries cannot answer."""

    def mentioning(self, name: str) -> list[tuple[str, str]] | None:
        """(project-relative path, text) of every project source that mentions `name` as a
        word; None when the project's sources cannot all be read."""


class ProjectIndex:
    """Every summarised module of the run, for resolving an awaited call to its callee.

    Imports name modules as Python sees them (`anyio.abc`); files are named from the project
    root (`src/anyio/abc.py`), so a module is also found by any dotted suffix of its name when
    that suffix is unique.
    """

    # lookups about a receiver or a call as written in a function, by kind (set below)
    _receiver_questions: ClassVar[dict[str, Callable[..., bool]]]

    def __init__(
        self,
        modules: list[ModuleSummary],
        callers_known: bool = True,
        sources: SourceSearch | None = None,
        test_modules: frozenset[str] = frozenset(),
        config: TeardownConfig | None = None,
    ) -> None:
        # whether the run sees the callers: false when it was given single files (pre-commit),
        # whose callers live in files it does not read; caller facts then hold only for names
        # that no other project source mentions (`sources`)
        self.callers_known = callers_known
        self.sources = sources
        # the modules that are test code: a test that runs a hook itself does not say how the
        # application runs it
        self.test_modules = test_modules
        self.config = config or TeardownConfig()  # which methods are teardown, by their names
        self._complete: dict[str, bool] = {}  # by function name: callers_complete
        self._free_locks: dict[str, bool] = {}  # by attribute name: _never_blocks
        self._only_takers: dict[tuple[str, str], bool] = {}  # (attribute, method): _taken_only_by
        self.modules = {module.module: module for module in modules}
        suffixes: dict[str, set[str]] = {}
        for name in self.modules:
            parts = name.split(".")
            for start in range(len(parts)):
                suffixes.setdefault(".".join(parts[start:]), set()).add(name)
        self.by_suffix = {k: next(iter(v)) for k, v in suffixes.items() if len(v) == 1}
        self._sites: dict[str, list[tuple[ModuleSummary, CallSite]]] | None = None
        # what each call site runs, by id of the site (the sites live as long as the index)
        self._targets: dict[int, tuple[ModuleSummary, FunctionSummary] | None] = {}
        # the overrides of a stub method, by (module of the receiver's class, class, method)
        self._implemented: dict[tuple[str, str, str], list[tuple[ModuleSummary, FunctionSummary]]]
        self._implemented = {}
        self._shielded: frozenset[str] | None = None
        # the project's methods by name, for private methods called on untyped receivers
        self._by_method: dict[str, list[tuple[ModuleSummary, FunctionSummary]]] | None = None
        self._tasks_seen: dict[str, bool] = {}  # by task kind: whether any site runs one
        self._caller_answers: dict[LookupKey, bool] = {}
        # whether a summary's awaits all reach callees that never suspend, by id(summary): a
        # callee is looked up from every await of it
        self._never: dict[int, bool] = {}
        # whether every step a summary's function takes is best effort, by id(summary)
        self._best_effort: dict[int, bool] = {}
        self._cut_best_effort: dict[int, bool] = {}
        # whether every call a summary's function awaits holds the interrupt, or is shielded, by
        # (id(summary), the question)
        self._through: dict[tuple[int, Callable[[FunctionSummary], bool]], bool] = {}

    def module(self, name: str) -> ModuleSummary | None:
        found = self.modules.get(name)
        if found is None and name in self.by_suffix:
            found = self.modules[self.by_suffix[name]]
        return found

    def lookup(self, key: LookupKey) -> Lookup:
        kind, module_name_, caller, owner, name = key
        module = self.modules.get(module_name_)
        if module is None:
            return None if kind == "call" else False
        asked = self._receiver_questions.get(kind)
        if asked is not None:
            return asked(self, module, caller, owner, name)
        if kind in ("callers", "called", "uncancelled", "never_cancelled", "after_cancel"):
            if key not in self._caller_answers:  # asked again by every file on a warm run
                self._caller_answers[key] = self._caller_fact(kind, module, caller)
            return self._caller_answers[key]
        return self.callee(module, caller, owner, name)

    def _opens_shield(self, module: ModuleSummary, caller: str, owner: str, name: str) -> bool:
        """Does a `with` item's call open a shielded scope: a project class whose `__enter__`
        opens one, or a project generator context manager that does?"""
        located = self._named_class(module, caller, owner, name)
        if located is not None:
            return located[1] in located[0].shield_managers
        return self._shielding_function(module, caller, owner, name)

    def _holds_exit_stack(self, module: ModuleSummary, caller: str, owner: str, name: str) -> bool:
        held = self._held(module, caller, owner, name)
        return held is not None and held[1].rpartition(".")[2] in EXIT_STACK_TYPES

    def _quiet_when_passed(
        self, module: ModuleSummary, caller: str, owner: str, written: str
    ) -> bool:
        """Does a call that passes parameters as constants (`disconnect(nowait=True)`, written
        `disconnect|nowait=True`) never suspend: every suspension of the project function it
        runs that those values do not rule out is an await of a call that never suspends?"""
        call, *passed = written.split("|")
        values = {name: value == "True" for name, _, value in (p.partition("=") for p in passed)}
        found = self._function(module, caller, owner, call)
        if found is None or not found[1].awaits_when:
            return False
        home, summary = found
        left = [
            name
            for name, when in summary.awaits_when
            if all(values.get(param, truthy) == truthy for param, truthy in when)
        ]
        if "" in left:
            return False
        return self._each_call(
            home, summary, tuple(left), lambda callee: self._never_suspends_at_all(*callee)
        )

    def _caller_fact(self, kind: str, module: ModuleSummary, qualname: str) -> bool:
        if kind == "callers":
            return self.shielded_by_callers(module, qualname, frozenset())
        if kind in ("uncancelled", "never_cancelled"):
            # a function local to another is run only from there, which this run has read
            known = ".<locals>." in qualname or self.callers_complete(qualname)
            if kind == "never_cancelled":
                return known and self._run_by_uncancelled_main(module, qualname, frozenset())
            return known and self.uncancelled(module, qualname, frozenset())
        if kind == "after_cancel":
            return self.callers_complete(qualname) and self.after_cancel(
                module, qualname, frozenset()
            )
        return not self.callers_complete(qualname) or self.called(module, qualname)

    def callers_complete(self, qualname: str) -> bool:
        """Are all the places in the project that may run a function of this name (or name a
        class of it) in the index? Yes when the run was given whole directories; for single
        files, when every project source that mentions the name is a module the index read in
        full (a light summary records no call sites)."""
        name = qualname.rpartition(".")[2]
        if self.callers_known:
            return True
        if name not in self._complete:
            listed = self.sources.mentioning(name) if self.sources is not None else None
            self._complete[name] = listed is not None and all(
                (read := self.modules.get(module_name(path))) is not None
                and bool(read.sites or read.functions)
                for path, _ in listed
            )
        return self._complete[name]

    def uncancelled(self, module: ModuleSummary, qualname: str, visiting: frozenset[str]) -> bool:
        """Does nothing cancel the task this async function runs in? So when it is the main
        coroutine of `asyncio.run(...)` (whose task only Ctrl-C cancels) and routes the loop's
        signals to handlers of its own, or when every place that runs it awaits it in such a
        function. False when nothing in the project runs it."""
        target = module.functions.get(qualname)
        # a main coroutine that a framework starts (a CLI's command, run by cyclopts or click
        # outside the project): its own signal handlers take Ctrl-C's place
        if (
            target is not None
            and target.routes_signals
            and not visiting
            and self._awaited_up_to_entry_points(module, qualname, frozenset())
        ):
            return True
        return self._run_by_uncancelled_main(module, qualname, visiting)

    def _run_by_uncancelled_main(
        self, module: ModuleSummary, qualname: str, visiting: frozenset[str]
    ) -> bool:
        """Is this async function, as the project itself runs it, out of every cancel's
        reach: the main coroutine of an `asyncio.run(...)` the project calls, routing the
        loop's signals to handlers of its own, or awaited only in such functions' tasks? No
        framework outside the project is taken on trust."""

        def qualifies(home: ModuleSummary, site: CallSite, inner: frozenset[str]) -> bool:
            if site.task == MAIN_TASK:
                return bool(module.functions[qualname].routes_signals)
            return site.task == SAME_TASK and self.uncancelled(home, site.caller, inner)

        return self._every_runner(module, qualname, visiting, MAIN_TASK, qualifies)

    def _awaited_up_to_entry_points(
        self, module: ModuleSummary, qualname: str, visiting: frozenset[str]
    ) -> bool:
        """Is this async function awaited only in its callers' own task, caller after caller,
        up to functions nothing in the project runs (up to four callers deep)? No caller in
        between can cancel it but by being cancelled itself."""
        target = module.functions.get(qualname)
        key = f"{module.module}:{qualname}"
        if target is None or key in visiting or len(visiting) > 3:
            return False
        inner = visiting | {key}
        for home, site in self._runners(module, qualname, target):
            if home.module in self.test_modules:
                continue  # a test that runs it is no framework
            if site.task != SAME_TASK or not self._awaited_up_to_entry_points(
                home, site.caller, inner
            ):
                return False
        return True

    def after_cancel(self, module: ModuleSummary, qualname: str, visiting: frozenset[str]) -> bool:
        """Is this async function run only after its task's one cancel: registered as a hook
        that aiohttp's `run_app` runs once it has cancelled its main task, or run only by such
        functions (awaited, or started by them: what a hook gathers ends when a second cancel
        reaches the hook)? Callers in test code are left out. False when nothing else in the
        project runs it."""

        def qualifies(home: ModuleSummary, site: CallSite, inner: frozenset[str]) -> bool:
            if site.task == AFTER_CANCEL:
                return True
            return site.task in (SAME_TASK, OTHER_TASK) and self.after_cancel(
                home, site.caller, inner
            )

        return self._every_runner(
            module, qualname, visiting, AFTER_CANCEL, qualifies, skip_tests=True
        )

    def _every_runner(
        self,
        module: ModuleSummary,
        qualname: str,
        visiting: frozenset[str],
        entry: str,
        qualifies: Callable[[ModuleSummary, CallSite, frozenset[str]], bool],
        skip_tests: bool = False,
    ) -> bool:
        """Does every place in the project that runs this async function qualify, followed up
        to four callers deep? False when nothing runs it, and when no site anywhere runs
        a function in the `entry` task the chain must start from."""
        target = module.functions.get(qualname)
        key = f"{module.module}:{qualname}"
        if target is None or key in visiting or len(visiting) > 3 or not self._has_task(entry):
            return False
        inner = visiting | {key}
        runs = False
        for home, site in self._runners(module, qualname, target):  # the first that fails ends it
            if skip_tests and home.module in self.test_modules:
                continue
            runs = True
            if not qualifies(home, site, inner):
                return False
        return runs

    def _has_task(self, task: str) -> bool:
        """Does any module have a site that runs a function in this task (nothing can be
        uncancelled without a main coroutine, nor entered after run_app's cancel without a
        hook)?"""
        if task not in self._tasks_seen:
            self._tasks_seen[task] = any(
                site.task == task for module in self.modules.values() for site in module.sites
            )
        return self._tasks_seen[task]

    def shielded_by_callers(
        self, module: ModuleSummary, qualname: str, visiting: frozenset[str]
    ) -> bool:
        """Does every place in the project that may run this async function shield it (a
        shielded scope around the await, `asyncio.shield(...)`, or a caller that is itself
        shielded by every caller)? False when nothing in the project runs it: its callers are
        elsewhere. Only names that some shielded call in the project has, or that functions of
        such names await (three calls deep), are resolved: a warm run asks this for every
        region."""
        target = module.functions.get(qualname)
        key = f"{module.module}:{qualname}"
        # no shielded call of that name anywhere: nothing to resolve
        shielded_name = qualname.rpartition(".")[2] in self._shielded_names()
        if target is None or key in visiting or len(visiting) > 3 or not shielded_name:
            return False
        if not self.callers_complete(qualname):
            return False
        inner = visiting | {key}
        runs = False
        for home, site in self._runners(module, qualname, target):  # the first that fails ends it
            runs = True
            if not (site.shielded or self.shielded_by_callers(home, site.caller, inner)):
                return False
        return runs

    def _runners(
        self, module: ModuleSummary, qualname: str, target: FunctionSummary
    ) -> Iterator[tuple[ModuleSummary, CallSite]]:
        """The sites (with their modules) that may run the function, found as they are asked
        for."""
        owner, _, name = qualname.rpartition(".")
        owner = owner if owner in module.classes else ""
        return (
            (home, site)
            for home, site in self._sites_named(name)
            if self._runs(home, site, owner, target, module)
        )

    def called(self, module: ModuleSummary, qualname: str) -> bool:
        """Does any place in the project, other than the function itself, run it?"""
        target = module.functions.get(qualname)
        if target is None:
            return True
        owner, _, name = qualname.rpartition(".")
        owner = owner if owner in module.classes else ""
        return any(
            self._runs(home, site, owner, target, module)
            for home, site in self._sites_named(name)
            if not (home is module and site.caller == qualname)
        )

    def _sites_named(self, name: str) -> list[tuple[ModuleSummary, CallSite]]:
        if self._sites is None:
            self._sites = {}
            for module in self.modules.values():
                imports = module.imports
                for site in module.sites:
                    self._sites.setdefault(site.name, []).append((module, site))
                    # `from .methods import shutdown as stop_sessions; hooks = (stop_sessions,)`
                    # runs `shutdown`
                    imported = imports.get(site.name) if site.receiver is None else None
                    original = imported.rpartition(".")[2] if imported else site.name
                    if original != site.name:
                        self._sites.setdefault(original, []).append((module, site))
        return self._sites.get(name, [])

    def _shielded_names(self) -> frozenset[str]:
        """The names some shielded call in the project has, and the names the functions of
        those names await in turn, three calls deep (as deep as `shielded_by_callers` follows
        callers): `_stop_timer`, awaited only from a `cleanup` every caller shields."""
        if self._shielded is None:
            sites = [site for module in self.modules.values() for site in module.sites]
            found = {site.name for site in sites if site.shielded}
            for _ in range(3):
                reached = _awaited_by(sites, found)
                if reached <= found:
                    break
                found |= reached
            self._shielded = frozenset(found)
        return self._shielded

    def _derives(
        self, module: ModuleSummary, cls: str, base_home: ModuleSummary, base: str, depth: int
    ) -> bool:
        """Is class `cls` of `module` the class `base` of `base_home`, or derived from it in
        the project?"""
        if module is base_home and cls == base:
            return True
        if depth > 5:
            return False
        for name in module.classes.get(cls, ()):
            # a base class name as written in `cls`: looked up from the scope `cls` is in
            located = self._class(module, _nearest(module, cls.rpartition(".")[0], name))
            if located is not None and self._derives(*located, base_home, base, depth + 1):
                return True
        return False

    def _runs(
        self,
        home: ModuleSummary,
        site: CallSite,
        owner: str,
        target: FunctionSummary,
        target_home: ModuleSummary,
    ) -> bool:
        """May this site run the target (a method of class `owner`, or a function)? Resolved
        calls decide; a method call on a receiver gate cannot resolve counts when the receiver
        is named after the class (`task_options.logger.cleanup()` for `TaskLogger.cleanup`) or
        cannot be named at all (`loggers[0].cleanup()`)."""
        if site.receiver is None:
            found = None if owner else self._site_target(home, site)
            return found is not None and found[1] is target
        if site.receiver == "?":
            return bool(owner)
        if site.receiver in ("self", "cls") and site.owner and owner:
            # `self.aclose()` in a base class runs the override of every subclass
            return self._derives(target_home, owner, home, site.owner, 0)
        return self._runs_on_receiver(home, site, owner, target)

    def _runs_on_receiver(
        self, home: ModuleSummary, site: CallSite, owner: str, target: FunctionSummary
    ) -> bool:
        found = self._site_target(home, site)
        if found is not None:
            return found[1] is target
        last = (site.receiver or "").rsplit(".", 1)[-1]
        if not owner or last in ("self", "cls"):
            return False
        return _named_after(name_words(last), name_words(owner.rsplit(".", 1)[-1]))

    def _site_target(
        self, home: ModuleSummary, site: CallSite
    ) -> tuple[ModuleSummary, FunctionSummary] | None:
        """The project function a call site runs, when gate can resolve it: the same whichever
        function of that name is asked about, so resolved once per site (a name like `close`
        has hundreds of sites, asked about for every class that defines it)."""
        key = id(site)
        if key not in self._targets:
            if site.receiver is None:
                found = self._plain(home, site.caller, site.name)
            else:
                call = f"{site.receiver}.{site.name}"
                found = self._function(home, site.caller, site.owner, call)
            self._targets[key] = found
        return self._targets[key]

    def callee(
        self, module: ModuleSummary, caller: str, owner: str, call: str
    ) -> FunctionSummary | None:
        """The summary of the function an awaited call runs, when the project defines it;
        shielded only when every context manager it relies on opens a shield scope."""
        found = self._function(module, caller, owner, call)
        if found is None:
            implemented = self._implementations(module, caller, owner, call)
            if implemented:
                return _merged([self._as_looked_up(*pair) for pair in implemented])
            if self._known_never_to_suspend(module, caller, owner, call):
                return NEVER_SUSPENDS
            if "." not in call:
                return self._passed_in(module, caller, call)
            return self._private_by_name(call)
        return self._as_looked_up(*found)

    def _passed_in(self, module: ModuleSummary, caller: str, name: str) -> FunctionSummary | None:
        """What awaiting a parameter (`await finalize(result)`) of the caller, or of a function
        it is local to, runs: the functions every place in the project that calls that function
        passes for it (`finalize=_finalize_result`). None when a place passes none gate can
        name (a default, a lambda, `**kwargs`) or one the project does not define."""
        scope = _declaring(module, caller, name)
        target = module.functions.get(scope) if scope else None
        owner, _, _ = scope.rpartition(".")
        if target is None or owner in module.classes or not self.callers_complete(scope):
            return None  # a method's positions shift with how it is called: not followed
        position = str(target.params.index(name))
        found = []
        for home, site in self._runners(module, scope, target):
            passed = dict(site.arguments)
            value = passed.get(name) or passed.get(position)
            located = self._function(home, site.caller, site.owner, value) if value else None
            if located is None:
                return None
            found.append(self._as_looked_up(*located))
        return _merged(found) if found else None

    def _implementations(
        self, module: ModuleSummary, caller: str, owner: str, call: str
    ) -> list[tuple[ModuleSummary, FunctionSummary]]:
        """The project's implementations of an extension point a call runs: the call resolves
        to a class whose method of that name is a stub (`@abstractmethod async def
        initialize(self)` of a base class, `self.initialize()` in its `__aenter__`), and what
        runs is the override of a subclass. Every class of the project outside its tests that
        derives from the receiver's class and defines the method; none when the project ships
        none, or when the run does not read every source that names the method (pre-commit's
        single files). A subclass a user writes is not seen: the shipped code is judged by the
        implementations it ships."""
        receiver, _, method = call.rpartition(".")
        if not receiver or receiver == f"super{MADE_BY_CALL}":
            return []
        located = self._named_class(module, caller, owner, receiver)
        if located is None or self._stub(*located, method, 0) is None:
            return []
        key = (located[0].module, located[1], method)
        if key not in self._implemented:
            self._implemented[key] = self._overrides(*located, method)
        return self._implemented[key]

    def _stub(
        self, module: ModuleSummary, cls: str, name: str, depth: int
    ) -> tuple[ModuleSummary, str] | None:
        """The class, `cls` or a base of it in the project, whose stub of the method a call on
        an instance of `cls` finds (none when no definition of it is a stub)."""
        if depth > 5:
            return None
        if f"{cls}.{name}" in module.stubs:
            return module, cls
        for base in module.classes.get(cls, ()):
            located = self._class(module, base)
            found = self._stub(*located, name, depth + 1) if located is not None else None
            if found is not None:
                return found
        return None

    def _overrides(
        self, home: ModuleSummary, cls: str, name: str
    ) -> list[tuple[ModuleSummary, FunctionSummary]]:
        """The summaries of the methods `name` defined by classes derived from `cls`, outside
        the project's tests; none unless the run read every source that names `cls` or a class
        derived from it (a subclass names its base)."""
        found, derived = [], [cls]
        for module in self.modules.values():
            if module.module in self.test_modules:
                continue  # a test's fake is not an implementation the code runs
            for qualname in module.classes:
                if not self._derives(module, qualname, home, cls, 0):
                    continue
                derived.append(qualname)
                summary = module.functions.get(f"{qualname}.{name}")
                if summary is not None:
                    found.append((module, summary))
        return found if all(map(self._subclasses_known, derived)) else []

    def _subclasses_known(self, qualname: str) -> bool:
        """Is every project class that may derive from this class in the index? Yes when the
        run was given whole directories; for single files, when every project source that
        names the class and defines a class is a module the index read."""
        name = qualname.rpartition(".")[2]
        if self.callers_known:
            return True
        key = f"class {name}"  # no function's name has a space
        if key not in self._complete:
            listed = self.sources.mentioning(name) if self.sources is not None else None
            self._complete[key] = listed is not None and all(
                module_name(path) in self.modules or "class " not in text for path, text in listed
            )
        return self._complete[key]

    def _private_implementations(self, call: str) -> list[tuple[ModuleSummary, FunctionSummary]]:
        """The project's methods a call of a private method (`model._cleanup_on_run_end()`)
        on a receiver the project cannot type may run: every method of that name in a class
        of the project, outside its tests. A private name is the project's own, so its methods
        are all there are."""
        receiver, _, method = call.rpartition(".")
        if receiver in ("", "self", "cls") or not method.startswith("_") or method.startswith("__"):
            return []
        if self._by_method is None:
            self._by_method = {}
            for module in self.modules.values():
                if module.module in self.test_modules:
                    continue  # a test's fake is not an implementation the code runs
                for qualname, summary in module.functions.items():
                    owner, _, name = qualname.rpartition(".")
                    if owner in module.classes:
                        self._by_method.setdefault(name, []).append((module, summary))
        return self._by_method.get(method, [])

    def _private_by_name(self, call: str) -> FunctionSummary | None:
        """What awaiting a private method on an untyped receiver does, taken over all the
        project's methods of that name: it suspends when one does, holds or is shielded when
        each that suspends does, its steps are best effort when each that acts takes only
        such steps."""
        found = [self._as_looked_up(*pair) for pair in self._private_implementations(call)]
        return _merged(found) if found else None

    def _as_looked_up(self, home: ModuleSummary, summary: FunctionSummary) -> FunctionSummary:
        """A callee's summary with what the project decides of it: whether it suspends at all,
        whether its steps are all best effort, whether it holds every interrupt or is shielded
        through the project functions it awaits, whether its shield managers open shields. Each
        is decided on the summary as recorded (the project finds a function by its summary)."""
        changes: dict[str, object] = {}
        if summary.own_steps and self._only_best_effort(home, summary):
            changes["steps_best_effort"] = True
        if summary.cut_loses and self._cut_only_best_effort(home, summary):
            changes["cut_best_effort"] = True
        if summary.suspends and self._never_suspends_at_all(home, summary):
            changes.update(suspends=False, shielded=False, cut_safe=True)
        else:
            changes.update(self._decided_through_callees(home, summary))
        if self._keeps_every_cancel(home, summary):
            changes["keeps_cancel"] = True
        return replace(summary, **changes) if changes else summary  # type: ignore[arg-type]

    def _keeps_every_cancel(
        self, home: ModuleSummary, summary: FunctionSummary, depth: int = 0
    ) -> bool:
        """Does no cancel come out of the function? Its handlers keep every one that lands in
        it and it raises none it kept again, or each await they do not keep runs a project
        function (a few calls deep) of which that is true in turn, or never suspends."""
        if summary.raises_kept:
            return False
        if summary.holds or not summary.suspends:
            return True
        if not summary.unheld or depth > 3:
            return False
        return self._each_call(
            home,
            summary,
            summary.unheld,
            lambda found: self._keeps_every_cancel(*found, depth + 1),
        )

    def _decided_through_callees(
        self, home: ModuleSummary, summary: FunctionSummary
    ) -> dict[str, object]:
        """What the functions a suspending function awaits add to its summary: it holds every
        interrupt, or is shielded, through them; its shield managers open shields or not."""
        changes: dict[str, object] = {}
        if not _holds(summary) and self._holds_every_interrupt(home, summary):
            changes["holds"] = True
        if self._through_callees(home, summary, _shielded):
            changes.update(shielded=True, cut_safe=True)
        elif summary.shielded and summary.shield_managers:
            changes.update(shielded=self._opens_shields(home, summary), shield_managers=())
        if not summary.cut_safe and self._cut_safe_through_holders(home, summary):
            changes["cut_safe"] = True
        return changes

    def _cut_safe_through_holders(self, home: ModuleSummary, summary: FunctionSummary) -> bool:
        """Is the function cut-safe once the project functions it awaits hold every interrupt
        that lands in them (`_cut_safe_if_held`)? A cancel there is kept and the function
        carries on, so only its other suspensions can cut it."""
        if not summary.cut_safe_if_held:
            return False
        return self._each_call(
            home,
            summary,
            summary.cut_safe_if_held,
            lambda found: self._holds_every_interrupt(*found),
        )

    def _holds_every_interrupt(self, home: ModuleSummary, summary: FunctionSummary) -> bool:
        """Does the function keep every interrupt landing in it: by its own handlers, through
        the project functions it awaits, or because the awaits it does not hold never
        suspend?"""
        return (
            _holds(summary)
            or self._through_callees(home, summary, _holds)
            or self._held_but_silent(home, summary)
        )

    def _held_but_silent(self, home: ModuleSummary, summary: FunctionSummary) -> bool:
        """Does none of the awaits that a function's handlers do not hold suspend, while the
        others are held (`await self._stream._close()` of a close with no await, before a
        cancel-then-await whose `except CancelledError: pass` keeps what lands there)? Then it
        holds every interrupt."""
        if summary.holds or not summary.unheld:
            return False
        return self._each_call(
            home, summary, summary.unheld, lambda found: self._never_suspends_at_all(*found)
        )

    def _opens_shields(self, home: ModuleSummary, summary: FunctionSummary) -> bool:
        """Does every context manager the function relies on for its shield open one?"""
        return all(
            (located := self._class(home, m)) is not None
            and located[1] in located[0].shield_managers
            for m in summary.shield_managers
        )

    def _through_callees(
        self,
        home: ModuleSummary,
        summary: FunctionSummary,
        settled: Callable[[FunctionSummary], bool],
    ) -> bool:
        """Is `settled` true of every call the function awaits (all its suspensions), through
        the project functions it awaits, when it is not true of the function itself? Asked
        whether it holds every interrupt (`await _settle(task)`, whose loop keeps waiting on a
        shielded task and records the cancel for its caller) and whether it is shielded
        (`cancel_and_drain`, which gathers its tasks under `CancelScope(shield=True)`): a cancel
        then lands only where it is held, or a cancelled scope has no checkpoint to raise at."""
        if settled(summary):
            return False  # nothing to add
        key = (id(summary), settled)
        known = self._through.get(key)
        if known is None:
            self._through[key] = False  # while it is being decided
            known = self._through[key] = self._through_awaits(home, summary, 0, settled)
        return known

    def _only_best_effort(self, home: ModuleSummary, summary: FunctionSummary) -> bool:
        """Does the function take steps, each best effort by its name (`self._task.cancel()`,
        `self._client.close()`), a call of a project function that only takes such steps in
        turn, or in a teardown method a step that names nothing outside the process? Skipping
        it then costs no more than they do."""
        steps = zip(summary.own_steps, summary.steps_in_process, strict=True)
        listed = [(call, by_name, alone) for (call, by_name), alone in steps]
        return bool(listed) and self._each_best_effort(self._best_effort, home, summary, listed)

    def _cut_only_best_effort(self, home: ModuleSummary, summary: FunctionSummary) -> bool:
        """Is all that a cut of the function can lose best effort: each step it skips or stops
        and each exposed await that does work, by its name or as a project function that only
        takes best-effort steps? Cutting it then costs no more than they do."""
        lost = list(summary.cut_loses or ())
        return self._each_best_effort(self._cut_best_effort, home, summary, lost)

    def _each_best_effort(
        self,
        known: dict[int, bool],
        home: ModuleSummary,
        summary: FunctionSummary,
        steps: list[tuple[str, bool, bool]],
    ) -> bool:
        """Is each of the function's (call, best effort by name, in-process) steps best effort
        (`_call_best_effort`), remembered in `known` by the summary's id? A function whose calls
        lead back into themselves is not (the answer does not depend on which one is asked
        first)."""
        found = known.get(id(summary))
        if found is not None:
            return found
        known[id(summary)] = False  # while it is being decided
        located = self._qualname_of(home, summary)
        teardown = located is not None and self._teardown_method(located)
        found = located is not None and all(
            by_name or self._call_best_effort(home, located, call, teardown and in_process)  # type: ignore[arg-type]
            for call, by_name, in_process in steps
        )
        known[id(summary)] = found
        return found

    def _teardown_method(self, located: tuple[str, str]) -> bool:
        """Is the function, by its (qualname, class), a teardown method (`close`, `stop`)?"""
        qualname, owner = located
        method = bool(owner) and LOCAL_SCOPE not in qualname
        return method and named_teardown(qualname.rpartition(".")[2], self.config)

    def _call_best_effort(
        self, home: ModuleSummary, located: tuple[str, str], call: str, in_process: bool = False
    ) -> bool:
        """Does a call a function makes run only best-effort steps in the project: a project
        function that only takes such steps, or a private method whose every implementation
        does (or does nothing)? `in_process`: the call is an in-process step of a teardown
        method, best effort unless it runs a project function, which is judged by its body
        rather than its name (`self._remove_temp()` removes a directory on disk)."""
        found = self._function(home, *located, call)
        if found is not None:
            return self._only_best_effort(*found)
        if in_process:
            return True
        merged = self._private_by_name(call)
        return merged is not None and (merged.steps_best_effort or not merged.suspends)

    def _qualname_of(self, home: ModuleSummary, summary: FunctionSummary) -> tuple[str, str] | None:
        """The qualname of a summarised function of `home` and the class whose methods its
        `self.x()` calls run ("" for none): its own, or a method's for a function local to it."""
        qualname = next((q for q, f in home.functions.items() if f is summary), None)
        if qualname is None:
            return None
        return qualname, _self_class(home, qualname)

    def _known_never_to_suspend(
        self, module: ModuleSummary, caller: str, owner: str, call: str
    ) -> bool:
        """A call the project does not define that never suspends: a put on an unbounded
        queue, a library manager's enter or exit that never suspends, the enter or exit of a
        lock that never blocks."""
        receiver, _, method = call.rpartition(".")
        if method == "put" and is_unbounded_queue(module.queues, caller, owner, receiver):
            return True
        if method in MANAGER_METHODS and self._never_blocks(module, caller, owner, receiver):
            return True
        if method in NEVER_SUSPENDING_CLOSES and self._memory_stream(
            module, caller, owner, receiver
        ):
            return True
        return _library_never_suspends(module, call)

    def _memory_stream(self, module: ModuleSummary, caller: str, owner: str, receiver: str) -> bool:
        """Does the receiver hold an end of an anyio memory object stream (annotated so, or
        made by `create_memory_object_stream`), whose `aclose()` closes it at once?"""
        held = self._held(module, caller, owner, receiver)
        if held is None:
            return False
        written = _as_imported(held[0].imports, held[1])
        return written.startswith("anyio.") and written.rpartition(".")[2] in STREAM_CLASSES

    def _never_blocks(self, module: ModuleSummary, caller: str, owner: str, receiver: str) -> bool:
        """Is the receiver (`self._lock`) an attribute holding an `asyncio.Lock` that no
        holder anywhere in the project's sources keeps across a suspension, or that only this
        teardown method takes (a cancel while it waits skips nothing the holder, another run
        of the method, is not doing)?"""
        held = self._held(module, caller, owner, receiver) if "." in receiver else None
        if held is None or self.sources is None:
            return False
        home, made, _ = held
        if _as_imported(home.imports, made) not in NEVER_BLOCKING_WHEN_FREE:
            return False
        attribute = receiver.rpartition(".")[2]
        return self._free_lock(attribute) or self._taken_only_by(attribute, caller)

    def _taken_only_by(self, attribute: str, caller: str) -> bool:
        name = caller.rpartition(".")[2]
        if not named_teardown(name, self.config):
            return False
        key = (attribute, name)
        if key not in self._only_takers:
            self._only_takers[key] = self._entered_only_by(attribute, name)
        return self._only_takers[key]

    def _entered_only_by(self, attribute: str, name: str) -> bool:
        listed = self.sources.mentioning(attribute) if self.sources is not None else None
        entering: list[str] = []
        for _, text in listed or ():
            found = entered_only_in(text, attribute)
            if found is None:
                return False
            entering += found
        return bool(entering) and all(entered == name for entered in entering)

    def _free_lock(self, attribute: str) -> bool:
        assert self.sources is not None
        if attribute not in self._free_locks:
            listed = self.sources.mentioning(attribute)
            self._free_locks[attribute] = bool(listed) and all(
                never_held_across_suspension(text, attribute)
                for _, text in listed  # type: ignore[union-attr]
            )
        return self._free_locks[attribute]

    def _never_suspends_at_all(self, home: ModuleSummary, summary: FunctionSummary) -> bool:
        known = self._never.get(id(summary))
        if known is None:
            known = self._never[id(summary)] = self._through_awaits(home, summary, 0, _silent)
        return known

    def _through_awaits(
        self,
        home: ModuleSummary,
        summary: FunctionSummary,
        depth: int,
        settled: Callable[[FunctionSummary], bool],
    ) -> bool:
        """Is `settled` true of the function, or of every call it awaits (all its suspensions),
        followed a few project calls deep? A call the project does not define counts when the
        library says it never suspends. Asked whether a function never suspends (`await
        self._bus.publish(m)` whose body only puts on an unbounded queue), whether it holds every
        interrupt and whether it is shielded."""
        if settled(summary):
            return True
        if summary.awaits is None or depth > 3:
            return False
        return self._each_call(
            home,
            summary,
            summary.awaits,
            lambda found: self._through_awaits(*found, depth + 1, settled),
        )

    def _each_call(
        self,
        home: ModuleSummary,
        summary: FunctionSummary,
        calls: tuple[str, ...],
        settled: Callable[[tuple[ModuleSummary, FunctionSummary]], bool],
    ) -> bool:
        """Is `settled` true of the project function each of these calls of a function runs,
        or, for a call the project does not define, does the library say it never suspends?"""
        located = self._qualname_of(home, summary)
        if located is None:
            return False
        for call in calls:
            found = self._function(home, *located, call)
            if found is not None:
                if not settled(found):
                    return False
                continue
            implemented = self._implementations(home, *located, call)
            if implemented:  # an extension point: each implementation the project ships runs
                if not all(map(settled, implemented)):
                    return False
            elif not self._known_never_to_suspend(home, *located, call):
                return False
        return True

    def _function(
        self, module: ModuleSummary, caller: str, owner: str, call: str
    ) -> tuple[ModuleSummary, FunctionSummary] | None:
        parts = call.split(".")
        if len(parts) == 1:
            return self._plain(module, caller, call)
        *receiver, method = parts
        if receiver == [f"super{MADE_BY_CALL}"]:
            return self._inherited(module, owner, method)
        located = self._named_class(module, caller, owner, ".".join(receiver))
        if located is not None:
            return self._method(located[0], located[1], method, 0)
        if method in MANAGER_METHODS and receiver[-1].endswith(MADE_BY_CALL):
            # `async with self._waiting():` of an `async def`: an `@asynccontextmanager`
            # generator, whose body is both the enter and the exit
            made = ".".join(receiver).removesuffix(MADE_BY_CALL)
            return self._function(module, caller, owner, made)
        if parts[0] in module.imports:
            return self._target(".".join([module.imports[parts[0]], *parts[1:]]), 0)
        return None

    def _plain(
        self, module: ModuleSummary, caller: str, name: str
    ) -> tuple[ModuleSummary, FunctionSummary] | None:
        """A bare name: a local of the caller or of a function enclosing it, the module's
        own, or an import."""
        scope = caller
        while scope:
            local = f"{scope}.<locals>.{name}"
            if local in module.functions:
                return module, module.functions[local]
            scope = scope.rsplit(".<locals>.", 1)[0] if ".<locals>." in scope else ""
        if name in module.functions:
            return module, module.functions[name]
        if name in module.imports:
            return self._target(module.imports[name], 0)
        return None

    def _named_class(
        self, module: ModuleSummary, caller: str, owner: str, receiver: str
    ) -> tuple[ModuleSummary, str] | None:
        """The class a receiver names: `self`/`cls`, `self.attr` or a local holding an instance
        made in the project, or a class named directly."""
        if receiver.endswith(MADE_BY_CALL):  # the instance a call makes: a class called
            return self._class(module, _nearest(module, caller, receiver[: -len(MADE_BY_CALL)]))
        parts = receiver.split(".")
        if parts[0] in ("self", "cls") and owner and len(parts) == 1:
            return module, owner
        held = self._held(module, caller, owner, receiver)
        if held is not None:
            return self._made(*held)
        if parts[0] in ("self", "cls") and owner:
            return None
        return self._class(module, _nearest(module, caller, receiver))

    def _shielding_function(
        self, module: ModuleSummary, caller: str, owner: str, name: str
    ) -> bool:
        """Is `name` a project generator context manager that opens a shield scope before it
        yields (`self._begin_transaction`)?"""
        found = self._function(module, caller, owner, name)
        if found is None:
            return False
        located = self._qualname_of(*found)
        return located is not None and located[0] in found[0].shield_managers

    def _container(self, module: ModuleSummary, caller: str, owner: str, receiver: str) -> bool:
        """Does the receiver (`self._sites`, a local) hold a built-in container: annotated as a
        container of items (`self._sites: list[Site] = []`), or made by one (`set()`)?"""
        parts = receiver.split(".")
        if parts[0] in ("self", "cls") and owner and len(parts) == 2:
            scope, name = owner, parts[1]
        else:
            scope, name = caller, receiver
        if any((scope, f"{name}{suffix}") in module.types for suffix in (ITEMS, VALUES)):
            return True
        held = self._held(module, caller, owner, receiver)
        return held is not None and held[1].rpartition(".")[2] in CONTAINER_TYPES

    def _held(
        self, module: ModuleSummary, caller: str, owner: str, receiver: str
    ) -> tuple[ModuleSummary, str, str] | None:
        """What the project records a receiver holds (`self.attr`, a local): the module it is
        recorded in, the type as written there, and the scope it is written in. A method whose
        `self` is annotated with another class (a mixin's `self: Server`) reads that class's
        attributes when its own class has none of that name."""
        if receiver.endswith("]"):
            return self._held_item(module, caller, owner, receiver)
        parts = receiver.split(".")
        if parts[0] in ("self", "cls") and owner:
            return self._held_attribute(module, caller, owner, parts)
        if len(parts) == 1 and (caller, receiver) in module.types:
            return module, module.types[(caller, receiver)], caller
        return None

    def _held_attribute(
        self, module: ModuleSummary, caller: str, owner: str, parts: list[str]
    ) -> tuple[ModuleSummary, str, str] | None:
        """What `self.attr` holds: by the class's own record, or by the class its `self` is
        annotated with (a mixin's `self: Server`)."""
        if len(parts) != 2:
            return None
        made = module.types.get((owner, parts[1]))
        if made:
            return module, made, owner
        host = module.types.get((caller, "self"))
        located = self._class(module, _nearest(module, caller, host)) if host else None
        if located is None:
            return None
        home, cls = located
        made = home.types.get((cls, parts[1]))
        return (home, made, cls) if made else None

    def _held_item(
        self, module: ModuleSummary, caller: str, owner: str, receiver: str
    ) -> tuple[ModuleSummary, str, str] | None:
        """What an item of a container the project records holds (`self._streams[key][0]`,
        a local's `sites[i]`): the class of its values or items, and of a place of the tuples
        they are, by the container's annotation."""
        matched = _SUBSCRIPTED.fullmatch(receiver)
        if matched is None:
            return None
        base, keys = matched.group(1), _KEY.findall(matched.group(2))
        if not all(keys[1:]):
            return None  # a key into what an item holds: nothing is recorded of it
        parts = base.split(".")
        if parts[0] in ("self", "cls") and owner and len(parts) == 2:
            scope, name = owner, parts[1]
        elif len(parts) == 1:
            scope, name = caller, base
        else:
            return None
        for first in (VALUES, ITEMS):  # a mapping's key gives a value, a sequence's an item
            made = module.types.get((scope, name + first + "".join(keys[1:])))
            if made:
                return module, made, scope
        return None

    def _made(
        self, module: ModuleSummary, made: str, scope: str = ""
    ) -> tuple[ModuleSummary, str] | None:
        """The class a recorded type names, as written in `scope`: a class, or an attribute of
        one (`Services::chats`, the class its annotation or constructor gives)."""
        if ATTRIBUTE_OF not in made:
            return self._class(module, _nearest(module, scope, made)) or self._returned(
                module, made, scope
            )
        holder, _, attribute = made.partition(ATTRIBUTE_OF)
        located = self._class(module, _nearest(module, scope, holder))
        if located is None:
            return None
        home, cls = located
        inner = home.types.get((cls, attribute))
        if not inner or ATTRIBUTE_OF in inner:
            return None
        return self._class(home, _nearest(home, cls, inner))

    def _returned(
        self, module: ModuleSummary, called: str, scope: str
    ) -> tuple[ModuleSummary, str] | None:
        """The class a project function called as `called` in `scope` returns (`json_stream =
        json_stream_stream(response)`, a factory that returns a `_JsonStreamResult(...)`): a
        function of the module, a method of the scope's class (`self._connect()`), or an
        imported one."""
        called, marker, place = called.partition(RETURNED)  # `make<return>0`: a place of it
        key = marker + place or RETURNED
        located = self._function_named(module, called, scope, key)
        if located is None:
            return None
        home, qualname = located
        returned = home.types[(qualname, key)]
        return self._class(home, _nearest(home, qualname, returned))

    def _function_named(
        self, module: ModuleSummary, called: str, scope: str, key: str = RETURNED
    ) -> tuple[ModuleSummary, str] | None:
        """Where a function with a recorded return (under `key`: a place of the tuple it
        returns, `<return>0`) is defined: (its module, its qualname)."""
        receiver, _, name = called.rpartition(".")
        if receiver in ("self", "cls"):
            # the scope is the class of an attribute, or the method of a local
            for owner in (scope, scope.rpartition(".")[0]):
                if (f"{owner}.{name}", key) in module.types:
                    return module, f"{owner}.{name}"
        first, dot, rest = called.partition(".")
        local = _nearest(module, scope, first) + dot + rest  # a class's, as written in scope
        if (local, key) in module.types:
            return module, local
        imported = self._imported(module, called)
        if imported is None or (imported[1], key) not in imported[0].types:
            return None
        return imported

    def _target(self, target: str, depth: int) -> tuple[ModuleSummary, FunctionSummary] | None:
        """A dotted name: the longest prefix that is a module, then a function or a method in
        it, following one re-export at a time."""
        if depth > 3:
            return None
        parts = target.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = self.module(".".join(parts[:cut]))
            if module is None:
                continue
            rest = parts[cut:]
            name = ".".join(rest)
            if name in module.functions:
                return module, module.functions[name]
            if len(rest) == 2 and rest[0] in module.classes:
                return self._method(module, rest[0], rest[1], depth + 1)
            if rest[0] in module.imports:
                return self._target(".".join([module.imports[rest[0]], *rest[1:]]), depth + 1)
            return None
        return None

    def _inherited(
        self, module: ModuleSummary, owner: str, name: str
    ) -> tuple[ModuleSummary, FunctionSummary] | None:
        """`super().name` in a method of class `owner`: the method of its first base defined in
        the project that has one (a base gate cannot find leaves it unknown)."""
        for base in module.classes.get(owner, ()):
            located = self._class(module, _nearest(module, owner, base))
            if located is None:
                return None
            found = self._method(located[0], located[1], name, 1)
            if found is not None:
                return found
        return None

    def _method(
        self, module: ModuleSummary, owner: str, name: str, depth: int
    ) -> tuple[ModuleSummary, FunctionSummary] | None:
        """A method of a class, or of its bases defined in the project."""
        if depth > 5:
            return None
        found = module.functions.get(f"{owner}.{name}")
        if found is not None:
            return module, found
        for base in module.classes.get(owner, ()):
            located = self._class(module, _nearest(module, owner, base))
            if located is not None:
                result = self._method(located[0], located[1], name, depth + 1)
                if result is not None:
                    return result
        return None

    def _class(
        self, module: ModuleSummary, name: str, depth: int = 0
    ) -> tuple[ModuleSummary, str] | None:
        """Where a class named in `module` is defined: (its module, its qualname), following
        the re-exports of a package's `__init__.py` (`from .agent_controller import
        AgentController`) one at a time, and a type variable to its bound (`ACT =
        TypeVar("ACT", bound="AsyncConnection[Any]")`)."""
        if name in module.classes:
            return module, name
        bound = module.types.get((name, BOUND))
        if bound is not None and depth < 3:  # a type variable: its bound's class
            return self._class(module, bound, depth + 1)
        imported = self._imported(module, name)
        if imported is None:
            return None
        home, qualname = imported
        if qualname in home.classes:
            return imported
        if depth < 3 and home is not module and _named_further(home, qualname):
            return self._class(home, qualname, depth + 1)
        return None

    def _imported(self, module: ModuleSummary, name: str) -> tuple[ModuleSummary, str] | None:
        """What a dotted name that starts with one of `module`'s imports names in the project:
        the longest prefix of its target that is a project module, and the qualname after it."""
        parts = name.split(".")
        if parts[0] not in module.imports:
            return None
        target = ".".join([module.imports[parts[0]], *parts[1:]]).split(".")
        for cut in range(len(target) - 1, 0, -1):
            other = self.module(".".join(target[:cut]))
            if other is not None:
                return other, ".".join(target[cut:])
        return None


# The lookups that ask about a receiver or a call as written in a function, by kind
ProjectIndex._receiver_questions = {
    "with": ProjectIndex._opens_shield,
    "stack": ProjectIndex._holds_exit_stack,
    "container": ProjectIndex._container,
    "quiet": ProjectIndex._quiet_when_passed,
}

# Context managers of the standard library and its backports whose `__aenter__` and `__aexit__`
# never suspend: entering a deadline only schedules a callback
NEVER_SUSPENDING_MANAGERS = frozenset(
    {"asyncio.timeout", "asyncio.timeout_at", "async_timeout.timeout", "async_timeout.timeout_at"}
)


# trio's and anyio's checkpoints that let other tasks run but never raise a cancellation
# (`anyio.lowlevel.cancel_shielded_checkpoint()`): no cancel lands in them
SHIELDED_CHECKPOINTS = frozenset({"cancel_shielded_checkpoint"})


def _awaited_by(sites: list[CallSite], callers: set[str]) -> set[str]:
    """The names the functions of these names await (in their own task)."""
    return {
        site.name
        for site in sites
        if site.task == SAME_TASK and site.caller.rpartition(".")[2] in callers
    }


def _silent(summary: FunctionSummary) -> bool:
    """It never suspends by itself."""
    return not summary.suspends


def _shielded(summary: FunctionSummary) -> bool:
    """It is shielded by itself (with no context manager of the project left to check), or
    never suspends."""
    return (summary.shielded and not summary.shield_managers) or not summary.suspends


def _holds(summary: FunctionSummary) -> bool:
    """It holds every interrupt by itself, or never suspends."""
    return summary.holds or not summary.suspends


# anyio's memory object streams: `aclose()` (and the exit of `async with stream:`) only closes
# the stream, without a checkpoint (anyio/streams/memory.py)
STREAM_CLASSES = frozenset(MEMORY_STREAM_ENDS)
NEVER_SUSPENDING_CLOSES = frozenset({"aclose", "__aexit__"})


def _library_never_suspends(module: ModuleSummary, call: str) -> bool:
    """Is `call` the enter or exit of a library manager that never suspends, made by a call
    (`asyncio.timeout(5).__aenter__`, also through `from asyncio import timeout`), or a
    checkpoint no cancel lands in (`anyio.lowlevel.cancel_shielded_checkpoint`)?"""
    receiver, _, method = call.rpartition(".")
    if method in SHIELDED_CHECKPOINTS:
        return True  # it lets other tasks run, but no cancel lands in it
    if method not in MANAGER_METHODS or not receiver.endswith(MADE_BY_CALL):
        return False
    return (
        _as_imported(module.imports, receiver.removesuffix(MADE_BY_CALL))
        in NEVER_SUSPENDING_MANAGERS
    )


def _nearest(module: ModuleSummary, scope: str, name: str) -> str:
    """A class name as written in `scope` (a function or class qualname), qualified by the
    innermost enclosing scope of the module that defines it (`run.<locals>.Lock`,
    `Outer.Lock`); the name itself when none does."""
    while scope:
        for candidate in (f"{scope}.{name}", f"{scope}.<locals>.{name}"):
            if candidate in module.classes:
                return candidate
        scope = scope.rpartition(".")[0]
    return name


def _named_after(receiver: tuple[str, ...], cls: tuple[str, ...]) -> bool:
    """Is a receiver named after a class: one's words end the other's (`logger` and
    `TaskLogger`, `run_logger` and `RunLogger`; not `serve_logger` and `RunLogger`)?"""
    shorter, longer = sorted((receiver, cls), key=len)
    return bool(shorter) and longer[len(longer) - len(shorter) :] == shorter


class ProjectView:
    """One file's window on the index: lookups made for it, remembered with their answers so
    that a cached analysis can be checked against a later index."""

    def __init__(self, index: ProjectIndex, module: str) -> None:
        self.index = index
        self.module = module
        self.consulted: dict[LookupKey, Lookup] = {}

    def _ask(self, key: LookupKey) -> Lookup:
        if key not in self.consulted:
            self.consulted[key] = self.index.lookup(key)
        return self.consulted[key]

    def callee(self, caller: str, owner: str, call: str) -> FunctionSummary | None:
        found = self._ask(("call", self.module, caller, owner, call))
        return found if isinstance(found, FunctionSummary) else None

    def shields(self, caller: str, owner: str, name: str) -> bool:
        return self._ask(("with", self.module, caller, owner, name)) is True

    def shielded_by_callers(self, qualname: str) -> bool:
        return self._ask(("callers", self.module, qualname, "", "")) is True

    def called(self, qualname: str) -> bool:
        return self._ask(("called", self.module, qualname, "", "")) is not False

    def uncancelled(self, qualname: str) -> bool:
        return self._ask(("uncancelled", self.module, qualname, "", "")) is True

    def never_cancelled(self, qualname: str) -> bool:
        return self._ask(("never_cancelled", self.module, qualname, "", "")) is True

    def quiet_when_passed(self, caller: str, owner: str, call: str, passed: str) -> bool:
        return self._ask(("quiet", self.module, caller, owner, f"{call}|{passed}")) is True

    def after_cancel(self, qualname: str) -> bool:
        return self._ask(("after_cancel", self.module, qualname, "", "")) is True

    def exit_stack(self, caller: str, owner: str, receiver: str) -> bool:
        return self._ask(("stack", self.module, caller, owner, receiver)) is True

    def container(self, caller: str, owner: str, receiver: str) -> bool:
        return self._ask(("container", self.module, caller, owner, receiver)) is True
