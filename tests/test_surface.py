"""The public surface MXNet 1.9.1 users rely on, pinned: every name below
exists in MXNet 1.9.1 (checked in its venv) and must exist in aiond."""
import pytest

import aiond as mx

ND = """
exp log log2 log10 log1p expm1 sqrt rsqrt cbrt square reciprocal abs sign negative floor ceil round
rint fix trunc sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh degrees radians
erf erfinv gamma gammaln relu sigmoid softsign hard_sigmoid clip
broadcast_add broadcast_sub broadcast_mul broadcast_div broadcast_mod broadcast_power broadcast_maximum
broadcast_minimum broadcast_hypot broadcast_equal broadcast_not_equal broadcast_greater
broadcast_greater_equal broadcast_lesser broadcast_lesser_equal broadcast_logical_and
broadcast_logical_or broadcast_logical_xor elemwise_add elemwise_sub elemwise_mul elemwise_div
add_n ElementWiseSum where logical_not
sum mean prod max min nansum nanprod norm argmax argmin argmax_channel
reshape reshape_like flatten expand_dims squeeze transpose swapaxes SwapAxis moveaxis flip reverse
tile repeat concat Concat stack split SliceChannel slice slice_axis slice_like take pick gather_nd
scatter_nd one_hot diag pad ravel_multi_index unravel_index broadcast_to broadcast_like
broadcast_axis cast Cast zeros_like ones_like shape_array size_array sort argsort topk SequenceMask
dot batch_dot
FullyConnected Activation LeakyReLU softmax log_softmax SoftmaxActivation SoftmaxOutput
LinearRegressionOutput LogisticRegressionOutput MAERegressionOutput Convolution Deconvolution
Pooling BatchNorm LayerNorm InstanceNorm L2Normalization Dropout Embedding Flatten UpSampling
smooth_l1 softmax_cross_entropy BlockGrad stop_gradient make_loss MakeLoss RNN
random_uniform random_normal random_randint random_exponential random_gamma random_poisson
random_negative_binomial random_generalized_negative_binomial sample_uniform sample_normal
sample_gamma sample_exponential sample_poisson sample_multinomial shuffle
array empty zeros ones full arange linspace eye save load load_frombuffer waitall NDArray
add subtract multiply divide true_divide modulo power maximum minimum equal not_equal greater
greater_equal lesser lesser_equal logical_and logical_or logical_xor onehot_encode concatenate
sgd_update sgd_mom_update adam_update rmsprop_update ftrl_update signsgd_update signum_update
""".split()

LINALG = "gemm gemm2 potrf potri trsm trmm syrk inverse det slogdet sumlogdiag extractdiag makediag".split()
RANDOM = ("seed uniform normal randn randint exponential gamma poisson negative_binomial "
          "generalized_negative_binomial multinomial shuffle").split()
AUTOGRAD = ("record pause train_mode predict_mode is_recording is_training set_recording "
            "set_training mark_variables backward grad Function get_symbol").split()
TEST_UTILS = ("assert_almost_equal almost_equal same assert_exception default_context "
              "set_default_context rand_ndarray rand_shape_2d rand_shape_3d rand_shape_nd "
              "random_arrays random_sample np_reduce check_numeric_gradient "
              "check_symbolic_forward check_symbolic_backward environment list_gpus get_atol "
              "get_rtol").split()
TOP = ("nd ndarray sym symbol autograd gluon kv kvstore init initializer optimizer lr_scheduler "
       "metric io callback model mod module viz random profiler engine context cpu gpu Context "
       "current_context name AttrScope recordio test_utils base").split()


@pytest.mark.parametrize("ns,names", [
    ("nd", ND), ("nd.linalg", LINALG), ("random", RANDOM), ("autograd", AUTOGRAD),
    ("test_utils", TEST_UTILS), ("", TOP)])
def test_names_exist(ns, names):
    obj = mx
    for part in filter(None, ns.split(".")):
        obj = getattr(obj, part)
    missing = [n for n in names if not hasattr(obj, n)]
    assert not missing, "mx.%s lacks %s" % (ns, missing)


def test_nd_functions_are_real_functions_with_signatures():
    import inspect
    for n in ("sum", "FullyConnected", "Convolution", "topk"):
        fn = getattr(mx.nd, n)
        assert inspect.isfunction(fn) and fn.__doc__
        params = inspect.signature(fn).parameters
        assert "out" in params
    assert "axis" in inspect.signature(mx.nd.sum).parameters
    assert "num_hidden" in inspect.signature(mx.nd.FullyConnected).parameters
