"""Shielding that comes from the callers: a helper region awaited only from shielded awaits is
shielded too, as is every region of a function that every place in the project shields
(`ProjectIndex.shielded_by_callers`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import libcst as cst

from gate.analysis.facts import InterruptPoint, Region, RegionKind

# The awaits of a region that run a helper of the module: (await node, the helper's `def` line).
HelperCalls = Callable[[Region], list[tuple[cst.CSTNode, int]]]


def shielded(region: Region) -> Region:
    """The region with every interrupt point shielded (a cancel cannot land in it)."""

    def shield(point: InterruptPoint) -> InterruptPoint:
        return dataclasses.replace(point, shielded=True, guarded=True)

    steps = tuple(
        dataclasses.replace(step, points=tuple(map(shield, step.points))) for step in region.steps
    )
    return dataclasses.replace(region, points=tuple(map(shield, region.points)), steps=steps)


def shield_helpers(
    regions: list[Region], helper_calls: HelperCalls, def_line: Callable[[Region], int]
) -> list[Region]:
    """Shield each helper region whose every awaiting point, in every region of the module that
    awaits it, is shielded (repeated until nothing changes: helpers await helpers)."""
    regions = list(regions)
    changed = True
    while changed:
        changed = False
        for index, region in enumerate(regions):
            if region.kind is RegionKind.HELPER and not _all_shielded(region):
                awaits = _awaiting_points(regions, helper_calls, def_line(region))
                if awaits and all(point is not None and point.shielded for point in awaits):
                    regions[index] = shielded(region)
                    changed = True
    return regions


def _awaiting_points(
    regions: list[Region], helper_calls: HelperCalls, line: int
) -> list[InterruptPoint | None]:
    """The points of the module's regions that await the helper defined at `line`."""
    return [
        _point(caller, node)
        for caller in regions
        for node, called in helper_calls(caller)
        if called == line
    ]


def reraising_callers(
    regions: list[Region], helper_calls: HelperCalls, def_line: Callable[[Region], int]
) -> list[Region]:
    """Mark each helper region whose every awaiting point, in the module's regions, sits in a
    handler only a cancel enters that ends by raising (`except CancelledError: await
    drain(task); raise`): a cancel the helper keeps to itself and returns from is raised again by
    its caller, as a cancel. (A handler that any error enters would raise that error instead.)"""
    marked = []
    for region in regions:
        if region.kind is RegionKind.HELPER:
            awaits = _awaiting_points(regions, helper_calls, def_line(region))
            if awaits and all(point is not None and point.reraises_cancel for point in awaits):
                region = dataclasses.replace(region, reraised_by_callers=True)
        marked.append(region)
    return marked


def _all_shielded(region: Region) -> bool:
    return all(point.shielded for point in region.points)


def _point(region: Region, node: cst.CSTNode) -> InterruptPoint | None:
    return next((point for point in region.points if point.node is node), None)
