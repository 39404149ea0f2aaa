# Annotated example for GATE902 analysis-skipped: valid Python that libcst rejects.
# ruleid: analysis-skipped
(total): int = 0


async def run(job):
    try:
        await job.run()
    finally:
        job.cleanup()
