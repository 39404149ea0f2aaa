"""One small pure renderer per output format, in a registry keyed by format name."""

from __future__ import annotations

from collections.abc import Callable

from gate.report import github, gitlab, json_format, junit, markdown, rdjson, sarif, text
from gate.report.context import ReportContext

Renderer = Callable[[ReportContext], str]

RENDERERS: dict[str, Renderer] = {
    "text": text.render,
    "json": json_format.render,
    "github": github.render,
    "sarif": sarif.render,
    "rdjson": rdjson.render,
    "rdjsonl": rdjson.render_lines,
    "gitlab": gitlab.render,
    "markdown": markdown.render,
    "junit": junit.render,
}

# The formats that carry gate's fixes: the command line plans them only for these.
CARRIES_FIXES = frozenset({"markdown", "rdjson", "rdjsonl", "sarif"})
