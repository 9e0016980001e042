"""The convolution, pooling and BatchNorm op tests with oneDNN turned off
(``AIOND_ONEDNN=0``), in a subprocess: CI installs the oneDNN extra, so the
rest of the suite runs the oneDNN kernels wherever they apply, and this
keeps the numpy kernels they fall back to tested too."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = ["ops/test_conv.py", "ops/test_conv_split.py", "ops/test_norm.py", "ops/test_nn.py"]


@pytest.mark.slow
def test_op_tests_pass_with_onednn_off():
    env = dict(os.environ, AIOND_ONEDNN="0")
    code = ("import sys, pytest\n"
            "from aiond.ops import onednn\n"
            "assert not onednn.active()\n"
            "rc = pytest.main(['-q', '-p', 'no:cacheprovider'] + sys.argv[1:])\n"
            "from aiond.ops.onednn import _lib\n"
            "assert _lib._state['lib'] is None, 'oneDNN loaded with AIOND_ONEDNN=0'\n"
            "sys.exit(rc)\n")
    out = subprocess.run([sys.executable, "-c", code] + [os.path.join(HERE, f) for f in FILES],
                         env=env, capture_output=True, text=True, timeout=1200,
                         cwd=os.path.dirname(HERE))
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
