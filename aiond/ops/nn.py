"""The neural-network ops under their old single-module name. They live by
family now (fc, activation, softmax, losses, dropout, embedding, l2norm,
upsampling, with shared helpers in _nn_util); this module re-exports their
kernels and the helpers other code imported from here, and registers
nothing itself (importing it loads all of those modules)."""
from ._nn_util import (  # noqa: F401
    _ERFC_P, _ERFC_Q, _ERFC_R, _ERFC_S, _errstate, _float_unary, _in_range, _need_float,
    _num_inputs, _p_opt_bool, _p_opt_float, _poly, erf)
from .activation import _backward_activation, _nn_erf, activation, leaky_relu  # noqa: F401
from .dropout import dropout  # noqa: F401
from .embedding import (  # noqa: F401
    _EMB_PARAMS, _backward_embedding, _clip_index, _embedding_rule, embedding)
from .fc import fully_connected  # noqa: F401
from .l2norm import l2_normalization  # noqa: F401
from .losses import block_grad, make_loss, make_loss_legacy, smooth_l1  # noqa: F401
from .softmax import (  # noqa: F401
    _backward_softmax_cross_entropy, _backward_softmax_output, _softmax_core, _softmax_params,
    _softmax_rule, log_softmax, softmax, softmax_activation, softmax_cross_entropy,
    softmax_output)
from .upsampling import upsampling  # noqa: F401
