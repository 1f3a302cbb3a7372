"""make-lstm-proto.py / make-blstm-proto.py (Kaldi's make_lstm_proto.py, make_blstm_proto.py),
and the inference of recurrent networks: per utterance (a whole-sequence forward of the
components, from a reset state) and in context-sensitive chunks (seed 002's decoding)."""
import numpy as np
import pytest
from helpers import load_bin

from nnetmix.kaldi import SequentialReader, TableWriter
from nnetmix.nnet import (BlstmProjected, ChunkOptions, ForwardOptions, LstmProjected, Nnet,
                          RnnProtoOptions, init_components, make_blstm_proto, make_lstm_proto,
                          nnet_forward, read_nnet)
from nnetmix.nnet.chunked import chunk_spans


def _errors(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("ERROR")]


# -- prototypes -------------------------------------------------------------------------------
def test_lstm_proto_lines_and_options():
    assert make_lstm_proto(40, 100).splitlines() == [
        "<LstmProjected> <InputDim> 40 <OutputDim> 400 <CellDim> 320",
        "<LstmProjected> <InputDim> 400 <OutputDim> 400 <CellDim> 320",
        "<Tanh> <InputDim> 400 <OutputDim> 400",
        "<AffineTransform> <InputDim> 400 <OutputDim> 100 <BiasMean> 0.0 <BiasRange> 0.0",
        "<Softmax> <InputDim> 100 <OutputDim> 100"]
    o = RnnProtoOptions(cell_dim=8, proj_dim=4, num_layers=3, lstm_param_range=0.05,
                        param_stddev=0.04, cell_clip=50, diff_clip=1, cell_diff_clip=0,
                        grad_clip=5)
    lines = make_lstm_proto(10, 7, o).splitlines()
    assert lines[2] == ("<LstmProjected> <InputDim> 4 <OutputDim> 4 <CellDim> 8 <ParamRange> "
                        "0.050000 <CellClip> 50.000000 <DiffClip> 1.000000 <CellDiffClip> "
                        "0.000000 <GradClip> 5.000000")
    assert lines[4].endswith("<BiasRange> 0.0 <ParamStddev> 0.040000") and len(lines) == 6


def test_blstm_proto_dims_follow_kaldi():
    # more than one layer: 2*proj_dim between layers, the last projecting to 2*proj_dim_last
    lines = make_blstm_proto(40, 100).splitlines()
    assert [ln.split()[:5] for ln in lines[:3]] == [
        ["<BlstmProjected>", "<InputDim>", "40", "<OutputDim>", "400"],
        ["<BlstmProjected>", "<InputDim>", "400", "<OutputDim>", "640"],
        ["<Tanh>", "<InputDim>", "640", "<OutputDim>", "640"]]
    one = make_blstm_proto(40, 100, RnnProtoOptions(proj_dim=200, num_layers=1)).splitlines()
    assert one[0] == "<BlstmProjected> <InputDim> 40 <OutputDim> 640 <CellDim> 320"
    # what nnet-initialize makes of it: the layers and dims the prototype names
    net = Nnet(init_components(make_blstm_proto(6, 5, RnnProtoOptions(
        cell_dim=3, proj_dim=2, proj_dim_last=3, num_layers=3)), seed=1))
    assert [type(c) for c in net.components[:3]] == [BlstmProjected] * 3
    assert [(c.input_dim, c.output_dim) for c in net.components] == [
        (6, 4), (4, 4), (4, 6), (6, 6), (6, 5), (5, 5)]


def test_proto_tools_take_kaldis_old_option_names(tmp_path, capsys):
    lstm = load_bin("make-lstm-proto.py")
    assert lstm.main(["--print-args=false", "--num-cells=12", "--num-recurrent=6",
                      "--clip-gradient=5", "--lstm-stddev-factor=0.01",
                      "--param-stddev-factor=0.04", "--num-layers=1", "9", "11"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("<LstmProjected> <InputDim> 9 <OutputDim> 6 <CellDim> 12 "
                                   "<ParamRange> 0.010000 <GradClip> 5.000000")
    assert "<ParamStddev> 0.040000" in out
    (tmp_path / "p").write_text(out)
    assert load_bin("nnet-initialize.py").main([str(tmp_path / "p"), str(tmp_path / "n")]) == 0
    c = read_nnet(str(tmp_path / "n")).components[0]
    assert isinstance(c, LstmProjected) and (c.cell_dim, c.grad_clip) == (12, 5)
    blstm = load_bin("make-blstm-proto.py")
    assert blstm.main(["--print-args=false", "4", "3"]) == 0
    assert capsys.readouterr().out.startswith(
        "<BlstmProjected> <InputDim> 4 <OutputDim> 400 <CellDim> 320\n")   # proj-dim 200
    # bad input: one error line each
    for tool, args, what in ((lstm, ["--proj-dim-last=3", "4", "5"], "--proj-dim-last"),
                             (lstm, ["--num-layers=0", "4", "5"], "--num-layers 0"),
                             (blstm, ["4", "x"], "expected two integers")):
        assert tool.main(args) == 1
        errs = _errors(capsys.readouterr().err)
        assert len(errs) == 1 and what in errs[0], errs


# -- bad input: prototypes and model files ----------------------------------------------------
def test_inconsistent_proto_and_missing_token_name_file_and_component(tmp_path, capsys):
    proto = tmp_path / "bad.proto"
    text = make_lstm_proto(5, 3, RnnProtoOptions(cell_dim=4, proj_dim=6))
    proto.write_text(text.replace("<Tanh> <InputDim> 6 <OutputDim> 6",
                                  "<Tanh> <InputDim> 7 <OutputDim> 7"))
    assert load_bin("nnet-initialize.py").main([str(proto), str(tmp_path / "n")]) == 1
    errs = _errors(capsys.readouterr().err)
    assert len(errs) == 1 and f"{proto}:3" in errs[0]
    assert "<Tanh> has <InputDim> 7, the previous component's <OutputDim> is 6" in errs[0]
    # a binary LSTM model without its <CellDim>: one line naming the file and the component
    Nnet(init_components("<LstmProjected> <InputDim> 2 <OutputDim> 3 <CellDim> 4\n", seed=1)
         ).write(str(tmp_path / "m"), binary=True)
    raw = (tmp_path / "m").read_bytes()
    i = raw.index(b"<CellDim> ")
    (tmp_path / "bad.nnet").write_bytes(raw[:i] + raw[i + len(b"<CellDim> ") + 5:])
    assert load_bin("nnet-info.py").main([str(tmp_path / "bad.nnet")]) == 1
    errs = _errors(capsys.readouterr().err)
    assert len(errs) == 1 and str(tmp_path / "bad.nnet") in errs[0], errs
    assert "<LstmProjected>" in errs[0] and "<CellDim>" in errs[0]


# -- inference ---------------------------------------------------------------------------------
def _net(kind: str, seed: int = 3) -> Nnet:
    marker = {"lstm": "<LstmProjected> <InputDim> 3 <OutputDim> 4",
              "blstm": "<BlstmProjected> <InputDim> 3 <OutputDim> 8"}[kind]
    dim = 4 if kind == "lstm" else 8
    return Nnet(init_components(f"{marker} <CellDim> 6 <ParamRange> 0.3\n"
                                f"<AffineTransform> <InputDim> {dim} <OutputDim> 5\n"
                                "<Softmax> <InputDim> 5 <OutputDim> 5\n", seed=seed))


def _whole_sequence(net: Nnet, x: np.ndarray) -> np.ndarray:
    """The components' forward of the whole sequence, on a fresh copy of the network."""
    fresh = Nnet(net.copy_components())
    fresh.set_seq_lengths([len(x)])
    return np.asarray(fresh.propagate(x.astype(np.float32)), dtype=np.float32).copy()


@pytest.mark.parametrize("kind", ["lstm", "blstm"])
def test_per_utterance_forward_is_the_whole_sequence_from_a_reset_state(kind):
    rng = np.random.default_rng(7)
    net = _net(kind)
    u1, u2 = rng.standard_normal((37, 3)), rng.standard_normal((23, 3))
    ref2 = _whole_sequence(net, u2)
    # carried state or stream settings of an earlier call must not leak into the next utterance
    net.set_seq_lengths([20, 20])
    net.propagate(rng.standard_normal((40, 3)).astype(np.float32))
    nnet_forward(net, u1, ForwardOptions())
    np.testing.assert_allclose(nnet_forward(net, u2, ForwardOptions()), ref2, rtol=1e-5,
                               atol=1e-7)
    # an utterance no longer than a chunk is one chunk: the same output
    big = ChunkOptions(chunk_size=64, chunk_left_context=21, chunk_right_context=21,
                       chunk_overlap=32)
    np.testing.assert_allclose(nnet_forward(net, u2, ForwardOptions(), chunk=big), ref2,
                               rtol=1e-5, atol=1e-7)


def test_chunk_spans_seed_002():
    o = ChunkOptions(chunk_size=64, chunk_left_context=21, chunk_right_context=21,
                     chunk_overlap=32)
    assert chunk_spans(200, o) == [(0, 0, 64, 85), (11, 32, 96, 117), (43, 64, 128, 149),
                                   (75, 96, 160, 181), (107, 128, 192, 200), (139, 160, 200, 200)]
    assert chunk_spans(64, o) == [(0, 0, 64, 64)] and chunk_spans(0, o) == []
    assert chunk_spans(10, ChunkOptions(chunk_size=4)) == [(0, 0, 4, 4), (4, 4, 8, 8),
                                                          (8, 8, 10, 10)]


@pytest.mark.parametrize("kind", ["lstm", "blstm"])
def test_chunked_forward_approaches_the_full_sequence_with_context(kind):
    rng = np.random.default_rng(11)
    net = _net(kind)
    x = rng.standard_normal((300, 3))
    full = _whole_sequence(net, x)
    errs = []
    for ctx in (0, 5, 21, 60):
        o = ChunkOptions(chunk_size=64, chunk_left_context=ctx, chunk_right_context=ctx,
                         chunk_overlap=32)
        errs.append(float(np.abs(nnet_forward(net, x, ForwardOptions(), chunk=o) - full).max()))
    assert errs[0] > 1e-4, errs                  # without context the chunks' edges differ
    assert errs == sorted(errs, reverse=True) and errs[-1] < errs[0] / 100, errs
    # context as long as the utterance: every chunk sees everything, only rounding remains
    o = ChunkOptions(chunk_size=64, chunk_left_context=300, chunk_right_context=300,
                     chunk_overlap=32)
    np.testing.assert_allclose(nnet_forward(net, x, ForwardOptions(), chunk=o), full,
                               rtol=1e-4, atol=1e-6)


def test_chunks_without_context_are_separate_utterances_and_overlaps_are_averaged():
    rng = np.random.default_rng(5)
    net = _net("blstm")
    x = rng.standard_normal((10, 3))
    alone = [_whole_sequence(net, x[a:b]) for a, b in ((0, 4), (2, 6), (4, 8), (6, 10))]
    o = ChunkOptions(chunk_size=4, chunk_overlap=2)
    y = nnet_forward(net, x, ForwardOptions(), chunk=o)
    np.testing.assert_allclose(y[:2], alone[0][:2], rtol=1e-5)
    np.testing.assert_allclose(y[2:4], (alone[0][2:] + alone[1][:2]) / 2, rtol=1e-5)
    np.testing.assert_allclose(y[8:], alone[3][2:], rtol=1e-5)


def test_nnet_forward_tool_chunk_options(tmp_path, capsys):
    rng = np.random.default_rng(2)
    _net("blstm").write(str(tmp_path / "m"))
    x = rng.standard_normal((150, 3)).astype(np.float32)
    with TableWriter(f"ark:{tmp_path / 'f.ark'}") as w:
        w["u1"] = x
    tool = load_bin("nnet-forward.py")
    opts = ["--chunk-size=64", "--chunk-left-context=21", "--chunk-right-context=21",
            "--chunk-overlap=32"]
    assert tool.main([*opts, str(tmp_path / "m"), f"ark:{tmp_path / 'f.ark'}",
                      f"ark:{tmp_path / 'o.ark'}"]) == 0
    assert "Forwarding in chunks of 64 frames, context 21 left 21 right, overlap 32" in \
        capsys.readouterr().err
    with SequentialReader(f"ark:{tmp_path / 'o.ark'}") as r:
        (key, y), = list(r)
    o = ChunkOptions(chunk_size=64, chunk_left_context=21, chunk_right_context=21,
                     chunk_overlap=32)
    np.testing.assert_allclose(y, nnet_forward(_net("blstm"), x, ForwardOptions(), chunk=o),
                               rtol=1e-6)
    assert tool.main(["--chunk-size=8", "--chunk-overlap=8", str(tmp_path / "m"),
                      f"ark:{tmp_path / 'f.ark'}", f"ark:{tmp_path / 'o2.ark'}"]) == 1
    errs = _errors(capsys.readouterr().err)
    assert len(errs) == 1 and "--chunk-overlap=8" in errs[0]
