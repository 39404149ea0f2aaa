"""What a rule is: its identity, its documentation, where it applies, and its own check."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from gate.model import Detail, Family, Finding, Location, Related, Severity


class Autofix(str, Enum):
    """What `gate check --fix` does about a rule's findings; gate/fix/ routes on this.

    HOLD: hold the interrupt at each of the finding's interrupt points and re-raise the first
    after the region (under trio/anyio, where a held cancel fires again at the next await, the
    points are shielded instead). KEEP: the handler or `suppress` the finding points at keeps
    the cancellation it catches, re-raised after the region. SHIELD: the finding's interrupt
    points go under a shielded cancel scope of the module's library.
    """

    HOLD = "hold"
    KEEP = "keep"
    SHIELD = "shield"


class Scope(str, Enum):
    """What a rule's check looks at: one file at a time, or the whole project at once."""

    FILE = "file"
    PROJECT = "project"


@dataclass(frozen=True)
class Rule:
    """A rule, complete when constructed.

    `doc` is the rule module's docstring, in markdown. `check` is the rule's own predicate over
    the facts of its family (None for file rules, which the file pass raises through
    `finding`). `always_reported` rules cannot be deselected: a file that does not parse was not
    checked at all. `example_baseline` is the complexity baseline the docs' examples are judged
    against.
    """

    code: str
    name: str
    summary: str
    family: Family
    severity: Severity
    doc: str
    fix: str = ""
    scope: Scope = Scope.FILE
    check: Callable[..., Iterable[Finding]] | None = None
    always_reported: bool = False
    example_baseline: tuple[tuple[str, int], ...] = ()
    url: str | None = None  # its own documentation page, when it has one (ruff's rules do)
    autofix: Autofix | None = None
    # a teardown rule whose findings an interrupt point makes happen: its place in the order
    # the one error of an interrupt is chosen in (lower first; `gate.analysis.file_pass`), and
    # whether its finding sits at the interrupt point itself (an await cut short); None: its
    # findings have a fix of their own and keep their severity
    interrupt_order: int | None = None
    at_interrupt: bool = False

    def finding(
        self,
        location: Location,
        message: str,
        anchor: str,
        related: tuple[Related, ...] = (),
        detail: Detail | None = None,
        severity: Severity | None = None,
    ) -> Finding:
        """A finding of this rule (at its default severity unless `severity` is given)."""
        return Finding(
            code=self.code,
            name=self.name,
            family=self.family,
            severity=severity or self.severity,
            location=location,
            message=message,
            anchor=anchor,
            related=related,
            detail=detail,
        )

    def section(self, title: str) -> str:
        """The text of one `## title` section of the docs ('' when absent)."""
        match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", self.doc, re.S | re.M)
        return match.group(1).strip() if match else ""

    def examples(self, title: str) -> list[str]:
        """The python code blocks in one section of the docs."""
        return re.findall(r"```python\n(.*?)```", self.section(title), re.S)


Locate = Callable[[Any], Location]


# The "Fix safety" text of every rule whose fix holds the interrupt at each unguarded await
HOLD_FIX_SAFETY = """\
The hold catches `BaseException`, not only cancellation: a step that fails with an ordinary
exception no longer skips the later steps either, and that exception is re-raised after them,
unchanged. A `return`, `break` or `continue` that leaves the region, or a `raise` that surely
leaves it, re-raises the held interrupt first, so the first interrupt comes out unchanged.
Nothing changes on the path without an interrupt. There is no fix, and the finding says why,
when the region yields (the held interrupt would wait across the `yield`), when the awaited
statement sets a name read later in the region (it would be read unset), when the await is
inside a comprehension, when the step is inside the very statement that awaits (the body of an
`async with`, an `if` whose test awaits), or when nothing runs after the held await (holding
would change nothing at run time).
"""


# The "Severity" text of every teardown rule: the tiers its findings take
TEARDOWN_SEVERITY = """\
An error when a step whose loss loses data (write, save, flush, commit, upload, record,
finalize) or leaks something outside the process (stop, kill, terminate, delete, release of
sandboxes, containers, subprocesses, remote sessions, locks; the close of an exit stack, which
closes whatever was entered into it) is at stake, or when the finding is about cancellation
itself. A warning when:
- the step is a best-effort close or stop of an in-process object (a socket, an HTTP session, a
  stream, a file, the client of a sandbox), a cancel that names nothing outside the process (a
  task's `cancel()`, `cancel_and_wait(task)`), a write to a network transport, a
  `remove`, `discard`, `pop` or `clear` on a list, set, dict or deque the project records the
  receiver holds (`self._sites: list[Site] = []`, `self._starting = set()`): bookkeeping,
  a step of a teardown method (`close`, `stop`, ...) that names nothing outside the process and
  neither keeps data nor destroys something by its name (`self._save_state()` and `self.kill()`
  stay errors), or an await of a project function whose own steps are all of that kind (a
  teardown method's in-process steps among them); an await cut short is a warning, too, when
  what the cut can lose of the project function it runs is all of that kind (its other steps
  run in its `finally:`);
- the file is test or example code (`tool.gate.teardown.test-paths`);
- on asyncio, the region is entered only by the cancel itself (a cancellation handler, the
  `finally:` of a serve-forever loop, a hook that aiohttp's `run_app` runs after cancelling its
  main task, or what only these run): cutting it short needs a second cancel;
- in a module that imports asyncio, the region is a handler entered by a cancel or an error
  (`except BaseException:`, `except (Exception, CancelledError):`, or what only such handlers
  run): cutting it short needs a second cancel, or one landing while the error is handled;
- nothing cancels the task it runs in, as far as gate can tell (a function that routes SIGINT
  and SIGTERM to handlers of its own and that the project awaits only up to functions a
  framework starts, a CLI's commands), or it is a teardown method nothing in the project calls.
  Where the project itself runs such a function with `asyncio.run(...)`, nothing is reported
  in it, nor in what only it awaits: no cancel can reach them;
- a docstring or the step's name calls it best effort (`best effort`, `a convenience`,
  `_delete_cache_best_effort()`), or the step is all a `try` runs whose `except Exception:` only
  passes or logs at debug level, or all a `with suppress(Exception):` holds: the code accepts
  losing it to a failure, so losing it to a cancel is best effort;
- it is a step skipped, a step cut short or a guard missing the cancel, and another error of
  the file already reports every interrupt point it names: one interrupt is one bug with one
  fix, so it fails the run once, at the error naming the fewest interrupt points (then the
  await cut short, the skipped steps, the guard, in that order); the repeats name that error
  as a related location. An interrupt at an await of a helper of the file lands inside the
  helper: the errors there come first, and report it.

`tool.gate.teardown.best-effort-severity = "error"` makes best-effort steps errors, and
`test-severity = "error"` judges test code as any other code, and `repeat-severity = "error"`
keeps every repeat of an interrupt an error. The README's "Errors and
warnings" lists every case.
"""


def shared_sections(doc: str | None) -> str:
    """A rule module's docstring with the sections rules share filled in: a line
    `{hold-fix-safety}` becomes HOLD_FIX_SAFETY, `{teardown-severity}` TEARDOWN_SEVERITY."""
    return (
        (doc or "")
        .replace("{hold-fix-safety}\n", HOLD_FIX_SAFETY)
        .replace("{teardown-severity}\n", TEARDOWN_SEVERITY)
    )
