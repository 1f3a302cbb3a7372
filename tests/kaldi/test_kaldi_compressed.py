"""Kaldi compressed matrices: CM2/CM3 built byte by byte, and CM/CM2/CM3 written by kaldiio,
decode as Kaldi decodes them; our writer gives Kaldi's bytes (copy-feats --compress=true on the
Kaldi fixture, and each method's rules) and reads back within each method's precision."""
import io
import struct

import numpy as np
import pytest

kaldiio = pytest.importorskip("kaldiio")

from helpers import load_bin

from nnetmix.errors import FormatError
from nnetmix.kaldi import RandomAccessReader, SequentialReader, TableWriter
from nnetmix.kaldi.compressed import Compressed, compress_matrix


def ark_entry(key, token, mn, rg, payload, rows, cols):
    return (f"{key} ".encode() + b"\0B" + token.encode() + b" "
            + struct.pack("<ffii", mn, rg, rows, cols) + payload)


@pytest.mark.parametrize("token,dtype,scale", [("CM2", "<u2", 65535.0), ("CM3", "u1", 255.0)])
def test_global_header_formats_byte_by_byte(tmp_path, token, dtype, scale):
    rng = np.random.default_rng(777)
    rows, cols, mn, rg = 5, 3, -3.25, 7.5
    codes = rng.integers(0, int(scale) + 1, size=(rows, cols)).astype(dtype)
    codes[0, 0], codes[-1, -1] = 0, int(scale)
    blob = ark_entry("u1", token, mn, rg, codes.tobytes(), rows, cols)
    (tmp_path / "c.ark").write_bytes(blob + ark_entry("u2", token, mn, rg, b"", 0, 0))
    got = dict(SequentialReader(f"ark:{tmp_path}/c.ark"))
    m = got["u1"]
    assert m.dtype == np.float32 and m.shape == (rows, cols)
    increment = np.float32(np.float64(np.float32(rg)) / scale)
    np.testing.assert_array_equal(m, np.float32(mn) + codes.astype(np.float32) * increment)
    assert m[0, 0] == np.float32(mn) and abs(m[-1, -1] - (mn + rg)) < 1e-5
    assert got["u2"].shape == (0, 0)
    ref = kaldiio.load_mat(f"{tmp_path}/c.ark:3")
    np.testing.assert_allclose(m, ref, atol=1e-6)


def test_col_header_format_byte_by_byte(tmp_path):
    """CM: per-column percentiles (uint16), then bytes column by column, piecewise linear."""
    rows, cols, mn, rg = 4, 2, 0.0, 65535.0  # percentile code u means exactly u
    heads = np.array([[0, 64, 192, 255], [1000, 1064, 1192, 1255]], dtype="<u2")
    data = np.array([[0, 64, 192, 255], [32, 128, 224, 10]], dtype="u1")  # column by column
    blob = ark_entry("k", "CM", mn, rg, heads.tobytes() + data.tobytes(), rows, cols)
    (tmp_path / "c.ark").write_bytes(blob)
    m = RandomAccessReader(f"ark:{tmp_path}/c.ark")["k"]
    expect = np.array([[0, 1032], [64, 1128], [192, 1224], [255, 1010]], dtype=np.float32)
    np.testing.assert_allclose(m, expect, rtol=1e-6)
    np.testing.assert_allclose(m, kaldiio.load_mat(f"{tmp_path}/c.ark:2"), rtol=1e-6)


@pytest.mark.parametrize("method,tol", [(2, 0.02), (3, 1e-3), (5, 0.05)])
def test_kaldiio_compressed_arks(tmp_path, method, tol):
    rng = np.random.default_rng(method)
    data = {f"u{i}": (rng.standard_normal((20 + i, 6)) * 3).astype(np.float32) for i in range(3)}
    kaldiio.save_ark(str(tmp_path / "c.ark"), data, compression_method=method)
    ours = dict(SequentialReader(f"ark:{tmp_path}/c.ark"))
    ref = dict(kaldiio.load_ark(str(tmp_path / "c.ark")))
    for k, v in data.items():
        assert ours[k].dtype == np.float32
        np.testing.assert_allclose(ours[k], ref[k], atol=1e-5)
        assert np.abs(ours[k] - v).max() < tol * (v.max() - v.min())


@pytest.mark.parametrize("token", ["CM", "CM2", "CM3"])
@pytest.mark.parametrize("mn,rg", [(0.0, float("nan")), (float("nan"), 1.0), (0.0, float("inf")),
                                   (0.0, -2.0)])
def test_header_range_not_finite_is_an_error(tmp_path, token, mn, rg):
    """Kaldi reads a NaN range without complaint and hands on NaN features; here it is an error
    naming the file, the key and the header."""
    (tmp_path / "c.ark").write_bytes(ark_entry("u1", token, mn, rg, bytes(64), 2, 2))
    with pytest.raises(FormatError, match=rf"c.ark: bad {token} header for key u1: expected a "
                                          "finite minimum and a finite range >= 0"):
        dict(SequentialReader(f"ark:{tmp_path}/c.ark"))


# -- writing ----------------------------------------------------------------------------------
def copy_feats(argv, capsys):
    rc = load_bin("copy-feats.py").main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, err


def test_copy_feats_compress_is_kaldis_bytes(kaldi_fixtures, tmp_path, capsys):
    """feats_compressed.ark was written by Kaldi's copy-feats --compress=true (method 1: CM for
    these 105 to 418 rows) from feats.ark."""
    kio = kaldi_fixtures / "kaldi-io-for-python"
    out = tmp_path / "out.ark"
    rc, err = copy_feats(["--compress=true", f"ark:{kio}/feats.ark", f"ark:{out}"], capsys)
    assert rc == 0 and "Copied 10 feature matrices." in err
    assert out.read_bytes() == (kio / "feats_compressed.ark").read_bytes()


#: Bytes after \0B of Kaldi's CompressedMatrix::Write, made by kaldi-native-io 1.23.0 (a C++
#: build of Kaldi's compressed-matrix.cc) from these matrices; each checks one rule.
KALDI_BYTES = [
    # 4: the 0.499 is added in double (7232.5 -> 40000, float32 would give 40001); clipped
    ([[7232.5, -32768, 32767, 40000, -40000, 0.5, 1.5]], 4,
     "434d3220000000c700ff7f470100000007000000409c0000ffffffff000000800180"),
    # 6: 1.5 -> 1 and 1.502 -> 2 (round half down), 300 -> 255 and -5 -> 0 (clipped)
    ([[300, -5, 1.5, 1.502, 254.5, 0]], 6, "434d33200000000000007f430100000006000000ff000102fe00"),
    ([[0.5, 1.5, -0.25, 0.002, 1 / 255]], 7, "434d3320000000000000803f01000000050000007fff000101"),
    # CM, 6 rows: percentiles at sorted rows 0, 1, 3, 5; the constant column's kept apart by 1
    ([[1, -2], [3.5, -2], [0.25, -2], [-1, -2], [2, -2], [8, -2]], 2,
     "434d20000000c0000020410600000002000000991999396666ffff000001000200030077d04000c0ff0000000000"
     "00"),
    # CM under 5 rows: the sorted rows themselves, a missing one the previous code + 1
    ([[1, 5], [3.5, 5], [0.25, 5]], 2,
     "434d200000803e00009840030000000200000000006c2828af29affcfffdfffeffffff40c000ffffff"),
    ([[1, 5, -3]], 2, "434d20000040c0000000410100000003000000ff7f008001800280fcfffdfffeffffff00000100"
     "0200030020ff00"),
    # a constant matrix: range 1 + |min|
    ([[-3.5] * 3] * 2, 5, "434d3320000060c0000090400200000003000000000000000000"),
]


@pytest.mark.parametrize("rows,method,expect", KALDI_BYTES)
def test_each_methods_rules_give_kaldis_bytes(rows, method, expect):
    assert compress_matrix(np.array(rows, dtype=np.float32), method).hex() == expect


def half_step_bounds(v, method):
    """The most a value may move under ``method`` (Kaldi's rules): half a code step (0.499 +
    float rounding, so 0.51 steps) of the global range for CM2/CM3; for CM half a step of the
    widest piece (64, 128 or 63 steps of a column's span: at most span/126) plus a percentile's
    own rounding (a 65535th of the matrix range). Fixed ranges: values clipped into them."""
    lo, hi = float(v.min()), float(v.max())
    span = hi - lo or 1 + abs(lo)
    if method == 2:
        col = v.max(0) - v.min(0)
        return col / 126 + 1.1 * span / 65535
    if method in (3, 5):
        return 0.51 * span / (65535 if method == 3 else 255)
    return 0.51 * {4: 1.0, 6: 1.0, 7: 1 / 255}[method]


@pytest.mark.parametrize("method", range(1, 8))
@pytest.mark.parametrize("rows", [1, 4, 8, 9, 200])
def test_round_trip_within_the_methods_precision(tmp_path, method, rows):
    """Written through a table, read back by our reader and by kaldiio's (close to ours: it
    rounds in its own order, within a millionth of the largest value)."""
    rng = np.random.default_rng(100 * method + rows)
    v = (rng.standard_normal((rows, 13)) * rng.uniform(0.5, 20, 13) + rng.uniform(-5, 5, 13))
    if method in (4, 6, 7):  # what the fixed ranges are for: 16-bit PCM, bytes, [0, 1]
        lo, hi = {4: (-32768, 32767), 6: (0, 255), 7: (0, 1)}[method]
        v = np.clip(np.round(v * 1000) if method == 4 else np.abs(v) * (5 if method == 6 else
                                                                          0.05), lo, hi)
        if method != 7:
            v = np.round(v)
    v = v.astype(np.float32)
    with TableWriter(f"ark:{tmp_path}/c.ark") as w:
        w["k"] = Compressed(v, method)
    got = dict(SequentialReader(f"ark:{tmp_path}/c.ark"))["k"]
    assert got.dtype == np.float32 and got.shape == v.shape
    auto = 2 if rows > 8 else 3
    bound = half_step_bounds(v, auto if method == 1 else method)
    assert np.all(np.abs(got - v) <= bound)
    if method in (4, 6):  # integers in the fixed range come back exactly
        np.testing.assert_array_equal(got, v)
    np.testing.assert_allclose(got, kaldiio.load_mat(f"{tmp_path}/c.ark:2"), rtol=1e-5,
                               atol=1e-6 * max(1.0, float(np.abs(v).max())))


def test_automatic_method_chooses_by_row_count():
    for rows, token in [(1, b"CM2 "), (8, b"CM2 "), (9, b"CM "), (100, b"CM ")]:
        assert compress_matrix(np.ones((rows, 2), np.float32) * np.arange(rows)[:, None]
                               ).startswith(token)


@pytest.mark.parametrize("method", [2, 3, 5])
def test_constant_matrix_and_constant_columns(tmp_path, method):
    """A constant matrix comes back exactly (every value is the header's minimum); a constant
    column among varying ones within its method's precision."""
    const = np.full((12, 3), -7.25, np.float32)
    mixed = np.random.default_rng(1).standard_normal((12, 3)).astype(np.float32)
    mixed[:, 1] = 0.375
    with TableWriter(f"ark:{tmp_path}/c.ark") as w:
        w["const"], w["mixed"] = Compressed(const, method), Compressed(mixed, method)
    got = dict(SequentialReader(f"ark:{tmp_path}/c.ark"))
    np.testing.assert_array_equal(got["const"], const)
    assert np.all(np.abs(got["mixed"] - mixed) <= half_step_bounds(mixed, method))


def test_empty_matrix_reads_back_and_keeps_the_archive_in_step(tmp_path):
    """An empty matrix is CM with a 16-byte zero header (Kaldi's writer puts 20 bytes there,
    which its own reader leaves 4 bytes short of); the entry after it reads as written."""
    assert compress_matrix(np.zeros((0, 0), np.float32)) == b"CM " + bytes(16)
    after = np.arange(6, dtype=np.float32).reshape(2, 3)
    with TableWriter(f"ark:{tmp_path}/c.ark") as w:
        w["empty"], w["after"] = Compressed(np.zeros((0, 5), np.float32)), Compressed(after, 4)
    got = dict(SequentialReader(f"ark:{tmp_path}/c.ark"))
    assert got["empty"].shape == (0, 0)
    np.testing.assert_array_equal(got["after"], after)


def test_text_table_gets_the_decompressed_values(tmp_path):
    """As Kaldi's CompressedMatrix::Write in text mode: the values as read back, uncompressed."""
    v = np.random.default_rng(3).standard_normal((20, 4)).astype(np.float32)
    with TableWriter(f"ark:{tmp_path}/c.ark") as w, TableWriter(f"ark,t:{tmp_path}/t.ark") as t:
        w["k"], t["k"] = Compressed(v), Compressed(v)
    binary = dict(SequentialReader(f"ark:{tmp_path}/c.ark"))["k"]
    text = dict(SequentialReader(f"ark:{tmp_path}/t.ark"))["k"]
    assert (tmp_path / "t.ark").read_bytes().startswith(b"k  [\n")
    np.testing.assert_allclose(text, binary, rtol=1e-6)
    assert not np.array_equal(binary, v)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("method", [1, 4])
def test_nan_or_inf_is_one_error_line_naming_the_key(tmp_path, capsys, bad, method):
    v = np.ones((10, 3), np.float32)
    with TableWriter(f"ark:{tmp_path}/in.ark") as w:
        w["good"] = v
        v = v.copy()
        v[2, 1] = bad
        w["bad_utt"] = v
    out = tmp_path / "out.ark"
    rc, err = copy_feats(["--compress=true", f"--compression-method={method}",
                          f"ark:{tmp_path}/in.ark", f"ark:{out}"], capsys)
    errors = [line for line in err.splitlines() if line.startswith("ERROR")]
    assert rc == 1 and len(errors) == 1
    assert f"{out}: cannot compress matrix for key bad_utt: value {bad} at row 2, column 1" in \
        errors[0]
    assert not out.exists()


def test_span_beyond_float32_is_an_error():
    with pytest.raises(FormatError, match="more than a float32 range holds"):
        compress_matrix(np.array([[-3e38, 3e38]], np.float32), 3)


@pytest.mark.parametrize("argv,msg", [
    (["--compression-method=8"], "--compression-method=8: expected 1 through 7"),
    (["--compression-method=0"], "--compression-method=0: expected 1 through 7"),
])
def test_bad_compression_method(tmp_path, capsys, argv, msg):
    with TableWriter(f"ark:{tmp_path}/in.ark") as w:
        w["k"] = np.ones((3, 3), np.float32)
    rc, err = copy_feats(["--compress=true", *argv, f"ark:{tmp_path}/in.ark",
                          f"ark:{tmp_path}/o.ark"], capsys)
    assert rc == 1 and msg in err and not (tmp_path / "o.ark").exists()
