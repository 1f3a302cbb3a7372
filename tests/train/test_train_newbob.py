"""Newbob decisions on scripted CV losses follow Kaldi's train_scheduler.sh rules."""
import pytest

from nnetmix.train import (NewbobOptions, NewbobState, exponential_lr, kaldi_round,
                           newbob_step)


def _run(losses, opts, initial=2.0, lr=0.008):
    st = NewbobState(learn_rate=lr, loss=initial, mlp_best="init")
    out = []
    for it, cv in enumerate(losses, 1):
        d = newbob_step(st, opts, it, cv, accepted_name=f"m{it}")
        out.append((d.accepted, d.learn_rate_used, d.next_learn_rate, st.halving, d.stop))
        if d.stop:
            break
    return st, out


def test_accept_reject_halving_and_stop():
    st, out = _run([1.5, 1.4, 1.395, 1.5, 1.0], NewbobOptions())
    assert out == [
        (True, 0.008, 0.008, False, False),    # rel 0.25
        (True, 0.008, 0.008, False, False),    # rel 0.067
        (True, 0.008, 0.004, True, False),     # rel 0.0036 < 0.01: halving starts, lr halves
        (False, 0.004, 0.004, True, True),     # rejected: rel 0 < 0.001 while halving: stop
    ]
    assert st.mlp_best == "m3" and st.loss == 1.395 and st.finished


def test_rejection_before_halving_starts_halving():
    st, out = _run([1.5, 1.6, 1.2], NewbobOptions())
    assert out[1] == (False, 0.008, 0.004, True, False)
    assert out[2] == (True, 0.004, 0.002, True, False)  # rel 0.2 but halving stays on
    assert st.mlp_best == "m3"


def test_min_iters_keeps_going_without_halving():
    st, out = _run([1.5, 1.4, 1.395, 1.5, 1.39, 1.3899], NewbobOptions(min_iters=6))
    assert out[3] == (False, 0.004, 0.004, True, False)  # would stop; continue, lr NOT halved
    assert out[4] == (True, 0.004, 0.002, True, False)   # rel 0.0036 >= 0.001: halve
    assert out[5][4] is True                             # rel 7e-5 at iter 6 = min_iters: stop
    assert len(out) == 6


def test_keep_lr_iters_accepts_anything_and_never_halves():
    st, out = _run([2.5, 2.6, 2.59, 2.2], NewbobOptions(keep_lr_iters=2))
    assert out[0] == (True, 0.008, 0.008, False, False)
    assert out[1] == (True, 0.008, 0.008, False, False)
    assert st.loss == 2.2
    assert out[2] == (True, 0.008, 0.004, True, False)   # rel from 2.6 to 2.59 < 0.01


def test_max_iters():
    st, out = _run([1.9, 1.7, 1.5, 1.3, 1.1], NewbobOptions(max_iters=3))
    assert len(out) == 3 and out[-1][4] and st.last_iter == 3


def test_kaldi_rounding():
    assert kaldi_round(0.008 * 0.5 ** 11) == 3.90625e-06
    assert kaldi_round(3.90625e-06 * 0.5) == float("%.6g" % 1.953125e-06)  # awk prints %.6g
    st, out = _run([1.2345678], NewbobOptions())
    assert st.loss == 1.23457


def test_exponential():
    lrs = [exponential_lr(0.008, e, 5) for e in range(5)]
    assert lrs[0] == 0.008 and lrs[-1] == pytest.approx(0.00008)
    assert lrs[2] == pytest.approx(0.008 * 0.01 ** 0.5)
    assert exponential_lr(0.01, 0, 1) == 0.01
