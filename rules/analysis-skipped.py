# Annotated example for GATE902 analysis-skipped: valid Python that libcst rejects.
async def run(job):
    # ruleid: analysis-skipped
    (total): int = 0
    try:
        await job.run()
    finally:
        job.cleanup(total)
