"""An nnet1 network whose parameters live in ONE flat buffer.

``Nnet.params`` is a single contiguous 1-D array (float32 for training, float64 for gradient
checks) and every component's W and b are reshaped views into it, in Kaldi's Nnet::GetParams
order (component by component, W row-major then b). ``Nnet.grads`` and ``Nnet.velocity`` have
the same layout. Averaging models over MPI is then one all-reduce on ``params`` (backend.py's
docstring); BMUF keeps more buffers of ``num_params`` and never needs to know the layers.

Training step, nnet1 semantics (nnet-train-frmshuff.cc with Xent)::

    logits = nnet.propagate(x, through_softmax=False)     # stops below a final <Softmax>
    loss, correct = be.softmax_xent(logits, targets, probs, grad)
    nnet.backpropagate(grad, input_diff=False)             # SUM gradients into nnet.grads
    nnet.update(opts)                                      # per-layer nnet1 update

Activations live in buffers preallocated per layer and reused while the minibatch does not grow.
An AffineTransform followed by a Sigmoid or Tanh runs as gemm + ``bias_sigmoid``/``bias_tanh``
(the affine buffer then holds X W^T without the bias; nothing downstream reads it).

Trained rows only (``propagate(x, rows=...)``): a CSC-BPTT step computes its chunks' context
frames (42 of 106 in seed 002's 21-64+21) and padding only for the recurrent layers; their
outputs are left out of the loss. The feed-forward tail after the last recurrent layer (the
output affine layer over thousands of pdfs, the softmax) is row by row, so it runs on the
trained rows alone: the input of the tail is gathered (``Backend.take_rows``) and the tail's
input derivative scattered back with zeros on the rows left out (``Backend.put_rows``), the
same gradients as computing every row and zeroing the derivative of the others (up to the
order of the GEMMs' sums).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional, Sequence

import numpy as np

from nnetmix.kernels import get_backend
from nnetmix.nnet.components import (AddShift, AffineTransform, Component, LinearTransform, Rbm,
                                     Rescale, Sigmoid, Softmax, Tanh)
from nnetmix.nnet.nnet_io import encode_components, read_components, write_components
from nnetmix.nnet.options import NnetError, NnetTrainOptions
from nnetmix.nnet.prelu_dropout import Dropout, ParametricRelu
from nnetmix.nnet.recurrent import MultistreamComponent

__all__ = ["Nnet", "ParamBlock", "read_nnet"]

#: components whose output row i depends on input row i alone (what a tail run on some rows
#: needs); <Dropout> draws its masks for the rows it sees, so it drops other frames (at the
#: same rate) when only the trained rows reach it
_ROWWISE = (AffineTransform, LinearTransform, Sigmoid, Tanh, Softmax, AddShift, Rescale,
            ParametricRelu, Dropout)


@dataclasses.dataclass(frozen=True)
class ParamBlock:
    """Where one parameter block lies in the flat buffers."""

    component: int          #: index of the component (0-based)
    name: str               #: "W", "b", "shift", "scale", "hid_bias", "vis_bias"
    offset: int             #: first element in the flat buffer
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


def _default_backend():
    return get_backend("cpu")


class Nnet:
    """A feed-forward nnet1 network: components plus flat params/grads/velocity buffers."""

    def __init__(self, components: Sequence[Component] = (), backend=None, dtype=np.float32):
        self.components: list[Component] = list(components)
        for i in range(1, len(self.components)):
            a, b = self.components[i - 1], self.components[i]
            if a.output_dim != b.input_dim:
                raise NnetError(f"component {i} {a.marker} has output dim {a.output_dim}, "
                                f"component {i + 1} {b.marker} has input dim {b.input_dim}")
        self.layout: list[ParamBlock] = []
        off = 0
        for ci, comp in enumerate(self.components):
            for name, shape in comp.param_specs():
                blk = ParamBlock(ci, name, off, tuple(int(s) for s in shape))
                self.layout.append(blk)
                off += blk.size
        self.num_params = off
        self.dtype = np.dtype(dtype)
        self._training = False   #: set_training: <Dropout> drops only in training mode
        host = np.zeros(off, dtype=self.dtype)
        for blk in self.layout:
            v = self.components[blk.component].params[blk.name]
            host[blk.offset:blk.offset + blk.size] = np.asarray(v).ravel()
        self.backend = None
        #: optional gradient preconditioner (NG-SGD, nnetmix.train.ngsgd): None = plain nnet1
        #: SGD. It must offer ``accumulate_gradient(be, index, component, x, dy) -> bool``
        #: (True: it wrote that component's grads) and ``before_update(be, index, component,
        #: opts, num_frames)``.
        self.preconditioner: Any = None
        self.params: Any = host
        self.grads: Any = np.zeros(off, dtype=self.dtype)
        self.velocity: Any = np.zeros(off, dtype=self.dtype)
        self._bind()
        if backend is not None:
            self.to_backend(backend)

    # -- structure ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.components)

    def __repr__(self) -> str:
        inner = ", ".join(c.marker for c in self.components)
        return f"Nnet({self.input_dim} -> {self.output_dim}: {inner}; {self.num_params} params)"

    @property
    def input_dim(self) -> int:
        return self.components[0].input_dim if self.components else 0

    @property
    def output_dim(self) -> int:
        return self.components[-1].output_dim if self.components else 0

    def offsets(self, component: int) -> dict[str, ParamBlock]:
        """The parameter blocks of one component, by name."""
        return {b.name: b for b in self.layout if b.component == component}

    def _views(self, flat) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [{} for _ in self.components]
        for blk in self.layout:
            out[blk.component][blk.name] = flat[blk.offset:blk.offset + blk.size].reshape(blk.shape)
        return out

    def _bind(self) -> None:
        """Point every component's params/grads/velocity at views of the flat buffers."""
        for comp, p, g, v in zip(self.components, self._views(self.params),
                                 self._views(self.grads), self._views(self.velocity)):
            comp.params, comp.grads, comp.velocity = p, g, v
        self._acts: dict[int, Any] = {}
        self._diffs: dict[int, Any] = {}
        self._cut_bufs: dict[int, Any] = {}  # the gathered tail input (0), scattered diff (1)
        self._ran: Optional[tuple[int, int]] = None  # (components run, rows) of the last forward
        #: (first tail component, the rows it ran on, the full output below it) of the last
        #: forward with ``rows``; None without
        self._cut: Optional[tuple[int, np.ndarray, Any]] = None

    def to_backend(self, backend, dtype=None) -> "Nnet":
        """Move params, grads and velocity to ``backend`` (optionally changing dtype); returns self."""
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        host = [self._host(a).astype(dtype) for a in (self.params, self.grads, self.velocity)]
        self.backend = backend
        self.dtype = dtype
        self.params, self.grads, self.velocity = (backend.asarray(h, dtype=dtype) for h in host)
        self._bind()
        return self

    def _host(self, a) -> np.ndarray:
        return np.array(a) if self.backend is None else self.backend.to_host(a)

    def _be(self):
        if self.backend is None:
            self.to_backend(_default_backend())
        return self.backend

    def host_params(self) -> list[dict[str, np.ndarray]]:
        """Host copies of every component's parameters (for writing, info, statistics)."""
        return self._views(self._host(self.params))

    def get_params(self) -> np.ndarray:
        """A host copy of the flat parameter buffer (Kaldi's GetParams order)."""
        return self._host(self.params)

    def set_params(self, flat: np.ndarray) -> None:
        """Copy a host flat vector (Kaldi's SetParams order) into the parameter buffer."""
        flat = np.asarray(flat)
        if flat.shape != (self.num_params,):
            raise NnetError(f"set_params: expected {self.num_params} values, got shape {flat.shape}")
        if self.backend is None:
            self.params[...] = flat
        else:
            self.backend.copy(self.params, self.backend.asarray(flat, dtype=self.dtype))

    def check_finite(self) -> None:
        """Kaldi's Nnet::Check: refuse NaN/Inf weights (weight explosion)."""
        ok = (np.all(np.isfinite(self.params)) if self.backend is None
              else self.backend.all_finite(self.params))
        if not ok:
            raise NnetError("'nan' or 'inf' in network parameters (need lower learning rate?)")

    # -- training and test mode -----------------------------------------------------------------
    @property
    def training(self) -> bool:
        """True between ``set_training(True)`` and ``set_training(False)``."""
        return self._training

    def set_training(self, training: bool, seed: int = 777) -> None:
        """Training mode (a trainer's epoch) or test mode (the default: nnet-forward, the
        decoders, cross-validation). Only <Dropout> differs: it draws masks in training mode,
        from streams seeded here (one per component, from ``seed``), and is the identity in
        test mode, as Kaldi's nnet-forward and cross-validation get by setting the rate to 0."""
        self._training = bool(training)
        rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, 0xD809])
        for c in self.components:
            switch = getattr(c, "set_training", None)
            if switch is not None:
                switch(training, int(rng.integers(1 << 32)))

    def set_dropout_rate(self, rate: float, log=None) -> None:
        """Kaldi's Nnet::SetDropoutRate: the rate of every <Dropout> (nnet-copy --dropout-rate),
        each change logged as Kaldi logs it."""
        for i, c in enumerate(self.components):
            if hasattr(c, "set_dropout_rate"):
                old = c.dropout_rate
                c.set_dropout_rate(rate)
                if log is not None:
                    log.info("Setting dropout-rate in component %d from %s to %s", i,
                             "{:.6g}".format(old), "{:.6g}".format(c.dropout_rate))

    # -- building -------------------------------------------------------------------------------
    def copy_components(self) -> list[Component]:
        """Detached copies of the components (host float32 parameters)."""
        return [c.detached(h) for c, h in zip(self.components, self.host_params())]

    def concat(self, *others: "Nnet") -> "Nnet":
        """A new network: this one followed by ``others`` (nnet-concat, Nnet::AppendNnet)."""
        comps = self.copy_components()
        for o in others:
            comps += o.copy_components()
        return Nnet(comps, dtype=self.dtype)

    def sub(self, start: int = 0, stop: Optional[int] = None) -> "Nnet":
        """A new network of components[start:stop] (nnet-copy --remove-first/last-components)."""
        return Nnet(self.copy_components()[start:stop], dtype=self.dtype)

    def rbm_to_feedforward(self) -> "Nnet":
        """A new network with every <Rbm> replaced by AffineTransform (+ Sigmoid)."""
        comps: list[Component] = []
        for c in self.copy_components():
            comps += c.to_feedforward(c.params) if isinstance(c, Rbm) else [c]
        return Nnet(comps, dtype=self.dtype)

    # -- files ----------------------------------------------------------------------------------
    @classmethod
    def read(cls, rxfilename: str, rbm_to_affine: bool = False, backend=None,
             dtype=np.float32) -> "Nnet":
        return cls(read_components(rxfilename, rbm_to_affine), backend=backend, dtype=dtype)

    def write(self, wxfilename: str, binary: bool = True) -> None:
        """Write as Kaldi's Nnet::Write (atomically: temp file renamed into place)."""
        write_components(wxfilename, self.components, self.host_params(), binary)

    def to_bytes(self, binary: bool = True) -> bytes:
        return encode_components(self.components, self.host_params(), binary)

    def info(self) -> str:
        """Kaldi's Nnet::Info, as nnet-info prints it."""
        g = "{:.6g}".format
        lines = [f"num-components {len(self.components)}"]
        if self.components:
            lines += [f"input-dim {self.input_dim}", f"output-dim {self.output_dim}",
                      f"number-of-parameters {g(np.float32(self.num_params) / np.float32(1e6))} millions"]
            for i, (c, h) in enumerate(zip(self.components, self.host_params())):
                lines.append(f"component {i + 1} : {c.marker}, input-dim {c.input_dim}, "
                             f"output-dim {c.output_dim}, {c.info(h)}")
        return "\n".join(lines) + "\n"

    def info_gradient(self) -> str:
        """Gradient statistics per parameter block (Kaldi's InfoGradient, roughly)."""
        g = self._views(self._host(self.grads))
        lines = ["### GRADIENT STATS :"]
        for i, c in enumerate(self.components):
            if g[i]:
                lines.append(f"Component {i + 1} : {c.marker}, " + c.info_gradient(g[i]))
        return "\n".join(lines) + "\n"

    # -- multistream (recurrent components) ---------------------------------------------------
    def set_seq_lengths(self, lengths: Sequence[int]) -> None:
        """Kaldi's Nnet::SetSeqLengths: S = len(lengths) interleaved streams from now on (row
        t*S + s of an input is frame t of stream s); frames past a stream's length are padding."""
        for c in self.components:
            if isinstance(c, MultistreamComponent):
                c.set_seq_lengths(lengths)

    def reset_streams(self, flags: Sequence[int]) -> None:
        """Kaldi's Nnet::ResetStreams: zero the carried state of the streams flagged 1."""
        for c in self.components:
            if isinstance(c, MultistreamComponent):
                c.reset_streams(flags)

    # -- computation ----------------------------------------------------------------------------
    def _buffer(self, store: dict, key: int, rows: int, cols: int):
        buf = store.get(key)
        if buf is None or buf.shape[0] < rows or buf.shape[1] != cols or buf.dtype != self.dtype:
            buf = self.backend.empty((max(rows, 1), cols), dtype=self.dtype)
            store[key] = buf
        return buf[:rows]

    def _num_to_run(self, through_softmax: bool) -> int:
        n = len(self.components)
        if not through_softmax and n and isinstance(self.components[-1], Softmax):
            n -= 1
        return n

    def tail_start(self) -> int:
        """The first component of the row-wise tail: the components from here on compute each
        output row from its input row alone (after the last recurrent or other non-row-wise
        component; 0 when every component is row-wise)."""
        return max((i + 1 for i, c in enumerate(self.components)
                    if not isinstance(c, _ROWWISE)), default=0)

    def propagate(self, x, through_softmax: bool = True, fuse: bool = True,
                  rows: Optional[np.ndarray] = None):
        """Forward ``x`` (rows = frames, a backend array of the network's dtype); returns the
        output (a view of an internal buffer, valid until the next call).

        ``through_softmax=False`` stops below a final <Softmax>: the pre-softmax activations
        for ``Backend.softmax_xent``. The input is kept (not copied) for backpropagate().
        ``rows`` (host integer indices): only these rows of the output are wanted, in this
        order; the row-wise tail (:meth:`tail_start`) runs on them alone and the output has
        ``len(rows)`` rows (backpropagate then takes their derivative and gives every other
        row a zero one).
        """
        be = self._be()
        if len(x.shape) != 2 or x.shape[1] != self.input_dim:
            raise NnetError(f"propagate: input has shape {tuple(x.shape)}, the network's input "
                            f"dim is {self.input_dim}")
        if x.dtype != self.dtype:
            raise NnetError(f"propagate: input is {x.dtype}, the network is {self.dtype}")
        keep = rows
        rows = int(x.shape[0])
        n = self._num_to_run(through_softmax)
        cut = None
        if keep is not None:
            keep = np.asarray(keep, dtype=np.intp)
            if keep.ndim != 1 or (keep.size and (keep.min() < 0 or keep.max() >= rows)):
                raise NnetError(f"propagate: rows must be indices of the input's {rows} rows")
            cut = min(self.tail_start(), n)
        self._acts[0] = x
        self._cut = None
        acts = [x]
        i = 0
        while i <= n:
            if i == cut:  # the tail from here on: the kept rows only
                full = acts[i]
                acts[i] = self._buffer(self._cut_bufs, 0, len(keep), int(full.shape[1]))
                be.take_rows(full, keep, acts[i])
                self._cut = (cut, keep, full)
            if i == n:
                break
            c = self.components[i]
            t_rows = int(acts[i].shape[0])
            y = self._buffer(self._acts, i + 1, t_rows, c.output_dim)
            nxt = self.components[i + 1] if i + 1 < n else None
            if fuse and type(c) is AffineTransform and type(nxt) in (Sigmoid, Tanh) \
                    and i + 1 != cut:
                z = self._buffer(self._acts, i + 2, t_rows, nxt.output_dim)
                be.gemm(acts[i], c.params["W"], y, trans_b=True)
                (be.bias_sigmoid if type(nxt) is Sigmoid else be.bias_tanh)(y, c.params["b"], z)
                acts += [y, z]
                i += 2
                continue
            c.propagate(be, acts[i], y)
            acts.append(y)
            i += 1
        self._act_list = acts
        self._ran = (n, rows)
        return acts[n]

    def backpropagate(self, dy, input_diff: bool = True):
        """Backward from ``dy`` = dL/d(output of the last propagate) through the components run.

        Writes every parameter gradient (SUM over the minibatch) into ``grads``; returns dL/dx
        (None with ``input_diff=False``, which saves the first layer's GEMM).
        """
        if self._ran is None:
            raise NnetError("backpropagate: call propagate first")
        be = self.backend
        n, rows = self._ran
        acts = self._act_list
        cut, keep, below = self._cut if self._cut is not None else (-1, None, None)
        if tuple(dy.shape) != tuple(acts[n].shape):
            raise NnetError(f"backpropagate: diff has shape {tuple(dy.shape)}, the output of the "
                            f"last propagate has {tuple(acts[n].shape)}")
        d = dy
        if cut == n:
            d = self._buffer(self._cut_bufs, 1, rows, int(dy.shape[1]))
            be.put_rows(dy, keep, d)
        for i in reversed(range(n)):
            c = self.components[i]
            dx = None
            if i > 0 or input_diff:
                dx = self._buffer(self._diffs, i, int(acts[i].shape[0]), c.input_dim)
            c.backpropagate(be, acts[i], below if i + 1 == cut else acts[i + 1], d, dx)
            if c.updatable:
                pre = self.preconditioner
                if pre is None or not pre.accumulate_gradient(be, i, c, acts[i], d):
                    c.accumulate_gradient(be, acts[i], d)
            d = dx
            if i == cut and d is not None:  # back below the tail: zero on the rows left out
                d = self._buffer(self._cut_bufs, 1, rows, c.input_dim)
                be.put_rows(dx, keep, d)
        return d

    def update(self, opts: NnetTrainOptions, num_frames: Optional[int] = None) -> None:
        """One nnet1 update of every updatable component from ``grads`` (num_frames: the
        minibatch size, for L1/L2; default the rows of the last propagate)."""
        if num_frames is None:
            if self._ran is None:
                raise NnetError("update: call propagate/backpropagate first or give num_frames")
            num_frames = self._ran[1]
        be = self._be()
        pre = self.preconditioner
        for i, c in enumerate(self.components[: (self._ran or (len(self.components),))[0]]):
            if c.updatable:
                if pre is not None:
                    pre.before_update(be, i, c, opts, num_frames)
                c.update(be, opts, num_frames)


def read_nnet(rxfilename: str, rbm_to_affine: bool = False, backend=None,
              dtype=np.float32) -> Nnet:
    """Read an nnet1 network (binary or text) from an rxfilename."""
    return Nnet.read(rxfilename, rbm_to_affine=rbm_to_affine, backend=backend, dtype=dtype)
