"""Suite-wide GPU switches.

* ``ctx`` fixture: ``mx.cpu()``, and ``mx.gpu(0)`` marked ``gpu`` - so
  ``pytest -m gpu`` runs the GPU half of every test that takes ``ctx``; it is
  not generated where CuPy sees no device (the summary line counts those
  tests), and runs on the CuPy test double with ``AIOND_TEST_CTX=gpu-double``. The test body runs with it as the default
  context.
* ``AIOND_TEST_CTX=gpu``: every test runs with ``mx.gpu(0)`` as the default
  context (``with mx.gpu(0):``), on a real GPU - the whole operator and
  acceptance suites on the device, compared with the numpy results they
  assert. ``AIOND_TEST_CTX=gpu-double`` does the same on the CuPy test double
  (``tests/fakecupy.py``), which needs no GPU.
* ``fake_gpu`` fixture: the double installed for one test (two devices),
  with a check afterwards that no GPU work ran unordered across streams.
"""
from __future__ import annotations

import os
import sys

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

_MODE = os.environ.get("AIOND_TEST_CTX", "cpu").strip().lower()
if _MODE == "gpu-double":
    import fakecupy
    fakecupy.install(2)


def _real_gpus():
    if _MODE == "gpu-double":
        return 2
    try:
        import cupy
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - no CuPy, no driver or no device
        return 0


_NGPU = None


def ngpus():
    global _NGPU
    if _NGPU is None:
        _NGPU = _real_gpus()
    return _NGPU


def pytest_collection_modifyitems(config, items):
    skip = None
    for item in items:
        if item.get_closest_marker("gpu") is not None \
                and "fake_gpu" not in getattr(item, "fixturenames", ()):
            if skip is None:
                if ngpus():
                    break
                skip = pytest.mark.skip(reason="no GPU: CuPy sees no device")
            item.add_marker(skip)


_UNCOLLECTED = []       # tests taking ``ctx`` whose GPU half was not generated


def _parametrizes(metafunc, name):
    for m in metafunc.definition.iter_markers("parametrize"):
        names = m.args[0] if m.args else m.kwargs.get("argnames", ())
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",")]
        if name in names:
            return True
    return False


def pytest_generate_tests(metafunc):
    # Without a device the GPU half of a test taking ``ctx`` is not generated
    # at all (the summary says for how many tests): thousands of skipped
    # items would make the CPU run slower.
    if "ctx" not in metafunc.fixturenames or _parametrizes(metafunc, "ctx"):
        return
    params = ["cpu"]
    if ngpus():
        params.append(pytest.param("gpu", marks=pytest.mark.gpu))
    else:
        _UNCOLLECTED.append(metafunc.definition.nodeid)
    metafunc.parametrize("ctx", params, indirect=True)


def pytest_terminal_summary(terminalreporter):
    if _UNCOLLECTED:
        terminalreporter.write_line(
            "no GPU (CuPy sees no device): the gpu variant of %d tests taking `ctx` was not "
            "generated" % len(_UNCOLLECTED))


@pytest.fixture
def ctx(request):
    """``mx.cpu()``, then ``mx.gpu(0)`` (marked ``gpu``), entered as the
    default context for the test: a test that takes ``ctx`` makes its arrays
    there without ``ctx=`` on every call, and checks them against numpy."""
    import aiond as mx
    c = mx.cpu() if request.param == "cpu" else mx.gpu(0)
    with c:
        yield c


@pytest.fixture(autouse=True)
def _default_gpu_context():
    if _MODE not in ("gpu", "gpu-double"):
        yield
        return
    import aiond as mx
    with mx.gpu(0):
        yield


@pytest.fixture
def fake_gpu():
    """The CuPy double installed as ``cupy`` for this test; yields its state."""
    import aiond as mx
    from aiond.engine import gpu
    import fakecupy
    if _MODE == "gpu":
        pytest.skip("the CuPy double is not used while testing on a real GPU")
    mx.nd.waitall()
    saved = {n: sys.modules.get(n) for n in ("cupy", "cupy.cuda", "cupy.cuda.runtime", "cupyx",
                                        "cupy.random")}
    gpu.reset_backend()
    state = fakecupy.install(2)
    try:
        yield state
        mx.nd.waitall()
    finally:
        try:
            gpu.reset_backend()
        finally:
            fakecupy.uninstall()
            for n, m in saved.items():
                if m is not None:
                    sys.modules[n] = m
            if _MODE == "gpu-double":
                fakecupy.install(2)
    assert not state.races, "GPU work ran unordered across streams:\n" + "\n".join(state.races[:5])


@pytest.fixture
def cyclic_garbage():
    """``cyclic_garbage(fn)`` -> (fn's result, the sorted names of the aiond
    types, functions and cells that ``fn()`` left to the cyclic collector:
    unreachable, but not freed by reference counting). What existed before
    is held meanwhile, so that what earlier tests left (a failure the engine
    keeps until it is reported, say) cannot be freed inside the window and
    counted as ``fn``'s."""
    import gc

    def run(fn):
        gc.collect()
        before = gc.get_objects()
        gc.disable()
        try:
            gc.set_debug(gc.DEBUG_SAVEALL)
            result = fn()
            gc.collect()
            old = {id(o) for o in before}
            left = sorted({type(o).__module__ + "." + type(o).__name__ for o in gc.garbage
                           if id(o) not in old and (type(o).__module__.startswith("aiond")
                                                    or type(o).__name__ in ("function", "cell"))})
        finally:
            gc.set_debug(0)
            del gc.garbage[:]
            gc.enable()
        return result, left
    return run
