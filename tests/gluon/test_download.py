"""gluon.utils.download over a mocked ``requests.get``: streaming into a
temporary file renamed atomically, retries, sha1 checks, verify_ssl."""
import hashlib
import io
import multiprocessing as mp
import os
import warnings
from unittest import mock

import pytest

requests = pytest.importorskip("requests")

from aiond.gluon import utils  # noqa: E402


class _Resp(requests.Response):
    def __init__(self, status, content):
        super().__init__()
        self.status_code = status
        self.raw = io.BytesIO(content)


def _ok(content):
    return mock.Mock(side_effect=lambda *a, **k: _Resp(200, content))


def test_download_writes_file_and_passes_verify(tmp_path):
    get = _ok(b"x" * 5000)
    with mock.patch("requests.get", get):
        out = utils.download("http://h/a/model.params", path=str(tmp_path))
    assert out == str(tmp_path / "model.params")
    assert (tmp_path / "model.params").read_bytes() == b"x" * 5000
    assert os.listdir(tmp_path) == ["model.params"]          # no temporary left
    get.assert_called_once_with("http://h/a/model.params", stream=True, verify=True)
    # present: not fetched again; overwrite=True fetches
    with mock.patch("requests.get", _ok(b"new")) as g2:
        utils.download("http://h/a/model.params", path=str(tmp_path))
        assert g2.call_count == 0
        utils.download("http://h/a/model.params", path=str(tmp_path), overwrite=True)
    assert (tmp_path / "model.params").read_bytes() == b"new"


def test_download_creates_missing_directory(tmp_path):
    dest = tmp_path / "a" / "b" / "f.bin"
    with mock.patch("requests.get", _ok(b"abc")):
        assert utils.download("http://h/f.bin", path=str(dest)) == str(dest)
    assert dest.read_bytes() == b"abc"


def test_download_retries_then_raises(tmp_path):
    get = mock.Mock(side_effect=requests.exceptions.ConnectionError("down"))
    with mock.patch("requests.get", get), pytest.raises(requests.exceptions.ConnectionError):
        utils.download("http://h/f.bin", path=str(tmp_path), retries=3)
    assert get.call_count == 3
    # a non-200 status is a failure too; a later success wins
    seq = iter([_Resp(404, b""), _Resp(200, b"good")])
    with mock.patch("requests.get", mock.Mock(side_effect=lambda *a, **k: next(seq))):
        utils.download("http://h/f.bin", path=str(tmp_path), retries=2)
    assert (tmp_path / "f.bin").read_bytes() == b"good"
    with pytest.raises(AssertionError, match="at least 0"):
        utils.download("http://h/f.bin", path=str(tmp_path), retries=-1)


def test_download_sha1(tmp_path):
    good = hashlib.sha1(b"right").hexdigest()
    f = tmp_path / "f.bin"
    f.write_bytes(b"stale")
    # a file with the wrong hash is fetched again
    with mock.patch("requests.get", _ok(b"right")):
        utils.download("http://h/f.bin", path=str(f), sha1_hash=good)
    assert f.read_bytes() == b"right"
    with mock.patch("requests.get", _ok(b"wrong")), pytest.raises(UserWarning, match="hash"):
        utils.download("http://h/g.bin", path=str(tmp_path), sha1_hash=good, retries=1)


def test_download_verify_ssl_false_warns(tmp_path):
    get = _ok(b"abc")
    with mock.patch("requests.get", get), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        utils.download("https://h/f.bin", path=str(tmp_path), verify_ssl=False)
    assert any(str(x.message).startswith("Unverified HTTPS request") for x in w)
    assert get.call_args.kwargs["verify"] is False


def _worker(path):
    with mock.patch("requests.get", _ok(b"y" * 20000)):
        utils.download("http://h/f.bin", path=path)


def test_download_concurrent_processes_leave_one_file(tmp_path):
    dest = str(tmp_path / "f.bin")
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_worker, args=(dest,)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
    assert os.listdir(tmp_path) == ["f.bin"]
    assert os.path.getsize(dest) == 20000
