"""One small pure renderer per output format, in a registry keyed by format name."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from gate.report.context import ReportContext

Renderer = Callable[[ReportContext], str]


def _renderer(module: str, function: str = "render") -> Renderer:
    """The renderer `function` of `gate.report.<module>`, imported when first used: a run
    prints one format, and some renderers import large modules (junit: xml.etree)."""

    def render(context: ReportContext) -> str:
        loaded = importlib.import_module(f"gate.report.{module}")
        return str(getattr(loaded, function)(context))

    return render


RENDERERS: dict[str, Renderer] = {
    "text": _renderer("text"),
    "json": _renderer("json_format"),
    "github": _renderer("github"),
    "sarif": _renderer("sarif"),
    "rdjson": _renderer("rdjson"),
    "rdjsonl": _renderer("rdjson", "render_lines"),
    "gitlab": _renderer("gitlab"),
    "markdown": _renderer("markdown"),
    "junit": _renderer("junit"),
}

# The formats that carry gate's fixes: the command line plans them only for these.
CARRIES_FIXES = frozenset({"markdown", "rdjson", "rdjsonl", "sarif"})
