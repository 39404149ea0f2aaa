"""ruff under the gate (`[tool.gate] ruff = true`).

One ruff process checks every file gate checks, with the project's own ruff configuration
(`--force-exclude` keeps ruff's excludes for files named on its command line, `--no-fix` keeps a
`fix = true` setting from editing anything). ruff applies its own `# noqa`; its JSON output
becomes gate's findings, fingerprinted like gate's (code, path, enclosing function, source
text), never by line number.
"""

from __future__ import annotations

import ast
import json
import os
import shlex
import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gate.analysis.candidates import FunctionSpan, index_functions
from gate.config import ConfigError
from gate.discovery import SourceFile
from gate.model import Family, Finding, Location, RuffDetail, RuffEdit, RuffFix, Severity
from gate.rule import Rule
from gate.source import decode, source_lines

if TYPE_CHECKING:
    import subprocess

# Half of Linux's usual ARG_MAX: a tree whose paths need more is split over several processes.
ARGUMENT_BUDGET = 1_000_000


class RuffError(ConfigError):
    """ruff is missing, could not run, or failed; the message names the command and its
    output."""


def version() -> str:
    """The installed ruff's version; raises RuffError when ruff is not installed."""
    from importlib import metadata

    try:
        return metadata.version("ruff")
    except metadata.PackageNotFoundError:
        raise RuffError(
            "[tool.gate] ruff = true, but the ruff package is not installed: "
            "pip install 'gate[ruff]'"
        ) from None


def _binary() -> str:
    try:
        from ruff.__main__ import find_ruff_bin

        return str(find_ruff_bin())
    except ImportError:
        version()  # names the missing package
        raise
    except FileNotFoundError as error:
        raise RuffError(f"ruff's binary was not found: {error}") from None


def _batches(paths: list[str]) -> list[list[str]]:
    batches: list[list[str]] = [[]]
    size = 0
    for path in paths:
        if batches[-1] and size + len(path) + 1 > ARGUMENT_BUDGET:
            batches.append([])
            size = 0
        batches[-1].append(path)
        size += len(path) + 1
    return batches


def _shown(command: Sequence[str]) -> str:
    """The command as a person would type it, its file list shortened."""
    split = list(command).index("--") + 1
    files = command[split:]
    shown = shlex.join([*command[:split], *files[:2]])
    return shown + (f" ... ({len(files)} files)" if len(files) > 2 else "")


@dataclass
class RuffRun:
    """ruff running in the background over the files gate checks; `findings()` waits for it.

    Started before gate's own file rules, so that the two overlap.
    """

    root: Path
    files: dict[str, SourceFile]  # absolute path as given to ruff -> the file
    processes: list[tuple[list[str], subprocess.Popen[bytes]]]

    @classmethod
    def start(cls, files: Sequence[SourceFile], root: Path, cache: bool = True) -> RuffRun:
        """Start ruff on `files`; raises RuffError when it cannot be started."""
        by_path = {os.path.abspath(source.path): source for source in files}
        base = [_binary(), "check", "--output-format", "json", "--no-fix", "--force-exclude"]
        if not cache:
            base.append("--no-cache")
        import subprocess  # only a run with `ruff = true` starts one

        processes = []
        for batch in _batches(sorted(by_path)) if by_path else []:
            command = [*base, "--", *batch]
            try:
                process = subprocess.Popen(
                    command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE
                )
            except OSError as error:
                raise RuffError(f"`{_shown(command)}` could not be started: {error}") from None
            processes.append((command, process))
        return cls(root, by_path, processes)

    def findings(self) -> tuple[list[Finding], dict[str, Rule]]:
        """ruff's findings as gate's, and a Rule for each of ruff's codes among them, for the
        renderers; raises RuffError when ruff failed or said something gate cannot read."""
        reported: list[dict[str, Any]] = []
        for command, process in self.processes:
            out, err = process.communicate()
            output = err.decode("utf-8", "replace").strip() or out.decode("utf-8", "replace")
            if process.returncode not in (0, 1):
                raise RuffError(
                    f"`{_shown(command)}` failed (exit {process.returncode}): {output.strip()}"
                )
            try:
                batch = json.loads(out or b"[]")
            except json.JSONDecodeError as error:
                raise RuffError(
                    f"`{_shown(command)}` printed no JSON gate can read ({error}): "
                    f"{output.strip()[:500]}"
                ) from None
            reported.extend(batch)
        return self._convert(reported)

    def _source(self, filename: str) -> SourceFile | None:
        return self.files.get(filename) or self.files.get(os.path.abspath(filename))

    def _convert(self, reported: list[dict[str, Any]]) -> tuple[list[Finding], dict[str, Rule]]:
        by_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for item in reported:
            by_file[item["filename"]].append(item)
        findings: list[Finding] = []
        rules: dict[str, Rule] = {}
        for filename, items in sorted(by_file.items()):
            source = self._source(filename)
            if source is None:
                raise RuffError(f"ruff reported {filename}, a file gate did not give it")
            context = _FileContext.read(source)
            for item in items:
                finding = _finding(item, source.relative, context)
                findings.append(finding)
                rules.setdefault(finding.code, _rule(item, finding.code))
        return _numbered(findings), rules


@dataclass(frozen=True)
class _FileContext:
    """What a ruff finding's fingerprint needs from its file: its lines and its functions."""

    lines: list[str]
    spans: list[FunctionSpan]

    @classmethod
    def read(cls, source: SourceFile) -> _FileContext:
        try:
            data = source.path.read_bytes()
        except OSError:
            return cls([], [])
        lines = source_lines(decode(data))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = compile(data, source.relative, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError):
            return cls(lines, [])
        return cls(lines, index_functions(tree)[0])

    def function_at(self, line: int) -> str:
        """The qualname of the innermost function holding `line` ('' at module level)."""
        holding = [span for span in self.spans if span.first_line <= line <= span.last_line]
        return max(holding, key=lambda span: span.first_line).qualname if holding else ""

    def text(self, line: int, column: int, end_line: int, end_column: int) -> tuple[str, str]:
        """The reported line, stripped, and the reported text on it."""
        if not 0 < line <= len(self.lines):
            return "", ""
        whole = self.lines[line - 1].rstrip("\r\n")
        end = end_column - 1 if end_line == line else len(whole)
        return whole.strip(), whole[column - 1 : max(end, column - 1)]


def _position(item: dict[str, Any], key: str) -> tuple[int, int]:
    where = item.get(key) or {}
    return int(where.get("row") or 1), int(where.get("column") or 1)


def _fix(data: dict[str, Any] | None) -> RuffFix | None:
    if not data:
        return None
    edits = []
    for edit in data.get("edits") or ():
        line, column = _position(edit, "location")
        end_line, end_column = _position(edit, "end_location")
        edits.append(RuffEdit(edit.get("content") or "", line, column, end_line, end_column))
    return RuffFix(str(data.get("applicability") or ""), data.get("message"), tuple(edits))


def _finding(item: dict[str, Any], path: str, context: _FileContext) -> Finding:
    line, column = _position(item, "location")
    end_line, end_column = _position(item, "end_location")
    code = str(item.get("code") or item.get("name") or "ruff")
    line_text, reported = context.text(line, column, end_line, end_column)
    severity = Severity.WARNING if item.get("severity") in ("warning", "info") else Severity.ERROR
    return Finding(
        code=code,
        name=str(item.get("name") or code),
        family=Family.RUFF,
        severity=severity,
        location=Location(path, line, column, end_line, end_column),
        message=str(item.get("message") or ""),
        anchor=f"{context.function_at(line)}\x1f{_text(line_text, reported)}",
        detail=RuffDetail(item.get("url"), _fix(item.get("fix"))),
    )


def _text(line_text: str, reported: str) -> str:
    """A finding's source text: the reported text and the line it is on."""
    if not reported.strip() or reported.strip() == line_text:
        return line_text
    return f"{reported.strip()} in `{line_text}`"


def _numbered(findings: list[Finding]) -> list[Finding]:
    """Number repeated anchors in source order so that every fingerprint is distinct."""
    counts: Counter[tuple[str, str, str]] = Counter()
    numbered = []
    for finding in sorted(findings, key=Finding.sort_key):
        key = (finding.code, finding.location.path, finding.anchor)
        counts[key] += 1
        if counts[key] > 1:
            finding = replace(finding, anchor=f"{finding.anchor}#{counts[key]}")
        numbered.append(finding)
    return numbered


def _rule(item: dict[str, Any], code: str) -> Rule:
    """A Rule for one of ruff's codes, so every renderer can describe it like gate's own."""
    name = str(item.get("name") or code)
    url = item.get("url")
    where = f" ({url})" if url else ""
    return Rule(
        code=code,
        name=name,
        summary=f"ruff: {name}",
        family=Family.RUFF,
        severity=Severity.ERROR,
        doc=f"# {code} {name}\n\nA ruff rule; ruff's documentation describes it{where}.\n",
        fix=f"See ruff's documentation: {url}" if url else "See `ruff rule " + code + "`.",
        url=url,
    )
