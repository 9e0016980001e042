"""Signatures of the backend ops named ``_np_*``/``_npx_*`` (MXNet's
``mxnet._numpy_op_doc``): one placeholder per op, whose signature is the one
the ``mx.np``/``mx.npx`` function of that op has (see ``numpy_op_signature``).
The functions are not meant to be called."""


def _np_all(a, axis=None, keepdims=False, out=None):
    """Whether every element along ``axis`` is true (``mx.np.all``)."""
    raise NotImplementedError("_np_all only records a signature")


def _np_any(a, axis=None, keepdims=False, out=None):
    """Whether any element along ``axis`` is true (``mx.np.any``)."""
    raise NotImplementedError("_np_any only records a signature")


def _np_sometrue(a, axis=None, keepdims=False, out=None):
    """Whether any element along ``axis`` is true (``mx.np.sometrue``, an alias of ``any``)."""
    raise NotImplementedError("_np_sometrue only records a signature")


def _np_cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (the flattened array when None) (``mx.np.cumsum``)."""
    raise NotImplementedError("_np_cumsum only records a signature")


def _npx_nonzero(a):
    """Indices of the non-zero elements, one row per element (``mx.npx.nonzero``)."""
    raise NotImplementedError("_npx_nonzero only records a signature")


def _np_repeat(a, repeats, axis=None):
    """Each element repeated ``repeats`` times along ``axis`` (``mx.np.repeat``)."""
    raise NotImplementedError("_np_repeat only records a signature")


def _np_transpose(a, axes=None):
    """The axes permuted (reversed when ``axes`` is None) (``mx.np.transpose``)."""
    raise NotImplementedError("_np_transpose only records a signature")


def _np_dot(a, b, out=None):
    """NumPy's dot product (``mx.np.dot``)."""
    raise NotImplementedError("_np_dot only records a signature")


def _np_sum(a, axis=None, dtype=None, keepdims=False, initial=None, out=None):
    """Sum over ``axis`` (``mx.np.sum``)."""
    raise NotImplementedError("_np_sum only records a signature")


def _np_copy(a, out=None):
    """A copy of ``a`` (``mx.np.copy``)."""
    raise NotImplementedError("_np_copy only records a signature")


def _np_atleast_1d(*arys):
    """The arrays, each viewed with at least one dimension (``mx.np.atleast_1d``)."""
    raise NotImplementedError("_np_atleast_1d only records a signature")


def _np_atleast_2d(*arys):
    """The arrays, each viewed with at least two dimensions (``mx.np.atleast_2d``)."""
    raise NotImplementedError("_np_atleast_2d only records a signature")


def _np_atleast_3d(*arys):
    """The arrays, each viewed with at least three dimensions (``mx.np.atleast_3d``)."""
    raise NotImplementedError("_np_atleast_3d only records a signature")


def _np_reshape(a, newshape, order='C', out=None):
    """``a`` in a new shape, by NumPy's rules (``mx.np.reshape``)."""
    raise NotImplementedError("_np_reshape only records a signature")


def _np_roll(a, shift, axis=None):
    """Elements rolled by ``shift`` along ``axis`` (``mx.np.roll``)."""
    raise NotImplementedError("_np_roll only records a signature")


def _np_trace(a, offset=0, axis1=0, axis2=1, out=None):
    """Sum along a diagonal (``mx.np.trace``)."""
    raise NotImplementedError("_np_trace only records a signature")


def _np_squeeze(a, axis=None, out=None):
    """``a`` without its length-1 axes (``mx.np.squeeze``)."""
    raise NotImplementedError("_np_squeeze only records a signature")


def _np_max(a, axis=None, keepdims=False, out=None):
    """Maximum over ``axis`` (``mx.np.max``)."""
    raise NotImplementedError("_np_max only records a signature")


def _np_amax(a, axis=None, keepdims=False, out=None):
    """Maximum over ``axis`` (``mx.np.amax``)."""
    raise NotImplementedError("_np_amax only records a signature")


def _np_min(a, axis=None, keepdims=False, out=None):
    """Minimum over ``axis`` (``mx.np.min``)."""
    raise NotImplementedError("_np_min only records a signature")


def _np_amin(a, axis=None, keepdims=False, out=None):
    """Minimum over ``axis`` (``mx.np.amin``)."""
    raise NotImplementedError("_np_amin only records a signature")


def _np_prod(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product over ``axis`` (``mx.np.prod``)."""
    raise NotImplementedError("_np_prod only records a signature")


def _np_product(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product over ``axis`` (``mx.np.product``)."""
    raise NotImplementedError("_np_product only records a signature")


def _np_moveaxis(a, source, destination):
    """Axes ``source`` moved to ``destination`` (``mx.np.moveaxis``)."""
    raise NotImplementedError("_np_moveaxis only records a signature")


def _np__random_shuffle(x):
    """Shuffle ``x`` in place along its first axis (``mx.np.random.shuffle``)."""
    raise NotImplementedError("_np__random_shuffle only records a signature")


def _npx_constraint_check(x, msg):
    """Raise ValueError with ``msg`` unless every element of bool array ``x`` is
    true (``mx.npx.constraint_check``)."""
    raise NotImplementedError("_npx_constraint_check only records a signature")


def _npx_reshape(a, newshape, reverse=False, order='C'):
    """Reshape with MXNet's special values (-1 to -6) in ``newshape`` (``mx.npx.reshape``)."""
    raise NotImplementedError("_npx_reshape only records a signature")


def _np_diag(array, k=0):
    """The k-th diagonal of a 2-D array, or a 2-D array with a 1-D one on it (``mx.np.diag``)."""
    raise NotImplementedError("_np_diag only records a signature")


def _np_diagonal(a, offset=0, axis1=0, axis2=1):
    """A diagonal of the (axis1, axis2) planes (``mx.np.diagonal``)."""
    raise NotImplementedError("_np_diagonal only records a signature")


def _np_diagflat(array, k=0):
    """A 2-D array with the flattened input on its k-th diagonal (``mx.np.diagflat``)."""
    raise NotImplementedError("_np_diagflat only records a signature")
