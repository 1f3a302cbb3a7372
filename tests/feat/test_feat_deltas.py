"""add-deltas and splice-feats against float64 loop references written from Kaldi's formulas."""
import numpy as np
import pytest
from helpers import dummy_feats

from nnetmix.feat import add_deltas, delta_scales, splice_frames


def deltas_reference(x: np.ndarray, order: int, window: int) -> np.ndarray:
    """Kaldi's DeltaFeatures in float64, one frame at a time: the order-i filter is the order
    i-1 filter convolved with j / sum(j^2), j = -w..w, applied to clamped (replicated) frames."""
    t, d = x.shape
    x = x.astype(np.float64)
    scales = [np.array([1.0])]
    for _ in range(order):
        prev = scales[-1]
        cur = np.zeros(len(prev) + 2 * window)
        for j in range(-window, window + 1):
            for k in range(len(prev)):
                cur[j + window + k] += j * prev[k]
        scales.append(cur / sum(j * j for j in range(-window, window + 1)))
    out = np.zeros((t, d * (order + 1)))
    for frame in range(t):
        for i, sc in enumerate(scales):
            half = (len(sc) - 1) // 2
            for k, s in enumerate(sc):
                src = min(max(frame + k - half, 0), t - 1)
                out[frame, i * d:(i + 1) * d] += s * x[src]
    return out


def test_delta_scales_kaldi_values():
    s = delta_scales(2, 2)
    np.testing.assert_allclose(s[1], np.array([-2, -1, 0, 1, 2]) / 10, rtol=1e-6)
    assert len(s[2]) == 9 and s[2][4] == pytest.approx(-10 / 100)
    np.testing.assert_allclose(s[2][0], 4 / 100, rtol=1e-6)


@pytest.mark.parametrize("t,order,window", [(1, 2, 2), (3, 2, 2), (57, 2, 2), (20, 1, 3),
                                            (10, 3, 1), (8, 0, 2)])
def test_add_deltas_against_loop(t, order, window):
    x = dummy_feats(t, 6, seed=t)
    out = add_deltas(x, order, window)
    assert out.dtype == np.float32 and out.shape == (t, 6 * (order + 1))
    np.testing.assert_allclose(out, deltas_reference(x, order, window), rtol=1e-5, atol=1e-5)


def splice_reference(x, left, right):
    t = len(x)
    return np.array([np.concatenate([x[min(max(f + j, 0), t - 1)] for j in range(-left, right + 1)])
                     for f in range(t)])


@pytest.mark.parametrize("t,left,right", [(1, 4, 4), (5, 4, 4), (30, 5, 5), (12, 0, 3),
                                          (12, 2, 0), (9, 0, 0)])
def test_splice_against_loop(t, left, right):
    x = dummy_feats(t, 4, seed=t)
    out = splice_frames(x, left, right)
    assert out.shape == (t, 4 * (left + 1 + right)) and out.dtype == np.float32
    np.testing.assert_array_equal(out, splice_reference(x, left, right))


def test_empty_and_vectorised():
    assert add_deltas(np.zeros((0, 3), np.float32)).shape == (0, 9)
    assert splice_frames(np.zeros((0, 3), np.float32), 2, 2).shape == (0, 15)
