"""Table writer: Kaldi's TableWriter (``ark:``, ``ark,scp:``, ``scp:``, ``,t`` for text).

Each ``write(key, value)`` puts ``key SPACE object`` in the archive and, for ``ark,scp``, the line
``key ARK:OFFSET`` in the script, OFFSET being where the object's ``\\0B`` (or its text) starts,
as Kaldi's TableWriterBothImpl records it. A plain ``scp:LIST`` wspecifier writes each key to the
file the existing script LIST names for it (skipping unlisted keys with the 'p' option).

Files are written under temporary names in their own directories and renamed into place when
the writer closes without error (the archive first, so a script never names a missing archive);
an exception inside ``with TableWriter(...)`` removes the temporary files and leaves earlier
outputs as they were (docs/design.md). Written here rather than delegated to kaldiio's ``WriteHelper``:
it has no posteriors, no atomic rename, and writes text int vectors Kaldi cannot read.
"""
from __future__ import annotations

import logging
from typing import Any, Optional

from nnetmix.errors import FormatError, NnetmixError
from nnetmix.kaldi.codec import Where, check_kind, encode_value
from nnetmix.kaldi.errors import KaldiIOError
from nnetmix.kaldi.objects import _write as _write_object
from nnetmix.kaldi.specifier import classify_rxfilename, parse_wspecifier
from nnetmix.kaldi.stream import OutputSink, open_input, open_output

__all__ = ["ArkScpSinks", "EmptyTableError", "TableWriter"]

logger = logging.getLogger(__name__)


class EmptyTableError(KaldiIOError):
    """A table writer closed with no entry written: no output file is made."""


def _check_key(key: str, spec: str) -> bytes:
    if not isinstance(key, str) or not key or any(c.isspace() for c in key):
        raise FormatError(f"{spec}: invalid key {key!r} (keys are non-empty, with no whitespace)")
    return key.encode("utf-8", errors="surrogateescape")


class ArkScpSinks:
    """The commit/abort life of a table writer's archive and script sinks (``_ark``, ``_scp``,
    temporary files renamed into place on commit), shared by every table writer here
    (TableWriter, nnetmix.feat.wavetable.WaveWriter, nnetmix.decode.latio.CompactLatticeWriter).

    ``close()`` renames the archive, then the script (so a script never points into an archive
    that is not there); ``abort()`` removes both temporary files and keeps what was there
    before; as a context manager, a block that raises aborts. An archive file with no entry
    is an error: Kaldi's table tools exit 1 when they did nothing (copy-feats,
    compute-mfcc-feats: ``num_done != 0 ? 0 : 1``) but still leave an empty archive, which a
    later step reads as a data set with no utterances; here no file is left and the error says
    why. A pipe (``ark:| gzip -c > ali.1.gz``) or stdout gets a clean, empty stream, as in
    Kaldi: steps such as align_si.sh accept a job that aligned nothing when others did.
    """

    _ark: Optional[OutputSink] = None
    _scp: Optional[OutputSink] = None
    closed: bool = False
    wspecifier: str = ""

    def close(self) -> None:
        """Finish: rename the archive, then the script, into place; or, when nothing was
        written to an archive file, make no output at all and raise :class:`EmptyTableError`
        (a pipe or stdout still ends cleanly: its reader gets a valid, empty stream)."""
        if self.closed:
            return
        if self._ark is not None and self._ark.kind == "file" and self._ark.pos == 0:
            self.abort()
            raise EmptyTableError(f"{self.wspecifier}: nothing to write (no item was done), so "
                                  "no output was made")
        self.closed = True
        try:
            if self._ark is not None:
                self._ark.commit()
        except BaseException:
            if self._scp is not None:
                self._scp.abort()
            raise
        if self._scp is not None:
            self._scp.commit()

    def abort(self) -> None:
        """Give up: remove temporary files, keep whatever was there before."""
        if self.closed:
            return
        self.closed = True
        for sink in (self._ark, self._scp):
            if sink is not None:
                sink.abort()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


class TableWriter(ArkScpSinks):
    """Write (key, value) pairs of one kind to a Kaldi table; a context manager.

    ``w.write(key, value)`` or ``w[key] = value``. Binary unless the wspecifier has ``t``.
    """

    def __init__(self, wspecifier: str, kind: str = "mat"):
        self.wspecifier = wspecifier
        self.spec = parse_wspecifier(wspecifier)
        self.kind = check_kind(kind, wspecifier)
        self._ark: Optional[OutputSink] = None
        self._scp: Optional[OutputSink] = None
        self._targets: dict[str, str] = {}
        self.closed = False
        if self.spec.type == "scp":
            self._targets = self._read_targets(self.spec.scp or "")
            return
        self._ark = open_output(self.spec.ark or "", wspecifier)
        if self.spec.type == "both":
            try:
                self._scp = open_output(self.spec.scp or "", wspecifier)
            except BaseException:
                self._ark.abort()
                self.closed = True
                raise

    def _read_targets(self, scp: str) -> dict[str, str]:
        targets: dict[str, str] = {}
        src = open_input(classify_rxfilename(scp, self.wspecifier), self.wspecifier)
        try:
            for lineno, line in enumerate(iter(src.readline, b""), 1):
                parts = line.decode("utf-8", errors="surrogateescape").split(None, 1)
                if not parts:
                    continue
                if len(parts) != 2:
                    raise FormatError(f"{src.name}:{lineno}: expected 'key wxfilename', "
                                      f"got '{parts[0][:80]}'")
                targets[parts[0]] = parts[1].strip()
        finally:
            src.close(check=False)
        return targets

    def write(self, key: str, value: Any) -> None:
        """Write one object; the value is encoded before anything reaches the file."""
        if self.closed:
            raise KaldiIOError(f"{self.wspecifier}: write after close (key {key})")
        key_bytes = _check_key(key, self.wspecifier)
        if self._ark is None:
            self._write_listed(key, value)
            return
        data = encode_value(value, self.kind, self.spec.binary, Where(self.wspecifier, key))
        self._ark.write(key_bytes + b" ")
        offset = self._ark.pos
        self._ark.write(data)
        if self._scp is not None:
            self._scp.write(key_bytes + f" {self.spec.ark}:{offset}\n".encode("utf-8", "surrogateescape"))
        if self.spec.flush:
            self._ark.flush()
            if self._scp is not None:
                self._scp.flush()

    def _write_listed(self, key: str, value: Any) -> None:
        target = self._targets.get(key)
        if target is None:
            if self.spec.permissive:
                logger.warning("%s: key %s is not in %s, not writing it (permissive)",
                               self.wspecifier, key, self.spec.scp)
                return
            raise KaldiIOError(f"{self.wspecifier}: key {key} is not listed in {self.spec.scp}")
        _write_object(target, value, self.kind, self.spec.binary, table=True, key=key)

    def __setitem__(self, key: str, value: Any) -> None:
        self.write(key, value)

    def __del__(self) -> None:
        if not getattr(self, "closed", True):
            logger.warning("%s: TableWriter dropped without close(); output discarded",
                           self.wspecifier)
            try:
                self.abort()
            except NnetmixError:
                pass
