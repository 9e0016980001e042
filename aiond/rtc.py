"""``mx.rtc``: compile CUDA C++ at run time and launch its kernels on GPU
NDArrays (MXNet 1.9.1's ``CudaModule``/``CudaKernel``), here through
CuPy's ``RawModule`` (NVRTC).

    source = r'''
    extern "C" __global__ void axpy(const float *x, float *y, float alpha) {
        int i = threadIdx.x + blockIdx.x * blockDim.x;
        y[i] += alpha * x[i];
    }
    '''
    module = mx.rtc.CudaModule(source)
    func = module.get_kernel("axpy", "const float *x, float *y, float alpha")
    x = mx.nd.ones((10,), ctx=mx.gpu(0))
    y = mx.nd.zeros((10,), ctx=mx.gpu(0))
    func.launch([x, y, 3.0], mx.gpu(0), (1, 1, 1), (10, 1, 1))

A launch is an engine op like any other: it runs on the device's compute
stream after the ops that write its arguments, reads the ``const`` pointer
arguments and writes the others, and returns at once. Templates are
compiled by naming their instances in ``exports`` (``'axpy<float>'``).
Needs CuPy and an NVIDIA GPU (``pip install -e '.[gpu]'`` from a clone).
"""
from __future__ import annotations

import re

import numpy as np

from . import engine as _engine
from .base import MXNetError, numeric_types, string_types
from .ndarray import NDArray

__all__ = ["CudaModule", "CudaKernel"]

_DTYPE_CPP_TO_NP = {
    'float': np.float32,
    'double': np.float64,
    '__half': np.float16,
    'uint8_t': np.uint8,
    'int': np.int32,
    'int32_t': np.int32,
    'int8_t': np.int8,
    'char': np.int8,
    'int64_t': np.int64,
}

_ARG = re.compile(r"^(const)?\s?([\w_]+)\s?(\*)?\s?([\w_]+)?$")


class CudaModule(object):
    """CUDA source compiled with NVRTC.

    Parameters
    ----------
    source : str
        The complete source (``extern "C"`` kernels, or templates named in
        ``exports``).
    options : tuple of str
        Compiler flags (``'-I/usr/local/cuda/include'``, ...).
    exports : tuple of str
        Kernel names to export (template instances such as ``'axpy<float>'``).
    """

    def __init__(self, source, options=(), exports=()):
        if isinstance(options, string_types):
            options = (options,)
        if isinstance(exports, string_types):
            exports = (exports,)
        from .engine import gpu as _gpu
        cp = _gpu.cupy()            # a clear error (how to install) without CuPy
        self._source = source
        self._options = tuple(options)
        self._exports = tuple(exports)
        try:
            self._module = cp.RawModule(code=source, options=self._options,
                                        name_expressions=self._exports or None)
            self._module.compile()
        except Exception as e:      # noqa: BLE001 - NVRTC's log, in MXNet's terms
            raise MXNetError("CudaModule: compiling the CUDA source failed: %s" % e) from e

    def get_kernel(self, name, signature):
        """The kernel ``name`` with argument ``signature``, e.g.
        ``"const float *x, float *y, float alpha"``: pointers take NDArrays
        of that type (``const`` ones are only read), other arguments
        numbers. Types: float, double, __half, uint8_t, int, int32_t,
        int8_t, char, int64_t."""
        is_ndarray, is_const, dtypes = [], [], []
        for arg in re.sub(r"\s+", " ", signature).split(","):
            arg = " ".join(arg.split())
            match = _ARG.match(arg)
            if not match or match.groups()[1] == 'const':
                raise ValueError('Invalid function prototype "%s". Must be in the '
                                 'form of "(const) type (*) (name)"' % arg)
            is_const.append(bool(match.groups()[0]))
            dtype = match.groups()[1]
            is_ndarray.append(bool(match.groups()[2]))
            if dtype not in _DTYPE_CPP_TO_NP:
                raise TypeError("Unsupported kernel argument type %s. Supported types are: %s."
                                % (arg, ','.join(_DTYPE_CPP_TO_NP.keys())))
            dtypes.append(np.dtype(_DTYPE_CPP_TO_NP[dtype]))
        try:
            function = self._module.get_function(name)
        except Exception as e:      # noqa: BLE001
            raise MXNetError("CudaModule.get_kernel: no kernel %r in the module (declare it "
                             "extern \"C\", or name it in exports): %s" % (name, e)) from e
        return CudaKernel(function, name, is_ndarray, dtypes, is_const)


class CudaKernel(object):
    """A compiled kernel; made by ``CudaModule.get_kernel``."""

    def __init__(self, handle, name, is_ndarray, dtypes, is_const=None):
        self.handle = handle
        self._name = name
        self._is_ndarray = list(is_ndarray)
        self._dtypes = list(dtypes)
        self._is_const = list(is_const) if is_const is not None else [False] * len(dtypes)

    def launch(self, args, ctx, grid_dims, block_dims, shared_mem=0):
        """Launch on GPU ``ctx`` with ``grid_dims``/``block_dims`` (3 ints
        each) and ``shared_mem`` bytes of dynamic shared memory. ``args``:
        NDArrays on ``ctx`` for pointers, numbers for the rest."""
        if ctx.device_type != 'gpu':
            raise MXNetError("Cuda kernel can only be launched on GPU (got %s)" % (ctx,))
        if len(grid_dims) != 3 or len(block_dims) != 3:
            raise ValueError("grid_dims and block_dims must be tuples of 3 integers")
        if len(args) != len(self._dtypes):
            raise ValueError("CudaKernel(%s) expects %d arguments but got %d"
                             % (self._name, len(self._dtypes), len(args)))
        reads, writes, kinds = [], [], []
        for i, (arg, is_nd, dtype, const) in enumerate(zip(args, self._is_ndarray, self._dtypes,
                                                           self._is_const)):
            if is_nd:
                if not isinstance(arg, NDArray):
                    raise TypeError("The %d-th argument is expected to be a NDArray but got %s"
                                    % (i, type(arg)))
                if arg.context != ctx:
                    raise MXNetError("The %d-th argument is on %s, not on %s where the kernel "
                                     "runs" % (i, arg.context, ctx))
                if arg.dtype != dtype:
                    raise TypeError("The %d-th argument is expected to be an NDArray of %s but "
                                    "got %s" % (i, dtype.name, np.dtype(arg.dtype).name))
                (reads if const else writes).append(arg)
                kinds.append(arg)
            else:
                if not isinstance(arg, numeric_types):
                    raise TypeError("The %d-th argument is expected to be a number, but got %s"
                                    % (i, type(arg)))
                kinds.append(dtype.type(arg))
        from .engine import gpu as _gpu
        work = _Launch(self.handle, kinds, tuple(int(g) for g in grid_dims),
                       tuple(int(b) for b in block_dims), int(shared_mem))
        _engine.push(work, reads=reads, writes=writes, name=self._name,
                     executor=_gpu.executor(ctx))


def _launch_class():
    from .engine.gpu import GPUWork
    from .ndarray._invoke import data_of

    class Launch(GPUWork):
        """One kernel launch on the device's compute stream."""
        __slots__ = ("fn", "args", "grid", "block", "shared", "stream")

        def __init__(self, fn, args, grid, block, shared):
            self.fn, self.args, self.grid, self.block, self.shared = fn, args, grid, block, shared
            self.stream = None

        def launch(self, ex, stream):
            self.stream = stream
            dev_args = tuple(data_of(a) if isinstance(a, NDArray) else a for a in self.args)
            self.fn(self.grid, self.block, dev_args, shared_mem=self.shared)

        def arrays(self):
            from .ndarray._gpu import _kept
            return _kept([a for a in self.args if isinstance(a, NDArray)], self.stream)
    return Launch


class _LaunchFactory(object):
    cls = None

    def __call__(self, *args):
        if _LaunchFactory.cls is None:
            _LaunchFactory.cls = _launch_class()    # GPU code loads with the first launch
        return _LaunchFactory.cls(*args)


_Launch = _LaunchFactory()
