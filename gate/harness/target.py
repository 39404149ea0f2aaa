"""Resolve `path/to/file.py:function` or `package.module:function` to the function."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


class TargetError(Exception):
    """A target that cannot be loaded; the message says which part is wrong."""


def load(spec: str) -> Callable[..., Any]:
    """The function a target names; raises TargetError."""
    module_part, sep, name = spec.rpartition(":")
    if not sep or not module_part or not name:
        raise TargetError(f"{spec!r}: expected path/to/file.py:function or package.module:function")
    if module_part.endswith(".py") or "/" in module_part or "\\" in module_part:
        module = _load_file(Path(module_part), spec)
    else:
        _import_from_cwd()
        try:
            module = importlib.import_module(module_part)
        except Exception as error:
            raise TargetError(f"{spec!r}: cannot import {module_part}: {error}") from None
    function = _attribute(module, name, spec, module_part)
    if not callable(function):
        raise TargetError(f"{spec!r}: {name} is not callable")
    return function  # type: ignore[return-value]


def _import_from_cwd() -> None:
    """Let `package.module` resolve against the current directory, as `python -m gate` does.

    The `gate` console script starts with its own directory on the path instead.
    """
    cwd = os.getcwd()
    if "" not in sys.path and cwd not in sys.path:
        sys.path.insert(0, cwd)


def _attribute(module: Any, name: str, spec: str, module_part: str) -> Any:
    found = module
    for part in name.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise TargetError(f"{spec!r}: {module_part} has no attribute {name!r}")
    return found


def _load_file(path: Path, spec: str) -> Any:
    if not path.is_file():
        raise TargetError(f"{spec!r}: no such file {path}")
    resolved = path.resolve()
    module_name = f"_gate_target_{abs(hash(str(resolved)))}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    # Let the scenario import its neighbours (`from orchestrator import ...`).
    if str(resolved.parent) not in sys.path:
        sys.path.insert(0, str(resolved.parent))
    loader_spec = importlib.util.spec_from_file_location(module_name, resolved)
    if loader_spec is None or loader_spec.loader is None:
        raise TargetError(f"{spec!r}: cannot load {path}")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module
    try:
        loader_spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:
        del sys.modules[module_name]
        raise TargetError(
            f"{spec!r}: importing {path} failed: {type(error).__name__}: {error}"
        ) from None
    return module
