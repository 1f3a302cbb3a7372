"""bin/ tool command lines behave like Kaldi binaries."""
import dataclasses
import logging

import pytest

from nnetmix.cli import OptionParser, run_tool, str2bool
from nnetmix.errors import FormatError, UsageError

USAGE = "Does a thing.\nUsage: thing.py [options] <in> [<out>]\n e.g.: thing.py a b"


@dataclasses.dataclass
class Group:
    learn_rate: float = dataclasses.field(default=0.008, metadata={"help": "Learning rate"})
    minibatch_size: int = dataclasses.field(default=256, metadata={"help": "Minibatch size"})
    randomize: bool = dataclasses.field(default=True, metadata={"help": "Shuffle frames"})


def make_parser():
    p = OptionParser(USAGE, prog="thing.py")
    p.register("binary", True, "Write in binary mode")
    p.register("name", "x", "A name")
    p.register_group(Group)
    return p


def test_kaldi_option_syntax():
    p = make_parser()
    opts, args = p.parse(["--binary=false", "--learn_rate=0.5", "--minibatch-size=128",
                          "--randomize", "ark:a.ark", "--not-an-option"], (1, 2))
    assert opts.binary is False and opts.randomize is True
    assert args == ["ark:a.ark", "--not-an-option"]
    g = p.group(Group, opts)
    assert g == Group(learn_rate=0.5, minibatch_size=128, randomize=True)


@pytest.mark.parametrize("argv,msg", [
    (["--nope=1", "a"], "Invalid option --nope=1"),
    (["--binary=maybe", "a"], "expected true or false"),
    (["--minibatch-size=abc", "a"], "minibatch-size"),
    (["--name", "a"], "--name=value"),
])
def test_bad_options_raise(argv, msg):
    with pytest.raises(UsageError, match=msg):
        make_parser().parse(argv, (1, 2))


def test_config_file_then_command_line(tmp_path):
    cfg = tmp_path / "x.conf"
    cfg.write_text("# comment\n--learn-rate=0.1\n--name=fromconf  # trailing\n")
    opts, _ = make_parser().parse([f"--config={cfg}", "--learn-rate=0.2", "a"], (1, 1))
    assert opts.learn_rate == 0.2 and opts.name == "fromconf"


def test_str2bool():
    assert str2bool("true") and not str2bool("false")
    with pytest.raises(ValueError):
        str2bool("yes")


def test_run_tool_exit_codes_and_error_line(capsys):
    def body(opts, args):
        if args[0] == "bad":
            raise FormatError("in.ark: truncated matrix for key utt1")
        logging.getLogger("t").info("fine %s", args[0])
        return 0

    p = make_parser()
    assert run_tool(p, (1, 2), body, ["good"]) == 0
    err = capsys.readouterr().err
    assert "LOG (thing.py[" in err and ") fine good" in err
    assert run_tool(p, (1, 2), body, ["bad"]) == 1
    err = capsys.readouterr().err
    lines = [l for l in err.splitlines() if l.startswith("ERROR")]
    assert len(lines) == 1 and "body():test_cli.py:" in lines[0]
    assert "truncated matrix for key utt1" in lines[0] and "Traceback" not in err
    assert run_tool(p, (1, 2), body, []) == 1
    assert "Usage: thing.py" in capsys.readouterr().err
    assert run_tool(p, (1, 2), body, ["--help"]) == 0
    out = capsys.readouterr().out
    assert "--learn-rate" in out and "(float, default = 0.008)" in out
