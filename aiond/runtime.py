"""``mx.runtime``: what this aiond can do, as MXNet's compile-time feature list.

MXNet reports the features its native library was built with; aiond reports
the same names, each enabled when aiond really has it on this machine (CUDA
when CuPy sees a GPU, INT64_TENSOR_SIZE always: numpy indexes with 64 bits).

    >>> mx.runtime.Features().is_enabled("CUDA")
    False
"""
from __future__ import annotations

import collections
import importlib.util

__all__ = ["Feature", "feature_list", "Features"]

# MXNet 1.9.1's libinfo.h feature names, in its order
_NAMES = ("CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
          "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE",
          "F16C", "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK",
          "MKLDNN", "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE",
          "SIGNAL_HANDLER", "DEBUG", "TVM_OP")


class Feature:
    """One feature: ``name`` and whether it is ``enabled``."""
    __slots__ = ("name", "enabled")

    def __init__(self, name, enabled):
        self.name = name
        self.enabled = bool(enabled)

    def __repr__(self):
        return ("✔ {}" if self.enabled else "✖ {}").format(self.name)


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _blas():
    try:
        from threadpoolctl import threadpool_info
        apis = {i.get("internal_api") for i in threadpool_info()}
    except Exception:  # threadpoolctl could not inspect the process
        apis = set()
    return apis


def feature_list():
    """Every feature MXNet names, enabled where aiond has it here."""
    from .context import num_gpus
    flags = _cpu_flags()
    blas = _blas()
    gpu = num_gpus() > 0
    has = {
        "CUDA": gpu, "CUDNN": gpu and importlib.util.find_spec("cupyx") is not None,
        "NCCL": False, "CUDA_RTC": gpu, "TENSORRT": False,
        "CPU_SSE": "sse" in flags, "CPU_SSE2": "sse2" in flags, "CPU_SSE3": "pni" in flags,
        "CPU_SSE4_1": "sse4_1" in flags, "CPU_SSE4_2": "sse4_2" in flags,
        "CPU_SSE4A": "sse4a" in flags, "CPU_AVX": "avx" in flags, "CPU_AVX2": "avx2" in flags,
        "OPENMP": "openmp" in blas, "SSE": "sse" in flags, "F16C": "f16c" in flags,
        "JEMALLOC": False, "BLAS_OPEN": "openblas" in blas, "BLAS_ATLAS": False,
        "BLAS_MKL": "mkl" in blas, "BLAS_APPLE": False, "LAPACK": True, "MKLDNN": False,
        "OPENCV": importlib.util.find_spec("cv2") is not None, "CAFFE": False,
        "PROFILER": True, "DIST_KVSTORE": importlib.util.find_spec("mpi4py") is not None,
        "CXX14": False, "INT64_TENSOR_SIZE": True, "SIGNAL_HANDLER": False, "DEBUG": False,
        "TVM_OP": False,
    }
    return [Feature(n, has[n]) for n in _NAMES]


class Features(collections.OrderedDict):
    """Ordered mapping of feature name to :class:`Feature` (one instance)."""
    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            super(Features, cls.instance).__init__([(f.name, f) for f in feature_list()])
        return cls.instance

    def __init__(self):  # filled once in __new__
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether ``feature_name`` is enabled; RuntimeError for an unknown name."""
        feature_name = feature_name.upper()
        if feature_name not in self:
            raise RuntimeError("Feature '{}' is unknown, known features are: {}".format(
                feature_name, list(self.keys())))
        return self[feature_name].enabled
