"""``mx.io``: data iterators (MXNet 1.9.1 names)."""
from . import io  # noqa: F401
from .io import (CSVIter, DataBatch, DataDesc, DataIter, NDArrayIter,  # noqa: F401
                 PrefetchingIter, ResizeIter)
from .io import (ImageRecordInt8Iter, ImageRecordIter, ImageRecordUInt8Iter,  # noqa: F401
                 LibSVMIter, MXDataIter)
from .mnist import MNISTIter  # noqa: F401
from . import utils  # noqa: F401
from .utils import _getdata_by_idx, _has_instance, _init_data  # noqa: F401
