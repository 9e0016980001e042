"""``mx.symbol_doc``: extra documentation for symbolic operators, one
``<Op>Doc`` class (deriving from ``SymbolDoc``) per operator whose
docstring holds examples, as in MXNet 1.9.1; ``SymbolDoc.get_output_shape``
is the helper those examples use."""
from __future__ import annotations

__all__ = ["SymbolDoc", "ActivationDoc", "DropoutDoc", "EmbeddingDoc", "FlattenDoc",
           "FullyConnectedDoc", "ConcatDoc", "BroadcastPlusDoc"]


class SymbolDoc(object):
    """The base class of the operator documentation classes."""

    @staticmethod
    def get_output_shape(sym, **input_shapes):
        """``{output name: shape}`` of ``sym`` for the given input shapes."""
        _, s_outputs, _ = sym.infer_shape(**input_shapes)
        return dict(zip(sym.list_outputs(), s_outputs))


class ActivationDoc(SymbolDoc):
    """
    Examples
    --------
    A one-hidden-layer MLP with ReLU activation:

    >>> data = Variable('data')
    >>> mlp = FullyConnected(data=data, num_hidden=128, name='proj')
    >>> mlp = Activation(data=mlp, act_type='relu', name='activation')
    >>> mlp = FullyConnected(data=mlp, num_hidden=10, name='mlp')
    """


class DropoutDoc(SymbolDoc):
    """
    Examples
    --------
    Apply dropout to the output of a layer:

    >>> data = Variable('data')
    >>> data_dp = Dropout(data=data, p=0.2)
    """


class EmbeddingDoc(SymbolDoc):
    """
    Examples
    --------
    Look up 5-dimensional vectors for word ids below 10:

    >>> word = Variable('word')
    >>> vec = Embedding(data=word, input_dim=10, output_dim=5)
    >>> SymbolDoc.get_output_shape(vec, word=(2, 3))
    {'embedding0_output': (2, 3, 5)}
    """


class FlattenDoc(SymbolDoc):
    """
    Examples
    --------
    Flatten everything but the first axis:

    >>> data = Variable('data')
    >>> flatten = Flatten(data=data)
    >>> SymbolDoc.get_output_shape(flatten, data=(2, 3, 4, 5))
    {'flatten0_output': (2, 60)}
    """


class FullyConnectedDoc(SymbolDoc):
    """
    Examples
    --------
    Construct a fully connected operator with target dimension 512:

    >>> data = Variable('data')
    >>> fc = FullyConnected(data=data, num_hidden=512, name='fc')
    >>> SymbolDoc.get_output_shape(fc, data=(4, 100))
    {'fc_output': (4, 512)}
    """


class ConcatDoc(SymbolDoc):
    """
    Examples
    --------
    Concatenate two inputs along the second axis:

    >>> a = Variable('a'); b = Variable('b')
    >>> c = Concat(a, b, dim=1, name='c')
    >>> SymbolDoc.get_output_shape(c, a=(2, 3), b=(2, 4))
    {'c_output': (2, 7)}
    """


class BroadcastPlusDoc(SymbolDoc):
    """
    Examples
    --------
    Shapes broadcast where one of them is 1:

    >>> a = Variable('a'); b = Variable('b')
    >>> c = broadcast_plus(a, b, name='c')
    >>> SymbolDoc.get_output_shape(c, a=(2, 1), b=(1, 3))
    {'c_output': (2, 3)}
    """
