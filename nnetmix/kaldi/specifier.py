"""Kaldi rspecifiers, wspecifiers and extended filenames, parsed into dataclasses.

The grammar follows Kaldi's src/util/kaldi-table.cc (ClassifyRspecifier, ClassifyWspecifier)
and src/util/kaldi-io.cc (ClassifyRxfilename, ClassifyWxfilename), so a command line that works
with a Kaldi binary means the same thing here:

* ``ark:f``, ``scp:f``, options before the colon (``ark,t:``, ``ark,s,cs:``), and for writing
  ``ark,scp:a.ark,a.scp`` (the filenames split at the first comma; ``scp,ark`` is refused, as
  Kaldi refuses it).
* rxfilenames: ``-`` or empty (stdin), ``cmd |`` (input pipe), ``f:123`` (byte offset), else a
  file. wxfilenames: ``-`` or empty (stdout), ``| cmd`` (output pipe), else a file.
* an scp entry may end in a row range ``f.ark:12[0:9]`` or ``[0:9,2:4]`` (ends inclusive), as in
  Kaldi's ExtractRangeSpecifier.

Written here rather than delegated: kaldiio parses none of the options and has no wspecifier.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from nnetmix.errors import UsageError

__all__ = ["RSpecifier", "WSpecifier", "parse_rspecifier", "parse_wspecifier", "RxFile",
           "WxFile", "classify_rxfilename", "classify_wxfilename", "split_range"]

_OFFSET = re.compile(r"^(.*):([0-9]+)$")


@dataclass(frozen=True)
class RSpecifier:
    """A parsed rspecifier such as ``ark,s,cs:gunzip -c ali.1.gz |``."""

    spec: str               #: the string as given, for error messages
    type: str               #: 'ark' or 'scp'
    filename: str           #: the rxfilename of the archive or the script file
    once: bool = False      #: 'o': each key is asked for at most once (a hint; ignored here)
    sorted: bool = False    #: 's': keys are sorted (a hint; ignored here)
    called_sorted: bool = False  #: 'cs': keys are asked for in sorted order (ignored here)
    permissive: bool = False     #: 'p': unreadable scp entries are skipped / treated as absent
    background: bool = False     #: 'bg': read ahead in a thread in Kaldi (ignored here)


@dataclass(frozen=True)
class WSpecifier:
    """A parsed wspecifier such as ``ark,scp,t:a.ark,a.scp``."""

    spec: str                  #: the string as given, for error messages
    type: str                  #: 'ark', 'scp' or 'both'
    ark: Optional[str] = None  #: archive wxfilename ('ark' and 'both')
    scp: Optional[str] = None  #: script wxfilename ('scp' and 'both')
    binary: bool = True        #: 't' gives text, 'b' (default) binary
    flush: Optional[bool] = None  #: 'f' flush after every object, 'nf' never; None: Kaldi default
    permissive: bool = False   #: 'p': with type 'scp', skip keys the script file does not list


_R_FLAGS = {"o": ("once", True), "no": ("once", False), "s": ("sorted", True),
            "ns": ("sorted", False), "cs": ("called_sorted", True),
            "ncs": ("called_sorted", False), "p": ("permissive", True),
            "np": ("permissive", False), "bg": ("background", True)}


def parse_rspecifier(s: str) -> RSpecifier:
    """Parse a Kaldi rspecifier; raise UsageError naming it if it is not one."""
    head, colon, filename = s.partition(":")
    if not colon:
        raise UsageError(f"bad rspecifier '{s}' (expected ark:FILE or scp:FILE)")
    kind = None
    flags: dict[str, bool] = {}
    for opt in (o.strip() for o in head.split(",")):
        if opt in ("ark", "scp"):
            if kind is not None:
                raise UsageError(f"bad rspecifier '{s}': give ark or scp once, not both")
            kind = opt
        elif opt in ("b", "t"):
            pass  # accepted by Kaldi for symmetry with wspecifiers; the data says which it is
        elif opt in _R_FLAGS:
            name, value = _R_FLAGS[opt]
            flags[name] = value
        else:
            raise UsageError(f"bad rspecifier '{s}': unknown option '{opt}'")
    if kind is None:
        raise UsageError(f"bad rspecifier '{s}' (expected ark:FILE or scp:FILE)")
    classify_rxfilename(filename, s)  # refuses '| cmd' and the like up front
    return RSpecifier(spec=s, type=kind, filename=filename, **flags)


def parse_wspecifier(s: str) -> WSpecifier:
    """Parse a Kaldi wspecifier; raise UsageError naming it if it is not one."""
    head, colon, rest = s.partition(":")
    if not colon:
        raise UsageError(f"bad wspecifier '{s}' (expected ark:FILE, scp:FILE or ark,scp:A,S)")
    kind = None
    binary, flush, permissive = True, None, False
    for opt in (o.strip() for o in head.split(",")):
        if opt == "ark":
            if kind is not None:
                raise UsageError(f"bad wspecifier '{s}' (write ark,scp, not scp,ark)")
            kind = "ark"
        elif opt == "scp":
            if kind == "ark":
                kind = "both"
            elif kind is None:
                kind = "scp"
            else:
                raise UsageError(f"bad wspecifier '{s}': scp given twice")
        elif opt in ("b", "t"):
            binary = opt == "b"
        elif opt in ("f", "nf"):
            flush = opt == "f"
        elif opt == "p":
            permissive = True
        else:
            raise UsageError(f"bad wspecifier '{s}': unknown option '{opt}'")
    if kind is None:
        raise UsageError(f"bad wspecifier '{s}' (expected ark:FILE, scp:FILE or ark,scp:A,S)")
    ark = scp = None
    if kind == "both":
        ark, comma, scp = rest.partition(",")
        if not comma:
            raise UsageError(f"bad wspecifier '{s}': ark,scp needs two filenames, ARK,SCP")
    elif kind == "ark":
        ark = rest
    else:
        scp = rest
    for name in (ark, scp):
        if name is not None:
            classify_wxfilename(name, s)
    return WSpecifier(spec=s, type=kind, ark=ark, scp=scp, binary=binary, flush=flush,
                      permissive=permissive)


@dataclass(frozen=True)
class RxFile:
    """A classified rxfilename: kind is 'stdin', 'pipe', 'offset' or 'file'."""

    name: str           #: the rxfilename as given
    kind: str
    path: str = ""      #: file path ('offset', 'file') or shell command ('pipe')
    offset: int = 0     #: byte offset ('offset')


@dataclass(frozen=True)
class WxFile:
    """A classified wxfilename: kind is 'stdout', 'pipe' or 'file'."""

    name: str
    kind: str
    path: str = ""      #: file path ('file') or shell command ('pipe')


def classify_rxfilename(name: str, context: str = "") -> RxFile:
    """Kaldi's ClassifyRxfilename; ``context`` (e.g. the rspecifier) goes into the error."""
    where = f"{context}: " if context else ""
    if name in ("", "-"):
        return RxFile(name, "stdin")
    if name.lstrip().startswith("|"):
        raise UsageError(f"{where}'{name}' is an output pipe, not something to read from "
                         "(an input pipe ends in '|': 'gunzip -c x.gz |')")
    if name.rstrip().endswith("|"):
        return RxFile(name, "pipe", path=name.rstrip()[:-1])
    m = _OFFSET.match(name)
    if m:
        return RxFile(name, "offset", path=m.group(1), offset=int(m.group(2)))
    return RxFile(name, "file", path=name)


def classify_wxfilename(name: str, context: str = "") -> WxFile:
    """Kaldi's ClassifyWxfilename; ``context`` (e.g. the wspecifier) goes into the error."""
    where = f"{context}: " if context else ""
    if name in ("", "-"):
        return WxFile(name, "stdout")
    if name.lstrip().startswith("|"):
        return WxFile(name, "pipe", path=name.lstrip()[1:])
    if name.rstrip().endswith("|"):
        raise UsageError(f"{where}'{name}' is an input pipe, not something to write to "
                         "(an output pipe starts with '|': '| gzip -c > x.gz')")
    if _OFFSET.match(name):
        raise UsageError(f"{where}cannot write to '{name}': a byte offset is for reading only")
    return WxFile(name, "file", path=name)


def _parse_span(text: str, what: str) -> Optional[tuple[int, int]]:
    text = text.strip()
    if not text:
        return None
    m = re.fullmatch(r"(\d+):(\d+)", text)
    if not m or int(m.group(1)) > int(m.group(2)):
        raise UsageError(f"bad range '{text}' in '{what}' (expected FIRST:LAST, ends inclusive)")
    return int(m.group(1)), int(m.group(2))


def split_range(rxfilename: str) -> tuple[str, Optional[tuple[Optional[tuple[int, int]],
                                                             Optional[tuple[int, int]]]]]:
    """Split ``f.ark:12[0:9,2:4]`` into ``('f.ark:12', ((0, 9), (2, 4)))``; no range gives None.

    Rows first, then optionally columns; ends are inclusive, as Kaldi's ExtractRangeSpecifier.
    """
    stripped = rxfilename.rstrip()
    if not stripped.endswith("]") or "[" not in stripped or stripped.endswith("|"):
        return rxfilename, None
    base, _, inner = stripped[:-1].rpartition("[")
    rows_text, _, cols_text = inner.partition(",")
    return base, (_parse_span(rows_text, rxfilename), _parse_span(cols_text, rxfilename))
