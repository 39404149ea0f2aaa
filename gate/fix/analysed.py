"""A text through the teardown analysis as the file rules run it, for the fixer: the facts,
each parsed function's tree, the findings, and how the module reaches a shielded scope."""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass

from gate.analysis.cancellation import aliases_in_force, exception_aliases
from gate.analysis.facts import ModuleAnalysis
from gate.analysis.file_pass import analyse as analyse_file
from gate.analysis.file_pass import judge
from gate.analysis.summary import (
    ProjectIndex,
    ProjectSummaries,
    ProjectView,
    module_name,
    summarise_module,
)
from gate.analysis.walker import AnalysisError, Snippet
from gate.config import GateConfig
from gate.filecheck import teardown_functions, vocabulary_of
from gate.fix.tree import FunctionTree
from gate.model import Finding, Location

LIBRARIES = ("anyio", "trio")  # anyio first: its scope works on either backend


@dataclass
class Analysed:
    """One text through the teardown analysis: its facts, parsed functions and findings."""

    analysis: ModuleAnalysis
    trees: dict[int, FunctionTree]
    findings: list[Finding]
    level_triggered: bool
    shield_scopes: dict[str, str]


def _shield_scopes(tree: ast.Module) -> dict[str, str]:
    """How this module spells each trio/anyio `CancelScope` it can reach, by library."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in LIBRARIES:
                    found.setdefault(alias.name, f"{alias.asname or alias.name}.CancelScope")
        elif isinstance(node, ast.ImportFrom):
            found.update(_imported_scope(node))
    return found


def _imported_scope(node: ast.ImportFrom) -> dict[str, str]:
    """`from trio import CancelScope [as name]`: {library: name}."""
    if node.module not in LIBRARIES or node.level:
        return {}
    names = [alias.asname or alias.name for alias in node.names if alias.name == "CancelScope"]
    return {node.module: names[0]} if names else {}  # type: ignore[dict-item]


def shield_scope(scopes: dict[str, str], function_code: str) -> tuple[str, str] | None:
    """The (scope expression, library) for one function: the library it spells out when the
    module has both, else anyio's (its scope works on either backend)."""
    named = [lib for lib in LIBRARIES if lib in scopes and f"{lib}." in function_code]
    for library in [*named, *LIBRARIES]:
        if library in scopes:
            return scopes[library], library
    return None


def _project(
    tree: ast.Module,
    path: str,
    settings: GateConfig,
    summaries: ProjectSummaries | None,
    source: bytes,
) -> ProjectView:
    """The project as the file rules saw it, with this text's own summary in place of the
    file's (a fix changes what its functions do)."""
    try:
        own = summarise_module(tree, path, vocabulary_of(settings.teardown), source=source)
    except RecursionError:
        own = None
    name = module_name(path)
    project = summaries or ProjectSummaries()
    modules = [m for m in project.modules if m.module != name]
    if own is not None:
        modules.append(own)
    index = ProjectIndex(modules, project.callers_known, project.sources, config=settings.teardown)
    return ProjectView(index, name)


def analyse(
    path: str, text: str, settings: GateConfig, summaries: ProjectSummaries | None = None
) -> Analysed | None:
    """The teardown analysis of `text`, as the file rules run it (awaited callees resolved in
    the project's `summaries`); None when it does not parse (with `ast`, or with libcst)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    data = text.encode("utf-8", "surrogateescape")
    aliases = exception_aliases(tree, data)
    spans, level_triggered, candidates = teardown_functions(
        tree, data, settings, aliases, path=path
    )
    with aliases_in_force(aliases):
        project = _project(tree, path, settings, summaries, data)
        try:
            analysis = analyse_file(
                path, text, spans, level_triggered, candidates, settings, project
            )
        except (AnalysisError, RecursionError):
            return None
    trees: dict[int, FunctionTree] = {}
    for snippet in analysis.node_snippets.values():
        assert isinstance(snippet, Snippet)
        if id(snippet) not in trees:
            trees[id(snippet)] = FunctionTree(snippet)

    def locate(node: object) -> Location:
        found = trees[id(analysis.node_snippets[id(node)])].span(node)  # type: ignore[arg-type]
        return Location(path, found.line, found.column, found.end_line, found.end_column)

    findings = judge(analysis, locate)
    return Analysed(analysis, trees, findings, level_triggered, _shield_scopes(tree))
