"""Which calls are teardown steps, and what their loss costs, decided by name.

A name is split into words on underscores and case changes; it is a step when a run of its words
is one of the configured tokens, the token's last word possibly inflected (`closed`, `stopping`,
`released`). Names that ask rather than act (`is_closed`, `wait_closed`, `get_cleanup`) are not
steps. A best-effort token (`close`) costs little unless the receiver names something outside
the process (`self._sandbox.close()`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from gate.analysis.facts import Consequence
from gate.config import TeardownConfig

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

# Tokens that act only when they lead the name: `task.cancel()`, `cancel_all()`, but not
# `after_cancel()`, `clear_cancel_requested()` or `raise_if_cancelling()` (in any inflection).
LEADING_ONLY = frozenset({"cancel"})

# Words of steps that keep data (rather than release something): in an error handler they
# report the error, which is not the cleanup a cancel should also run.
DATA_WORDS = frozenset(
    {"write", "save", "persist", "flush", "dump", "commit", "upload", "record", "finalize"}
)

# First words of names that ask about a state, wait for it or read it rather than change it: a
# step's token later in such a name is an adjective (`scan_latest_committed_id()` reads).
QUESTION_WORDS = frozenset(
    {
        "is",
        "has",
        "was",
        "should",
        "can",
        "get",
        "check",
        "wait",
        "needs",
        "scan",
        "find",
        "list",
        "lookup",
        "query",
        "search",
        "count",
        "read",
        "peek",
    }
)

# First words of calls that look up what exists apart from the caller (`await self.get(name)`,
# `await store.get_metadata(id)`): the value is the caller's to close or release, not to destroy.
# A function that deletes what it looked up is the delete itself, not a release of an acquisition.
LOOKUP_WORDS = frozenset({"get", "find", "lookup", "query", "search", "fetch", "load", "read"})

# Words of steps that give back what was acquired rather than destroy it
GIVING_BACK_WORDS = frozenset({"close", "aclose", "release", "disconnect"})


# Calls that start a task the event loop runs by itself, which nothing waits for or cancels
# unless the function does (a task group's `tg.create_task` is the group's to wait for).
SPAWNS = frozenset({"create_task", "ensure_future"})
LOOP_GETTERS = frozenset({"get_running_loop()", "get_event_loop()"})


def spawns_task(final: str | None, receiver: str | None) -> bool:
    """Does `receiver.final(...)` start a task on its own: `asyncio.create_task`,
    `asyncio.ensure_future`, `loop.create_task`, `asyncio.get_running_loop().create_task`?
    `receiver` is the receiver's dotted name, a call in it written `name()`; None for a call of
    a plain name (`create_task(...)` imported from asyncio)."""
    if final not in SPAWNS:
        return False
    if receiver is None:
        return True
    last = receiver.rsplit(".", 1)[-1]
    return last == "asyncio" or last in LOOP_GETTERS or last.endswith("loop")


def looks_up(name: str | None) -> bool:
    """Does a call of this name look something up (`get_app_conversation`)?"""
    words = name_words(name) if name else ()
    return bool(words) and words[0] in LOOKUP_WORDS


def gives_back(name: str) -> bool:
    """Does a step of this name give back what was acquired (close, release), rather than
    destroy it (delete, kill, remove)?"""
    return any(word in GIVING_BACK_FORMS for word in name_words(name))


# Receiver words that name something living outside the process: closing it is not best effort.
EXTERNAL_WORDS = frozenset(
    {
        "sandbox",
        "sandboxes",
        "container",
        "containers",
        "docker",
        "pod",
        "vm",
        "process",
        "proc",
        "subprocess",
        "browser",
        "kernel",
        "remote",
        "cluster",
        "lock",
        "semaphore",
        "machine",
        "instance",
    }
)


# First words of awaited calls that only wait for work done elsewhere: cutting them loses nothing.
WAIT_WORDS = frozenset({"wait", "join", "sleep", "checkpoint"})


# Awaits that hand their work to a thread, which finishes even when the await is cancelled: the
# position of the function they run
THREAD_WRAPPERS = {"to_thread": 0, "run_sync": 0, "run_in_executor": 1}


def only_waits(dotted: str | None) -> bool:
    """Does awaiting this call only wait (`writer.wait_closed()`, `task.join()`)?"""
    if not dotted:
        return False
    words = name_words(dotted.rsplit(".", 1)[-1])
    return bool(words) and words[0] in WAIT_WORDS


# Words naming in-process objects the garbage collector closes anyway: closing or cleaning them
# up is best effort (`cleanup_s3_sessions()`, `self._client.close()`).
IN_PROCESS_WORDS = frozenset(
    {
        "session",
        "sessions",
        "client",
        "clients",
        "socket",
        "sockets",
        "stream",
        "streams",
        "file",
        "files",
        "writer",
        "reader",
        "transport",
        "response",
        "http",
        "task",
        "tasks",
        "future",
        "futures",
        "scope",
        "timer",
    }
)

# Tokens that only close, clean up or cancel: best effort when what they act on lives in the
# process (`self._task.cancel()` leaves a task of this process running, nothing outside it).
CLOSING_WORDS = frozenset(
    {"close", "aclose", "cleanup", "clean", "shutdown", "disconnect", "cancel", "stop"}
)

# Receiver words of network endpoints the process owns (`self.transport.write(reply)`): what a
# data step writes there is a message to a peer on its way out, not data kept anywhere, and a
# cancel that skips it loses a reply the connection being torn down would not deliver anyway.
NETWORK_WORDS = frozenset(
    {"transport", "transports", "socket", "sockets", "sock", "websocket", "ws"}
)


# Words of steps that destroy something rather than close it: what they leave behind when
# skipped (a process, a file) outlives the objects of the process. Not `delete`: judged on real
# code, a client's delete of a key (`self.pool.delete(health_check_key)`) is mostly best effort.
DESTROY_WORDS = frozenset({"kill", "terminate", "destroy", "rmtree", "unlink"})


def keeps_or_destroys(name: str) -> bool:
    """Does a step's name keep data (save, write, commit, ...) or destroy something (kill,
    terminate, rmtree, ...)? Skipping it loses that data or leaves that thing behind, whatever
    the name acts on."""
    return any(word in KEEPS_OR_DESTROYS_FORMS for word in name_words(name))


def closes_or_destroys(name: str) -> bool:
    """Does a step's name close or destroy something (`abort`, `close`, `kill`, ...) without
    keeping data: a forceful fallback, not work of another kind?"""
    words = name_words(name)
    return any(w in CLOSING_FORMS or w in DESTROY_FORMS for w in words) and not any(
        w in DATA_FORMS for w in words
    )


def _keeps_data(matched: tuple[str, ...]) -> bool:
    return any(word in DATA_FORMS for word in matched)


# The types of a receiver that closes whatever was entered into it (subprocesses, remote
# sessions, servers as often as in-process clients): closing one is never best effort by its name.
EXIT_STACK_TYPES = frozenset({"AsyncExitStack", "ExitStack"})
# The built-in containers (and the standard library's) whose `remove`, `discard`, `pop` or
# `clear` is bookkeeping in the process's memory, by the last part of the name that makes them
CONTAINER_TYPES = frozenset(
    {"list", "set", "dict", "deque", "defaultdict", "OrderedDict", "WeakSet", "WeakValueDictionary"}
    | {"WeakKeyDictionary", "Counter"}
)


def names_exit_stack(receiver: str | None) -> bool:
    """Does the receiver's last attribute name an exit stack (`self._exit_stack`)?"""
    words = name_words(receiver.rsplit(".", 1)[-1]) if receiver else ()
    return len(words) >= 2 and words[-2:] == ("exit", "stack")


def _names_external(names: str) -> bool:
    return bool(set(name_words(names.replace(".", "_"))) & EXTERNAL_WORDS)


def _said_cost(
    name: str, matched: tuple[str, ...], receiver: str | None, exit_stack: bool, acts_on: str
) -> Consequence | None:
    """What a step costs by what its name, receiver or passed names say outright: best effort
    when its name says so (`_delete_cache_best_effort()`) or it closes an in-process object
    (`sandbox.client.aclose()` closes a client); a loss when it is passed something outside the
    process (`ecs.stop_task(cluster=self._cluster_arn)`) or closes an exit stack, which closes
    whatever was entered into it. An in-process object's own release (`response.release()`) is
    best effort too."""
    if _says_best_effort(name):
        return Consequence.BEST_EFFORT
    if _names_external(acts_on):
        return Consequence.LOSES_WORK
    if _releases_in_process(name, receiver):
        return Consequence.BEST_EFFORT
    if not _closes(matched):
        return None
    if exit_stack or names_exit_stack(receiver):
        return Consequence.LOSES_WORK
    if _closed_object(name, matched, receiver) in IN_PROCESS_WORDS:
        return Consequence.BEST_EFFORT
    return None


def _releases_in_process(name: str, receiver: str | None) -> bool:
    """Is this an in-process object's own release (`self.response.release()`), which gives what
    it holds back to this process (a connection to its pool)? Only the object's own `release`
    method: a function named for what it releases (`_release_chunked_response(handle)`) may
    release it anywhere, a sandbox included."""
    last = name_words(receiver.rsplit(".", 1)[-1]) if receiver else ()
    return name_words(name) == ("release",) and bool(last) and last[-1] in IN_PROCESS_WORDS


def _closes(matched: tuple[str, ...]) -> bool:
    return not CLOSING_FORMS.isdisjoint(matched)


def _closed_object(name: str, matched: tuple[str, ...], receiver: str | None) -> str | None:
    """The noun naming what a step acts on: the last word of its name after the step's words
    (`close_sandbox_client` -> client), else the last word of the receiver's last attribute
    (`sandbox.client.aclose` -> client, `self._sandbox.kill` -> sandbox)."""
    words = name_words(name)
    for start in range(len(words) - len(matched) + 1):
        if words[start : start + len(matched)] == matched:
            after = words[start + len(matched) :]
            if after:
                return after[-1]
            break
    last = name_words(receiver.rsplit(".", 1)[-1]) if receiver else ()
    return last[-1] if last else None


def _closes_in_process(matched: tuple[str, ...], around: set[str]) -> bool:
    """A closing step (`cleanup`, `shutdown`, ...) of something that lives in the process."""
    return bool(set(matched) & CLOSING_FORMS) and bool(around & IN_PROCESS_WORDS)


# Receiver words of in-memory buffers (`ssl.MemoryBIO`): writing into one keeps no data, it only
# feeds the object that reads it back in the same process.
IN_MEMORY_WORDS = frozenset({"bio", "bios", "memory"})


# How a docstring says its function is best effort: losing it to a cancel is a loss its authors
# accept (`a convenience`, but not `a convenience wrapper` of something that matters).
_BEST_EFFORT_DOC = re.compile(
    r"\bbest[- ]effort\b|\bnot a correctness\b"
    r"|\ba convenience\b(?!\s+(?:function|wrapper|method|helper|class|alias))",
    re.IGNORECASE,
)


def reasserts_cancel(name: str) -> bool:
    """Does a call of this name raise a cancel that is still pending (`raise_if_cancelling()`,
    `reraise_cancelled()`)?"""
    words = name_words(name)
    return (
        bool(words)
        and words[0] in ("raise", "reraise")
        and not LEADING_ONLY_FORMS.isdisjoint(words)
    )


def _asks(name: str, words: tuple[str, ...]) -> bool:
    """Does a name ask, wait or build rather than act: `is_closed`, `wait_closed`, a state
    asked for in one word (`stream.closed()`, `task.cancelled()`), a class
    (`ConnectionClosed()`)?"""
    if not words or words[0] in QUESTION_WORDS or name.lstrip("_")[:1].isupper():
        return True
    return len(words) == 1 and words[0].endswith("ed")


def _says_best_effort(name: str) -> bool:
    """Does a function's name call it best effort (`_delete_fingerprint_best_effort`)?"""
    words = name_words(name)
    return any(words[i : i + 2] == ("best", "effort") for i in range(len(words) - 1))


def documents_best_effort(docstring: str | None) -> bool:
    """Does a function's docstring call it best effort?"""
    return bool(docstring) and _BEST_EFFORT_DOC.search(docstring or "") is not None


@functools.lru_cache(maxsize=4096)  # a run splits the same names over and over
def name_words(name: str) -> tuple[str, ...]:
    """Split an identifier on underscores and case changes, lower-cased."""
    return tuple(word.lower() for part in name.split("_") if part for word in _CAMEL.findall(part))


def inflections(word: str) -> set[str]:
    """`close` -> closes, closed, closing; `stop` -> stopped, stopping; `destroy` -> destroyed."""
    forms = {word, word + "s", word + "ed", word + "ing"}
    if word.endswith("e"):
        forms |= {word + "d", word[:-1] + "ing"}
    if len(word) > 2 and word[-1] not in "aeiouwy" and word[-2] in "aeiou":
        forms |= {word + word[-1] + "ed", word + word[-1] + "ing"}
    return forms


CLOSING_FORMS = frozenset(form for word in CLOSING_WORDS for form in inflections(word))
LEADING_ONLY_FORMS = frozenset(form for word in LEADING_ONLY for form in inflections(word))
DATA_FORMS = frozenset(form for word in DATA_WORDS for form in inflections(word))
DESTROY_FORMS = frozenset(form for word in DESTROY_WORDS for form in inflections(word))
KEEPS_OR_DESTROYS_FORMS = frozenset(
    form for word in DATA_WORDS | DESTROY_WORDS for form in inflections(word)
)
GIVING_BACK_FORMS = frozenset(form for word in GIVING_BACK_WORDS for form in inflections(word))


@dataclass(frozen=True)
class Vocabulary:
    """The step tokens of one configuration, as word tuples with their inflected last words."""

    tokens: tuple[tuple[tuple[str, ...], frozenset[str]], ...]
    best_effort: frozenset[str]
    # what `matched` answered for each name: a run asks about the same names over and over
    _matched: dict[str, tuple[str, ...] | None] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def of(cls, config: TeardownConfig) -> Vocabulary:
        tokens = []
        for token in (*config.tokens, *config.best_effort_tokens):
            words = name_words(token)
            if words:
                tokens.append((words[:-1], frozenset(inflections(words[-1]))))
        best = frozenset(
            form
            for t in config.best_effort_tokens
            for w in name_words(t)
            for form in inflections(w)
        )
        return cls(tuple(tokens), best)

    def matched(self, name: str) -> tuple[str, ...] | None:
        """The words of the token `name` contains, or None when it is not a step's name."""
        if name in self._matched:
            return self._matched[name]
        found = self._matched[name] = self._match(name)
        return found

    def _match(self, name: str) -> tuple[str, ...] | None:
        words = name_words(name)
        if _asks(name, words):
            return None
        for head, last in self.tokens:
            size = len(head) + 1
            for i in range(len(words) - size + 1):
                if words[i : i + size - 1] == head and words[i + size - 1] in last:
                    if i > 0 and words[i] in LEADING_ONLY_FORMS:
                        continue
                    return words[i : i + size]
        return None

    @staticmethod
    def external(label: str) -> bool:
        """Does a step's label (`self._sandbox.kill()`) name something outside the process?"""
        return _names_external(label.removesuffix("()"))

    def in_process(self, label: str, acts_on: str, called: str, closes_stack: bool) -> bool:
        """Is a teardown method's step in-process, best effort: does it name nothing outside
        the process, by its label (`self._server.close()`) or what it acts on or is passed,
        close no exit stack (which closes whatever was entered on it), and neither keep data
        nor destroy something by its name (`self._save_state()`, `self._sandbox.kill()`)?"""
        if closes_stack or keeps_or_destroys(called):
            return False
        return not (self.external(label) or self.external(acts_on))

    def releases(self, name: str) -> bool:
        """Is `name` a step that gives something back (close, kill, release, discard, remove),
        rather than one that keeps data?"""
        matched = self.matched(name)
        return matched is not None and not _keeps_data(matched)

    def consequence(
        self,
        name: str,
        receiver: str | None,
        source: str | None = None,
        exit_stack: bool = False,
        acts_on: str = "",
    ) -> Consequence | None:
        """What skipping a call of `receiver.name(...)` costs, or None when it is no step.
        `source`: what a bare-name receiver was taken from (`tasks` in `for t in tasks:`);
        `exit_stack`: the project records that the receiver holds an (Async)ExitStack;
        `acts_on`: the names the call passes (`client.delete(self._sandbox)`), which name
        something outside the process as a receiver does."""
        matched = self.matched(name)
        if matched is None:
            return None
        said = _said_cost(name, matched, receiver, exit_stack, acts_on)
        if said is not None:
            return said
        held_by = set(name_words(f"{receiver or ''}.{source or ''}".replace(".", "_")))
        if held_by & IN_MEMORY_WORDS and _keeps_data(matched):
            return None  # `self._read_bio.write_eof()`: in-memory I/O, not a step
        around = set(name_words(name)) | held_by
        if around & EXTERNAL_WORDS:
            return Consequence.LOSES_WORK
        return self._cost(matched, around, held_by)

    def _cost(self, matched: tuple[str, ...], around: set[str], held_by: set[str]) -> Consequence:
        if any(word in self.best_effort for word in matched) or _closes_in_process(matched, around):
            return Consequence.BEST_EFFORT
        if held_by & NETWORK_WORDS and _keeps_data(matched):
            return Consequence.BEST_EFFORT  # a reply written to a peer, not data kept
        return Consequence.LOSES_WORK
