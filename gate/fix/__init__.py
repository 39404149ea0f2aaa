"""gate's fixes: rewrite a teardown region so that an interrupt no longer skips its steps.

`source.fix_source` is pure, from (source text, findings) to the findings with their `Fix` and
the fixed text: `analysed` runs the analysis again as the file rules do, `plan` matches each
finding to its facts and decides what is safe, `component` turns a region's plan into edits and
a Fix, `rewrite` is the libcst transformer, `tree` the parents and positions of a function.
`files` reads and writes the checked files for `gate check --fix` and `--show-fixes`.
"""
