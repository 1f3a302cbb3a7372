"""utils/prepare_lang.sh and nnetmix.lang.prepare: the lang directory Kaldi's script would write."""
import filecmp
import math
import os
from pathlib import Path

import pytest

from helpers import ROOT, best_cost, read_fst, run_script, symbol_table, write_dict
from nnetmix.lang import LangError, LangOptions, lang_problems, prepare_lang


def _prepare(tmp_path, **kw):
    d = write_dict(tmp_path / "dict", **{k: v for k, v in kw.items() if k in
                                          ("lexicon", "silence", "optional", "nonsilence")})
    opts = LangOptions(**{k: v for k, v in kw.items() if k in LangOptions.__dataclass_fields__})
    lang = tmp_path / "lang"
    prepare_lang(d, "<UNK>", tmp_path / "tmp", lang, opts)
    return lang


@pytest.mark.parametrize("pd", [True, False])
def test_lang_invariants(tmp_path, pd):
    lang = _prepare(tmp_path, position_dependent_phones=pd)
    assert lang_problems(lang) == []
    phones, words = symbol_table(lang / "phones.txt"), symbol_table(lang / "words.txt")
    assert sorted(phones.values()) == list(range(len(phones))) and phones["<eps>"] == 0
    assert sorted(words.values()) == list(range(len(words))) and words["<eps>"] == 0
    assert list(words)[-3:] == ["#0", "<s>", "</s>"]
    assert list(words)[1:-3] == sorted(list(words)[1:-3], key=lambda w: w.encode())
    disambig = [int(x) for x in (lang / "phones/disambig.int").read_text().split()]
    assert disambig == [i for p, i in phones.items() if p.startswith("#")]
    assert (lang / "phones/disambig.txt").read_text().split() == ["#0", "#1"]
    assert (lang / "phones/wdisambig_phones.int").read_text().split() == [str(phones["#0"])]
    assert (lang / "phones/wdisambig_words.int").read_text().split() == [str(words["#0"])]
    assert (lang / "oov.int").read_text().split() == [str(words["<UNK>"])]
    real = {p for p in phones if p != "<eps>" and not p.startswith("#")}
    sil_csl = (lang / "phones/silence.csl").read_text().strip()
    sil_txt = (lang / "phones/silence.txt").read_text().split()
    assert sil_csl == ":".join(str(phones[p]) for p in sil_txt)
    if pd:
        wb_lines = (lang / "phones/word_boundary.txt").read_text().splitlines()
        wb = dict(line.split() for line in wb_lines)
        assert set(wb) == real
        assert wb["sil"] == "nonword" and wb["sil_S"] == "singleton" and wb["ey_B"] == "begin"
        assert wb["ah_I"] == "internal" and wb["n_E"] == "end"
        assert "ah" not in phones and {"ah_B", "ah_E", "ah_I", "ah_S"} <= set(phones)
        assert (lang / "phones/roots.txt").read_text().splitlines()[0] == \
            "shared split sil sil_B sil_E sil_I sil_S"
        q = (lang / "phones/extra_questions.txt").read_text().splitlines()
        assert q[0] == "sil sil_B sil_E sil_I sil_S spn spn_B spn_E spn_I spn_S"
        assert q[-1] == "sil_S spn_S " and len(q) == 1 + 4 + 5
    else:
        assert not (lang / "phones/word_boundary.txt").exists()
        assert set(phones) == real | {"<eps>", "#0", "#1"}
    align = (lang / "phones/align_lexicon.txt").read_text().splitlines()
    assert "<eps> <eps> sil" in align and align == sorted(align, key=str.encode)


def test_share_silence_and_topo(tmp_path):
    lang = _prepare(tmp_path, share_silence_phones=True, num_sil_states=3, num_nonsil_states=2)
    roots = (lang / "phones/roots.txt").read_text().splitlines()
    assert roots[0].startswith("not-shared not-split sil ") and "spn_S" in roots[0]
    assert all(r.startswith("shared split ") for r in roots[1:])
    topo = (lang / "topo").read_text()
    assert topo.count("<TopologyEntry>") == 2
    assert "<State> 1 <PdfClass> 1 <Transition> 1 0.75 <Transition> 2 0.25 </State>" in topo
    assert "<State> 0 <PdfClass> 0 <Transition> 0 0.5 <Transition> 1 0.5 </State>" in topo
    assert lang_problems(lang) == []


def test_lexicon_fst_accepts_every_word(tmp_path):
    lang = _prepare(tmp_path)
    phones, words = symbol_table(lang / "phones.txt"), symbol_table(lang / "words.txt")
    L, Ld = read_fst(lang / "L.fst"), read_fst(lang / "L_disambig.fst")
    assert L.is_olabel_sorted and Ld.is_olabel_sorted
    half = -math.log(0.5)
    for line in (tmp_path / "tmp/lexiconp_disambig.txt").read_text().splitlines():
        word, _, pron = line.split("\t")
        ph = pron.split()
        plain = [phones[p] for p in ph if not p.startswith("#")]
        ids = [phones[p] for p in ph]
        # without a following silence: -log(1-p) to enter, -log(1-p) after the word
        assert best_cost(L, plain, [words[word]]) == pytest.approx(2 * half, abs=1e-5)
        with_sil = best_cost(L, plain + [phones["sil"]], [words[word]])
        assert with_sil == pytest.approx(2 * half, abs=1e-5)
        assert best_cost(Ld, ids, [words[word]]) == pytest.approx(2 * half, abs=1e-5)
        assert math.isinf(best_cost(L, plain[:-1], [words[word]])) or len(plain) == 1
    # a sentence with silence between words, and #0 passing through L_disambig
    two = [phones[p] for p in "t_B uw_E sil ow_S".split()]
    assert best_cost(L, two, [words["TWO"], words["OH"]]) < math.inf
    dis = [phones[p] for p in "t_B uw_E sil #1 #0 ow_S".split()]
    assert best_cost(Ld, dis, [words["TWO"], words["#0"], words["OH"]]) < math.inf


def test_disambiguation_symbols_for_homophones_and_prefixes(tmp_path):
    lex = "!SIL sil\n<UNK> spn\nRED r eh d\nREAD r eh d\nRE r eh\nAB a b\n"
    lang = _prepare(tmp_path, lexicon=lex, position_dependent_phones=False)
    rows = (tmp_path / "tmp/lexiconp_disambig.txt").read_text().splitlines()
    prons = {r.split("\t")[0]: r.split("\t")[2] for r in rows}
    assert prons == {"!SIL": "sil", "<UNK>": "spn", "RED": "r eh d #1", "READ": "r eh d #2",
                     "RE": "r eh #1", "AB": "a b"}
    assert (lang / "phones/disambig.txt").read_text().split() == ["#0", "#1", "#2", "#3"]
    phones, words = symbol_table(lang / "phones.txt"), symbol_table(lang / "words.txt")
    Ld = read_fst(lang / "L_disambig.fst")
    for w, pron in prons.items():
        assert best_cost(Ld, [phones[p] for p in pron.split()], [words[w]]) < math.inf
    # the optional silence is followed by the last symbol, #3
    seq = [phones[p] for p in "sil #3 a b".split()]
    assert best_cost(Ld, seq, [words["AB"]]) == pytest.approx(-2 * math.log(0.5), abs=1e-5)


def test_yesno_fsts_match_kaldi(tmp_path, kaldi_fixtures):
    """Kaldi's own prepare_lang.sh output for egs/yesno, from the same dictionary."""
    yesno = kaldi_fixtures / "yesno"
    lex = "<SIL> SIL\nYES K EH N\nNO L OW\n"
    d = write_dict(tmp_path / "dict", lexicon=lex, silence="SIL\n", optional="SIL\n",
                   nonsilence="K\nEH\nL\nOW\nN\n", extra_questions="")
    for style in ("pl", "py"):
        lang = tmp_path / style
        prepare_lang(d, "<SIL>", tmp_path / "tmp", lang,
                     LangOptions(position_dependent_phones=False, lexicon_fst_style=style))
        for f in ("phones.txt", "words.txt"):
            assert filecmp.cmp(lang / f, yesno / f, shallow=False), f
    # the older .pl layout is what built the fixtures: byte for byte the same files
    for f in ("L.fst", "L_disambig.fst"):
        assert filecmp.cmp(tmp_path / "pl" / f, yesno / f, shallow=False), f
    # the .py layout accepts the same sentences at the same cost (away from the <SIL> word,
    # after which the .pl layout allows no optional silence)
    phones, words = symbol_table(yesno / "phones.txt"), symbol_table(yesno / "words.txt")
    ours, kaldi = read_fst(tmp_path / "py/L_disambig.fst"), read_fst(yesno / "L_disambig.fst")
    cases = [("K EH N", "YES"), ("SIL #1 K EH N SIL #1 L OW", "YES NO"),
             ("L OW #0 L OW SIL #1", "NO #0 NO"), ("SIL #1 L OW", "NO"), ("K EH", "YES")]
    for ph, wd in cases:
        i = [phones[p] for p in ph.split()]
        o = [words[w] for w in wd.split()]
        assert best_cost(ours, i, o) == pytest.approx(best_cost(kaldi, i, o), abs=1e-4), ph


def _recipe(tmp_path: Path) -> Path:
    rec = tmp_path / "s5"
    rec.mkdir()
    for link in ("utils", "bin", "steps"):
        os.symlink(ROOT / link, rec / link)
    os.symlink(ROOT / "egs/digits/s5/local", rec / "local")
    return rec


def test_prepare_lang_script_and_bad_input(tmp_path):
    rec = _recipe(tmp_path)
    write_dict(rec / "data/local/dict")
    args = ["utils/prepare_lang.sh", "data/local/dict", "<UNK>", "data/local/lang", "data/lang"]
    p = run_script(args, cwd=rec, check=True)
    assert "done, data/lang" in p.stdout and lang_problems(rec / "data/lang") == []
    p = run_script(args, cwd=rec, check=True)
    assert "skipping" in p.stdout
    # a lexicon phone missing from the phone lists: file, line and phone in one line
    (rec / "data/local/dict/lexicon.txt").write_text("!SIL sil\n<UNK> spn\nTWO t uw\nTEN t zz n\n")
    p = run_script(args, cwd=rec)
    assert p.returncode == 1
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and "lexicon.txt:4" in err[0] and "'zz'" in err[0], p.stderr
    # a phone in both lists
    write_dict(rec / "data/local/dict",
               nonsilence="ah\nay\ney\nf\nn\now\ns\nt\nuw\nv\nw\neh\nsil\n")
    p = run_script(args, cwd=rec)
    assert p.returncode == 1 and "nonsilence_phones.txt:13" in p.stderr and "'sil'" in p.stderr
    assert "Traceback" not in p.stderr
    # missing files
    write_dict(rec / "data/local/dict")
    os.unlink(rec / "data/local/dict/optional_silence.txt")
    p = run_script(args, cwd=rec)
    assert p.returncode == 1 and "no such file data/local/dict/optional_silence.txt" in p.stderr
    write_dict(rec / "data/local/dict")
    os.unlink(rec / "data/local/dict/lexicon.txt")
    p = run_script(args, cwd=rec)
    assert p.returncode == 1 and "no such file data/local/dict/lexicon.txt" in p.stderr
    # an OOV word the lexicon lacks
    write_dict(rec / "data/local/dict")
    p = run_script(args[:2] + ["<SPOKEN_NOISE>"] + args[3:], cwd=rec)
    assert p.returncode == 1 and "<SPOKEN_NOISE>" in p.stderr
    p = run_script(["utils/prepare_lang.sh", "data/local/dict"], cwd=rec)
    assert p.returncode == 1 and "Usage:" in p.stderr


@pytest.mark.parametrize("lexicon,nonsil,needle", [
    ("A a\nA a\n", "a\n", "duplicate pronunciation"),
    ("<s> a\n", "a\n", "reserved"),
    ("A\n", "a\n", "no phones"),
    ("A a_B\n", "a_B\n", "word-position suffix"),
    ("A #1\n", "a\n", "not in silence_phones.txt"),
])
def test_bad_dictionaries(tmp_path, lexicon, nonsil, needle):
    d = write_dict(tmp_path / "dict", lexicon="<UNK> spn\n" + lexicon, nonsilence=nonsil)
    with pytest.raises(LangError, match=needle):
        prepare_lang(d, "<UNK>", tmp_path / "tmp", tmp_path / "lang")
    write_dict(tmp_path / "dict2", optional="spn sil\n")
    with pytest.raises(LangError, match="optional_silence.txt: expected exactly one phone"):
        prepare_lang(tmp_path / "dict2", "<UNK>", tmp_path / "tmp", tmp_path / "lang")
