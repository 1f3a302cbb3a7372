"""Small networks and backends for the nnet tests, built in code."""
from __future__ import annotations

import numpy as np
import pytest
from numpy_backend import NumpyBackend

from nnetmix.nnet import (AddShift, AffineTransform, LinearTransform, Nnet, Rescale, Sigmoid,
                          Softmax, Splice, Tanh)


def backends() -> list:
    """The numpy reference always; the real cpu backend once nnetmix.kernels provides it."""
    out = [pytest.param(NumpyBackend(), id="numpy-ref")]
    try:
        from nnetmix.kernels import get_backend
        out.append(pytest.param(get_backend("cpu"), id="cpu"))
    except Exception:  # pragma: no cover - while the kernels are being written
        pass
    return out


def every_component_net(rng: np.random.Generator) -> Nnet:
    """Splice -> AddShift -> Rescale -> Affine -> Sigmoid -> Linear -> Tanh -> Affine -> Softmax."""
    d = 3
    comps = [
        Splice(d, 3 * d, [-1, 0, 2]),
        AddShift(3 * d, 3 * d, rng.standard_normal(3 * d), 0.5),
        Rescale(3 * d, 3 * d, rng.uniform(0.5, 1.5, 3 * d), 0.25),
        AffineTransform(3 * d, 5, rng.standard_normal((5, 3 * d)) * 0.5, rng.standard_normal(5),
                        1.0, 0.1, 2.5),
        Sigmoid(5, 5),
        LinearTransform(5, 4, rng.standard_normal((4, 5)) * 0.5, 0.5),
        Tanh(4, 4),
        AffineTransform(4, 6, rng.standard_normal((6, 4)), rng.standard_normal(6), 1.0, 0.1),
        Softmax(6, 6),
    ]
    return Nnet(comps)


# A text nnet1 file written by hand from the format description (Kaldi's Nnet::Write layout):
# every component type, dims written OUTPUT first, tokens in nnet1's order.
HAND_TEXT = """<Nnet>
<Splice> 6 2
[ -1 0 1 ]
<!EndOfComponent>
<AddShift> 6 6
<LearnRateCoef> 0  [ -1 -2 -3 -4 -5 -6 ]
<!EndOfComponent>
<Rescale> 6 6
<LearnRateCoef> 0  [ 0.5 0.5 2 2 1 1 ]
<!EndOfComponent>
<AffineTransform> 3 6
<LearnRateCoef> 1 <BiasLearnRateCoef> 0.1 <MaxNorm> 0
 [
  0.1 0.2 0.3 0.4 0.5 0.6
  -0.1 -0.2 -0.3 -0.4 -0.5 -0.6
  1 0 0 0 0 1 ]
 [ 0.5 -0.5 0 ]
<!EndOfComponent>
<Sigmoid> 3 3
<!EndOfComponent>
<LinearTransform> 2 3
<LearnRateCoef> 0.5
 [
  1 2 3
  4 5 6 ]
<!EndOfComponent>
<Tanh> 2 2
<!EndOfComponent>
<Rbm> 4 2
bern bern
 [
  1 0
  0 1
  1 1
  -1 1 ]
 [ 0.1 0.2 ]
 [ 0 0.5 1 -1 ]
<!EndOfComponent>
<Softmax> 4 4
<!EndOfComponent>
</Nnet>
"""
