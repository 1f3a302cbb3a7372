"""rspecifiers, wspecifiers and extended filenames parse as Kaldi's kaldi-table.cc / kaldi-io.cc."""
import pytest

from nnetmix.errors import UsageError
from nnetmix.kaldi import classify_rxfilename, classify_wxfilename, parse_rspecifier, parse_wspecifier
from nnetmix.kaldi.specifier import split_range


def test_rspecifiers():
    r = parse_rspecifier("ark:gunzip -c ali.1.gz |")
    assert (r.type, r.filename) == ("ark", "gunzip -c ali.1.gz |")
    r = parse_rspecifier("ark,s,cs,p:-")
    assert r.sorted and r.called_sorted and r.permissive and not r.once and r.filename == "-"
    r = parse_rspecifier("scp,o,t:data/feats.scp")
    assert r.type == "scp" and r.once and r.filename == "data/feats.scp"
    assert parse_rspecifier("ark:a.ark:10").filename == "a.ark:10"


@pytest.mark.parametrize("bad", ["feats.ark", "ark,scp:a,b", "foo:a.ark", "ark,x:a.ark",
                                 "ark:| gzip -c > x.gz", "t:a"])
def test_bad_rspecifiers(bad):
    with pytest.raises(UsageError, match="rspecifier|output pipe"):
        parse_rspecifier(bad)


def test_wspecifiers():
    w = parse_wspecifier("ark,scp,t:a.ark,a.scp")
    assert (w.type, w.ark, w.scp, w.binary) == ("both", "a.ark", "a.scp", False)
    w = parse_wspecifier("ark:| gzip -c > x.gz")
    assert w.type == "ark" and w.binary and w.ark == "| gzip -c > x.gz"
    w = parse_wspecifier("ark,f:-")
    assert w.flush and w.ark == "-"
    w = parse_wspecifier("scp,p:out.scp")
    assert w.type == "scp" and w.permissive and w.scp == "out.scp"


@pytest.mark.parametrize("bad", ["scp,ark:a.scp,a.ark", "ark,scp:a.ark", "a.ark", "ark,q:x",
                                 "ark:gzip x |", "ark:a.ark:12"])
def test_bad_wspecifiers(bad):
    with pytest.raises(UsageError):
        parse_wspecifier(bad)


def test_extended_filenames():
    assert classify_rxfilename("-").kind == "stdin" and classify_rxfilename("").kind == "stdin"
    f = classify_rxfilename("gunzip -c x.gz |")
    assert f.kind == "pipe" and f.path == "gunzip -c x.gz "
    f = classify_rxfilename("data/raw_mfcc.1.ark:12345")
    assert (f.kind, f.path, f.offset) == ("offset", "data/raw_mfcc.1.ark", 12345)
    assert classify_rxfilename("a.ark").kind == "file"
    assert classify_wxfilename("| gzip -c > x.gz").path == " gzip -c > x.gz"
    assert classify_wxfilename("-").kind == "stdout"


def test_row_ranges():
    assert split_range("a.ark:12[0:9]") == ("a.ark:12", ((0, 9), None))
    assert split_range("a.ark:12[0:9,2:4]") == ("a.ark:12", ((0, 9), (2, 4)))
    assert split_range("a.ark:12[,2:4]") == ("a.ark:12", (None, (2, 4)))
    assert split_range("cat x[1] |") == ("cat x[1] |", None)
    with pytest.raises(UsageError, match="bad range"):
        split_range("a.ark:1[5:2]")
