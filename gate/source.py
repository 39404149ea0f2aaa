"""Reading a Python source the way Python does: its declared encoding, its lines (split only on
`\\n`, `\\r\\n` and `\\r`, as the tokenizer and `ast` line numbers count them, never on the form
feeds and Unicode separators `str.splitlines` also splits on), and its `# noqa` comments (real
comments only, never text inside a string)."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Mapping

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


def suppressions(text: str) -> dict[int, frozenset[str] | None]:
    """Every `# noqa` comment of the source, by line. Only comment tokens count; a source the
    tokenizer rejects is read line by line instead."""
    if "noqa" not in text:
        return {}
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


def suppressed(finding: Finding, noqa: Suppressions) -> bool:
    """Does a `# noqa` on the finding's line cover its code?"""
    if finding.location.line not in noqa:
        return False
    codes = noqa[finding.location.line]
    return codes is None or finding.code in codes


def without_suppressed(findings: Iterable[Finding], noqa: Suppressions) -> list[Finding]:
    return [finding for finding in findings if not suppressed(finding, noqa)]
