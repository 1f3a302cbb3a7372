"""Single Kaldi objects behind extended filenames: global CMVN stats, priors, one alignment.

``read_object('cmvn.ark:123', 'mat')``, ``read_object('gunzip -c x.gz |', 'vec')`` and
``write_object('| gzip -c > x.gz', v, 'vec')`` mean what they mean to Kaldi's Input/Output
classes (src/util/kaldi-io.cc). Binary or text is detected on reading (``\\0B``) and chosen on
writing. An ``ivec`` object uses Kaldi's Write/ReadIntegerVector layout, as ``copy-int-vector``
does for a non-table argument. A file is written under a temporary name and renamed into place,
so a crash never leaves half an object. Written here; kaldiio's load_mat/save_mat cover matrices
only and neither pipes-with-status nor atomic writes.
"""
from __future__ import annotations

from typing import Any, Optional

from nnetmix.kaldi.codec import Where, check_kind, encode_value, read_value
from nnetmix.kaldi.specifier import classify_rxfilename, classify_wxfilename
from nnetmix.kaldi.stream import open_input, open_output

__all__ = ["read_object", "write_object"]


def read_object(rxfilename: str, kind: str) -> Any:
    """Read one object of ``kind`` (one of codec.KINDS) from an rxfilename."""
    check_kind(kind, rxfilename)
    f = classify_rxfilename(rxfilename)
    src = open_input(f)
    try:
        value = read_value(src, kind, Where(f.path if f.kind in ("file", "offset") else src.name),
                           table=False)
        if f.kind == "pipe":  # read the pipe to its end so its exit status means something
            while src.read(1 << 16):
                pass
    except BaseException:
        src.close(check=False)
        raise
    src.close(check=True)
    return value


def write_object(wxfilename: str, value: Any, kind: str, binary: bool = True) -> None:
    """Write one object of ``kind`` to a wxfilename (file, ``-``, ``| cmd``)."""
    _write(wxfilename, value, kind, binary, table=False, key=None)


def _write(wxfilename: str, value: Any, kind: str, binary: bool, table: bool,
           key: Optional[str]) -> None:
    check_kind(kind, wxfilename)
    f = classify_wxfilename(wxfilename)
    data = encode_value(value, kind, binary, Where(wxfilename, key), table=table)
    sink = open_output(f)
    try:
        sink.write(data)
    except BaseException:
        sink.abort()
        raise
    sink.commit()
