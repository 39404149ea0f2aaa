# Annotated example for GATE900 syntax-error: the file does not parse.
async def run(self):
    try:
        await self.evaluate()
    finally:
        # ruleid: syntax-error
        self.cleanup(
