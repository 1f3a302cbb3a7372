"""Reading and writing nnet1 networks, binary and text, byte for byte as Kaldi's Nnet::Write.

Layout (src/nnet/nnet-nnet.cc, nnet-component.cc)::

    <Nnet> \\n
    <AffineTransform> OUT IN \\n                  (dims OUTPUT first)
    <LearnRateCoef> 1 <BiasLearnRateCoef> 1 <MaxNorm> 0 \\n
     [\\n  w w w \\n  w w w ]\\n  [ b b ]\\n       (WriteData of the component)
    <!EndOfComponent> \\n
    ...
    </Nnet> \\n

Binary files start with ``\\0B``; tokens keep their trailing space, numbers are Kaldi's
WriteBasicType (size byte + little-endian value), matrices ``FM``/vectors ``FV``. Reading accepts
what Kaldi's Nnet::Read accepts: markers in any case, an optional ``<!EndOfComponent>``, a file
without the ``<Nnet>`` header. A file that opens with ``<Nnet>`` must end with ``</Nnet>``
(Kaldi always writes it), so a file cut at a component boundary is an error, not a smaller net.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from nnetmix.errors import FormatError
from nnetmix.kaldi.specifier import classify_rxfilename
from nnetmix.kaldi.stream import open_input, open_output
from nnetmix.nnet.components import COMPONENT_TYPES, Component, Rbm, component_type
from nnetmix.kaldi.tokens import TokenReader, TokenWriter

__all__ = ["read_components", "encode_components", "write_components"]


def _read_stream(r: TokenReader, rbm_to_affine: bool) -> list[Component]:
    comps: list[Component] = []
    first = r.peek_token()
    header = first == "<Nnet>"
    if header:
        r.token(allow_eof=True)
    while True:
        r.context = ""
        tok = r.peek_token()
        if not tok:
            if header:
                raise r.fail("truncated model", "expected </Nnet> or a component, got end of file")
            break
        tok = r.token(allow_eof=True)
        if tok == "</Nnet>":
            break
        cls = component_type(tok)
        n = len(comps) + 1
        if cls is None and not tok.endswith(">") and not r.peek_token():
            raise r.fail("truncated model", f"the file ends inside the token '{tok[:40]}' "
                         f"(component {n})")
        if cls is None:
            known = " ".join(dict.fromkeys(c.marker for c in COMPONENT_TYPES.values()))
            raise r.fail("unknown component", f"'{tok[:40]}' (component {n}; supported: "
                         f"{known})")
        r.context = f"component {n} {cls.marker}"
        out_dim = r.int32("output dim")
        in_dim = r.int32("input dim")
        if out_dim <= 0 or in_dim <= 0:
            raise r.fail("bad dims", f"expected positive dims, got output {out_dim} input {in_dim}")
        comp = cls.read_data(r, in_dim, out_dim)
        if r.peek_token() == "<!EndOfComponent>":
            r.token(allow_eof=True)
        if comps and comps[-1].output_dim != comp.input_dim:
            raise r.fail("dimension mismatch", f"previous component's output dim "
                         f"{comps[-1].output_dim} != this component's input dim {comp.input_dim}")
        if rbm_to_affine and isinstance(comp, Rbm):
            comps.extend(comp.to_feedforward(comp.params))
        else:
            comps.append(comp)
    r.context = ""
    return comps


def read_components(rxfilename: str, rbm_to_affine: bool = False) -> list[Component]:
    """Read the components of an nnet1 network (host float32 parameters) from an rxfilename."""
    f = classify_rxfilename(rxfilename)
    name = f.path if f.kind in ("file", "offset") else f.name
    src = open_input(f)
    try:
        # Kaldi writes even a network of no components as <Nnet> </Nnet>: 0 bytes is damage
        # (a pipe's empty output is left to its exit status)
        if f.kind != "pipe" and not src.peek(1):
            raise FormatError(f"{name}: empty file, not an nnet1 network")
        binary = src.peek(2) == b"\0B"
        if binary:
            src.read(2)
        comps = _read_stream(TokenReader(src, binary, name), rbm_to_affine)
        if f.kind == "pipe":
            while src.read(1 << 16):
                pass
    except BaseException:
        src.close(check=False)
        raise
    src.close(check=True)
    return comps


def encode_components(comps: Sequence[Component], hosts: Iterable[dict[str, np.ndarray]],
                      binary: bool) -> bytes:
    """The bytes of Kaldi's Nnet::Write for ``comps`` with parameter values ``hosts``."""
    w = TokenWriter(binary, "nnet")
    w.token("<Nnet>")
    w.newline()
    for comp, host in zip(comps, hosts):
        w.token(comp.marker)
        w.int32(comp.output_dim)
        w.int32(comp.input_dim)
        w.newline()
        comp.write_data(w, host)
        w.token("<!EndOfComponent>")
        w.newline()
    w.token("</Nnet>")
    w.newline()
    return (b"\0B" if binary else b"") + w.getvalue()


def write_components(wxfilename: str, comps: Sequence[Component],
                     hosts: Iterable[dict[str, np.ndarray]], binary: bool = True) -> None:
    """Write a network to a wxfilename; a file goes to a temporary name renamed into place."""
    data = encode_components(comps, hosts, binary)
    sink = open_output(wxfilename)
    try:
        sink.write(data)
    except BaseException:
        sink.abort()
        raise
    sink.commit()
