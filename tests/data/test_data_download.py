"""nnetmix.data.download: a download renamed into place only once its MD5 and size match, and an
archive unpacked whole (only the folders asked for, after the caller's member check)."""
import hashlib
import io
import os
import tarfile

import pytest

from nnetmix.data.download import DownloadError, download, file_md5, read_members, unpack_tar
from nnetmix.errors import DataDirError


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def test_download_checks_md5_and_size(tmp_path):
    data = b"x" * 100_000
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    dest = tmp_path / "out" / "file.bin"
    dest.parent.mkdir()
    download(src.as_uri(), dest, md5(data), len(data))
    assert dest.read_bytes() == data and file_md5(dest) == md5(data)
    assert os.listdir(dest.parent) == ["file.bin"]
    # right MD5, wrong published size (or the other way round): refused, nothing left
    dest.unlink()
    with pytest.raises(DownloadError, match=rf"file.bin.part: MD5 {md5(data)} \(100000 bytes\), "
                                            rf"expected {md5(data)} \(99 bytes\): a truncated"):
        download(src.as_uri(), dest, md5(data), 99)
    with pytest.raises(DownloadError, match="expected 0123"):
        download(src.as_uri(), dest, "0123")
    assert os.listdir(dest.parent) == []

    class Mine(DataDirError):
        pass

    with pytest.raises(Mine, match=r"file.bin.part: download of file:///nowhere/x failed"):
        download("file:///nowhere/x", dest, md5(data), error=Mine)
    assert os.listdir(dest.parent) == []


def _archive(path, files):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_unpack_keeps_only_what_is_asked(tmp_path):
    a = tmp_path / "a.tar.gz"
    _archive(a, {"Top/part/1/x.txt": b"1", "Top/README.TXT": b"r", "Top/other/y": b"y"})
    root = tmp_path / "root"
    seen = []
    unpack_tar(a, root, ["Top/part", "Top/README.TXT"], check=lambda m: seen.extend(m))
    assert sorted(m.name for m in seen) == sorted(m.name for m in read_members(a))
    assert (root / "Top" / "part" / "1" / "x.txt").read_bytes() == b"1"
    assert sorted(os.listdir(root)) == ["Top"]                      # no temporary left
    assert sorted(os.listdir(root / "Top")) == ["README.TXT", "part"]
    with pytest.raises(DownloadError, match=r"a.tar.gz: has no Top/absent \(not the published"):
        unpack_tar(a, tmp_path / "r2", ["Top/absent"])
    assert os.listdir(tmp_path / "r2") == []

    def refuse(members):
        raise DownloadError("refused")

    with pytest.raises(DownloadError, match="refused"):
        unpack_tar(a, tmp_path / "r3", ["Top/part"], check=refuse)
    assert not (tmp_path / "r3").exists()
    (tmp_path / "cut.tar.gz").write_bytes(a.read_bytes()[:40])
    with pytest.raises(DownloadError, match="cut.tar.gz: not a readable tar.gz archive"):
        unpack_tar(tmp_path / "cut.tar.gz", root, ["Top/part"])
