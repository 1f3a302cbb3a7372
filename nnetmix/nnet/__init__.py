"""nnet1 networks: components, the flat-buffer network, forward/backward/update through a
compute backend, the Kaldi nnet1 file format, prototypes and the feature transform.

    nnet = read_nnet("exp/dnn/final.nnet").to_backend(backend)
    logits = nnet.propagate(x, through_softmax=False)
    nnet.backpropagate(grad); nnet.update(NnetTrainOptions(learn_rate=0.008))
    nnet.write("exp/dnn/nnet.iter1", binary=True)
    nnet.set_seq_lengths(lens); nnet.reset_streams(flags)  # recurrent (multistream) networks
    forward_table("final.nnet", "scp:feats.scp", "ark:loglikes.ark", ForwardOptions())  # inference
"""
from nnetmix.nnet.components import (COMPONENT_TYPES, AddShift, AffineTransform, Component,
                                     LinearTransform, Rbm, Rescale, Sigmoid, Softmax, Splice, Tanh)
from nnetmix.nnet.feature_transform import (build_feature_transform, cmvn_to_nnet,
                                            feature_transform_from_table, splice_nnet)
from nnetmix.nnet.chunked import ChunkOptions, recurrent_forward
from nnetmix.nnet.forward import ForwardOptions, PdfPrior, forward_table, nnet_forward
from nnetmix.nnet.init import init_components, init_nnet
from nnetmix.nnet.network import Nnet, ParamBlock, read_nnet
from nnetmix.nnet.options import NnetError, NnetTrainOptions
from nnetmix.nnet.proto import ProtoOptions, make_nnet_proto
from nnetmix.nnet.prelu_dropout import Dropout, ParametricRelu
from nnetmix.nnet.recurrent import BlstmProjected, LstmProjected, MultistreamComponent
from nnetmix.nnet.rnn_proto import RnnProtoOptions, make_blstm_proto, make_lstm_proto

__all__ = [
    "Component", "AffineTransform", "LinearTransform", "Sigmoid", "Tanh", "Softmax", "Splice",
    "AddShift", "Rescale", "Rbm", "COMPONENT_TYPES", "ParametricRelu", "Dropout",
    "MultistreamComponent", "LstmProjected", "BlstmProjected",
    "Nnet", "ParamBlock", "read_nnet", "NnetError", "NnetTrainOptions",
    "init_nnet", "init_components", "ProtoOptions", "make_nnet_proto",
    "cmvn_to_nnet", "splice_nnet", "build_feature_transform", "feature_transform_from_table",
    "ForwardOptions", "PdfPrior", "nnet_forward", "forward_table",
    "ChunkOptions", "recurrent_forward", "RnnProtoOptions", "make_lstm_proto", "make_blstm_proto",
]
