"""``mx.gluon.utils``: MXNet 1.9.1's Gluon helpers (splitting batches over
devices, global-norm clipping, file checks) and the small internals the
other Gluon modules share (``HookHandle``, ``shape_is_known``, ...)."""
from __future__ import annotations

import collections
import hashlib
import os
import uuid
import warnings
import weakref

import numpy as np

from .. import ndarray
from ..base import MXNetError
from ..util import is_np_shape

__all__ = ["split_data", "split_and_load", "clip_global_norm", "check_sha1", "download",
           "replace_file"]


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """Split ``data`` into ``num_slice`` slices along ``batch_axis``.

    With ``even_split=False`` the first ``size % num_slice`` slices get one
    more element each, as in MXNet."""
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            "data with shape %s cannot be evenly split into %d slices along axis %d. "
            "Use a batch size that's multiple of %d or set even_split=False to allow "
            "uneven partitioning of data." % (str(data.shape), num_slice, batch_axis, num_slice))
    n_each_section, extras = divmod(size, num_slice)
    section_sizes = [0] + (extras * [n_each_section + 1] +
                           (num_slice - extras) * [n_each_section])
    div_points = np.array(section_sizes).cumsum()
    slices = []
    if batch_axis != 0:
        for i in range(num_slice):
            slices.append(ndarray.slice_axis(data, axis=batch_axis, begin=int(div_points[i]),
                                             end=int(div_points[i + 1])))
    else:
        slices = [data[int(div_points[i]):int(div_points[i + 1])] if i < num_slice - 1
                  else data[int(div_points[i]):size] for i in range(num_slice)]
    return slices


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Split ``data`` along ``batch_axis`` and copy each slice to one context
    of ``ctx_list``."""
    if not isinstance(data, ndarray.NDArray):
        data = ndarray.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [i.as_in_context(ctx) for i, ctx in zip(slices, ctx_list)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Rescale ``arrays`` in place so that the 2-norm of all of them together
    is at most ``max_norm``; returns that norm before clipping (a float, or
    an NDArray when ``check_isfinite=False`` so that nothing blocks)."""
    assert len(arrays) > 0
    ctx = arrays[0].context
    total = None
    for arr in arrays:
        if arr.stype == "default":
            x = arr.reshape((-1,))
            sq = ndarray.dot(x, x).as_in_context(ctx)
        else:
            sq = arr.norm().square().as_in_context(ctx)
        total = sq if total is None else total + sq
    total_norm = ndarray.sqrt(total)
    if check_isfinite:
        if not np.isfinite(total_norm.asscalar()):
            warnings.warn(UserWarning("nan or inf is detected. "
                                      "Clipping results will be undefined."), stacklevel=2)
    scale = max_norm / (total_norm + 1e-8)
    scale = ndarray.minimum(scale, 1.0)
    for arr in arrays:
        arr *= scale.as_in_context(arr.context)
    if check_isfinite:
        return total_norm.asscalar()
    return total_norm


def _indent(s_, numSpaces):  # noqa: N803 - MXNet's name
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [first] + [(numSpaces * " ") + line for line in s]
    return "\n".join(s)


def check_sha1(filename, sha1_hash):
    """True if the SHA-1 hash of the file ``filename`` is ``sha1_hash``."""
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        while True:
            data = f.read(1048576)
            if not data:
                break
            sha1.update(data)
    return sha1.hexdigest() == sha1_hash


def replace_file(src, dst):
    """Move ``src`` to ``dst`` atomically (``os.replace``: a rename within one
    file system on POSIX, MoveFileEx with replace on Windows); on failure the
    temporary ``src`` is removed and ``OSError`` raised."""
    try:
        os.replace(src, dst)
    except OSError:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError("Moving downloaded temp file - {}, to {} failed. "
                      "Please retry the download.".format(src, dst)) from None


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Download a given URL (MXNet 1.9.1's ``gluon.utils.download``).

    Parameters
    ----------
    url : str
        URL to download
    path : str, optional
        Destination path to store downloaded file. By default stores to the
        current directory with same name as in url.
    overwrite : bool, optional
        Whether to overwrite destination file if already exists.
    sha1_hash : str, optional
        Expected sha1 hash in hexadecimal digits. Will ignore existing file when hash is
        specified but doesn't match.
    retries : integer, default 5
        The number of times to attempt the download in case of failure or non 200 return codes
    verify_ssl : bool, default True
        Verify SSL certificates.

    Returns
    -------
    str
        The file path of the downloaded file.

    The content is streamed with ``requests`` (imported on first use, so
    ``import aiond`` does not load it) into ``<fname>.<uuid4>`` and renamed
    onto ``fname`` atomically: processes downloading the same file at once
    leave exactly one complete file behind."""
    if path is None:
        fname = url.split("/")[-1]
        # Empty filenames are invalid
        assert fname, "Can't construct file-name from this URL. " \
            "Please set the `path` option manually."
    else:
        path = os.path.expanduser(path)
        if os.path.isdir(path):
            fname = os.path.join(path, url.split("/")[-1])
        else:
            fname = path
    assert retries >= 0, "Number of retries should be at least 0, currently it's {}".format(
        retries)

    if not verify_ssl:
        warnings.warn(
            "Unverified HTTPS request is being made (verify_ssl=False). "
            "Adding certificate verification is strongly advised.")

    if overwrite or not os.path.exists(fname) or (sha1_hash and not check_sha1(fname, sha1_hash)):
        try:
            import requests
        except ImportError:
            raise MXNetError("gluon.utils.download needs the 'requests' package "
                             "(pip install requests) to fetch %s" % url) from None
        dirname = os.path.dirname(os.path.abspath(os.path.expanduser(fname)))
        if not os.path.exists(dirname):
            os.makedirs(dirname, exist_ok=True)
        while retries + 1 > 0:
            try:
                print("Downloading {} from {}...".format(fname, url))
                r = requests.get(url, stream=True, verify=verify_ssl)
                if r.status_code != 200:
                    raise RuntimeError("Failed downloading url {}".format(url))
                # a unique temporary file per attempt and process
                tmp = "{}.{}".format(fname, uuid.uuid4())
                with open(tmp, "wb") as f:
                    for chunk in r.iter_content(chunk_size=1024):
                        if chunk:  # filter out keep-alive new chunks
                            f.write(chunk)
                # if the target file exists (created by another process) and
                # has the right hash, the temporary file is dropped; with
                # overwrite=True it replaces the old file (MXNet 1.9.1 drops the
                # fresh download there too, so overwrite never took effect)
                if overwrite or not os.path.exists(fname) or \
                        (sha1_hash and not check_sha1(fname, sha1_hash)):
                    replace_file(tmp, fname)
                else:
                    try:
                        os.remove(tmp)
                    except OSError:
                        pass
                    warnings.warn("File {} exists in file system so the downloaded file is "
                                  "deleted".format(fname))
                if sha1_hash and not check_sha1(fname, sha1_hash):
                    raise UserWarning(
                        "File {} is downloaded but the content hash does not match."
                        " The repo may be outdated or download may be incomplete. "
                        "If the \"repo_url\" is overridden, consider switching to "
                        "the default repo.".format(fname))
                break
            except Exception as e:  # noqa: BLE001 - MXNet retries on any failure
                retries -= 1
                if retries <= 0:
                    raise e
                print("download failed due to {}, retrying, {} attempt{} left"
                      .format(repr(e), retries, "s" if retries > 1 else ""))

    return fname


def _brief_print_list(lst, limit=7):
    """Print at most ``limit`` elements of list."""
    lst = list(lst)
    if len(lst) > limit:
        return _brief_print_list(lst[:limit // 2], limit) + ", ..., " + \
            _brief_print_list(lst[-limit // 2:], limit)
    return ", ".join(["'%s'" % str(i) for i in lst])


class HookHandle(object):
    """A handle that can attach/detach a hook."""

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict, hook):
        assert not self._hooks_dict_ref, "The same handle cannot be attached twice."
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self):
        hooks_dict = self._hooks_dict_ref()
        if hooks_dict is not None and self._id in hooks_dict:
            del hooks_dict[self._id]

    def __getstate__(self):
        return (self._hooks_dict_ref(), self._id)

    def __setstate__(self, state):
        if state[0] is None:
            self._hooks_dict_ref = weakref.ref(collections.OrderedDict())
        else:
            self._hooks_dict_ref = weakref.ref(state[0])
        self._id = state[1]

    def __enter__(self):
        return self

    def __exit__(self, ptype, value, trace):
        self.detach()


def shape_is_known(shape):
    """True if ``shape`` has no unknown dimension (0, or -1 under NumPy shape
    semantics; a 0-d shape is known only under NumPy shape semantics)."""
    if shape is None:
        return False
    unknown_dim_size = -1 if is_np_shape() else 0
    if len(shape) == 0:
        return unknown_dim_size == -1
    for dim_size in shape:
        if dim_size == unknown_dim_size:
            return False
        assert dim_size > unknown_dim_size, "shape dimension size cannot be less than {}, " \
            "while received {}".format(unknown_dim_size, dim_size)
    return True
