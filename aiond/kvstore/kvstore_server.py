"""``mxnet.kvstore.kvstore_server``: MXNet's parameter-server process.

MXNet's distributed stores run on ps-lite: processes started with
``DMLC_ROLE=server`` create a ``KVStoreServer`` and ``run()`` it until the
job ends, applying the workers' pushes (with the optimizer the workers
send, pickled, as command 0).

aiond's distributed stores have no server processes: 'dist_sync' and
'dist_device_sync' sum pushes by allreduce among the workers, and
'dist_async' is served by rank 0's communication thread (see
``aiond.kvstore.dist`` and ``dist_async``). So ``KVStoreServer`` keeps
MXNet's command handling (``_controller``), and ``run()`` raises an
``MXNetError`` saying to launch workers only
(``mpiexec -n N python train.py`` or ``python -m aiond.launch -n N train.py``).
"""
from __future__ import annotations

import logging
import pickle

from ..base import MXNetError

__all__ = ["KVStoreServer"]


class KVStoreServer(object):
    """The server side of the distributed store ``kvstore``."""

    def __init__(self, kvstore):
        self.kvstore = kvstore
        self.handle = getattr(kvstore, "handle", None)
        self.init_logginig = False      # MXNet's spelling

    def _controller(self):
        """The command handler: command 0 carries a pickled optimizer for
        the store; others are reported."""
        def server_controller(cmd_id, cmd_body, _):
            if not self.init_logginig:
                head = '%(asctime)-15s Server[' + str(self.kvstore.rank) + '] %(message)s'
                logging.basicConfig(level=logging.DEBUG, format=head)
                self.init_logginig = True
            if cmd_id == 0:
                self.kvstore.set_optimizer(pickle.loads(cmd_body))
            else:
                print("server %d, unknown command (%d, %s)"
                      % (self.kvstore.rank, cmd_id, cmd_body))
        return server_controller

    def run(self):
        """Refuse: aiond's distributed stores have no server processes."""
        raise MXNetError(
            "KVStoreServer.run: aiond's distributed kvstores have no parameter-server "
            "processes ('dist_sync' sums by allreduce among the workers; 'dist_async' is served "
            "by rank 0's communication thread). Start only workers: mpiexec -n N python "
            "train.py, or python -m aiond.launch -n N train.py (store type %r)"
            % getattr(self.kvstore, "type", None))
