"""``mx.ndarray_doc``: extra documentation for NDArray operators, one
``<op>Doc`` class (deriving from ``NDArrayDoc``) per operator whose
docstring holds examples, as in MXNet 1.9.1."""
from __future__ import annotations

__all__ = ["NDArrayDoc", "ReshapeDoc", "elemwise_addDoc", "BroadcastToDoc", "StackDoc",
           "CustomDoc"]


class NDArrayDoc(object):
    """The base class of the NDArray operator documentation classes."""


class ReshapeDoc(NDArrayDoc):
    """
    Examples
    --------
    >>> x = mx.nd.array([1, 2, 3, 4])
    >>> y = mx.nd.reshape(x, shape=(2, 2))
    >>> x.shape, y.shape
    ((4,), (2, 2))
    >>> y.asnumpy()
    array([[1., 2.],
           [3., 4.]], dtype=float32)
    """


class elemwise_addDoc(NDArrayDoc):  # noqa: N801  (MXNet's name: the op is elemwise_add)
    """
    Examples
    --------
    >>> x = mx.nd.array([1, 2, 3, 4])
    >>> y = mx.nd.array([1.1, 2.1, 3.1, 4.1])
    >>> mx.nd.elemwise_add(x, y).asnumpy()
    array([2.1, 4.1, 6.1, 8.1], dtype=float32)
    """


class BroadcastToDoc(NDArrayDoc):
    """
    Examples
    --------
    >>> x = mx.nd.array([1, 2, 3])
    >>> mx.nd.broadcast_to(x.reshape((1, 3)), shape=(2, 3)).asnumpy()
    array([[1., 2., 3.],
           [1., 2., 3.]], dtype=float32)
    """


class StackDoc(NDArrayDoc):
    """
    Examples
    --------
    >>> x = mx.nd.array([1, 2])
    >>> y = mx.nd.array([3, 4])
    >>> mx.nd.stack(x, y).asnumpy()
    array([[1., 2.],
           [3., 4.]], dtype=float32)
    >>> mx.nd.stack(x, y, axis=1).asnumpy()
    array([[1., 3.],
           [2., 4.]], dtype=float32)
    """


class CustomDoc(NDArrayDoc):
    """
    Examples
    --------
    Apply a custom operator written in Python (registered with
    ``mx.operator.register("sqr")``) to an array:

    >>> x = mx.nd.array([1, 2, 3])
    >>> y = mx.nd.Custom(x, op_type='sqr')
    """
