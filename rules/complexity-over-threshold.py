# Annotated examples for GATE200 complexity-over-threshold (default threshold 10, no baseline).


# ruleid: complexity-over-threshold
def eleven(a, b, c, d, e, f, g, h, i, j):
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


# ok: complexity-over-threshold
def ten(a, b, c, d, e, f, g, h, i):
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
    return 0


# ok: complexity-over-threshold
def hides_branches_in_a_closure(items):
    # ruleid: complexity-over-threshold
    def pick(x):
        return (
            1 if x == 1 else 2 if x == 2 else 3 if x == 3 else 4 if x == 4 else 5 if x == 5
            else 6 if x == 6 else 7 if x == 7 else 8 if x == 8 else 9 if x == 9 else 10 if x == 10
            else 0
        )

    return [pick(x) for x in items]


class Handler:
    # ruleid: complexity-over-threshold
    async def handle(self, event):
        match event:
            case "a":
                return 1
            case "b":
                return 2
            case "c":
                return 3
            case "d":
                return 4
            case "e":
                return 5
            case "f" if self.ready:
                return 6
            case "g" | "h":
                return 7
            case _:
                return 0 if event and self.strict or self.loose else 1
