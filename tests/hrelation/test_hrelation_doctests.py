"""The docstring examples of problems.hrelation are part of the contract: run them."""
import doctest
import importlib

import pytest

MODULES = ["model", "schedule", "verify", "colouring", "two_relation", "algorithms", "bounds",
           "generators", "sweep"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"problems.hrelation.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
