"""The CSV reader without pandas: same numbers, labels and error messages as the pandas-based
loader it replaced (kept below as the oracle, run where pandas is installed), on its fast
(numpy.loadtxt) and exact (csv module) paths alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpaudit.data import csvtable
from dpaudit.data.datasets import load_csv
from dpaudit.mechanisms.base import InvalidInputError, check_data

CASES = {
    "plain": "a,b\n1,2\n3,4\n5,6\n",
    "floats": "a,b\n1.5,-2e-3\n.5,1.\n+3,1E+05\n",
    "whitespace": "a,b\n 1 ,2\n3,\t4\n5,6\n",
    "blank-lines": "\na,b\n\n1,2\n   \n3,4\n\n",
    "crlf": "a,b\r\n1,2\r\n3,4\r\n",
    "bom": "\ufeffa,b\n1,2\n3,4\n",
    "quoted": 'a,b\n"1",2\n"3.5",4\n',
    "infinities": "a,b\nInfinity,1\n-inf,2\n+INF,3\n",
    "bool": "a,b\nTrue,1\nfalse,2\nTRUE,3\n",
    "bool-missing": "a,b\nTrue,1\n,2\n",
    "duplicate-names": "a,a,b\n1,2,3\n4,5,6\n",
    "unnamed": "a,,b\n1,2,3\n4,5,6\n",
    "trailing-comma": "a,b,\n1,2,\n3,4,\n",
    "short-row": "a,b\n1\n3,4\n",
    "long-row": "a,b\n1,2\n3,4,5\n",
    "every-row-long": "a,b\n1,2,3\n4,5,6\n",  # pandas made column 1 an index, silently; refused now
    "nan-token": "a,b\n1,2\nnan,4\n5,6\n",
    "NAN-token": "a,b\n1,2\nNAN,4\n5,6\n",
    "NA-tokens": "a,b\n1,NA\n2,null\n3,None\n",
    "spaced-NA": "a,b\n NA,2\n3,4\n",
    "underscore": "a,b\n1_000,1\n2,2\n",
    "hex": "a,b\n0x10,1\n2,2\n",
    "arabic-digit": "a,b\n\u0661,2\n3,4\n",
    "comment-char": "a,b\n#1,2\n3,4\n",
    "inf-value": "a,b\n1,2\ninf,4\n5,6\n",
    "text": "a,b\n1,x\n2,y\n3,z\n",
    "semicolon": "a;b\n1;2\n3;4\n5;6\n",
    "tab": "a\tb\n1\t2\n3\t4\n",
    "one-row": "a,b\n1,2\n",
    "header-only": "a,b\n",
    "empty": "",
    "only-blank": "\n\n",
    "one-column": "a\n1\n2\n3\n",
    "broken-quote": 'a,b\n"1,2\n3,4\n',
    "not-utf8": b"a,b\n\xff,2\n3,4\n",
    "labels-text": "a,b,label\n1,2,x\n3,4,y\n5,6,x\n7,8,z\n",
    "labels-numeric": "a,b,label\n1,2,3\n3,4,1\n5,6,3\n7,8,1.0\n",
    "labels-missing": "a,b,label\n1,2,0\n3,4,\n5,6,1\n",
    "labels-only": "label\nx\ny\n",
    "labels-bool": "a,b,label\n1,2,True\n3,4,False\n5,6,True\n",
}
LABELLED = {"labels-text", "labels-numeric", "labels-missing", "labels-only", "labels-bool", "text"}
# Errors worded differently after the same "cannot read FILE as CSV: " (pandas' tokenizer phrases
# its own; a decoding error's byte position is counted from the file's start, pandas' from its buffer).
DIFFERENT_ERROR_TEXT = {"long-row", "broken-quote", "not-utf8"}
REFUSED_NOW = {"every-row-long"}


def _write(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.csv"
    content = CASES[name]
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def _pandas_load_csv(path: Path, label_column: str | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The loader as it was with pandas (messages verbatim)."""
    pd = pytest.importorskip("pandas")
    try:
        frame = pd.read_csv(path)
    except Exception as exc:
        raise InvalidInputError(f"cannot read {path} as CSV: {exc}") from None
    if frame.empty:
        raise InvalidInputError(f"{path} has no records")
    y = None
    if label_column is not None:
        if label_column not in frame.columns:
            raise InvalidInputError(
                f"label column {label_column!r} not in {path.name}; columns are {', '.join(map(str, frame.columns))}")
        labels = frame.pop(label_column)
        if labels.isna().any():
            raise InvalidInputError(f"{path.name}: label column {label_column!r} has missing values; "
                                    "give every record a label")
        y = pd.factorize(labels)[0]
    non_numeric = [str(c) for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if non_numeric and frame.shape[1] == 1 and any(sep in non_numeric[0] for sep in ";\t|"):
        raise InvalidInputError(f"{path.name} is not comma-separated (its header is {non_numeric[0]!r}); "
                                "save it with commas between the columns")
    if non_numeric:
        raise InvalidInputError(
            f"{path.name} has non-numeric column(s) {', '.join(non_numeric)}; "
            "drop them or name the label with --label-column")
    if frame.isna().any().any():
        col = frame.columns[frame.isna().any()][0]
        raise InvalidInputError(f"{path.name} has missing values (NaN) in column {col!r}; clean the file first")
    return check_data(frame.to_numpy(dtype=float), name=path.name), y


def _outcome(load, path: Path, label_column: str | None) -> tuple[str, object]:
    try:
        X, y = load(path, label_column)
    except InvalidInputError as exc:
        return "error", str(exc)
    return "ok", (X, y)


def _ours(path: Path, label_column: str | None) -> tuple[np.ndarray, np.ndarray | None]:
    ds = load_csv(path, label_column=label_column)
    return ds.X, ds.y


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_numbers_labels_and_messages_as_the_pandas_loader(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, name)
    label = "label" if name in LABELLED and "label" in str(CASES[name]) else None
    expected = _outcome(_pandas_load_csv, path, label)
    got = _outcome(_ours, path, label)
    if name in REFUSED_NOW:
        assert expected[0] == "ok" and got == ("error", f"cannot read {path} as CSV: Expected 2 fields in line 2, saw 3")
        return
    if name in DIFFERENT_ERROR_TEXT:
        assert got[0] == "error" and str(got[1]).startswith(f"cannot read {path} as CSV: "), got
        return
    assert got[0] == expected[0], (got, expected)
    if got[0] == "error":
        assert got[1] == expected[1]
        return
    (X, y), (X_ref, y_ref) = got[1], expected[1]
    assert X.dtype == np.float64 and X.shape == X_ref.shape
    assert np.array_equal(X, X_ref)  # bit for bit: both parse decimals correctly rounded
    assert (y is None and y_ref is None) or np.array_equal(y, y_ref)


def test_fast_and_exact_paths_agree_bit_for_bit(tmp_path: Path) -> None:
    """17-significant-digit values, extremes and signed zeros: numpy.loadtxt and the csv path
    parse each decimal to the same double."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(scale=10.0 ** rng.integers(-300, 300, size=(200, 1)), size=(200, 3)),
                   [[0.0, -0.0, 5e-324], [1.7976931348623157e308, -2.2250738585072014e-308, 1.0]]])
    plain = tmp_path / "plain.csv"
    plain.write_text("a,b,c\n" + "\n".join(",".join(repr(float(v)) for v in row) for row in X) + "\n")
    quoted = tmp_path / "quoted.csv"  # quoted values send the reader down the exact path
    quoted.write_text("a,b,c\n" + "\n".join(",".join(f'"{float(v)!r}"' for v in row) for row in X) + "\n")
    assert csvtable.read_fast(plain, 1, 3) is not None and csvtable.read_fast(quoted, 1, 3) is None
    fast, exact = csvtable.read_table(plain), csvtable.read_table(quoted)
    for a, b in zip(fast.columns, exact.columns):
        assert np.array_equal(a.values, b.values) and np.array_equal(np.signbit(a.values), np.signbit(b.values))
    assert np.array_equal(np.column_stack([c.values for c in fast.columns]), X)


def test_exact_path_on_missing_values_keeps_row_count_and_marks_them(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text("a,b\n1,NA\n\n2,\n3\n")
    table = csvtable.read_table(path)
    assert table.n_rows == 3 and table.names == ["a", "b"]
    assert table.columns[0].values.tolist() == [1.0, 2.0, 3.0]
    assert table.columns[1].missing.tolist() == [True, True, True]


@pytest.mark.parametrize("text", ["1,2\n3,4\n5,6\n", "\n1.5,-2\n3,4\n5,6\n", "1,2\n3,NA\n5,6\n", '"1",2\n3,4\n5,6\n'],
                         ids=["plain", "blank-first", "missing-value", "quoted"])
def test_a_first_row_of_numbers_is_a_record(tmp_path: Path, text: str) -> None:
    """A headerless numeric CSV loads every row (pandas would have taken the first record for names): its columns
    are numbered, and the dataset says it had no header row — on the fast path and the exact one alike."""
    path = tmp_path / "data.csv"
    path.write_text(text)
    table = csvtable.read_table(path)
    assert table.n_rows == 3 and not table.header and table.names == ["column 1", "column 2"]
    if "NA" not in text:
        ds = load_csv(path)
        assert ds.X.shape == (3, 2) and ds.X[0, 0] in (1.0, 1.5)
        assert "no header row" in ds.description and "is a record" in ds.params["header"]


def test_thirty_headerless_rows_load_as_thirty_records(tmp_path: Path) -> None:
    rows = np.random.default_rng(0).normal(size=(30, 2))
    path = tmp_path / "thirty.csv"
    path.write_text("".join(f"{a},{b}\n" for a, b in rows))
    ds = load_csv(path)
    assert ds.n_records == 30
    np.testing.assert_allclose(ds.X, rows)
    labelled = tmp_path / "labelled.csv"
    labelled.write_text("".join(f"{a},{b},{i % 2}\n" for i, (a, b) in enumerate(rows)))
    ds = load_csv(labelled, label_column="column 3")
    assert ds.X.shape == (30, 2) and set(ds.y) == {0, 1}


def test_a_header_is_still_a_header(tmp_path: Path) -> None:
    path = tmp_path / "named.csv"
    path.write_text("x,2\n1,2\n3,4\n")  # one name is text: a header
    ds = load_csv(path)
    assert ds.n_records == 2 and ds.params["header"].startswith("the first row names the columns (x, 2)")
