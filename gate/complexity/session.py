"""Everything the ratchet needs from outside the measurements: the baseline file and git."""

from __future__ import annotations

import ast
import functools
import warnings
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from gate import git
from gate.baseline_file import judged_paths, relative_to
from gate.complexity.baseline import (
    Baseline,
    check_radon_version,
    key_lines,
    read_baseline,
)
from gate.complexity.measure import FunctionComplexity, body_hash_at, measure
from gate.complexity.ratchet import RatchetInputs, key_path
from gate.config import LoadedConfig
from gate.fsutil import display_path


def _tree(data: bytes, path: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile(data, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError):
        return None


def measure_source(data: bytes, path: str) -> dict[str, FunctionComplexity]:
    """Measurements of a file's bytes (an older version from git); {} when it does not parse."""
    tree = _tree(data, path)
    return {} if tree is None else {function.key: function for function in measure(tree, path)}


class ComplexitySession:
    """The baseline of one configured project, and what git says about earlier versions."""

    def __init__(self, loaded: LoadedConfig, base: str | None = None) -> None:
        self.root = loaded.root
        self.config = loaded.settings.complexity
        self.path = (self.root / self.config.baseline).resolve()
        self.shown = display_path(self.path)
        self.base = base
        self._previous_at = cache(self._measure_at)
        self._current_tree = cache(self._read_tree)

    def relative(self, path: Path) -> str:
        """`path` relative to the project root, POSIX style: the key's path part."""
        return relative_to(self.root, path)

    def read(self, check_version: bool = True, merge_conflicts: bool = False) -> Baseline | None:
        baseline = read_baseline(self.path, self.shown, merge_conflicts)
        if baseline is not None and check_version:
            check_radon_version(baseline, self.shown)
        return baseline

    # -- git
    @functools.cached_property
    def baseline_commit(self) -> str | None:
        relative = self.relative(self.path)
        return git.last_commit(self.root, relative) or git.head(self.root)

    def renamed(self, functions: dict[str, int]) -> dict[str, str]:
        """File renames since the baseline was written, for entries whose file is gone."""
        gone = {key_path(key) for key in functions if not (self.root / key_path(key)).exists()}
        if not gone:
            return {}
        commit = self.baseline_commit
        if commit is None:
            return {}
        return git.renamed_away(self.root, commit, gone)

    def _read_tree(self, path: str) -> ast.Module | None:
        try:
            data = (self.root / path).read_bytes()
        except OSError:
            return None
        return _tree(data, path)

    def body_hash(self, function: FunctionComplexity) -> str:
        """The body hash of a function measured in this run without one: its file is read and
        parsed again (the first stage does not hash bodies; a rename is rarely looked for)."""
        tree = self._current_tree(function.path)
        return "" if tree is None else body_hash_at(tree, function.line, function.column)

    def _measure_at(self, commit: str, path: str) -> dict[str, FunctionComplexity] | None:
        data = git.show(self.root, commit, path)
        return None if data is None else measure_source(data, path)

    @functools.cached_property
    def previous_commit(self) -> str | None:
        if self.base is not None:
            return git.merge_base(self.root, self.base)
        return git.head(self.root)

    def inputs(
        self,
        baseline: Baseline | None,
        judged_paths: set[str],
    ) -> RatchetInputs:
        functions = dict(baseline.functions) if baseline is not None else {}
        previous_commit = self.previous_commit
        baseline_commit = self.baseline_commit if functions else None

        def previous(key: str) -> int | None:
            assert previous_commit is not None
            measured = self._previous_at(previous_commit, key_path(key))
            found = (measured or {}).get(key)
            return None if found is None else found.complexity

        def vanished_body(key: str) -> str | None:
            if baseline_commit is None:
                return None
            measured = self._previous_at(baseline_commit, key_path(key))
            found = (measured or {}).get(key)
            return None if found is None else found.body_hash

        return RatchetInputs(
            baseline=functions,
            judged_paths=judged_paths,
            baseline_path=self.relative(self.path),
            baseline_lines=key_lines(self.path) if functions else {},
            renamed=self.renamed(functions),
            previous=previous if previous_commit is not None else None,
            vanished_bodies=vanished_body if baseline_commit is not None else None,
            body_hash=self.body_hash,
        )

    def judged_paths(
        self, measured_paths: Iterable[str], arguments: Sequence[Path], functions: Iterable[str]
    ) -> set[str]:
        """The measured files, plus baselined files under a directory argument that are gone."""
        return judged_paths(self.root, measured_paths, arguments, map(key_path, functions))
