"""The text of the project's Python files, searched for a name on demand.

Summaries answer what a run asks of its callees. A few questions need the sources themselves:
when single files are checked, does any file the run did not read mention a function's name (if
none does, its callers are all in the files read); does any holder of a lock keep it across a
suspension. They are rare, so the files are found and read only when one is asked, once per
process, and a project too large to read answers "cannot say".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gate.config import GateConfig, LoadedConfig
from gate.discovery import SourceFile, UsageError, discover
from gate.source import decode, word_positions

# Beyond these, a search says nothing rather than read a whole checkout of unrelated code
MAX_FILES = 20_000
MAX_BYTES = 128 * 1024 * 1024


def has_word(text: str, name: str) -> bool:
    """Does `name` appear in the text as a word (not inside a longer name)?"""
    return next(word_positions(text, name), None) is not None


class ProjectSources:
    """The project's Python files (as `gate check` of its root discovers them, and the run's
    own files), read when first searched; with no root, the run's files alone."""

    def __init__(
        self, root: Path | None, settings: GateConfig, files: Sequence[SourceFile] = ()
    ) -> None:
        self.root = root
        self.settings = settings
        self.files = list(files)
        self._texts: list[tuple[str, str]] | None = None
        self._readable = True
        self._found: dict[str, list[tuple[str, str]] | None] = {}

    def mentioning(self, name: str) -> list[tuple[str, str]] | None:
        """(project-relative path, text) of every project source that mentions `name` as a
        word; None when the project's sources cannot all be read."""
        if name not in self._found:
            texts = self._read()
            if texts is None:
                self._found[name] = None
            else:
                self._found[name] = [(path, text) for path, text in texts if has_word(text, name)]
        return self._found[name]

    def _read(self) -> list[tuple[str, str]] | None:
        if self._texts is None and self._readable:
            self._texts = self._load()
            self._readable = self._texts is not None
        return self._texts

    def _load(self) -> list[tuple[str, str]] | None:
        found: list[SourceFile] = []
        if self.root is not None:
            try:
                found = discover([self.root], LoadedConfig(self.settings, None, self.root)).files
            except (UsageError, OSError):
                return None
        by_path = {source.relative: source for source in [*found, *self.files]}
        if len(by_path) > MAX_FILES:
            return None
        texts, size = [], 0
        for relative, source in sorted(by_path.items()):
            try:
                data = source.path.read_bytes()
            except OSError:
                return None  # a file that cannot be read may mention anything
            size += len(data)
            if size > MAX_BYTES:
                return None
            texts.append((relative, decode(data)))
        return texts
