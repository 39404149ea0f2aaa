# Annotated examples for GATE201 complexity-regressed, judged against
# complexity-regressed.baseline.json beside this file.


class Orchestrator:
    # ruleid: complexity-regressed
    def run(self, a, b, c, d, e, f, g, h, i, j, k):
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
        if k and a:
            return 11
        return 0

    # ok: complexity-regressed
    def steady(self, a, b, c, d, e, f, g, h, i, j):
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
