"""The distributed kvstores: one worker in this process, and real
multi-process runs under ``mpiexec -n 2`` / ``-n 3`` (dist_worker.py is
each rank; its results are compared here)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dist_worker as dw  # noqa: E402


def _mpiexec():
    cand = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return cand if os.path.exists(cand) else shutil.which("mpiexec")


def _have_mpi():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return _mpiexec() is not None


needs_mpi = pytest.mark.skipif(not _have_mpi(), reason="needs mpi4py and mpiexec (pip install -e '.[dist]')")


def run_mpi(n, scenarios, out, env=None, timeout=120, check=True):
    e = dict(os.environ)
    for v in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "AIOND_DIST_MPI"):
        e.pop(v, None)
    e.update(env or {})
    cmd = [_mpiexec(), "-n", str(n), sys.executable, os.path.join(HERE, "dist_worker.py"),
           scenarios, str(out)]
    proc = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out_, err_ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # take the whole job down (mpiexec and the ranks it started)
        os.killpg(proc.pid, signal.SIGKILL)
        out_, err_ = proc.communicate()
        raise AssertionError("mpiexec did not finish in %d s:\n%s%s" % (timeout, out_, err_))
    p = subprocess.CompletedProcess(cmd, proc.returncode, out_, err_)
    if check:
        assert p.returncode == 0, p.stdout + p.stderr
        for one in scenarios.split(","):
            for r in range(n):
                assert "rank %d: %s ok" % (r, one) in p.stdout, p.stdout + p.stderr
    return p


def _same_on_every_rank(out, tag, n):
    loaded = [np.load(os.path.join(out, "%s-%d.npz" % (tag, r))) for r in range(n)]
    for r in range(1, n):
        assert loaded[r].files == loaded[0].files
        for k in loaded[0].files:
            # bit-identical, not merely close
            assert loaded[r][k].tobytes() == loaded[0][k].tobytes(), (tag, k, r)
    return {k: loaded[0][k] for k in loaded[0].files}


# ------------------------------------------------------------ one worker
def test_single_process_store_is_one_worker():
    kv = mx.kv.create("dist_sync")
    assert (kv.rank, kv.num_workers, kv.type) == (0, 1, "dist_sync")
    assert kv.is_capable("optimizer")
    kv.init(3, mx.nd.ones((2, 3)) * 4)
    kv.push(3, [mx.nd.ones((2, 3)), mx.nd.ones((2, 3)) * 2])
    o = mx.nd.zeros((2, 3))
    kv.pull(3, out=o)
    assert (o.asnumpy() == 3).all()
    keys = list(range(10, 40))
    kv.init(keys, [mx.nd.zeros((5,), dtype="int64") for _ in keys])
    vals = [mx.nd.full((5,), k, dtype="int64") for k in keys]
    kv.pushpull(keys, vals)
    assert [int(v.asnumpy()[0]) for v in vals] == keys
    kv._barrier()
    with pytest.raises(MXNetError, match="not been initialized"):
        kv.push(99, mx.nd.ones((2,)))
    with pytest.raises(MXNetError, match="shape"):
        kv.push(3, mx.nd.ones((3, 3)))
    with pytest.raises(MXNetError, match="dtype"):
        kv.push(3, mx.nd.ones((2, 3), dtype="float64"))


def test_single_process_optimizer_matches_local_store(tmp_path):
    stores = [mx.kv.create("dist_sync"), mx.kv.create("local")]
    outs = []
    for kv in stores:
        kv.init("w", mx.nd.ones((4,)))
        kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9))
        w = mx.nd.zeros((4,))
        for s in range(3):
            kv.pushpull("w", mx.nd.array([1.0, -2.0, 3.0, s]), out=w)
        outs.append(w.asnumpy())
    np.testing.assert_array_equal(outs[0], outs[1])
    f = str(tmp_path / "states")
    stores[0].save_optimizer_states(f)
    stores[0].load_optimizer_states(f)


def test_single_process_compression_keeps_residual():
    kv = mx.kv.create("dist_sync")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init(0, mx.nd.zeros((20,)))
    got = []
    for _ in range(2):
        kv.push(0, mx.nd.full((20,), 0.3))
        o = mx.nd.zeros((20,))
        kv.pull(0, out=o)
        got.append(o.asnumpy())
    # 0.3 stays below the threshold; with the residual, 0.6 crosses it
    assert (got[0] == 0).all() and (got[1] == 0.5).all()
    with pytest.raises(MXNetError, match="Unknown type"):
        kv.set_gradient_compression({"type": "1bit"})


def test_2bit_layout_is_mxnets():
    from aiond.kvstore._compression import TwoBit
    c = TwoBit(0.5)
    g = np.array([1, -1, 0, 0.7] + [0] * 12 + [-0.9], dtype=np.float32)
    res = np.zeros_like(g)
    out = np.zeros(TwoBit.compressed_bytes(g.size), dtype=np.uint8)
    c.quantize(g, res, out)
    # value 0 -> 11 (0xc0), value 1 -> 10 (0x20), value 3 -> 11 (0x03); the 17th
    # value opens a second float word with 10 in its top bits
    assert out.tolist() == [0xc0 | 0x20 | 0x03, 0, 0, 0, 0x80, 0, 0, 0]
    np.testing.assert_allclose(res[[0, 1, 3, 16]], [0.5, -0.5, 0.2, -0.4], rtol=1e-6)
    np.testing.assert_array_equal(c.dequantize(out, g.size)[[0, 1, 2, 3, 16]],
                                  [0.5, -0.5, 0, 0.5, -0.5])


def test_dist_store_in_naive_engine():
    kv = mx.kv.create("dist_sync")
    with mx.engine.naive():
        kv.init(1, mx.nd.ones((3,)))
        v = mx.nd.ones((3,)) * 2
        kv.pushpull(1, v)
        assert (v.asnumpy() == 2).all()


def test_poisoned_gradient_fails_the_pull_not_the_store():
    kv = mx.kv.create("dist_sync")
    kv.init(1, mx.nd.ones((3,)))
    gate = mx.nd.ones((3,))

    def boom():
        raise ValueError("kernel failed")
    mx.engine.push(boom, writes=[gate])
    kv.pushpull(1, gate)
    with pytest.raises(MXNetError, match="kernel failed"):
        gate.asnumpy()
    v = mx.nd.ones((3,))
    kv.pushpull(1, v)
    assert (v.asnumpy() == 1).all()


def test_import_does_not_load_mpi():
    code = ("import sys, aiond as mx; kv = mx.kv.create('dist_sync'); "
            "assert 'mpi4py' not in sys.modules, 'mpi4py imported'")
    env = {k: v for k, v in os.environ.items() if k not in ("PMI_RANK", "PMI_SIZE")}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)


# ------------------------------------------------------------ mpiexec -n N
@needs_mpi
@pytest.mark.slow
def test_sums_every_dtype_and_compression_on_two_ranks(tmp_path):
    run_mpi(2, "sums,compression", tmp_path, env={"AIOND_DIST_CHUNK_BYTES": "65536"})
    w = _same_on_every_rank(tmp_path, "sums", 2)["w"]
    np.testing.assert_allclose(w, dw.sums_ref(mx, 2), rtol=1e-6, atol=1e-7)
    got = _same_on_every_rank(tmp_path, "compression", 2)["got"]
    np.testing.assert_array_equal(got, dw.compression_ref(2))


@needs_mpi
@pytest.mark.slow
def test_three_ranks_sums_and_mismatch_errors(tmp_path):
    run_mpi(3, "sums,mismatch,poison", tmp_path)
    np.testing.assert_allclose(_same_on_every_rank(tmp_path, "sums", 3)["w"],
                               dw.sums_ref(mx, 3), rtol=1e-6, atol=1e-7)
    for r in range(3):
        init_msg, push_msg = open(tmp_path / ("mismatch-%d.txt" % r)).read().splitlines()
        assert "key 'w' of shape (2, 3)" in init_msg and "on ranks 0,1" in init_msg
        assert "key 'w' of shape (3, 3)" in init_msg and "on rank 2" in init_msg
        assert "key 'a'" in push_msg and "key 'b'" in push_msg
        assert "on rank 0" in push_msg and "on ranks 1,2" in push_msg
        small, big = open(tmp_path / ("poison-%d.txt" % r)).read().splitlines()
        for msg in (small, big):
            if r == 2:      # the rank whose input failed reports its own cause
                assert "kernel failed on purpose" in msg
            else:
                assert "rank 2 sent values computed by a failed operation" in msg


@needs_mpi
@pytest.mark.slow
def test_failed_input_fails_every_rank_under_the_naive_engine(tmp_path):
    run_mpi(2, "poison", tmp_path, env={"AIOND_ENGINE": "naive"})
    for r in range(2):
        for msg in open(tmp_path / ("poison-%d.txt" % r)).read().splitlines():
            assert ("kernel failed on purpose" in msg) if r == 1 else \
                ("rank 1 sent values computed by a failed operation" in msg)


@needs_mpi
@pytest.mark.slow
def test_trainer_and_module_match_one_process_on_the_whole_batch(tmp_path):
    run_mpi(2, "gluon_dist,gluon_noupd,module_dist,module_noupd", tmp_path)
    with mx.cpu():      # as the ranks (under AIOND_TEST_CTX=gpu* the default is a GPU)
        ref = list(dw.gluon_ref(mx, 2).values())
        mref = dw.train_module(mx, "local", 2, 0, str(tmp_path))
    for tag in ("gluon", "gluon-uok0"):
        got = list(_same_on_every_rank(tmp_path, tag, 2).values())
        assert len(got) == len(ref)
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for tag in ("module", "module-noupd"):
        mgot = _same_on_every_rank(tmp_path, tag, 2)
        for k in mref:
            np.testing.assert_allclose(mgot[k], mref[k], rtol=1e-5, atol=1e-6)


@needs_mpi
@pytest.mark.slow
def test_hung_rank_times_out_with_a_clear_error(tmp_path):
    # AIOND_DIST_TIMEOUT covers start-up; the worker lowers it to 2 s once all are in
    run_mpi(3, "dead", tmp_path, env={"AIOND_DIST_TIMEOUT": "60", "DEAD_TIMEOUT": "2",
                                       "DEAD_MODE": "hang"}, check=False)
    for r in range(2):
        first, later = open(tmp_path / ("dead-%d.txt" % r)).read().splitlines()
        assert "DistTimeoutError" in first and "did not complete within 2 s" in first
        assert "rank %d of 3" % r in first and "kvstore_pushpull" in first
        assert "unusable after an earlier failure" in later


@needs_mpi
@pytest.mark.slow
def test_killed_rank_ends_the_job_instead_of_hanging(tmp_path):
    p = run_mpi(2, "dead", tmp_path, env={"AIOND_DIST_TIMEOUT": "30", "DEAD_MODE": "kill"},
                check=False, timeout=60)
    assert p.returncode != 0


@needs_mpi
@pytest.mark.slow
def test_dist_async_progress_and_exactly_once(tmp_path):
    run_mpi(3, "async_progress", tmp_path, env={"KV_TYPE": "dist_async"})
    res = [np.load(tmp_path / ("async-%d.npz" % r)) for r in range(3)]
    # rank 1 went on alone: its pulls saw its own pushes, one by one, and
    # nothing of the others (parked until it finished)
    np.testing.assert_array_equal(res[1]["seen"], [-1, -2, -3, -4, -5])
    for r in range(3):
        # after the barrier every push of every rank was applied exactly once
        np.testing.assert_array_equal(res[r]["final"], [-15.0] * 4)


def test_dist_async_single_process():
    kv = mx.kv.create("dist_async")
    assert kv.type == "dist_async" and kv.num_workers == 1
    with pytest.raises(MXNetError, match="set_optimizer"):
        kv.pushpull(0, mx.nd.ones((2,)))
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.5))
    kv.init(0, mx.nd.ones((2,)))
    v = mx.nd.ones((2,))
    kv.pushpull(0, v)
    np.testing.assert_array_equal(v.asnumpy(), [0.5, 0.5])
    with pytest.raises(MXNetError, match="supported"):
        kv.set_gradient_compression({"type": "2bit"})


def test_launch_builds_mxnet_style_commands(tmp_path):
    from aiond import launch
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost:2\n")
    args, unknown = launch._parser().parse_known_args(
        ["-n", "2", "-H", str(hosts), "--env-worker", "A:1", "--timeout", "9",
         "--mpiexec", "/x/mpiexec", "train.py", "--lr", "0.1"])
    cmd, env = launch.build_command(args, unknown)
    assert cmd[:5] == ["/x/mpiexec", "-n", "2", "-f", str(hosts)]
    assert ["-genv", "A", "1"] == cmd[5:8] and env["AIOND_DIST_TIMEOUT"] == "9.0"
    assert cmd[-6:] == [sys.executable, "-m", "aiond._launch_rank", "train.py", "--lr", "0.1"]
    with pytest.raises(SystemExit):
        launch.build_command(*launch._parser().parse_known_args(
            ["-n", "2", "--launcher", "yarn", "t.py"]))


@needs_mpi
@pytest.mark.slow
def test_launch_runs_workers(tmp_path):
    script = tmp_path / "t.py"
    script.write_text("import aiond as mx\nkv = mx.kv.create('dist_sync')\n"
                      "kv.init(0, mx.nd.zeros((2,)))\nv = mx.nd.ones((2,))\n"
                      "kv.pushpull(0, v)\nimport os\n"
                      "os.write(1, ('rank %d %s\\n' % (kv.rank, v.asnumpy()[0])).encode())\n")
    p = subprocess.run([sys.executable, "-m", "aiond.launch", "-n", "2", str(script)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "rank 0 2.0" in p.stdout and "rank 1 2.0" in p.stdout


def test_dist_store_under_the_profiler(tmp_path):
    # the comm executor times itself: its jobs are spans on a track of their own
    import json
    kv = mx.kv.create("dist_sync")
    kv.init(5, mx.nd.zeros((3,)))
    mx.profiler.set_config(profile_all=True, filename=str(tmp_path / "p.json"))
    mx.profiler.set_state("run")
    try:
        for _ in range(3):
            v = mx.nd.ones((3,)) * 2
            kv.pushpull(5, v)
            assert (v.asnumpy() == 2).all()
    finally:
        mx.profiler.set_state("stop")
    mx.profiler.dump()
    trace = json.loads((tmp_path / "p.json").read_text())["traceEvents"]
    tracks = {e["tid"]: e["args"]["name"] for e in trace
              if e.get("ph") == "M" and e.get("name") == "thread_name"}
    comm = [e for e in trace if e.get("ph") == "X"
            and "MPI communication" in tracks.get(e["tid"], "")]
    assert len(comm) >= 3, sorted(set(tracks.values()))
    assert all(e["dur"] >= 0 for e in comm)


def test_inline_check_verdict_is_the_same_on_every_rank():
    from aiond.kvstore.dist import _sig_agrees, _sig_slots
    sigs = [_sig_slots(s) for s in (5, 5 + 1, 5 + 2)]   # rank 1's hash is the mean
    summed = sum(sigs)
    assert not any(_sig_agrees(summed, mine, 3) for mine in sigs)
    assert all(_sig_agrees(sigs[0] * 3, sigs[0], 3) for _ in range(3))
