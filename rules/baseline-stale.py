# Annotated examples for GATE202 baseline-stale, judged against baseline-stale.baseline.json
# beside this file (which also holds an entry for a function that no longer exists).


# ruleid: baseline-stale
def improved(a, b, c, d, e, f, g, h, i, j):
    if a:
        return 1
    if b:
        return 2
    if c:
        return 3
    if d:
        return 4
    if e:
        return 5
    if f:
        return 6
    if g:
        return 7
    if h:
        return 8
    if i:
        return 9
    if j:
        return 10
    return 0


# ruleid: baseline-stale
def now_within_threshold(a, b):
    if a:
        return 1
    if b:
        return 2
    return 0


# ok: baseline-stale
def unchanged(a, b, c, d, e, f, g, h, i, j):
    if a:
        return 1
    if b:
        return 2
    if c:
        return 3
    if d:
        return 4
    if e:
        return 5
    if f:
        return 6
    if g:
        return 7
    if h:
        return 8
    if i:
        return 9
    if j:
        return 10
    return 0
