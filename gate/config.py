"""gate's settings: one frozen dataclass read strictly from `[tool.gate]` (gate.document)."""

from __future__ import annotations

import json
import os
import string
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from gate import git
from gate.document import DocumentError, Invalid, Problem, alias, read_document
from gate.fsutil import display_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DEFAULT_CRITICAL_TOKENS: tuple[str, ...] = (
    "cleanup",
    "clean_up",
    "finalize",
    "finalise",
    "close",
    "aclose",
    "stop",
    "shutdown",
    "shut_down",
    "teardown",
    "tear_down",
    "release",
    "dispose",
    "persist",
    "save",
    "write",
    "flush",
    "dump",
    "commit",
    "upload",
    "terminate",
    "kill",
    "unlink",
    "rmtree",
    "remove",
    "delete",
    "destroy",
    "discard",
    "record",
    "cancel",
    "aexit",
)

DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".git",
    ".hg",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    ".gate_cache",
)


class ConfigError(Exception):
    """A config or baseline file gate cannot use; the message names the file and the key."""


# Read strictly (gate.document): `threshold = true` or `"10"` is an error, not 1 or 10.
Strings = tuple[str, ...]

DOCS_URL_FIELDS = {"code": "CODE", "name": "rule-name"}
KNOWN_PLACEHOLDERS = "{code} and {name}"


def check_docs_url(template: str) -> str:
    """`template` when its only placeholders are {code} and {name}; raises Invalid."""
    try:
        parts = string.Formatter().parse(template)
        unknown = [field for _, field, _, _ in parts if field not in (None, *DOCS_URL_FIELDS)]
        if not unknown:
            template.format(**DOCS_URL_FIELDS)
    except ValueError as error:
        raise Invalid(
            "docs_url_template",
            f"not a URL template ({error}); the placeholders are {KNOWN_PLACEHOLDERS}",
        ) from None
    if unknown:
        raise Invalid(
            "docs_url_placeholder",
            f"unknown placeholder {{{unknown[0]}}}; the placeholders are {KNOWN_PLACEHOLDERS}",
        )
    return template


# Steps whose loss is a best-effort close of an in-process object the garbage collector closes
# anyway (a socket, an HTTP session, a file): a warning, unless the receiver names something
# outside the process (see EXTERNAL_WORDS in gate/analysis/walker.py).
DEFAULT_BEST_EFFORT_TOKENS: tuple[str, ...] = ("close", "aclose", "disconnect", "cancel")

# Async methods whose whole body is teardown: an interrupt at an earlier await skips the rest.
DEFAULT_TEARDOWN_METHODS: tuple[str, ...] = (
    "aclose",
    "close",
    "shutdown",
    "stop",
    "cleanup",
    "teardown",
    "dispose",
)

# A glob's `*` also matches `/`: `*/tests/*` is a tests directory at any depth below the root.
DEFAULT_TEST_PATHS: tuple[str, ...] = (
    "tests/*",
    "*/tests/*",
    "test/*",
    "*/test/*",
    "testing/*",
    "*/testing/*",
    "examples/*",
    "*/examples/*",
    # a package's private test support (asyncpg's `_testbase/`, pandas' `_testing/`)
    "_test*/*",
    "*/_test*/*",
    "test_*.py",
    "*_test.py",
    "conftest.py",
)

SeverityName = Literal["error", "warning"]


@dataclass(frozen=True)
class TeardownConfig:
    """`[tool.gate.teardown]`: the vocabulary and scope of the teardown rules."""

    critical_tokens: Strings = field(
        default=DEFAULT_CRITICAL_TOKENS, metadata=alias("critical-tokens")
    )
    extend_critical_tokens: Strings = field(default=(), metadata=alias("extend-critical-tokens"))
    best_effort_tokens: Strings = field(
        default=DEFAULT_BEST_EFFORT_TOKENS, metadata=alias("best-effort-tokens")
    )
    teardown_functions: Strings = field(default=(), metadata=alias("teardown-functions"))
    teardown_methods: Strings = field(
        default=DEFAULT_TEARDOWN_METHODS, metadata=alias("teardown-methods")
    )
    shield_helpers: Strings = field(default=(), metadata=alias("shield-helpers"))
    test_paths: Strings = field(default=DEFAULT_TEST_PATHS, metadata=alias("test-paths"))
    best_effort_severity: SeverityName = field(
        default="warning", metadata=alias("best-effort-severity")
    )
    test_severity: SeverityName = field(default="warning", metadata=alias("test-severity"))
    repeat_severity: SeverityName = field(default="warning", metadata=alias("repeat-severity"))

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.critical_tokens + self.extend_critical_tokens


@dataclass(frozen=True)
class PathThreshold:
    """One `[[tool.gate.complexity.paths]]` entry: a threshold for the paths matching `glob`."""

    glob: str
    threshold: int = field(metadata={"ge": 1})


@dataclass(frozen=True)
class ComplexityConfig:
    """`[tool.gate.complexity]`: the ratchet's threshold, baseline file and per-path overrides."""

    threshold: int = field(default=10, metadata={"ge": 1})
    baseline: str = "baselines/complexity.json"
    paths: tuple[PathThreshold, ...] = ()
    stale_severity: Literal["error", "warning"] = field(
        default="error", metadata=alias("stale-severity")
    )


def _docs_url_formats(value: str | None) -> str | None:
    # Checked when the config loads, not when a renderer first formats it.
    return value if value is None else check_docs_url(value)


@dataclass(frozen=True)
class GateConfig:
    """`[tool.gate]`: every setting, each with its default."""

    include: Strings = ("*.py", "*.pyi")
    exclude: Strings = ()
    select: Strings = ("GATE",)
    ignore: Strings = ()
    # A URL template for rule docs in SARIF/rdjson (`{code}`, `{name}`); none by default.
    docs_url: str | None = field(default=None, metadata=alias("docs-url", check=_docs_url_formats))
    # Run ruff too (the project's own ruff configuration); its findings join gate's.
    ruff: bool = False
    # Every finding gate grandfathers other than complexity ones, relative to the pyproject.toml.
    findings_baseline: str = field(
        default="baselines/findings.json", metadata=alias("findings-baseline")
    )
    teardown: TeardownConfig = field(default_factory=TeardownConfig)
    complexity: ComplexityConfig = field(default_factory=ComplexityConfig)


@dataclass(frozen=True)
class LoadedConfig:
    """The settings together with where they came from; `root` anchors relative paths."""

    settings: GateConfig
    source: Path | None
    root: Path


def _dotted(loc: tuple[Any, ...]) -> str:
    return ".".join(["tool", "gate", *(str(part) for part in loc)])


def _toml_value(value: Any) -> str:
    """A value as it was written in TOML, for "got ..." in an error."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return str(value)


def _reason(problem: Problem) -> str:
    if problem.kind == "extra_forbidden":
        return "unknown key"
    if problem.kind == "tuple_type":  # the TOML spelling of a tuple
        return f"Input should be an array (got {_toml_value(problem.value)})"
    if problem.kind.endswith("_type"):  # a value of the wrong type: say what was written
        return f"{problem.message} (got {_toml_value(problem.value)})"
    return problem.message


def parse_config(data: dict[str, Any], source: str) -> GateConfig:
    """Validate a `[tool.gate]` table; raises ConfigError naming the file and dotted key."""
    try:
        return read_document(GateConfig, data)
    except DocumentError as error:
        problems = [
            f"{source}: {_dotted(problem.location)}: {_reason(problem)}"
            for problem in error.problems
        ]
        raise ConfigError("\n".join(problems)) from None


def read_pyproject(path: Path) -> dict[str, Any] | None:
    """Return the `[tool.gate]` table of a pyproject file, None when it has none."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{display_path(path)}: cannot read: {error.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{display_path(path)}: invalid TOML: {error}") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict) or "gate" not in tool:
        return None
    table = tool["gate"]
    if not isinstance(table, dict):
        raise ConfigError(f"{display_path(path)}: tool.gate: expected a table")
    return table


def _directory(start: Path) -> Path:
    """An absolute directory to search upwards from; a path that cannot be resolved (a symlink
    loop) is taken as written."""
    try:
        start = start.resolve()
    except (OSError, RuntimeError):
        start = Path(os.path.abspath(start))
    return start if start.is_dir() else start.parent


def find_config(start: Path) -> Path | None:
    """The nearest pyproject.toml with a `[tool.gate]` table, walking up from `start`."""
    directory = _directory(start)
    for candidate in (directory, *directory.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and read_pyproject(pyproject) is not None:
            return pyproject
    return None


def project_root(start: Path) -> Path:
    """Where a project without `[tool.gate]` is rooted: the nearest directory above `start` with
    a pyproject.toml, else the git top level, else the current directory. The cache, the
    baseline and every reported path are relative to it."""
    directory = _directory(start)
    for candidate in (directory, *directory.parents):
        if (candidate / "pyproject.toml").is_file():
            return candidate
    top = git.toplevel(directory)
    return top.resolve() if top is not None else Path.cwd().resolve()


def load_config(explicit: Path | None, start: Path) -> LoadedConfig:
    """Read the config named on the command line, or the nearest one above `start`."""
    source = explicit if explicit is not None else find_config(start)
    if source is None:
        return LoadedConfig(settings=GateConfig(), source=None, root=project_root(start))
    if not source.is_file():
        raise ConfigError(f"{display_path(source)}: no such config file")
    table = read_pyproject(source)
    if table is None:
        table = {}
    settings = parse_config(table, display_path(source))
    return LoadedConfig(settings=settings, source=source, root=source.resolve().parent)
