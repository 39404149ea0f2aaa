"""gate's command line: the only module that prints or chooses an exit code."""

from __future__ import annotations

import argparse
import functools
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gate import __version__
from gate.checks import RULES, RULES_BY_NAME
from gate.complexity.baseline import is_current, write_baseline
from gate.complexity.ratchet import UpdatePlan, plan_update, threshold_for
from gate.complexity.session import ComplexitySession
from gate.config import ConfigError, LoadedConfig, load_config
from gate.diff import DiffError, changed_lines
from gate.discovery import UsageError
from gate.engine import RunOptions
from gate.filters import Selection, SelectionError, normalise_codes, selection
from gate.findings_baseline import FindingsSession, plan_findings_update
from gate.fsutil import atomic_write, display_path, remove_stale_temporaries
from gate.model import Finding, Severity
from gate.pipeline import CheckResult, Survey, measure_paths, run_check, survey
from gate.progress import progress_bar
from gate.report import CARRIES_FIXES, RENDERERS
from gate.report.context import BaselineSummary, ReportContext
from gate.report.sources import PathView, link_function

if TYPE_CHECKING:
    from gate.fix.files import FixRun

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
PIPED_WIDTH = 1_000_000  # a table is only as wide as its content: this is "no limit"

DESCRIPTION = """\
gate: a lint gate for async Python.

It flags teardown steps (cleanup, close, write, ...) in finally blocks, cancellation handlers and
__aexit__ that an interrupt at an earlier await can skip, and the guards that miss cancellation.

exit codes: 0 no findings, 1 findings, 2 usage, config or internal error.
"""


class Terminal:
    """Standard output as rich sees it; rich is imported only for colour or a table."""

    @functools.cached_property
    def console(self) -> Any:
        from rich.console import Console

        return Console(highlight=False)

    @property
    def is_terminal(self) -> bool:
        return sys.stdout.isatty() and bool(self.console.is_terminal)

    @property
    def width(self) -> int:
        return int(self.console.width)

    def print(self, *objects: Any, **options: Any) -> None:
        self.console.print(*objects, **options)

    def print_table(self, table: Any) -> None:
        """A rich Table: on a terminal, long cells fold at its width; piped, where rich would
        assume 80 columns, every row is printed whole, however long."""
        if self.is_terminal:
            self.console.print(table)
            return
        from rich.console import Console

        Console(highlight=False, width=PIPED_WIDTH, file=sys.stdout).print(table)


def _codes(value: str) -> tuple[str, ...]:
    parts = [part for part in value.split(",") if part.strip()]
    try:
        return normalise_codes(parts, "rule selection")
    except SelectionError as error:
        raise argparse.ArgumentTypeError(str(error).split(": ", 1)[1]) from None


def _jobs(value: str) -> int:
    if not value.isdigit():
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of workers (0 = one per core)")
    return int(value)


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        default=0,
        metavar="N",
        help="worker processes for files not in the cache (default 0: one per core)",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write .gate_cache/ (results keyed by file contents)",
    )


def _run_options(args: argparse.Namespace) -> RunOptions:
    return RunOptions(jobs=args.jobs, cache=not args.no_cache, progress=progress_bar())


def _help(parser: argparse.ArgumentParser):
    """A handler for a command given without its subcommand: the help, as a usage error."""

    def print_help(args: argparse.Namespace, out: Terminal) -> int:
        parser.print_help(sys.stdout)
        return EXIT_ERROR

    return print_help


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gate", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"gate {__version__}")
    parser.set_defaults(handler=_help(parser))
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser(
        "check",
        help="check files for teardown problems",
        description="Check Python files. PATHS default to the current directory; directories "
        "are searched for *.py and *.pyi, honouring .gitignore and [tool.gate] include/exclude.",
    )
    check.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATHS",
        default=[Path(".")],
        help="files and directories to check (default: the current directory)",
    )
    check.add_argument(
        "--select",
        type=_codes,
        metavar="CODES",
        help="comma-separated rule codes or prefixes to report, case-insensitive (`gate rules`)",
    )
    check.add_argument(
        "--ignore",
        type=_codes,
        metavar="CODES",
        help="comma-separated rule codes or prefixes to skip",
    )
    check.add_argument(
        "--format",
        choices=sorted(RENDERERS),
        default="text",
        help="the report's format (default text; see the README for each)",
    )
    check.add_argument(
        "--output", type=Path, metavar="FILE", help="write the report to FILE instead of stdout"
    )
    check.add_argument(
        "--config", type=Path, metavar="FILE", help="a pyproject.toml to read [tool.gate] from"
    )
    check.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when there are findings"
    )
    _add_run_options(check)
    check.add_argument(
        "--diff",
        metavar="BASE",
        help="report only findings on lines changed since the merge base of BASE and HEAD",
    )
    check.add_argument(
        "--show-baselined",
        action="store_true",
        help="also list the findings the findings baseline grandfathers (they never fail)",
    )
    check.add_argument(
        "--seams",
        type=Path,
        metavar="REPORT",
        help="a `gate seams --format json` report: mark the findings its failing seams confirm",
    )
    fixes = check.add_mutually_exclusive_group()
    fixes.add_argument(
        "--fix",
        action="store_true",
        help="rewrite the teardown findings gate can fix, in place and atomically, then report "
        "what remains",
    )
    fixes.add_argument(
        "--show-fixes",
        action="store_true",
        help="print the fixes as a unified diff instead of writing them (or the report)",
    )

    check.set_defaults(handler=_run_check)

    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.set_defaults(handler=_run_explain)
    explain.add_argument("rule", metavar="CODE", help="a rule code or name (`gate rules`)")

    rules = commands.add_parser("rules", help="list every rule with its code, name and severity")
    rules.set_defaults(handler=_run_rules)

    seams = commands.add_parser(
        "seams",
        help="fire a cancel and an exception at every await seam of a scenario",
        description="Run an async scenario once to list every await seam (in every task it "
        "starts), then once per seam and fault with that fault landing at that seam, each in a "
        "fresh event loop and an empty directory, ending as asyncio.run ends; then run CHECK on "
        "the directory. Exit 0 when every trial is ok or accepted, 1 when any is not, 2 on usage "
        "errors or when the clean run itself fails.",
    )
    seams.set_defaults(handler=_run_seams)
    seams.add_argument(
        "target",
        metavar="TARGET",
        help="async def scenario(workdir[, state]): path/to/file.py:name or package.module:name",
    )
    seams.add_argument(
        "--check",
        required=True,
        metavar="CHECK",
        help="def check(workdir[, state]): raises when an artifact is missing "
        "(path/to/file.py:name or package.module:name)",
    )
    seams.add_argument(
        "--faults",
        type=_faults,
        default="cancel,error",
        metavar="FAULT[,FAULT]",
        help="comma-separated, from cancel, cancel-twice, error, keyboard-interrupt "
        "(default cancel,error; trio and anyio: cancel, error, keyboard-interrupt)",
    )
    seams.add_argument(
        "--accept",
        type=_acceptances,
        action="extend",
        default=[],
        metavar="OUTCOME[,OUTCOME]",
        help="outcomes that count as ok, each optionally for one fault: replaced, "
        "error:swallowed (comma-separated or repeated)",
    )
    seams.add_argument(
        "--backend",
        choices=("asyncio", "trio", "anyio", "anyio:trio"),
        default="asyncio",
        help="how to run and cancel the scenario (default asyncio; anyio runs on its asyncio "
        "backend, anyio:trio on trio)",
    )
    seams.add_argument(
        "--timeout",
        type=_seconds,
        default=5.0,
        metavar="SECONDS",
        help="seconds per trial (default 5)",
    )
    seams.add_argument(
        "--format",
        choices=("text", "json", "junit", "markdown"),
        default="text",
        help="a table (text), the pinned JSON, JUnit XML for CI or a markdown PR comment",
    )
    seams.add_argument(
        "--output", type=Path, metavar="FILE", help="write the report to FILE instead of stdout"
    )

    baseline = commands.add_parser(
        "baseline",
        help="write the baselines, or show the complexity baseline",
        description="The complexity baseline grandfathers today's over-threshold functions, the "
        "findings baseline (baselines/findings.json) today's teardown and ruff findings. "
        "`gate check` never writes them; `gate baseline update` is their only writer.",
    )
    baseline.set_defaults(handler=_help(baseline))
    actions = baseline.add_subparsers(dest="action", metavar="ACTION")
    update = actions.add_parser(
        "update",
        help="tighten improved entries, drop stale ones; add new ones with --accept-new",
        description="Lower the entries of functions that improved, remove those that are gone "
        "or within the threshold, remove findings that are no longer reported, and re-key files "
        "git reports as renamed. New over-threshold functions and new findings are added only "
        "with --accept-new (or when no baseline exists yet); an entry is raised only when "
        "--allow-increase names it. Only entries of files under PATHS are touched.",
    )
    update.set_defaults(handler=_run_baseline_update)
    update.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATHS",
        default=[Path(".")],
        help="only touch the entries of files under these (default: the current directory)",
    )
    update.add_argument(
        "--accept-new",
        action="store_true",
        help="add new over-threshold functions and new findings",
    )
    update.add_argument(
        "--allow-increase",
        action="append",
        default=[],
        metavar="KEY",
        help="allow this entry (path::Qualname) to rise; repeat for several",
    )
    update.add_argument(
        "--rebaseline",
        action="store_true",
        help="start over from the current measurements and findings (after a radon or ruff "
        "upgrade)",
    )
    update.add_argument(
        "--config", type=Path, metavar="FILE", help="a pyproject.toml to read [tool.gate] from"
    )
    _add_run_options(update)
    show = actions.add_parser("show", help="print the baseline, least headroom first")
    show.set_defaults(handler=_run_baseline_show)
    show.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATHS",
        default=[Path(".")],
        help="measure the files under these for the `now` column (default: the current directory)",
    )
    show.add_argument(
        "--config", type=Path, metavar="FILE", help="a pyproject.toml to read [tool.gate] from"
    )
    _add_run_options(show)
    return parser


def _report_context(
    result: CheckResult, loaded: LoadedConfig, color: bool, show_baselined: bool = False
) -> ReportContext:
    paths = PathView.of(loaded.root)
    link = link_function(os.environ)
    baseline = None
    if result.stale is not None:
        baseline = BaselineSummary(tuple(result.baselined), len(result.stale), show_baselined)
    return ReportContext(
        tuple(result.findings),
        result.files,
        color=color,
        shown=paths.shown,
        repo_path=paths.repo_path,
        line_text=lambda path, line: paths.line_text(path, line),
        link=link,
        docs_url=loaded.settings.docs_url,
        rules={**RULES, **result.rules},
        baseline=baseline,
    )


def _warn_stale(result: CheckResult, loaded: LoadedConfig) -> None:
    """Stale entries of the findings baseline are a warning: the finding is gone."""
    if not result.stale:
        return
    session = FindingsSession(loaded)
    lines = session.entry_lines
    for entry in result.stale:
        where = f"{session.shown}:{lines[entry]}" if entry in lines else session.shown
        sys.stderr.write(
            f"gate: warning: {where}: stale entry {entry.describe()}: no longer reported; "
            "`gate baseline update` removes it\n"
        )


def _emit(rendered: str, output: Path | None, out: Terminal, color: bool) -> None:
    if output is not None:
        atomic_write(output, rendered)
    elif color:
        out.print(rendered, end="", highlight=False, soft_wrap=True, markup=True)
    else:
        sys.stdout.write(rendered)


def _selection(
    loaded: LoadedConfig, select: Sequence[str] | None = None, ignore: Sequence[str] | None = None
) -> Selection:
    source = display_path(loaded.source) if loaded.source is not None else "defaults"
    settings = loaded.settings
    try:
        return selection(
            settings.select, settings.ignore, source, select, ignore, ruff=settings.ruff
        )
    except SelectionError as error:
        raise ConfigError(str(error)) from None


def _checked(args: argparse.Namespace, loaded: LoadedConfig, chosen: Selection) -> CheckResult:
    """The run's findings through the pipeline, narrowed by --diff and marked by --seams."""
    changed = changed_lines(loaded.root, args.diff) if args.diff else None
    result = run_check(
        args.paths, loaded, chosen, _run_options(args), base=args.diff, changed=changed
    )
    if args.seams is not None:
        from gate.seamlink import mark_confirmed, read_seam_report

        result.findings = mark_confirmed(result.findings, read_seam_report(args.seams), loaded.root)
    return result


def _with_fixes(
    result: CheckResult, loaded: LoadedConfig, chosen: Selection, whole: bool = True
) -> FixRun:
    from gate.fix.files import plan_fixes  # libcst loads only when fixes are asked for

    run = plan_fixes(result.findings, loaded.root, loaded.settings, chosen, whole, result.summaries)
    result.findings = run.findings
    return run


def _report_unfixable(run: FixRun, shown: Callable[[str], str]) -> None:
    for finding in run.unfixable():
        where = finding.location
        assert finding.fix is not None
        sys.stderr.write(
            f"{shown(where.path)}:{where.line}:{where.column}: {finding.code} has no automatic "
            f"fix: {finding.fix.note}\n"
        )


def _show_fixes(args: argparse.Namespace, run: FixRun, loaded: LoadedConfig, out: Terminal) -> None:
    shown = PathView.of(loaded.root).shown
    _emit("".join(file.diff(shown(file.path)) for file in run.files), args.output, out, False)
    _report_unfixable(run, shown)
    fixable = len(run.fixed_findings())
    sys.stderr.write(
        f"gate: {fixable} finding(s) in {len(run.files)} file(s) would be fixed by "
        "`gate check --fix`\n"
    )


def _fix(
    args: argparse.Namespace, result: CheckResult, loaded: LoadedConfig, chosen: Selection
) -> CheckResult:
    """Write every file the fixes change, then check again: what remains, each finding gate
    cannot fix saying why on stderr."""
    run = _with_fixes(result, loaded, chosen)
    before = len([f for f in result.findings if f.fix is not None])
    for file in run.files:
        file.write()
    written = len(run.files)
    if written:
        result = _checked(args, loaded, chosen)
        run = _with_fixes(result, loaded, chosen)
    _report_unfixable(run, PathView.of(loaded.root).shown)
    fixed = before - len([f for f in result.findings if f.fix is not None])
    sys.stderr.write(f"gate: fixed {fixed} finding(s) in {written} file(s)\n")
    return result


def _run_check(args: argparse.Namespace, out: Terminal) -> int:
    start = args.paths[0] if args.paths else Path(".")
    loaded = load_config(args.config, start)
    chosen = _selection(loaded, args.select, args.ignore)
    result = _checked(args, loaded, chosen)
    if args.show_fixes:
        _show_fixes(args, _with_fixes(result, loaded, chosen), loaded, out)
        return _exit_code(result, args)
    if args.fix:
        result = _fix(args, result, loaded, chosen)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY") if args.format == "github" else None
    if args.format in CARRIES_FIXES or summary_file:
        _with_fixes(result, loaded, chosen, whole=False)
    color = args.output is None and args.format == "text" and out.is_terminal
    context = _report_context(result, loaded, color, args.show_baselined)
    _warn_stale(result, loaded)
    _emit(RENDERERS[args.format](context), args.output, out, color)
    if summary_file:
        # GitHub shows 10 annotations of each level per step; the summary holds them all.
        with open(summary_file, "a", encoding="utf-8") as stream:
            stream.write(RENDERERS["markdown"](context))
    return _exit_code(result, args)


def _exit_code(result: CheckResult, args: argparse.Namespace) -> int:
    failing = any(f.severity is Severity.ERROR for f in result.findings)
    return EXIT_FINDINGS if failing and not args.exit_zero else EXIT_CLEAN


def _run_explain(args: argparse.Namespace, out: Terminal) -> int:
    key = args.rule.strip()
    rule = RULES.get(key.upper()) or RULES_BY_NAME.get(key.lower())
    if rule is None:
        raise UsageError(f"unknown rule {key!r}; `gate rules` lists them")
    sys.stdout.write(rule.doc.strip() + "\n")
    return EXIT_CLEAN


def _run_rules(args: argparse.Namespace, out: Terminal) -> int:
    width = max(len(rule.name) for rule in RULES.values())
    for rule in sorted(RULES.values(), key=lambda r: r.code):
        sys.stdout.write(
            f"{rule.code}  {rule.name:<{width}}  {rule.severity.value:<7}  {rule.summary}\n"
        )
    return EXIT_CLEAN


def _faults(value: str) -> tuple[str, ...]:
    from gate.seamdata import FAULTS

    faults = tuple(part.strip() for part in value.split(",") if part.strip())
    unknown = [fault for fault in faults if fault not in FAULTS]
    if unknown or not faults:
        raise argparse.ArgumentTypeError(
            f"unknown fault(s) {unknown}; choose from {','.join(FAULTS)}"
        )
    return faults


def _acceptances(value: str) -> tuple[Any, ...]:
    from gate.seamdata import Acceptance

    try:
        return tuple(Acceptance.parse(part) for part in value.split(",") if part.strip())
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _seconds(value: str) -> float:
    import math

    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number of seconds")
    return seconds


def _run_seams(args: argparse.Namespace, out: Terminal) -> int:
    from gate.harness.sweep import SweepError, sweep
    from gate.harness.target import TargetError
    from gate.harness.target import load as load_target
    from gate.report.seams import RENDERERS as SEAM_RENDERERS
    from gate.report.seams import SeamContext

    try:
        scenario = load_target(args.target)
        check = load_target(args.check)
        report = sweep(
            scenario,
            check,
            args.faults,
            args.timeout,
            target=args.target,
            accept=args.accept,
            backend=args.backend,
        )
    except TargetError as error:
        raise UsageError(str(error)) from None
    except (SweepError, ValueError) as error:
        raise UsageError(f"{args.target}: {error}") from None
    color = args.output is None and args.format == "text" and out.is_terminal
    plain_width = os.environ.get("COLUMNS", "")
    width = out.width if color else int(plain_width) if plain_width.isdigit() else 160
    context = SeamContext(report, _seam_confirmations(report), color=color, width=width)
    rendered = SEAM_RENDERERS[args.format](context)
    if args.output is not None:
        atomic_write(args.output, rendered)
    else:
        sys.stdout.write(rendered)
    return EXIT_FINDINGS if report.failed else EXIT_CLEAN


def _seam_confirmations(report: Any) -> dict[int, list[str]]:
    """The static findings each failing seam confirms; none when the rules cannot run here."""
    if not report.failed:
        return {}
    try:
        from gate.seamlink import link

        return link(report)
    except ImportError:  # the static rules need libcst; the sweep does not
        return {}


def _baseline_config(args: argparse.Namespace) -> LoadedConfig:
    return load_config(args.config, args.paths[0] if args.paths else Path("."))


def _report_unparsed(unparsed: Sequence[Finding], loaded: LoadedConfig) -> None:
    for finding in unparsed:
        location = finding.location
        sys.stderr.write(
            f"{display_path(loaded.root / location.path)}:{location.line}:{location.column}: "
            f"{finding.code} "
            f"{finding.message} (its entries are kept as they are)\n"
        )


def _print_complexity_plan(plan: UpdatePlan) -> None:
    for key, cc in plan.added:
        sys.stdout.write(f"added: {key} = {cc}\n")
    for key, before, cc in plan.lowered:
        sys.stdout.write(f"tightened: {key} {before} -> {cc}\n")
    for key, before, cc in plan.raised:
        sys.stdout.write(f"raised (allowed): {key} {before} -> {cc}\n")
    for old, new in plan.moved:
        sys.stdout.write(f"moved: {old} -> {new}\n")
    for key, before in plan.removed:
        sys.stdout.write(f"removed: {key} (was {before})\n")
    for key, cc in plan.not_accepted:
        sys.stdout.write(
            f"not added: {key} = {cc} (new over the threshold; --accept-new adds it)\n"
        )


def _update_complexity_baseline(
    args: argparse.Namespace, loaded: LoadedConfig, found: Survey
) -> bool:
    """Plan and write the complexity baseline; False (nothing written) when an entry would
    rise without --allow-increase."""
    session = ComplexitySession(loaded)
    remove_stale_temporaries(session.path)  # a killed update's, even if this one writes nothing
    # --rebaseline starts over: the old file is not read, so even a broken one is replaced.
    existing = None if args.rebaseline else session.read(merge_conflicts=True)
    stage = found.stage
    _report_unparsed(stage.unparsed, loaded)
    recorded = None if existing is None else existing.functions
    judged = session.judged_paths(stage.measured_paths, args.paths, recorded or {})
    plan = plan_update(
        stage.functions,
        recorded,
        judged,
        loaded.settings.complexity,
        accept_new=args.accept_new,
        allow_increase=args.allow_increase,
        renamed=session.renamed(recorded or {}),
    )
    if plan.refused:
        for key, allowed, cc in plan.refused:
            sys.stdout.write(
                f"refused: {key} rose from {allowed} to {cc}; bring it back down, or pass "
                f"--allow-increase '{key}' to record the increase\n"
            )
        sys.stdout.write(f"{session.shown}: not written\n")
        return False
    _print_complexity_plan(plan)
    if not args.rebaseline and is_current(session.path, plan.functions):
        sys.stdout.write(f"{session.shown}: up to date ({len(plan.functions)} entries)\n")
        return True
    write_baseline(session.path, plan.functions)
    sys.stdout.write(f"{session.shown}: written ({len(plan.functions)} entries)\n")
    return True


def _run_baseline_update(args: argparse.Namespace, out: Terminal) -> int:
    loaded = _baseline_config(args)
    found = survey(args.paths, loaded, _selection(loaded), _run_options(args), project_rules=False)
    if not _update_complexity_baseline(args, loaded, found):
        return EXIT_FINDINGS
    session = FindingsSession(loaded)
    remove_stale_temporaries(session.path)
    plan = plan_findings_update(
        session,
        found.findings,
        found.stage.measured_paths,
        args.paths,
        found.ruff_version,
        accept_new=args.accept_new,
        rebaseline=args.rebaseline,
    )
    for line in plan.report():
        sys.stdout.write(line + "\n")
    plan.write()
    return EXIT_CLEAN


def _run_baseline_show(args: argparse.Namespace, out: Terminal) -> int:
    from rich.table import Table

    loaded = _baseline_config(args)
    session = ComplexitySession(loaded)
    baseline = session.read()
    if baseline is None:
        raise UsageError(f"{session.shown}: no baseline yet; `gate baseline update` creates it")
    measured = measure_paths(args.paths, loaded, _run_options(args))
    current = {function.key: function.complexity for function in measured.functions}
    rows = []
    for key, recorded in baseline.functions.items():
        now = current.get(key)
        threshold = threshold_for(key.split("::", 1)[0], loaded.settings.complexity)
        headroom = recorded - now if now is not None else None
        rows.append((key, recorded, now, threshold, headroom))
    rows.sort(key=lambda row: (row[4] is None, row[4] if row[4] is not None else 0, row[0]))
    table = Table(title=f"{session.shown}: {len(rows)} grandfathered functions")
    for column in ("function", "baseline", "now", "threshold", "headroom"):
        if column == "function":
            table.add_column(column, justify="left", overflow="fold")
        else:
            table.add_column(column, justify="right")
    for key, recorded, now, threshold, headroom in rows:
        table.add_row(
            key,
            str(recorded),
            "gone" if now is None else str(now),
            str(threshold),
            "" if headroom is None else str(headroom),
        )
    out.print_table(table)
    return EXIT_CLEAN


def main(argv: Sequence[str] | None = None) -> int:
    """Run gate with `argv` (default sys.argv[1:]); returns the exit code."""
    parser = build_parser()
    out = Terminal()
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exit_:  # --help and --version
            return int(exit_.code or 0)
        return args.handler(args, out)
    except (UsageError, ConfigError, DiffError, OSError) as error:
        sys.stderr.write(f"gate: error: {error}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # a bug in gate: say so, exit 2, keep the traceback for a report
        sys.stderr.write(
            f"gate: internal error: {type(error).__name__}: {error}\n"
            "gate: please report this with the traceback (set GATE_DEBUG=1 to print it)\n"
        )
        if os.environ.get("GATE_DEBUG"):
            traceback.print_exc()
        return EXIT_ERROR
