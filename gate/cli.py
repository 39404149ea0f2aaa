"""gate's command line: the only module that prints or chooses an exit code."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from gate import __version__
from gate.checks import RULES, RULES_BY_NAME
from gate.config import ConfigError, load_config
from gate.engine import UsageError, run_check
from gate.fsutil import atomic_write
from gate.model import Severity
from gate.report import RENDERERS
from gate.report.context import ReportContext

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

DESCRIPTION = """\
gate: a lint gate for async Python.

It flags teardown steps (cleanup, close, write, ...) in finally blocks, cancellation handlers and
__aexit__ that an interrupt at an earlier await can skip, and the guards that miss cancellation.

exit codes: 0 no findings, 1 findings, 2 usage, config or internal error.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        raise UsageError(f"{self.prog}: {message}")


def _codes(value: str) -> tuple[str, ...]:
    codes = tuple(part.strip().upper() for part in value.split(",") if part.strip())
    for code in codes:
        if not re.fullmatch(r"GATE\d*", code):
            raise argparse.ArgumentTypeError(
                f"{code!r} is not a rule code or prefix (GATE1,GATE100)"
            )
    return codes


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gate", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"gate {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    check = commands.add_parser(
        "check",
        help="check files for teardown problems",
        description="Check Python files. PATHS default to the current directory; directories "
        "are searched for *.py and *.pyi, honouring .gitignore and [tool.gate] include/exclude.",
    )
    check.add_argument("paths", nargs="*", type=Path, metavar="PATHS", default=[Path(".")])
    check.add_argument(
        "--select", type=_codes, help="comma-separated codes or prefixes to report (GATE1,GATE900)"
    )
    check.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes to skip")
    check.add_argument("--format", choices=sorted(RENDERERS), default="text")
    check.add_argument("--output", type=Path, help="write the report to FILE instead of stdout")
    check.add_argument("--config", type=Path, help="a pyproject.toml to read [tool.gate] from")
    check.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when there are findings"
    )

    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("rule", metavar="CODE", help="a rule code (GATE100) or name")

    commands.add_parser("rules", help="list every rule with its code, name and severity")
    return parser


def _run_check(args: argparse.Namespace, out: Console) -> int:
    start = args.paths[0] if args.paths else Path(".")
    loaded = load_config(args.config, start)
    result = run_check(args.paths, loaded, args.select, args.ignore)
    color = args.output is None and args.format == "text" and out.is_terminal
    context = ReportContext(tuple(result.findings), result.files, color=color)
    rendered = RENDERERS[args.format](context)
    if args.output is not None:
        atomic_write(args.output, rendered)
    elif color:
        out.print(rendered, end="", highlight=False, soft_wrap=True)
    else:
        sys.stdout.write(rendered)
    failing = any(f.severity is Severity.ERROR for f in result.findings)
    return EXIT_FINDINGS if failing and not args.exit_zero else EXIT_CLEAN


def _run_explain(args: argparse.Namespace) -> int:
    key = args.rule.strip()
    rule = RULES.get(key.upper()) or RULES_BY_NAME.get(key.lower())
    if rule is None:
        raise UsageError(f"unknown rule {key!r}; `gate rules` lists them")
    sys.stdout.write(rule.doc.strip() + "\n")
    return EXIT_CLEAN


def _run_rules() -> int:
    width = max(len(rule.name) for rule in RULES.values())
    for rule in sorted(RULES.values(), key=lambda r: r.code):
        sys.stdout.write(
            f"{rule.code}  {rule.name:<{width}}  {rule.severity.value:<7}  {rule.summary}\n"
        )
    return EXIT_CLEAN


def main(argv: Sequence[str] | None = None) -> int:
    """Run gate with `argv` (default sys.argv[1:]); returns the exit code."""
    parser = build_parser()
    out = Console(highlight=False)
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exit_:  # --help and --version
            return int(exit_.code or 0)
        if args.command == "check":
            return _run_check(args, out)
        if args.command == "explain":
            return _run_explain(args)
        return _run_rules()
    except (UsageError, ConfigError, OSError) as error:
        sys.stderr.write(f"gate: error: {error}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
