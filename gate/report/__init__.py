"""One small pure renderer per output format, in a registry keyed by format name."""

from __future__ import annotations

from collections.abc import Callable

from gate.report import json_format, text
from gate.report.context import ReportContext

Renderer = Callable[[ReportContext], str]

RENDERERS: dict[str, Renderer] = {
    "text": text.render,
    "json": json_format.render,
}
