"""nnetmix/lang/cmu.py: CMUdict lexicons and the wsj layout of stress-marked phones."""
import pytest

from nnetmix.lang.cmu import ARPABET, cmudict_lexicon, split_stress, write_dict_dir
from nnetmix.lang.dictdir import read_dict_dir
from nnetmix.lang.symbols import LangError

CMU = {"tug": [["T", "AH1", "G"]],
       "harbor": [["HH", "AA1", "R", "B", "ER0"]],
       "either": [["IY1", "DH", "ER0"], ["AY1", "DH", "ER0"]],
       "tonnage": [["T", "AH1", "N", "AH0", "JH"]]}


def test_split_stress():
    assert split_stress("AH0") == ("AH", "0") and split_stress("T") == ("T", "")
    assert len(ARPABET) == 39
    for bad in ("ah0", "AH3", "XX1", "sil"):
        with pytest.raises(LangError, match="not an ARPAbet phone"):
            split_stress(bad)


def test_lexicon_keeps_every_pronunciation_and_names_missing_words():
    entries = cmudict_lexicon(["either", "tug"], CMU)
    assert [(e.word, e.phones) for e in entries] == [
        ("either", ("IY1", "DH", "ER0")), ("either", ("AY1", "DH", "ER0")),
        ("tug", ("T", "AH1", "G"))]
    with pytest.raises(LangError, match=r"vocab.txt: 2 word\(s\) not in CMUdict: zork frob"):
        cmudict_lexicon(["tug", "zork", "frob"], CMU, where="vocab.txt")


def test_dict_dir_groups_stress_variants_as_wsj(tmp_path):
    d = tmp_path / "dict"
    write_dict_dir(d, cmudict_lexicon(sorted(CMU), CMU), {"!sil": "SIL", "<unk>": "SPN"})
    # one line per base phone (its stress variants share a tree root)
    assert (d / "nonsilence_phones.txt").read_text().splitlines() == [
        "AA1", "AH0 AH1", "AY1", "B", "DH", "ER0", "G", "HH", "IY1", "JH", "N", "R", "T"]
    # the silence phones, then one question per stress level (none, 0, 1)
    assert (d / "extra_questions.txt").read_text().splitlines() == [
        "SIL SPN", "B DH G HH JH N R T", "AH0 ER0", "AA1 AH1 AY1 IY1"]
    assert (d / "silence_phones.txt").read_text() == "SIL\nSPN\n"
    assert (d / "optional_silence.txt").read_text() == "SIL\n"
    lex = (d / "lexicon.txt").read_text().splitlines()
    assert lex[:2] == ["!sil SIL", "<unk> SPN"] and "either AY1 DH ER0" in lex and len(lex) == 7
    dic = read_dict_dir(d)  # what utils/prepare_lang.sh reads accepts it
    assert dic.optional_silence == "SIL" and len(dic.lexicon) == 7
    assert not (tmp_path / "dict.tmp").exists()


def test_bad_optional_silence_writes_nothing(tmp_path):
    with pytest.raises(LangError, match="optional silence 'sil'"):
        write_dict_dir(tmp_path / "dict", [], {"!sil": "SIL"}, optional_silence="sil")
    assert list(tmp_path.iterdir()) == []
