"""utils/parse_options.sh turns --foo-bar value into foo_bar=value with Kaldi's semantics."""
import pytest

from helpers import ROOT, run_script

SCRIPT = """#!/usr/bin/env bash
# demo.sh: prints its options.
# Usage: demo.sh [options] <a> [<b>]

nj=4              # number of jobs
foo_bar="x y"     # a string
use_gpu=false     # a boolean
{help}
. {root}/utils/parse_options.sh || exit 1
set -euo pipefail
echo "nj=$nj foo_bar=$foo_bar use_gpu=$use_gpu"
printf '<%s>' "$@"; echo " n=$#"
"""


def make_script(tmp_path, help_message=None):
    path = tmp_path / "demo.sh"
    help_line = f"help_message='{help_message}'" if help_message else ""
    path.write_text(SCRIPT.format(root=ROOT, help=help_line))
    path.chmod(0o755)
    return path


def run(tmp_path, *args, help_message=None):
    return run_script([make_script(tmp_path, help_message), *args], cwd=tmp_path)


def test_options_set_variables_and_leave_positionals(tmp_path):
    p = run(tmp_path, "--nj", "2", "--foo-bar", "a  b", "--use-gpu", "true", "pos 1", "--nj")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "nj=2 foo_bar=a  b use_gpu=true\n<pos 1><--nj> n=2\n"


def test_defaults_and_double_dash(tmp_path):
    p = run(tmp_path)
    assert p.stdout == "nj=4 foo_bar=x y use_gpu=false\n<> n=0\n"
    p = run(tmp_path, "--nj", "3", "--", "--foo-bar")
    assert p.stdout.splitlines()[1] == "<--foo-bar> n=1"


def test_unknown_option_is_refused(tmp_path):
    p = run(tmp_path, "--no-such", "1", "a")
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.strip() == f"{make_script(tmp_path)}: invalid option --no-such"
    assert run(tmp_path, "--a.b", "1").returncode == 1


@pytest.mark.parametrize("value,ok", [("true", True), ("false", True), ("yes", False),
                                      ("1", False), ("True", False)])
def test_boolean_option_takes_only_true_or_false(tmp_path, value, ok):
    p = run(tmp_path, "--use-gpu", value)
    assert (p.returncode == 0) is ok
    if not ok:
        assert "--use-gpu expects true or false" in p.stderr


def test_name_equals_value_is_refused(tmp_path):
    p = run(tmp_path, "--nj=3", "a")
    assert p.returncode == 1
    assert "use '--nj 3', not '--nj=3'" in p.stderr


def test_missing_value(tmp_path):
    p = run(tmp_path, "--nj")
    assert p.returncode == 1 and "option --nj needs a value" in p.stderr


def test_config_file_is_read_first(tmp_path):
    conf = tmp_path / "x.conf"
    conf.write_text("nj=7\nfoo_bar=from_conf\n")
    for args in (["--config", str(conf), "--nj", "9"], ["--nj", "9", "--config", str(conf)]):
        p = run(tmp_path, *args, "a")
        assert p.stdout.splitlines()[0] == "nj=9 foo_bar=from_conf use_gpu=false", p.stderr
    p = run(tmp_path, "--config", str(tmp_path / "nope.conf"))
    assert p.returncode == 1 and "missing config file" in p.stderr


def test_help_prints_header_or_help_message(tmp_path):
    p = run(tmp_path, "--help", "--no-such", "1")
    assert p.returncode == 0
    assert p.stdout == "demo.sh: prints its options.\nUsage: demo.sh [options] <a> [<b>]\n"
    p = run(tmp_path, "-h", help_message="Usage: demo.sh from help_message")
    assert p.returncode == 0 and p.stdout == "Usage: demo.sh from help_message\n"
