"""nnet1's recurrent components: <LstmProjected> and <BlstmProjected> on a multistream base.

Kaldi: src/nnet/nnet-lstm-projected.h, nnet-blstm-projected.h, the MultistreamComponent of
nnet-component.h. Same markers (the older ``<LstmProjectedStreams>``/``<BlstmProjectedStreams>``
are read too, the new ones written), same tokens in the same order, same parameter blocks in
the same order (GetParams), same arithmetic and clipping.

The interface a multistream trainer uses (Kaldi's nnet-train-multistream and -perutt)::

    nnet.set_seq_lengths([len_0, ..., len_{S-1}])  # S streams; frames past len_s are padding
    nnet.reset_streams([1, 0, ...])                 # LSTM: zero the carried state of stream s
    y = nnet.propagate(x)                           # x: T*S rows, row t*S + s = frame t of s
    nnet.backpropagate(dy); nnet.update(opts)

* Rows interleave the streams as nnet-train-multistream feeds them: row ``t*S + s`` is frame
  ``t`` of stream ``s``, ``S = len(seq_lengths)`` (1 when no lengths were set). A call's rows
  must be a multiple of S.
* Frames past a stream's length are padding: their outputs are 0 and no gradient flows from
  or through them (the dy given for them is ignored).
* LstmProjected carries its state (cell and recurrent projection of the last frame) from one
  propagate to the next, per stream: truncated BPTT over chunks. ``reset_streams(flags)``
  zeroes the state of the streams flagged 1 (a new utterance starts in that stream). With no
  seq lengths set (nnet-forward, one utterance per call) it starts from zero every call, as
  Kaldi's does. BPTT stops at the chunk boundary; the carried state is a constant.
* BlstmProjected keeps no state: each call is whole sequences (its backward direction needs
  the utterance's end), so a stream's backward direction starts at its own last frame.

Computation, per direction: ONE GEMM for the input projection of all T*S rows (plus the
bias), then per time step a GEMM for the recurrent projection r(t-1) -> gates, one fused
kernel for the gates/peepholes/cell/clipping (``nnetmix.kernels.lstm_cpu``; cuda has the
same interface in ``lstm_cuda``) and a GEMM for m(t) -> r(t). Backward mirrors it; the weight
gradients are then GEMMs over the whole chunk. The per-frame GEMMs (S rows) run on one BLAS
thread (``run_recurrences``): OpenBLAS's threads synchronising on every small call made a step
5x slower at 2 threads on the loaded 2-core machine; with two or more BLAS threads a BLSTM's
two directions run their recurrences side by side instead (they share nothing), and the
chunk-wide GEMMs keep every thread. Gradients are SUMS over frames, as Kaldi's.

Clipping, as Kaldi's: ``<CellClip>`` clips the cell values in the forward pass; ``<DiffClip>``
clips the gate derivatives of each frame before they flow to the previous frame (the path
out -> h -> c is left unclipped); ``<CellDiffClip>`` clips the cell derivative; ``<GradClip>``
clips the accumulated update (gradient plus momentum) before it is applied. 0 turns a clip off.

Update, as Kaldi's Update: v = momentum * v + grad, v clipped to ±GradClip, param -= lr *
coef * v, where coef is ``<LearnRateCoef>`` for the weight matrices and
``<BiasLearnRateCoef>`` for the bias and the peepholes. No L1/L2 (Kaldi applies none here).
NG-SGD (nnetmix.train.ngsgd) does not precondition these components: they get this update.

One deliberate difference: Kaldi's BlstmProjected accumulates the backward direction's
recurrent-weight gradient against r(t-1) (``B_YR.RowRange(0*S, T*S)``) where its forward
pass used r(t+1); we use r(t+1), the true gradient, which the finite-difference checks verify.
"""
from __future__ import annotations

from typing import Any, ClassVar, Sequence

import numpy as np

from nnetmix.kaldi.tokens import TokenReader, TokenWriter
from nnetmix.nnet.components import Component, moment_statistics, register_component
from nnetmix.nnet.options import NnetError, NnetTrainOptions

__all__ = ["MultistreamComponent", "LstmProjected", "BlstmProjected", "lstm_kernels"]

#: the parameter blocks of one direction, in Kaldi's GetParams order
_BLOCKS = ("w_gifo_x", "w_gifo_r", "bias", "peephole_i_c", "peephole_f_c", "peephole_o_c",
           "w_r_m")
_WEIGHTS = ("w_gifo_x", "w_gifo_r", "w_r_m")   # <LearnRateCoef>; the rest <BiasLearnRateCoef>


def lstm_kernels(be):
    """The fused step kernels for a backend: cuda's for the cuda backend, else the host ones."""
    if getattr(be, "name", "") == "cuda":
        from nnetmix.kernels.lstm_cuda import LstmCudaKernels  # optional: needs numba.cuda
        return LstmCudaKernels(be)
    from nnetmix.kernels.lstm_cpu import LstmCpuKernels
    return LstmCpuKernels()


class MultistreamComponent(Component):
    """Kaldi's MultistreamComponent: a component that sees S interleaved streams per call."""

    updatable = True

    def __init__(self, input_dim: int, output_dim: int):
        super().__init__(input_dim, output_dim)
        self.seq_lengths: list[int] = []

    @property
    def num_streams(self) -> int:
        return max(1, len(self.seq_lengths))

    def set_seq_lengths(self, lengths: Sequence[int]) -> None:
        """The number of valid frames of each stream in the next calls (Kaldi's SetSeqLengths)."""
        lengths = [int(n) for n in lengths]
        if any(n < 0 for n in lengths):
            raise NnetError(f"{self.marker}: negative sequence length in {lengths}")
        self.seq_lengths = lengths

    def reset_streams(self, flags: Sequence[int]) -> None:
        """Forget the carried context of the streams flagged 1 (a no-op without context)."""

    def _streams(self, rows: int) -> tuple[int, int]:
        S = self.num_streams
        if rows % S:
            raise NnetError(f"{self.marker}: {rows} input rows is not a multiple of the {S} "
                            "streams (row t*S + s is frame t of stream s)")
        return rows // S, S

    def _valid(self, T: int, S: int) -> np.ndarray:
        """(T, S) int8: 1 where frame t of stream s is real, 0 where it is padding."""
        if not self.seq_lengths:
            return np.ones((T, S), np.int8)
        return (np.arange(T)[:, None] < np.asarray(self.seq_lengths)[None, :]).astype(np.int8)


class _Pass:
    """The buffers of one direction for one call: (T+2)*S rows, block t (rows t*S..) is frame
    t-1; blocks 0 and T+1 are the zero (or carried) states before the first and after the last
    frame, so every step reads its neighbour without a special case."""

    def __init__(self, be, dtype, T: int, S: int, C: int, P: int):
        rows = (T + 2) * S
        self.T, self.S = T, S
        z = lambda cols: be.zeros((rows, cols), dtype=dtype)  # noqa: E731
        self.y, self.c, self.h, self.m, self.r = z(4 * C), z(C), z(C), z(C), z(P)
        self.d, self.dc, self.dh, self.dm, self.dr = z(4 * C), z(C), z(C), z(C), z(P)

    def block(self, a, t: int, n: int = 1):
        return a[t * self.S:(t + n) * self.S]


class _ProjectedLstm(MultistreamComponent):
    """What LstmProjected and BlstmProjected share: options, one direction's recurrence, files."""

    directions: ClassVar[tuple[str, ...]] = ("",)

    def __init__(self, input_dim: int, output_dim: int, cell_dim: int, params=None,
                 learn_rate_coef: float = 1.0, bias_learn_rate_coef: float = 1.0,
                 cell_clip: float = 50.0, diff_clip: float = 1.0, cell_diff_clip: float = 0.0,
                 grad_clip: float = 250.0):
        super().__init__(input_dim, output_dim)
        self.cell_dim = int(cell_dim)
        self.proj_dim = self.output_dim // len(self.directions)
        if self.cell_dim <= 0:
            raise NnetError(f"{self.marker} {output_dim} {input_dim}: <CellDim> {cell_dim}, "
                            "expected > 0")
        if self.proj_dim * len(self.directions) != self.output_dim:
            raise NnetError(f"{self.marker} {output_dim} {input_dim}: output dim must be even "
                            "(forward and backward projections)")
        self.learn_rate_coef = np.float32(learn_rate_coef)
        self.bias_learn_rate_coef = np.float32(bias_learn_rate_coef)
        self.cell_clip = np.float32(cell_clip)
        self.diff_clip = np.float32(diff_clip)
        self.cell_diff_clip = np.float32(cell_diff_clip)
        self.grad_clip = np.float32(grad_clip)
        self._set_host(params or {})
        self._drop_buffers()

    def _drop_buffers(self) -> None:
        self._passes: dict[str, _Pass] = {}
        self._k: Any = None
        self._be_key: Any = None

    def detached(self, host):
        c = super().detached(host)
        c._drop_buffers()
        c.seq_lengths = list(self.seq_lengths)
        return c

    def param_specs(self):
        C, P, I = self.cell_dim, self.proj_dim, self.input_dim
        shapes = {"w_gifo_x": (4 * C, I), "w_gifo_r": (4 * C, P), "bias": (4 * C,),
                  "peephole_i_c": (C,), "peephole_f_c": (C,), "peephole_o_c": (C,),
                  "w_r_m": (P, C)}
        return [(d + b, shapes[b]) for d in self.directions for b in _BLOCKS]

    # -- computation ------------------------------------------------------------------------
    def _prepare(self, be, x):
        """Kernels for ``be``; this call's (T, S), validity mask and buffers."""
        key = (id(be), np.dtype(x.dtype))
        if key != self._be_key:
            self._passes, self._k, self._be_key = {}, lstm_kernels(be), key
            self._on_new_backend()
        T, S = self._streams(int(x.shape[0]))
        for d in self.directions:
            p = self._passes.get(d)
            if p is None or (p.T, p.S) != (T, S):
                self._passes[d] = _Pass(be, x.dtype, T, S, self.cell_dim, self.proj_dim)
        self._valid_now = self._k.valid(self._valid(T, S))
        return T, S

    def _on_new_backend(self) -> None:
        """Drop what was kept for another backend or dtype (the LSTM's carried state)."""

    def _input_projection(self, be, x, d: str) -> None:
        """gifo(t) = W_x x(t) + bias for every frame of the call: one chunk-wide GEMM."""
        p = self._passes[d]
        gates = p.block(p.y, 1, p.T)
        be.gemm(x, self.params[d + "w_gifo_x"], gates, trans_b=True)
        be.add_bias(gates, self.params[d + "bias"])

    def _forward_dir(self, be, d: str, step: int) -> None:
        """One direction's forward recurrence; step +1 runs t = 1..T, -1 runs T..1."""
        p, P, k, cc = self._passes[d], self.params, self._k, float(self.cell_clip)
        T = p.T
        pi, pf, po = P[d + "peephole_i_c"], P[d + "peephole_f_c"], P[d + "peephole_o_c"]
        for t in (range(1, T + 1) if step > 0 else range(T, 0, -1)):
            y, prev = p.block(p.y, t), t - step
            be.gemm(p.block(p.r, prev), P[d + "w_gifo_r"], y, trans_b=True, beta=1.0)
            k.step_fwd(y, p.block(p.c, prev), p.block(p.c, t), p.block(p.h, t),
                       p.block(p.m, t), pi, pf, po, cc, self._valid_now[t - 1])
            be.gemm(p.block(p.m, t), P[d + "w_r_m"], p.block(p.r, t), trans_b=True)

    def _backward_dir(self, be, d: str, step: int) -> None:
        """BPTT of one direction; ``p.dr`` rows 1..T already hold dL/d(output)."""
        p, P, k = self._passes[d], self.params, self._k
        T = p.T
        pi, pf, po = P[d + "peephole_i_c"], P[d + "peephole_f_c"], P[d + "peephole_o_c"]
        dclip, cdclip = float(self.diff_clip), float(self.cell_diff_clip)
        for t in (range(T, 0, -1) if step > 0 else range(1, T + 1)):
            nxt, prev = t + step, t - step
            dr, dm = p.block(p.dr, t), p.block(p.dm, t)
            be.gemm(p.block(p.d, nxt), P[d + "w_gifo_r"], dr, beta=1.0)
            be.gemm(dr, P[d + "w_r_m"], dm)
            k.step_bwd(dm, p.block(p.y, t), p.block(p.h, t), p.block(p.c, prev),
                       p.block(p.d, nxt), p.block(p.y, nxt), p.block(p.dc, nxt), pi, pf, po,
                       p.block(p.d, t), p.block(p.dc, t), p.block(p.dh, t), dr, dclip, cdclip,
                       self._valid_now[t - 1])

    def _recurrences(self, be, run) -> None:
        """``run(be, d, step)`` for every direction, through the kernels' run_recurrences (on
        the cpu: one BLAS thread each, the two directions of a BLSTM side by side when the
        process has two or more BLAS threads)."""
        self._k.run_recurrences([
            (lambda d=d, n=n: run(be, d, 1 - 2 * n)) for n, d in enumerate(self.directions)])

    def _input_diff(self, be, dx) -> None:
        for n, d in enumerate(self.directions):
            p = self._passes[d]
            be.gemm(p.block(p.d, 1, p.T), self.params[d + "w_gifo_x"], dx,
                    beta=1.0 if n else 0.0)

    def propagate(self, be, x, y):
        T, S = self._prepare(be, x)
        self._before_forward(be, S)
        for d in self.directions:
            self._input_projection(be, x, d)
        self._recurrences(be, self._forward_dir)
        for n, d in enumerate(self.directions):
            p = self._passes[d]
            self._k.put_cols(y, p.block(p.r, 1, T), n * self.proj_dim)
        self._after_forward(be)

    def _before_forward(self, be, S: int) -> None:
        """Load the carried state into block 0 (LSTM); nothing for the BLSTM."""

    def _after_forward(self, be) -> None:
        """Keep the last frame's state (LSTM)."""

    def backpropagate(self, be, x, y, dy, dx):
        if not self._passes:
            raise NnetError(f"{self.marker}: backpropagate before propagate")
        for n, d in enumerate(self.directions):
            p = self._passes[d]
            self._k.get_cols(dy, n * self.proj_dim, p.block(p.dr, 1, p.T))
        self._recurrences(be, self._backward_dir)
        if dx is not None:
            self._input_diff(be, dx)

    def accumulate_gradient(self, be, x, dy):
        G = self.grads
        for n, d in enumerate(self.directions):
            p, step = self._passes[d], 1 - 2 * n
            T = p.T
            D = p.block(p.d, 1, T)
            prev = p.block(p.r, 1 - step, T)
            be.gemm(D, x, G[d + "w_gifo_x"], trans_a=True)
            be.gemm(D, prev, G[d + "w_gifo_r"], trans_a=True)
            be.sum_rows(D, G[d + "bias"])
            self._k.peephole_grads(D, p.block(p.c, 1 - step, T), p.block(p.c, 1, T),
                                   G[d + "peephole_i_c"], G[d + "peephole_f_c"],
                                   G[d + "peephole_o_c"])
            be.gemm(p.block(p.dr, 1, T), p.block(p.m, 1, T), G[d + "w_r_m"], trans_a=True)

    def update(self, be, opts: NnetTrainOptions, num_frames: int) -> None:
        lr, mom, clip = float(opts.learn_rate), float(opts.momentum), float(self.grad_clip)
        k = self._kernels(be)
        for d in self.directions:
            for b in _BLOCKS:
                coef = self.learn_rate_coef if b in _WEIGHTS else self.bias_learn_rate_coef
                name = d + b
                p, g, v = self.params[name], self.grads[name], self.velocity[name]
                if clip > 0.0:  # Kaldi clips the momentum-accumulated update
                    be.scale(v, mom)
                    be.axpy(1.0, g, v)
                    k.clip(v, clip)
                    be.axpy(-lr * float(coef), v, p)
                else:
                    be.sgd_update(p, g, v, lr * float(coef), mom)

    def _kernels(self, be):
        if self._k is None or self._be_key is None or self._be_key[0] != id(be):
            return lstm_kernels(be)
        return self._k

    # -- files ------------------------------------------------------------------------------
    _TOKENS: ClassVar[dict[str, str]] = {
        "<LearnRateCoef>": "learn_rate_coef", "<BiasLearnRateCoef>": "bias_learn_rate_coef",
        "<CellClip>": "cell_clip", "<DiffClip>": "diff_clip", "<CellDiffClip>": "cell_diff_clip",
        "<GradClip>": "grad_clip", "<ClipGradient>": "grad_clip"}  # the last: Kaldi's old name

    def write_data(self, w: TokenWriter, host) -> None:
        w.token("<CellDim>")
        w.int32(self.cell_dim)
        for tok in ("<LearnRateCoef>", "<BiasLearnRateCoef>", "<CellClip>", "<DiffClip>",
                    "<CellDiffClip>", "<GradClip>"):
            w.token(tok)
            w.float32(getattr(self, self._TOKENS[tok]))
        w.newline()
        for name, shape in self.param_specs():
            (w.matrix if len(shape) == 2 else w.vector)(host[name])

    @classmethod
    def read_data(cls, r: TokenReader, input_dim: int, output_dim: int):
        kw: dict[str, Any] = {}
        cell_dim = 0
        while r.peek_char() == "<":
            tok = r.token("<CellDim> or an option token")
            if tok == "<CellDim>":
                cell_dim = r.int32(tok)
            elif tok in cls._TOKENS:
                kw[cls._TOKENS[tok]] = r.float32(tok)
            else:
                raise r.fail("unknown token", f"'{tok[:40]}' (expected <CellDim>, "
                             + ", ".join(t for t in cls._TOKENS if t != "<ClipGradient>")
                             + " or the parameters)")
        if cell_dim <= 0:
            raise r.fail("bad <CellDim>", f"expected a positive <CellDim> before the "
                         f"parameters, got {cell_dim}")
        if output_dim % len(cls.directions):
            raise r.fail(f"bad {cls.marker}", f"output dim {output_dim} is odd (it holds the "
                         "forward and backward projections)")
        comp = cls(input_dim, output_dim, cell_dim, **kw)
        params = {}
        for name, shape in comp.param_specs():
            v = r.matrix(name) if len(shape) == 2 else r.vector(name)
            if v.shape != tuple(shape):
                raise r.fail(f"bad {name}", f"expected shape {tuple(shape)} (from <CellDim> "
                             f"{cell_dim} and the dims {output_dim} {input_dim}), got {v.shape}")
            params[name] = v
        comp._set_host(params)
        return comp

    @classmethod
    def from_proto(cls, input_dim: int, output_dim: int, opts: dict[str, float],
                   rng: np.random.Generator):
        """Kaldi's InitData: every block ~ U(-ParamRange, ParamRange) (0.1), drawn in GetParams
        order; the BLSTM adds 1 to its forget-gate biases. ``opts`` maps proto tokens to values."""
        kw = {attr: opts[tok] for tok, attr in cls._TOKENS.items() if tok in opts}
        cell_dim = int(opts.get("<CellDim>", 0))
        rng_range = float(opts.get("<ParamRange>", opts.get("<ParamScale>", 0.1)))
        comp = cls(input_dim, output_dim, cell_dim, **kw)
        params = {}
        for name, shape in comp.param_specs():
            params[name] = rng.uniform(-rng_range, rng_range, shape).astype(np.float32)
            if name.endswith("bias") and cls.forget_bias_one:
                params[name][2 * cell_dim:3 * cell_dim] += np.float32(1.0)
        comp._set_host(params)
        return comp

    forget_bias_one: ClassVar[bool] = False

    #: proto tokens of InitData and their kind for nnetmix.nnet.init ('f' float)
    PROTO_OPTIONS: ClassVar[dict[str, str]] = {
        "<CellDim>": "f", "<ParamRange>": "f", "<ParamScale>": "f", "<LearnRateCoef>": "f",
        "<BiasLearnRateCoef>": "f", "<CellClip>": "f", "<DiffClip>": "f",
        "<CellDiffClip>": "f", "<GradClip>": "f"}

    # -- info -------------------------------------------------------------------------------
    def _options_info(self) -> str:
        g = "{:.6g}".format
        return (f"( learn_rate_coef_ {g(self.learn_rate_coef)}, bias_learn_rate_coef_ "
                f"{g(self.bias_learn_rate_coef)}, cell_clip_ {g(self.cell_clip)}, diff_clip_ "
                f"{g(self.diff_clip)}, grad_clip_ {g(self.grad_clip)} )")

    _ACTS: ClassVar[tuple] = (("YI{}(0..1)^  ", "y", 1), ("YF{}(0..1)^  ", "y", 2),
                              ("YO{}(0..1)^  ", "y", 3), ("YG{}(-1..1)  ", "y", 0),
                              ("YC{}(-R..R)* ", "c", -1), ("YH{}(-1..1)  ", "h", -1),
                              ("YM{}(-1..1)  ", "m", -1), ("YR{}(-R..R)  ", "r", -1))
    _DERS: ClassVar[tuple] = (("DI{}^ ", "d", 1), ("DF{}^ ", "d", 2), ("DO{}^ ", "d", 3),
                              ("DG{}  ", "d", 0), ("DC{}* ", "dc", -1), ("DH{}  ", "dh", -1),
                              ("DM{}  ", "dm", -1), ("DR{}  ", "dr", -1))

    def _buffer_lines(self, d: str, tag: str, table) -> str:
        """Kaldi's InfoGradient lines of one direction's buffers (all (T+2)*S rows, as Kaldi's
        propagate_buf_/backpropagate_buf_)."""
        p, C = self._passes[d], self.cell_dim
        out = []
        for label, buf, gate in table:
            a = self._k.host(getattr(p, buf))
            if gate >= 0:
                a = a[:, gate * C:(gate + 1) * C]
            out.append(f"\n  {label.format(tag)}{moment_statistics(a)}")
        return "".join(out)

    def info_gradient(self, grads: dict[str, np.ndarray]) -> str:
        """Kaldi's InfoGradient: the options, gradient statistics, then the last call's
        activations and derivatives. Our gradients are the SUM over the last minibatch before
        momentum (Kaldi's *_corr_ buffers hold it after momentum)."""
        sep = "\n  ---"
        out = self._options_info() + "\n  ### Gradients " + sep.join(
            "".join(f"\n  {n}_corr_  {moment_statistics(grads[n])}" for n, _ in
                    self.param_specs() if n.startswith(d)) for d in self.directions)
        if not self._passes:
            return out
        nl = "\n" if len(self.directions) > 1 else ""
        out += nl + "\n  ### Activations (mostly after non-linearities)" + sep.join(
            self._buffer_lines(d, t, self._ACTS) for d, t in zip(self.directions, self._tags))
        out += nl + "\n  ### Derivatives (w.r.t. inputs of non-linearities)" + sep.join(
            self._buffer_lines(d, t, self._DERS) for d, t in zip(self.directions, self._tags))
        return out

    _tags: ClassVar[tuple[str, ...]] = ("",)   #: InfoGradient's direction tags


class LstmProjected(_ProjectedLstm):
    """Uni-directional LSTM with peepholes and a recurrent projection (output = projection r)."""

    marker = "<LstmProjected>"

    def _drop_buffers(self) -> None:
        super()._drop_buffers()
        self._state: Any = None     # (c, r) of the last frame of each stream, on the backend

    def reset_streams(self, flags: Sequence[int]) -> None:
        flags = [int(f) for f in flags]
        if len(flags) != self.num_streams:
            raise NnetError(f"{self.marker}: reset_streams got {len(flags)} flags for "
                            f"{self.num_streams} streams")
        if self._state is None or int(self._state[0].shape[0]) != len(flags):
            self._state = None      # re-created as zeros at the next propagate
            return
        for s, f in enumerate(flags):
            if f == 1:
                self._k.zero_rows(self._state[0], s)
                self._k.zero_rows(self._state[1], s)

    def _on_new_backend(self) -> None:
        self._state = None

    def _before_forward(self, be, S: int) -> None:
        p = self._passes[""]
        c0, r0 = p.block(p.c, 0), p.block(p.r, 0)
        if not self.seq_lengths or self._state is None or int(self._state[0].shape[0]) != S:
            # Kaldi: no seq lengths (nnet-forward) resets every call; a new S starts from zero
            be.fill(c0, 0.0)
            be.fill(r0, 0.0)
            self._state = (be.zeros(c0.shape, dtype=c0.dtype), be.zeros(r0.shape, dtype=r0.dtype))
        else:
            be.copy(c0, self._state[0])
            be.copy(r0, self._state[1])

    def _after_forward(self, be) -> None:
        p = self._passes[""]
        be.copy(self._state[0], p.block(p.c, p.T))
        be.copy(self._state[1], p.block(p.r, p.T))

    def info(self, host):
        return f"cell-dim {self.cell_dim} " + self._options_info() + "".join(
            f"\n  {n}_  {moment_statistics(host[n])}" for n, _ in self.param_specs())


class BlstmProjected(_ProjectedLstm):
    """Bi-directional projected LSTM: output [r_forward | r_backward], whole sequences."""

    marker = "<BlstmProjected>"
    directions = ("f_", "b_")
    forget_bias_one = True
    _tags = ("_FW", "_BW")

    def info(self, host):
        out = f"cell-dim 2x{self.cell_dim} " + self._options_info()
        for d, title in (("f_", "Forward"), ("b_", "Backward")):
            out += f"\n  {title} Direction weights:"
            out += "".join(f"\n  {n}_  {moment_statistics(host[n])}" for n, _ in
                           self.param_specs() if n.startswith(d))
        return out


register_component(LstmProjected, "<LstmProjectedStreams>")
register_component(BlstmProjected, "<BlstmProjectedStreams>")
