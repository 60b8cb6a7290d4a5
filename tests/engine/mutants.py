"""Deliberately wrong problems (importable by spawned Dask workers through
tests/engine/conftest.py's PYTHONPATH): the engine's verify guard must reject them."""
from examples.subset_sum import SubsetSum
from stealsearch.problems.liquid import ColouringProblem


class WrongDecodeSubsetSum(SubsetSum):
    """The raw-tier subset sum whose decode drops the last taken item: the subset no
    longer sums to the kernel's value."""
    name = "subset-sum-wrong-decode"

    def decode(self, buf, value):
        items = super().decode(buf, value)
        return items[:-1]


class _ForcedDecodeColouring(ColouringProblem):
    """The initial incumbent is one step worse than DSATUR's, so the kernel always
    reports an improvement and ``decode`` runs (otherwise DSATUR's schedule stands)."""

    def initial_incumbent(self):
        return super().initial_incumbent() - 1


class DroppedStepColouring(_ForcedDecodeColouring):
    """Liquid colouring whose decode drops the last step (its transfers vanish)."""
    name = "liquid-colouring-dropped-step"

    def decode(self, solution, value):
        return super().decode(solution, value)[:-1]


class SplitStepColouring(_ForcedDecodeColouring):
    """Liquid colouring whose decode splits the largest step in two: still a valid
    schedule of every transfer, but one step longer than the kernel's objective."""
    name = "liquid-colouring-split-step"

    def decode(self, solution, value):
        steps = super().decode(solution, value)
        big = max(range(len(steps)), key=lambda s: len(steps[s]))
        steps.append([steps[big].pop()])
        return steps
