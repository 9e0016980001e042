"""``mx.test_utils``: MXNet 1.9.1's testing helpers, with its names, arguments
and behaviour (``assert_almost_equal``, ``check_numeric_gradient``,
``check_consistency``, ``verify_generator``, ``compare_optimizer``, ...).

There is no ``__all__``: ``from mxnet.test_utils import *`` brings every
public name into the caller, ``mx`` and ``np`` included, as MXNet's module
does. The checks that take a Symbol also take any Python callable over
NDArrays (checked through autograd), an aiond extension.
"""
from ._compare import *  # noqa: F401,F403
from ._compare import _find_max_violation, _sorted_items, _sorted_dict  # noqa: F401
from ._sparse import *  # noqa: F401,F403
from ._sparse import _get_uniform_dataset_csr, _get_powerlaw_dataset_csr  # noqa: F401
from ._symbolic import *  # noqa: F401,F403
from ._symbolic import _parse_location, _parse_aux_states  # noqa: F401
from ._data import *  # noqa: F401,F403
from ._random import *  # noqa: F401,F403
from ._ops import *  # noqa: F401,F403
from ..symbol.numpy import _Symbol as np_symbol  # noqa: F401  (MXNet exports it here)
import aiond as mx  # noqa: E402,F401  (MXNet's `import *` hands out `mx`)
