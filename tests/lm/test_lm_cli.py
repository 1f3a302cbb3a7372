"""bin/ngram-count.py and bin/ngram.py: SRILM's option syntax, one-line errors, .gz files."""
import gzip

import pytest

from helpers import load_bin, markov_sentences, toy_sentences, write_sentences
from nnetmix.lang.arpa import ArpaLm, normalisation_error, read_arpa, write_arpa
from nnetmix.lm import KnOptions, count_sentences, estimate_kn

ngram_count = load_bin("ngram-count.py")
ngram = load_bin("ngram.py")


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("ERROR")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def text(tmp_path):
    return write_sentences(tmp_path / "train.txt", markov_sentences(seed=1))


@pytest.mark.parametrize("argv,msg", [
    (["-order", "5", "-kndiscount", "-text", "{text}", "-lm", "x.arpa"],
     "-order 5: orders 1 to 4 are supported"),
    (["-order", "3", "-kndiscount", "-text", "{tmp}/nope.txt", "-lm", "x.arpa"],
     "cannot read text file {tmp}/nope.txt: No such file or directory"),
    (["-kndiscount", "-text", "{text}", "-vocab", "{tmp}/nope.vocab", "-lm", "x.arpa"],
     "cannot read vocabulary file {tmp}/nope.vocab"),
    (["--order=3", "-text", "{text}"], "Invalid option --order=3: ngram-count.py takes SRILM's "
                                        "single-dash options (-order VALUE, not --order=3)"),
    (["-bogus", "-text", "{text}"], "Invalid option -bogus (run ngram-count.py -help"),
    (["-wbdiscount", "-text", "{text}", "-lm", "x"], "option -wbdiscount is not supported: only "
                                                     "Kneser-Ney discounting is implemented"),
    (["-gt5min", "1", "-text", "{text}"], "option -gt5min is not supported: orders above 4"),
    (["-kndiscount1", "-text", "{text}"], "per-order discounting options are not implemented"),
    (["-order"], "option -order needs a value"),
    (["-order", "three"], "Invalid value for option -order: 'three' (expected int)"),
    (["-text", "{text}", "-lm", "x.arpa"], "give -kndiscount or -ukndiscount (SRILM's default, "
                                           "Good-Turing discounting, is not implemented)"),
    (["-kndiscount", "-ukndiscount", "-text", "{text}", "-lm", "x"],
     "conflicting default discounting options"),
    (["-kndiscount", "-lm", "x.arpa"], "no -text given"),
    (["-kndiscount", "-text", "{text}"], "nothing to write: give -lm"),
    (["-kndiscount", "-text", "{text}", "-lm", "x", "extra"], "unexpected argument 'extra'"),
])
def test_ngram_count_errors_are_one_line(tmp_path, text, capsys, argv, msg):
    argv = [a.format(text=text, tmp=tmp_path) for a in argv]
    assert ngram_count.main(argv) == 1
    assert msg.format(tmp=tmp_path) in _one_error_line(capsys.readouterr().err)


def test_too_small_text_fails_like_srilm(tmp_path, capsys):
    small = write_sentences(tmp_path / "small.txt", [["a", "b"], ["b", "a"]] * 5)
    assert ngram_count.main(["-order", "2", "-kndiscount", "-text", str(small), "-lm",
                             str(tmp_path / "x.arpa")]) == 1
    line = _one_error_line(capsys.readouterr().err)
    assert "order 1: one of required modified KneserNey count-of-counts is zero" in line
    assert not (tmp_path / "x.arpa").exists()


@pytest.mark.parametrize("argv,msg", [
    (["-lm", "{tmp}/nope.arpa", "-ppl", "{text}"], "cannot read ARPA file {tmp}/nope.arpa"),
    (["-lm", "{arpa}", "-ppl", "{tmp}/nope.txt"], "cannot read text file {tmp}/nope.txt"),
    (["-lm", "{arpa}"], "no -ppl given"),
    (["-lm", "{arpa}", "-ppl", "{text}", "-debug", "2"], "-debug 2: only 0 (totals) and 1"),
    (["-lm", "{arpa}", "-ppl", "{text}", "-nbest", "x"], "option -nbest is not supported"),
])
def test_ngram_errors_are_one_line(tmp_path, text, capsys, argv, msg):
    arpa = tmp_path / "lm.arpa"
    arpa.write_text("\\data\\\nngram 1=2\n\n\\1-grams:\n-0.3\t</s>\n-99\t<s>\n\n\\end\\\n")
    argv = [a.format(text=text, tmp=tmp_path, arpa=arpa) for a in argv]
    assert ngram.main(argv) == 1
    assert msg.format(tmp=tmp_path) in _one_error_line(capsys.readouterr().err)


def test_gz_round_trip(tmp_path, text, capsys):
    """.gz text, vocabulary and LM (by name, as SRILM): the same model as the plain files."""
    gz_text = tmp_path / "train.txt.gz"
    gz_text.write_bytes(gzip.compress(text.read_bytes()))
    vocab = tmp_path / "vocab.gz"
    words = sorted({w for line in text.read_text().splitlines() for w in line.split()})
    vocab.write_bytes(gzip.compress("".join(f"{w} {i}\n" for i, w in enumerate(words)).encode()))
    common = ["-order", "3", "-kndiscount", "-interpolate", "-unk"]
    assert ngram_count.main(common + ["-text", str(text), "-lm", str(tmp_path / "a.arpa")]) == 0
    assert ngram_count.main(common + ["-text", str(gz_text), "-vocab", str(vocab),
                                      "-lm", str(tmp_path / "a.arpa.gz"),
                                      "-write-vocab", str(tmp_path / "v.txt")]) == 0
    # a vocabulary of every text word closes nothing: the same model, byte for byte
    assert (tmp_path / "a.arpa.gz").read_bytes()[:2] == b"\x1f\x8b"
    with gzip.open(tmp_path / "a.arpa.gz", "rt") as fh:
        assert fh.read() == (tmp_path / "a.arpa").read_text()
    plain = read_arpa(tmp_path / "a.arpa")
    assert read_arpa(tmp_path / "a.arpa.gz").ngrams == plain.ngrams
    assert ("<unk>",) in plain.ngrams[0]  # -unk: the unknown word is a word, seen or not
    assert (tmp_path / "v.txt").read_text().split() == sorted(words + ["</s>", "<s>", "<unk>"])
    # the writer gzips any model by name, and the reader takes gzip whatever the name
    lm = ArpaLm(plain.ngrams)
    write_arpa(tmp_path / "b.arpa.gz", lm)
    (tmp_path / "c.arpa").write_bytes((tmp_path / "b.arpa.gz").read_bytes())
    assert read_arpa(tmp_path / "c.arpa").ngrams == plain.ngrams
    held = tmp_path / "held.txt.gz"
    held.write_bytes(gzip.compress(b"w00 w01\nw02\n"))
    assert ngram.main(["-lm", str(tmp_path / "a.arpa.gz"), "-ppl", str(held), "-unk"]) == 0
    assert f"file {held}: 2 sentences, 3 words, 0 OOVs" in capsys.readouterr().out


def test_limit_vocab_changes_nothing_with_text(tmp_path, text, capsys):
    words = sorted({w for line in text.read_text().splitlines() for w in line.split()})
    vocab = write_sentences(tmp_path / "vocab", [[w] for w in words[:-5]])
    outs = []
    for extra in ([], ["-limit-vocab"]):
        out = tmp_path / f"lm{len(extra)}.arpa"
        assert ngram_count.main(["-order", "2", "-ukndiscount", "-text", str(text), "-vocab",
                                 str(vocab), "-unk", "-lm", str(out)] + extra) == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1]
    assert "-limit-vocab only limits counts and models read from files" in \
        capsys.readouterr().err


def test_tool_output_is_the_library_model(tmp_path, capsys):
    sents = toy_sentences()
    text = write_sentences(tmp_path / "toy.txt", sents)
    assert ngram_count.main(["-order", "3", "-kndiscount", "-interpolate", "-gt3min", "1",
                             "-text", str(text), "-lm", str(tmp_path / "toy.arpa")]) == 0
    lm = estimate_kn(count_sentences(sents, 3),
                     KnOptions(order=3, interpolate=True, gtmin=(1, 1, 1, 1)))
    write_arpa(tmp_path / "lib.arpa", lm)
    assert (tmp_path / "toy.arpa").read_text() == (tmp_path / "lib.arpa").read_text()
    assert normalisation_error(read_arpa(tmp_path / "toy.arpa"))[0] < 2e-6
    err = capsys.readouterr().err
    assert "order 2: modified Kneser-Ney, n1=9 n2=3 n3=1 n4=1: D1=0.6 D2=1.4 D3+=0.6" in err
    assert ngram_count.main(["-help"]) == 0
    assert "SRILM's single-dash options" in capsys.readouterr().out
