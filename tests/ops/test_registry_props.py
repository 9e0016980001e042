"""Op properties declared through the registry (``register``'s rows= and
free_attrs=, ``set_rows``, ``set_invoke_hook``) rather than written onto
entries after registration."""
import numpy as np
import pytest

import aiond as mx
from aiond.ndarray import _invoke
from aiond.ops import registry
from aiond.ops.registry import Op, get


def test_splitters_and_free_attrs_are_on_the_entries():
    from aiond.ops import conv, fc, matrix
    assert get("FullyConnected").rows is fc._fc_rows
    assert get("dot").rows is matrix._dot_rows
    assert get("Pooling").rows is conv._pool_rows
    assert get("_backward_Pooling").rows is conv._pool_rows
    assert get("zeros_like").free_attrs and get("ones_like").free_attrs
    assert not get("broadcast_add").free_attrs


def test_declared_free_attrs_ignore_unknown_keywords():
    x = mx.nd.array([[1, 2], [3, 4]], dtype="int32")
    z = mx.nd.zeros_like(x, dtype="int64", no_such_argument=3)
    assert z.dtype == np.int32
    np.testing.assert_array_equal(z.asnumpy(), np.zeros((2, 2), np.int32))


def test_declared_rows_split_a_large_dot_into_the_same_result():
    a = np.random.RandomState(0).rand(512, 512).astype(np.float32)
    b = np.random.RandomState(1).rand(512, 512).astype(np.float32)
    out = np.empty((512, 512), np.float32)
    n, run = get("dot").rows(np, [a, b], out, {"transpose_a": False, "transpose_b": False})
    assert n == 512 and run is not None
    run(0, 200)
    run(200, 512)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)


def test_register_and_set_rows_refuse_a_splitter_that_is_not_a_function():
    with pytest.raises(TypeError, match=r"register\('_no_such_op'\): rows must be a function"):
        registry.register("_no_such_op", rows=3)
    with pytest.raises(TypeError, match=r"set_rows\('dot'\): rows must be a function"):
        registry.set_rows("dot", "fast")


class _EchoEntry(Op):
    __slots__ = ()


def test_set_invoke_hook_routes_the_push_of_an_entry_kind():
    op = _EchoEntry("_echo_entry", None, None, ("data",), ())
    seen = []

    def hook(op_, inputs, attrs, out, ctx):
        seen.append((op_.name, len(inputs), attrs))
        return inputs[0] * 2
    registry.set_invoke_hook(_EchoEntry, hook)
    try:
        y = _invoke.invoke(op, [mx.nd.array([1.0, 2.0])], {"k": 1})
        np.testing.assert_array_equal(y.asnumpy(), [2.0, 4.0])
        assert seen == [("_echo_entry", 1, {"k": 1})]
        assert Op.invoke_hook is None            # other kinds keep their kernel push
    finally:
        registry.set_invoke_hook(_EchoEntry, None)
    assert _EchoEntry.invoke_hook is None


def test_set_invoke_hook_needs_an_entry_kind_and_a_function():
    with pytest.raises(TypeError, match="kind must be a subclass of Op"):
        registry.set_invoke_hook(Op, lambda *a: None)
    with pytest.raises(TypeError, match="kind must be a subclass of Op"):
        registry.set_invoke_hook(get("dot"), lambda *a: None)
    with pytest.raises(TypeError, match=r"set_invoke_hook\(_EchoEntry\): hook must be a function"):
        registry.set_invoke_hook(_EchoEntry, "run")


def test_upper_layers_install_their_hooks_through_the_registry():
    import aiond.operator  # noqa: F401
    import aiond.symbol  # noqa: F401
    from aiond.ops import control_flow, custom, subgraph_op
    from aiond.symbol import _control_flow_exec, _subgraph_op
    assert custom.CustomEntry.invoke_hook is aiond.operator._custom_invoke
    assert subgraph_op.SubgraphEntry.invoke_hook is _subgraph_op._run
    assert control_flow.ControlFlowEntry.invoke_hook is _control_flow_exec._hook
