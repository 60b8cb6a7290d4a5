"""Model, validation and readers/writers of stealsearch.problems.hrelation (seed 001, §1)."""
import json

import numpy as np
import pytest

from stealsearch.engine.core.errors import InputError
from stealsearch.problems.hrelation import (HRelation, HRelationInputError, read_messages,
                                validate_messages, write_messages)


def test_h_is_largest_send_plus_receive():
    r = HRelation.from_matrix([[0, 2, 0], [0, 0, 1], [3, 0, 0]])
    assert r.loads().tolist() == [5, 3, 4]
    assert r.h == 5 and r.P == 3 and r.total_packets == 6


def test_error_class_is_an_input_error():
    assert issubclass(HRelationInputError, InputError)


@pytest.mark.parametrize("matrix, words", [
    ([[0, 1, 2], [1, 0, 2]], "square"),
    ([[0, -1], [1, 0]], "row 0, col 1: negative"),
    ([[1, 1], [1, 0]], "row 0, col 0: diagonal"),
    ([[0, 1.5], [1, 0]], "row 0, col 1"),
    ([[0, 1], [1]], "different lengths"),
    (np.zeros((0, 0)), "empty"),
    ([["a", "b"], ["c", "d"]], "integers"),
])
def test_validation_errors_name_the_cell(matrix, words):
    with pytest.raises(HRelationInputError) as e:
        validate_messages(matrix, "M")
    assert words in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("suffix", [".csv", ".npy", ".json"])
def test_round_trip(tmp_path, suffix):
    m = np.array([[0, 3, 0, 1], [2, 0, 0, 0], [0, 0, 0, 7], [1, 1, 1, 0]])
    path = tmp_path / f"m{suffix}"
    write_messages(m, path)
    assert read_messages(path).messages.tolist() == m.tolist()


def test_csv_comments_and_errors(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text("# two PEs\n0, 4\n5, 0\n")
    assert read_messages(p).h == 9
    p.write_text("0,1\n1,0,2\n")
    with pytest.raises(HRelationInputError, match="line 2: 3 entries"):
        read_messages(p)
    p.write_text("0,1,1\n1,0,2\n")
    with pytest.raises(HRelationInputError, match="square"):
        read_messages(p)
    p.write_text("0,-3\n1,0\n")
    with pytest.raises(HRelationInputError, match="row 0, col 1: negative"):
        read_messages(p)


def test_json_forms_and_errors(tmp_path):
    p = tmp_path / "a.json"
    p.write_text(json.dumps([[0, 1], [1, 0]]))
    assert read_messages(p).h == 2
    p.write_text(json.dumps({"messages": [[0, 2], [0, 0]]}))
    assert read_messages(p).h == 2
    p.write_text(json.dumps({"msgs": []}))
    with pytest.raises(HRelationInputError, match="'messages'"):
        read_messages(p)
    p.write_text("[[0, 1], [1, 0")
    with pytest.raises(HRelationInputError, match="not valid JSON"):
        read_messages(p)
    p.write_text(json.dumps([[0, "x"], [1, 0]]))
    with pytest.raises(HRelationInputError, match="row 0, col 1"):
        read_messages(p)


def test_missing_and_bad_npy(tmp_path):
    with pytest.raises(HRelationInputError, match="no such file"):
        read_messages(tmp_path / "nope.csv")
    p = tmp_path / "x.npy"
    p.write_bytes(b"not numpy")
    with pytest.raises(HRelationInputError, match="npy"):
        read_messages(p)
    np.save(p, np.array([[0.0, 2.0], [1.0, 0.0]]))
    assert read_messages(p).messages.dtype == np.int64
