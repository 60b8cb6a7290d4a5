"""The package a user installs: the sdist and the wheel built from this tree,
the wheel installed into a fresh virtual environment outside the repository, for this
Python and for every other Python the project claims (3.10-3.13) found on the machine,
and the README's commands run from another folder: ``--version``, the demo, a UTS and a
clique search, ``reproduce all --quick``, a sweep with ``--out``, ``resume`` and a script
on the public API, every figure checked (tests/package/wheel_check.py says how).  The
first Python gets every step, the others a smoke check (install, nothing but
``stealsearch`` at the top of site-packages, a warning-free compile, ``--version``, a UTS
count; the newest also a clique on 2 Dask workers with every warning shown).

The steps run in one background process started before the first test
(tests/conftest.py); each test here waits for its step's record."""
import os

import pytest

import wheel_check
from wheel_check import wait_for_record

PYTHONS = wheel_check.claimed_pythons()
CASES = [(py, step) for i, py in enumerate(PYTHONS)
         for step in wheel_check.steps_for(i, len(PYTHONS))]
#: the whole check takes ~4 min on the first Python and ~1 min on each other one on a
#: quiet 2-core machine; the wait allows for a loaded one
WAIT = 2400


def _label(case):
    py, step = case
    return f"{os.path.basename(os.path.dirname(os.path.dirname(py)))}-{step}"


@pytest.mark.timeout(WAIT + 60)
@pytest.mark.parametrize("python,step", CASES, ids=[_label(c) for c in CASES])
def test_installed_package(wheel_check, python, step):
    record = wait_for_record(wheel_check, lambda r: r["python"] == python and r["step"] == step,
                             f"a record of {step} on {python}", WAIT)
    assert record["ok"], f"{step} on {python}: {record['detail']}"
