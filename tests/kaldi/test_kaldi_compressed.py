"""CM2/CM3 built byte by byte, and CM/CM2/CM3 written by kaldiio, decode as Kaldi decodes them."""
import io
import struct

import numpy as np
import pytest

kaldiio = pytest.importorskip("kaldiio")

from nnetmix.kaldi import RandomAccessReader, SequentialReader


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
    from nnetmix.errors import FormatError

    (tmp_path / "c.ark").write_bytes(ark_entry("u1", token, mn, rg, bytes(64), 2, 2))
    with pytest.raises(FormatError, match=rf"c.ark: bad {token} header for key u1: expected a "
                                          "finite minimum and a finite range >= 0"):
        dict(SequentialReader(f"ark:{tmp_path}/c.ark"))
