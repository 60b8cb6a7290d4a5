"""Complete problems in every tier, each runnable as ``python examples/NAME.py`` (see
docs/writing-a-problem.md); tests/examples/test_examples.py runs them all."""
