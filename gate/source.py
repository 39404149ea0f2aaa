"""Reading a Python source the way Python does: its declared encoding, its lines (split only on
`\\n`, `\\r\\n` and `\\r`, as the tokenizer and `ast` line numbers count them, never on the form
feeds and Unicode separators `str.splitlines` also splits on), and its `# noqa` comments (real
comments only, never text inside a string)."""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from collections.abc import Iterable, Iterator, Mapping

from gate.model import Finding

_NEWLINE = re.compile(r"(\r\n|\r|\n)")
NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)

# line -> the codes a noqa comment on it names; None for a bare one (every code)
Suppressions = Mapping[int, "frozenset[str] | None"]


def decode(data: bytes) -> str:
    """The file's text in its declared encoding (PEP 263), UTF-8 with replacement otherwise."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return data.decode("utf-8", "replace")


def word_positions(text: str, name: str) -> Iterator[int]:
    """Where `name` appears in the text as a word (not inside a longer name): a plain search
    for the name, then a look at its neighbours, several times quicker than a regex with
    lookarounds on big files."""
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        before = text[at - 1] if at else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
            yield at
        at = text.find(name, at + 1)


def source_lines(text: str) -> list[str]:
    """The lines of `text` with their endings, numbered as Python numbers them."""
    parts = _NEWLINE.split(text)
    lines = [parts[i] + parts[i + 1] for i in range(0, len(parts) - 1, 2)]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _codes(comment: str) -> frozenset[str] | bool | None:
    """The codes of a noqa comment, None for a bare one, False when it is not one."""
    match = NOQA.search(comment)
    if match is None:
        return False
    codes = match.group("codes")
    return frozenset(re.split(r"[\s,]+", codes.upper())) if codes else None


def suppressions(text: str, tree: ast.Module | None = None) -> dict[int, frozenset[str] | None]:
    """Every `# noqa` comment of the source, by line. Only comment tokens count; a source the
    tokenizer rejects is read line by line instead. With the source's `ast` tree, the lines a
    noqa comment can be on are read alone, the strings on them known from the tree; the whole
    source is tokenized only when such a line meets a string that spans lines."""
    if "noqa" not in text:
        return {}
    known = _comment_suppressions(text, tree) if tree is not None else None
    if known is not None:
        return known
    found: dict[int, frozenset[str] | None] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                codes = _codes(token.string)
                if codes is not False:
                    found[token.start[0]] = codes  # type: ignore[assignment]
    except (tokenize.TokenError, SyntaxError):
        found = {}
        for number, line in enumerate(source_lines(text), start=1):
            codes = _codes(line)
            if codes is not False:
                found[number] = codes  # type: ignore[assignment]
    return found


def _comment_suppressions(text: str, tree: ast.Module) -> dict[int, frozenset[str] | None] | None:
    """What `suppressions` finds, from the lines (split as `tokenize` reads a source with no
    carriage return) where a noqa comment can be: a comment starts at the first `#` of the line
    outside its strings. None when a string on such a line spans lines, or the text has a
    carriage return (`tokenize` reads lines of its own then)."""
    if "\r" in text:
        return None
    lines = text.split("\n")
    wanted = [number for number, line in enumerate(lines, start=1) if NOQA.search(line)]
    strings = _strings_on(tree, wanted)
    if strings is None:
        return None
    found: dict[int, frozenset[str] | None] = {}
    for number in wanted:
        comment = _comment(lines[number - 1], strings.get(number, []))
        codes = _codes(comment) if comment is not None else False
        if codes is not False:
            found[number] = codes  # type: ignore[assignment]
    return found


def _comment(line: str, strings: list[tuple[int, int]]) -> str | None:
    """The comment of a line whose strings lie at these UTF-8 byte ranges: from its first `#`
    outside them to the end."""
    data = line.encode("utf-8")  # `ast` columns count UTF-8 bytes
    start = data.find(b"#")
    while start >= 0 and any(first <= start < last for first, last in strings):
        start = data.find(b"#", start + 1)
    return data[start:].decode("utf-8") if start >= 0 else None


_STRING_TYPES = tuple(
    kind for kind in (getattr(ast, "JoinedStr", None), getattr(ast, "TemplateStr", None)) if kind
)


def _strings_on(tree: ast.Module, wanted: list[int]) -> dict[int, list[tuple[int, int]]] | None:
    """The column ranges of the string literals on each of the `wanted` lines (sorted), entering
    only the nodes whose lines meet one of them; None when one of those strings spans lines."""
    found: dict[int, list[tuple[int, int]]] = {}
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        lines = _lines(node)
        if lines is not None:
            start, end = lines
            at = bisect.bisect_left(wanted, start)
            if at == len(wanted) or wanted[at] > end:
                continue  # no wanted line in it, so none of its strings is on one
            if _is_string(node):
                if start != end:
                    return None
                found.setdefault(start, []).append((node.col_offset, node.end_col_offset))  # type: ignore[attr-defined]
                continue
        pending.extend(ast.iter_child_nodes(node))
    return found


def _lines(node: ast.AST) -> tuple[int, int] | None:
    """The first and last line of a node with a position (decorators included)."""
    start = getattr(node, "lineno", None)
    if start is None:
        return None
    for decorator in getattr(node, "decorator_list", ()):
        start = min(start, decorator.lineno)
    return start, node.end_lineno or start  # type: ignore[attr-defined]


def _is_string(node: ast.AST) -> bool:
    """A string literal: a str or bytes constant, an f-string (not entered), a t-string."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str | bytes)
    return isinstance(node, _STRING_TYPES)


def suppressed(finding: Finding, noqa: Suppressions) -> bool:
    """Does a `# noqa` on the finding's line cover its code?"""
    if finding.location.line not in noqa:
        return False
    codes = noqa[finding.location.line]
    return codes is None or finding.code in codes


def without_suppressed(findings: Iterable[Finding], noqa: Suppressions) -> list[Finding]:
    return [finding for finding in findings if not suppressed(finding, noqa)]
