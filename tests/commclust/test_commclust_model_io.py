"""Validation and readers/writers of communication tables (seed 002, section 2)."""
import numpy as np
import pytest

from stealsearch.engine.core.errors import InputError
from stealsearch.problems.commclust import (CommTableError, paper_table1, parse_trace, read_table,
                                validate_table, write_table_csv, write_trace)
from stealsearch.problems.commclust.io import parse_csv_table
from stealsearch.problems.commclust.model import canonical_partition, exchanged_table, labels_to_clusters


def test_commclust_error_is_input_error():
    assert issubclass(CommTableError, InputError)


@pytest.mark.parametrize("table, fragment", [
    ([[1, 2, 3], [4, 5, 6]], "not square (2 rows x 3 columns)"),
    ([[0, 1], [-2, 0]], "negative value -2 at row 1, col 0"),
    ([[0, float("nan")], [1, 0]], "non-finite value nan at row 0, col 1"),
    ([[0, float("inf")], [1, 0]], "non-finite value inf at row 0, col 1"),
    ([[0, 1], [1]], "rows of different lengths"),
    ([[5]], "at least 2 processes"),
    ([[3, 0], [0, 4]], "no traffic between distinct processes"),
    ([["a", "b"], ["c", "d"]], "numeric"),
    (np.zeros((2, 2, 2)), "2-D"),
])
def test_commclust_validate_rejects(table, fragment):
    with pytest.raises(CommTableError) as err:
        validate_table(table, source="t")
    msg = str(err.value)
    assert fragment in msg and msg.startswith("t: ") and "\n" not in msg


def test_commclust_exchanged_is_symmetric_sum():
    e = exchanged_table(paper_table1())
    assert e[0, 1] == e[1, 0] == 2533
    assert np.all(np.diag(e) == 0) and np.allclose(e, e.T)
    assert int((e == 2533).sum() // 2) == 6       # the paper's "6 pairs ... 2533 messages"


def test_commclust_csv_with_paper_header_and_labels(tmp_path):
    rows = ["No.\t" + "\t".join(map(str, range(8)))]
    rows += [f"{i}\t" + "\t".join(map(str, r)) for i, r in enumerate(paper_table1().tolist())]
    path = tmp_path / "table1.txt"
    path.write_text("# CG, 8 processes\n" + "\n".join(rows) + "\n")
    assert np.array_equal(read_table(str(path)), paper_table1())


def test_commclust_csv_roundtrip_and_npy(tmp_path):
    t = paper_table1()
    write_table_csv(t, str(tmp_path / "t.csv"))
    assert np.array_equal(read_table(str(tmp_path / "t.csv")), t)
    np.save(tmp_path / "t.npy", t)
    assert np.array_equal(read_table(str(tmp_path / "t.npy")), t)
    real = np.array([[0.5, 1.25], [2.0, 0.0]])
    write_table_csv(real, str(tmp_path / "r.csv"))
    assert np.array_equal(read_table(str(tmp_path / "r.csv")), real)


def test_commclust_trace_sums_pairs_and_roundtrips(tmp_path):
    text = "# events\n0 1\n0 1\n1 0 3\n2 0 1.5  # bytes\n"
    t = parse_trace(text, source="x.trace")
    assert t.tolist() == [[0, 2, 0], [3, 0, 0], [1.5, 0, 0]]
    write_trace(paper_table1(), str(tmp_path / "t.trace"))
    assert np.array_equal(read_table(str(tmp_path / "t.trace")), paper_table1())
    t2 = parse_trace("processes 5\n0 1 4\n")
    assert t2.shape == (5, 5)


@pytest.mark.parametrize("text, fragment", [
    ("0 1\n0 1 2 3\n", "line 2: expected 'src dst [count]'"),
    ("0 -1 2\n", "line 1, col 1: process id must be an integer"),
    ("0 1 -2\n", "line 1, col 2: negative count -2"),
    ("0 1 nan\n", "line 1, col 2: bad count"),
    ("processes 2\n0 3\n", "line 2: process 3 >= processes 2"),
    ("# nothing\n", "no events"),
    ("1 1 5\n", "no traffic between distinct processes"),
])
def test_commclust_trace_errors(text, fragment):
    with pytest.raises(CommTableError) as err:
        parse_trace(text, source="x.trace")
    assert fragment in str(err.value) and str(err.value).startswith("x.trace")


@pytest.mark.parametrize("text, fragment", [
    ("1,2,3\n4,5,6\n", "not square"),
    ("0,1\n1\n", "line 2: 1 values, expected 2"),
    ("0,1\n-1,0\n", "line 2, col 0: negative value -1"),
    ("0,1\nnan,0\n", "line 2, col 0: non-finite"),
    ("0,1\n1,x\n", "line 2, col 1: not a number"),
    ("", "empty table"),
])
def test_commclust_csv_errors(text, fragment):
    with pytest.raises(CommTableError) as err:
        parse_csv_table(text, source="f.csv")
    assert fragment in str(err.value)


def test_commclust_read_errors(tmp_path):
    with pytest.raises(CommTableError, match="no such file"):
        read_table(str(tmp_path / "missing.csv"))
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"not numpy")
    with pytest.raises(CommTableError, match="not a readable .npy"):
        read_table(str(bad))


def test_commclust_partition_helpers():
    assert canonical_partition([[7, 5], [3, 1, 2]]) == ((1, 2, 3), (5, 7))
    assert labels_to_clusters([2, 0, 2, 1]) == [[0, 2], [1], [3]]
