"""The docstring examples of problems.twolevel are run, so they stay true."""
import doctest
import importlib

import pytest

MODULES = ["model", "io", "algorithm", "verify", "generators", "sweep", "gantt"]


@pytest.mark.parametrize("name", MODULES)
def test_twolevel_docstring_examples(name):
    module = importlib.import_module(f"problems.twolevel.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
