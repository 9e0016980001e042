"""mx.rtc (MXNet 1.9.1's CudaModule/CudaKernel) on aiond's GPU executor.

NVRTC needs a real GPU; here the CuPy test double stands in, with a
RawModule whose kernel (axpy, y += alpha * x) runs on the double's device
arrays and reports its reads and writes to the double's race checker, so
what is tested is aiond's side: argument checks and conversion, the launch
as an engine op ordered after the writes of its inputs and before later
reads of its outputs, and the errors."""
import sys

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError

SRC = r'''
extern "C" __global__ void axpy(const float *x, float *y, float alpha) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    y[i] += alpha * x[i];
}
'''


def _fake_rawmodule(launches):
    import fakecupy

    class RawModule(object):
        def __init__(self, code, options=(), name_expressions=None):
            if 'axpy' not in code:
                raise RuntimeError('NVRTC_ERROR_COMPILATION: no kernel')
            self.options, self.names = options, name_expressions

        def compile(self):
            pass

        def get_function(self, name):
            if name not in ('axpy', 'axpy<float>'):
                raise KeyError(name)

            def axpy(grid, block, args, shared_mem=0):
                x, y, alpha = args
                s = fakecupy._cur_stream()
                fakecupy._access(fakecupy._buf_of(x._a, x._dev), s, False, 'axpy')
                fakecupy._access(fakecupy._buf_of(y._a, y._dev), s, True, 'axpy')
                assert isinstance(alpha, np.float32)
                n = grid[0] * block[0]
                y._a[:n] += alpha * x._a[:n]
                launches.append((grid, block, shared_mem))
            return axpy
    return RawModule


def test_rtc_axpy_on_gpu_double(fake_gpu, monkeypatch):
    launches = []
    monkeypatch.setattr(sys.modules['cupy'], 'RawModule', _fake_rawmodule(launches),
                        raising=False)
    module = mx.rtc.CudaModule(SRC)
    func = module.get_kernel("axpy", "const float *x, float *y, float alpha")
    ctx = mx.gpu(0)
    x = mx.nd.arange(10, ctx=ctx) * 2          # pushed before the launch: it must wait
    y = mx.nd.ones((10,), ctx=ctx)
    func.launch([x, y, 3], ctx, (1, 1, 1), (10, 1, 1))
    z = y + 1                                  # after the launch: it must see its write
    np.testing.assert_allclose(y.asnumpy(), 1 + 3 * 2 * np.arange(10))
    np.testing.assert_allclose(z.asnumpy(), 2 + 6 * np.arange(10))
    assert launches == [((1, 1, 1), (10, 1, 1), 0)]
    # templates are compiled by naming their instances
    t = mx.rtc.CudaModule(SRC, exports='axpy<float>')
    assert t._exports == ('axpy<float>',)
    t.get_kernel('axpy<float>', 'const float *x, float *y, float alpha').launch(
        [x, y, 1.0], ctx, (1, 1, 1), (10, 1, 1), shared_mem=64)
    assert launches[-1] == ((1, 1, 1), (10, 1, 1), 64)
    np.testing.assert_allclose(y.asnumpy(), 1 + 4 * 2 * np.arange(10))

    # errors, as MXNet reports them
    with pytest.raises(MXNetError, match='only be launched on GPU'):
        func.launch([x, y, 3.0], mx.cpu(), (1, 1, 1), (10, 1, 1))
    with pytest.raises(ValueError, match='expects 3 arguments but got 2'):
        func.launch([x, y], ctx, (1, 1, 1), (10, 1, 1))
    with pytest.raises(TypeError, match='0-th argument is expected to be a NDArray'):
        func.launch([1.0, y, 3.0], ctx, (1, 1, 1), (10, 1, 1))
    with pytest.raises(TypeError, match='2-th argument is expected to be a number'):
        func.launch([x, y, x], ctx, (1, 1, 1), (10, 1, 1))
    with pytest.raises(TypeError, match='NDArray of float32 but got float64'):
        func.launch([x.astype('float64'), y, 3.0], ctx, (1, 1, 1), (10, 1, 1))
    with pytest.raises(MXNetError, match='is on cpu'):
        func.launch([mx.nd.ones(10), y, 3.0], ctx, (1, 1, 1), (10, 1, 1))
    with pytest.raises(ValueError, match='tuples of 3 integers'):
        func.launch([x, y, 3.0], ctx, (1, 1), (10, 1, 1))
    with pytest.raises(ValueError, match='Invalid function prototype'):
        module.get_kernel('axpy', 'const float *x, float y z')
    with pytest.raises(TypeError, match='Unsupported kernel argument type'):
        module.get_kernel('axpy', 'const long *x')
    with pytest.raises(MXNetError, match="no kernel 'saxpy'"):
        module.get_kernel('saxpy', 'float *x')
    with pytest.raises(MXNetError, match='compiling the CUDA source failed'):
        mx.rtc.CudaModule('__global__ void nothing() {}')


def test_rtc_without_cupy(monkeypatch):
    from aiond.engine import gpu
    gpu.reset_backend()
    monkeypatch.setitem(sys.modules, 'cupy', None)
    try:
        with pytest.raises(Exception, match='CuPy|cupy'):
            mx.rtc.CudaModule(SRC)
    finally:
        gpu.reset_backend()
