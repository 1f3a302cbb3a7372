"""utils/sym2int.pl and utils/int2sym.pl, and symbol-table reading."""
import pytest

from helpers import ROOT, run_script
from nnetmix.lang import LangError, parse_field_spec, read_symbol_table


@pytest.fixture
def words(tmp_path):
    p = tmp_path / "words.txt"
    p.write_text("<eps> 0\n<UNK> 1\nONE 2\nTWO 3\n#0 4\n")
    return p


def test_sym2int_int2sym_round_trip(tmp_path, words):
    (tmp_path / "text").write_text("u1 ONE TWO\nu2 TWO\n")
    p = run_script([ROOT / "utils/sym2int.pl", "-f", "2-", words, tmp_path / "text"], check=True)
    assert p.stdout == "u1 2 3\nu2 3\n"
    (tmp_path / "int").write_text(p.stdout)
    q = run_script([ROOT / "utils/int2sym.pl", "-f", "2-", words, tmp_path / "int"], check=True)
    assert q.stdout == "u1 ONE TWO\nu2 TWO\n"


def test_sym2int_oov(tmp_path, words):
    (tmp_path / "text").write_text("u1 ONE TEN\n")
    p = run_script([ROOT / "utils/sym2int.pl", "-f", "2-", words, tmp_path / "text"])
    assert p.returncode == 1 and "text:1: undefined symbol 'TEN' (field 3)" in p.stderr
    p = run_script([ROOT / "utils/sym2int.pl", "--map-oov", "<UNK>", "-f", "2-", words,
                    tmp_path / "text"], check=True)
    assert p.stdout == "u1 2 1\n" and "Replaced 1 instances" in p.stderr


def test_field_spec():
    f = parse_field_spec("1,3-4")
    assert [i for i in range(1, 7) if f(i)] == [1, 3, 4]
    assert [i for i in range(1, 5) if parse_field_spec("2-")(i)] == [2, 3, 4]


def test_bad_symbol_table(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_text("<eps> 0\nA 1\nB 1\n")
    with pytest.raises(LangError, match=r"bad.txt:3: id 1 repeats line 2"):
        read_symbol_table(p)
