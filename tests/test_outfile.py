"""nnetmix.outfile: outputs that are not regular files are written in place, never renamed over.

A character device, a FIFO and a symlink, each made in tmp_path (never the system's own
/dev/null): the device stays a device, the FIFO's reader gets the bytes, the symlink stays a
link and its target gets the bytes. Regular files keep the temporary-file-and-rename rule.
"""
import os
import stat
import threading

import pytest

from helpers import dummy_feats, load_bin, write_feats
from nnetmix.decode.mkgraph import write_fst
from nnetmix.errors import WriteError
from nnetmix.outfile import output_file, writes_in_place

UTTS = [("u1", dummy_feats(5, 3, seed=1)), ("u2", dummy_feats(7, 3, seed=2))]


@pytest.fixture
def feats(tmp_path):
    return write_feats(tmp_path / "in", UTTS)


@pytest.fixture
def null_device(tmp_path):
    """A private character device with /dev/null's numbers (needs CAP_MKNOD: root)."""
    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.stat("/dev/null").st_rdev)
    except (PermissionError, OSError) as e:
        pytest.skip(f"cannot make a device node here ({e.strerror})")
    return dev


def _reference(tmp_path, feats) -> bytes:
    ref = tmp_path / "ref.ark"
    assert load_bin("copy-feats.py").main([feats, f"ark:{ref}"]) == 0
    return ref.read_bytes()


def _no_temporaries(d) -> bool:
    return not [p for p in os.listdir(d) if p.endswith(".tmp")]


def test_device_stays_a_device(tmp_path, feats, null_device):
    rdev = null_device.stat().st_rdev
    assert load_bin("copy-feats.py").main([feats, f"ark:{null_device}"]) == 0
    assert load_bin("feat-to-len.py").main([feats, f"ark,t:{null_device}"]) == 0
    with output_file(null_device) as fh:
        fh.write("text\n")
    (tmp_path / "empty.ark").write_bytes(b"")  # nothing copied: the device is left alone
    load_bin("copy-feats.py").main([f"ark:{tmp_path}/empty.ark", f"ark:{null_device}"])
    st = os.lstat(null_device)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == rdev
    assert _no_temporaries(tmp_path)


def test_fifo_reader_gets_the_archive(tmp_path, feats):
    want = _reference(tmp_path, feats)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert load_bin("copy-feats.py").main([feats, f"ark:{fifo}"]) == 0
    reader.join(timeout=20)
    assert got == [want]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and _no_temporaries(tmp_path)


@pytest.mark.parametrize("dangling", [False, True])
def test_symlink_writes_its_target(tmp_path, feats, dangling):
    want = _reference(tmp_path, feats)
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "target.ark"
    if not dangling:
        target.write_bytes(b"old")
    link = tmp_path / "link.ark"
    link.symlink_to(os.path.join("data", "target.ark"))
    assert load_bin("copy-feats.py").main([feats, f"ark,scp:{link},{tmp_path}/o.scp"]) == 0
    assert link.is_symlink() and os.readlink(link) == os.path.join("data", "target.ark")
    assert target.read_bytes() == want
    assert _no_temporaries(tmp_path) and _no_temporaries(tmp_path / "data")
    # the text-table writer and a by-name writer (an FST) follow the same rule
    assert load_bin("feat-to-len.py").main([feats, f"ark,t:{link}"]) == 0
    assert link.is_symlink() and target.read_text() == "u1 5\nu2 7\n"


def test_fst_to_a_symlink_and_a_fifo(tmp_path):
    import kaldifst

    fst = kaldifst.StdVectorFst()
    fst.start = fst.add_state()
    fst.set_final(0, 0.0)
    (tmp_path / "G.real").write_bytes(b"")
    (tmp_path / "G.fst").symlink_to("G.real")
    write_fst(fst, str(tmp_path / "G.fst"))
    assert (tmp_path / "G.fst").is_symlink()
    assert kaldifst.StdVectorFst.read(str(tmp_path / "G.real")).num_states == 1
    fifo = tmp_path / "G.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_fst(fst, str(fifo))
    reader.join(timeout=20)
    assert got == [(tmp_path / "G.real").read_bytes()]
    assert _no_temporaries(tmp_path)


def test_dev_stdout_streams(tmp_path, feats, capsysbinary):
    assert load_bin("feat-to-len.py").main(["--print-args=false", feats, "ark,t:/dev/stdout"]) == 0
    assert capsysbinary.readouterr().out == b"u1 5\nu2 7\n"
    assert load_bin("copy-feats.py").main([feats, "ark:/dev/stdout"]) == 0
    assert capsysbinary.readouterr().out == _reference(tmp_path, feats)


def test_regular_files_still_renamed(tmp_path):
    out = tmp_path / "x.txt"
    out.write_text("old\n")
    ino = out.stat().st_ino
    with pytest.raises(RuntimeError):
        with output_file(out) as fh:
            fh.write("half")
            raise RuntimeError("stop")
    assert out.read_text() == "old\n" and _no_temporaries(tmp_path)
    with output_file(out) as fh:
        fh.write("new\n")
    assert out.read_text() == "new\n" and out.stat().st_ino != ino
    assert not writes_in_place(out) and writes_in_place("/dev/null")
    assert writes_in_place("/dev/stderr") and not writes_in_place("/dev/shm/x.ark")
    with pytest.raises(WriteError, match="no such directory"):
        with output_file(tmp_path / "nodir" / "x.txt") as fh:
            pass
