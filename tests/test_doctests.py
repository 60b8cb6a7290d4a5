"""Every docstring example in the project runs, so the examples stay true."""
import doctest
import importlib
import pkgutil

import pytest

import stealsearch
import stealsearch.engine
import stealsearch.problems


def _modules():
    names = []
    for pkg in (stealsearch.engine, stealsearch.problems, stealsearch):
        names.append(pkg.__name__)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=pkg.__name__ + "."):
            if not info.name.endswith("__main__"):
                names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
