"""gate's fixes: rewrite a teardown region so that an interrupt no longer skips its steps.

`source.fix_source` is pure, from (source text, findings) to the findings with their `Fix` and
the fixed text; `files` reads and writes the checked files for `gate check --fix`.
"""
