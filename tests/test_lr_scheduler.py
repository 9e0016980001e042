"""mx.lr_scheduler: values over a range of update counts, as MXNet 1.9.1
gives them (EXPECTED was printed by MXNet running SCHEDULES below)."""
import logging

import pytest

from aiond import lr_scheduler as L

R = list(range(40))
SCHEDULES = {
    "factor": (lambda: L.FactorScheduler(step=5, factor=0.5, base_lr=1.0), R),
    "factor_stop": (lambda: L.FactorScheduler(step=3, factor=0.1, stop_factor_lr=1e-3,
                                              base_lr=1.0), R),
    "factor_warm": (lambda: L.FactorScheduler(step=4, factor=0.5, base_lr=0.8, warmup_steps=6,
                                              warmup_begin_lr=0.1), R),
    "factor_warmc": (lambda: L.FactorScheduler(step=4, factor=0.5, base_lr=0.8, warmup_steps=6,
                                               warmup_begin_lr=0.1, warmup_mode="constant"), R),
    "multi": (lambda: L.MultiFactorScheduler(step=[3, 7, 20], factor=0.5, base_lr=1.0), R),
    "multi_warm": (lambda: L.MultiFactorScheduler(step=[8, 12], factor=0.1, base_lr=1.0,
                                                  warmup_steps=5, warmup_begin_lr=0.5), R),
    "poly": (lambda: L.PolyScheduler(max_update=30, base_lr=1.0, pwr=2, final_lr=0.1), R),
    "poly_warm": (lambda: L.PolyScheduler(max_update=30, base_lr=1.0, pwr=1, warmup_steps=5), R),
    "cos": (lambda: L.CosineScheduler(max_update=30, base_lr=1.0, final_lr=0.1), R),
    "cos_warm": (lambda: L.CosineScheduler(max_update=30, base_lr=1.0, warmup_steps=5,
                                           warmup_begin_lr=0.2), R),
    # the factor schedulers keep state: going back does not undo a decay
    "factor_jump": (lambda: L.FactorScheduler(step=5, factor=0.5, base_lr=1.0),
                    [0, 1, 12, 3, 30, 31]),
}

EXPECTED = {
    'factor': [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.25,
        0.125, 0.125, 0.125, 0.125, 0.125, 0.0625, 0.0625, 0.0625, 0.0625, 0.0625, 0.03125,
        0.03125, 0.03125, 0.03125, 0.03125, 0.015625, 0.015625, 0.015625, 0.015625, 0.015625,
        0.0078125, 0.0078125, 0.0078125, 0.0078125],
    'factor_stop': [1.0, 1.0, 1.0, 1.0, 0.1, 0.1, 0.1, 0.010000000000000002, 0.010000000000000002,
        0.010000000000000002, 0.0010000000000000002, 0.0010000000000000002, 0.0010000000000000002,
        0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001,
        0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001,
        0.001],
    'factor_warm': [0.1, 0.21666666666666667, 0.33333333333333337, 0.45000000000000007,
        0.5666666666666668, 0.6833333333333333, 0.4, 0.4, 0.4, 0.2, 0.2, 0.2, 0.2, 0.1, 0.1, 0.1,
        0.1, 0.05, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.025, 0.0125, 0.0125, 0.0125, 0.0125,
        0.00625, 0.00625, 0.00625, 0.00625, 0.003125, 0.003125, 0.003125, 0.003125, 0.0015625,
        0.0015625, 0.0015625],
    'factor_warmc': [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.4, 0.4, 0.4, 0.2, 0.2, 0.2, 0.2, 0.1, 0.1,
        0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.025, 0.0125, 0.0125, 0.0125,
        0.0125, 0.00625, 0.00625, 0.00625, 0.00625, 0.003125, 0.003125, 0.003125, 0.003125,
        0.0015625, 0.0015625, 0.0015625],
    'multi': [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25,
        0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125,
        0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125],
    'multi_warm': [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0, 1.0, 0.1, 0.1, 0.1, 0.1,
        0.010000000000000002, 0.010000000000000002, 0.010000000000000002, 0.010000000000000002,
        0.010000000000000002, 0.010000000000000002, 0.010000000000000002, 0.010000000000000002,
        0.010000000000000002, 0.010000000000000002, 0.010000000000000002, 0.010000000000000002,
        0.010000000000000002, 0.010000000000000002, 0.010000000000000002, 0.010000000000000002,
        0.010000000000000002, 0.010000000000000002, 0.010000000000000002, 0.010000000000000002,
        0.010000000000000002, 0.010000000000000002, 0.010000000000000002, 0.010000000000000002,
        0.010000000000000002, 0.010000000000000002, 0.010000000000000002],
    'poly': [1.0, 0.941, 0.884, 0.8290000000000001, 0.776, 0.7250000000000001, 0.6760000000000002,
        0.629, 0.5840000000000002, 0.5409999999999999, 0.5000000000000001, 0.46099999999999997,
        0.42400000000000004, 0.389, 0.356, 0.325, 0.29600000000000004, 0.269, 0.24400000000000005,
        0.22100000000000003, 0.2, 0.18100000000000005, 0.16400000000000003, 0.149,
        0.13599999999999998, 0.125, 0.11599999999999999, 0.109, 0.10400000000000001, 0.101, 0.1,
        0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1],
    'poly_warm': [0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 0.96, 0.92, 0.88, 0.84, 0.8, 0.76, 0.72,
        0.6799999999999999, 0.64, 0.6, 0.56, 0.52, 0.48, 0.43999999999999995, 0.4, 0.36,
        0.31999999999999995, 0.28, 0.24, 0.19999999999999996, 0.16000000000000003, 0.12,
        0.07999999999999996, 0.040000000000000036, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0],
    'cos': [1.0, 0.997534852915723, 0.9901664203302125, 0.9779754323328191, 0.9610954559391703,
        0.9397114317029974, 0.9140576474687263, 0.8844151714648274, 0.8511087728614862,
        0.8145033635316129, 0.775, 0.7330314893841101, 0.6890576474687263, 0.6435602608679917,
        0.5970378084704441, 0.5500000000000002, 0.502962191529556, 0.4564397391320083,
        0.41094235253127376, 0.36696851061589, 0.3250000000000001, 0.2854966364683872,
        0.24889122713851394, 0.2155848285351727, 0.18594235253127372, 0.16028856829700258,
        0.13890454406082958, 0.12202456766718092, 0.10983357966978745, 0.10246514708427698, 0.1,
        0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1],
    'cos_warm': [0.2, 0.36, 0.52, 0.6800000000000002, 0.8400000000000001, 1.0, 0.996057350657239,
        0.9842915805643155, 0.9648882429441257, 0.9381533400219317, 0.9045084971874737,
        0.8644843137107058, 0.8187119948743449, 0.7679133974894983, 0.7128896457825363,
        0.6545084971874737, 0.5936906572928624, 0.5313952597646567, 0.4686047402353433,
        0.4063093427071377, 0.34549150281252644, 0.28711035421746367, 0.23208660251050156,
        0.18128800512565513, 0.13551568628929433, 0.09549150281252633, 0.06184665997806821,
        0.035111757055874326, 0.015708419435684517, 0.0039426493427611176, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0],
    'factor_jump': [1.0, 1.0, 0.25, 0.25, 0.03125, 0.015625],
}


@pytest.mark.parametrize("key", sorted(SCHEDULES))
def test_schedule_values_match_mxnet(key):
    make, steps = SCHEDULES[key]
    s = make()
    got = [s(n) for n in steps]
    assert got == pytest.approx(EXPECTED[key], rel=1e-12, abs=1e-15)


def test_count_semantics():
    # the decay happens once num_update exceeds count + step (at step+1, not step)
    s = L.FactorScheduler(step=10, factor=0.1, base_lr=1.0)
    assert s(10) == 1.0 and s(11) == pytest.approx(0.1) and s.count == 10
    m = L.MultiFactorScheduler(step=[5, 8], factor=0.5, base_lr=1.0)
    assert [m(n) for n in (5, 6, 8, 9)] == [1.0, 0.5, 0.5, 0.25]
    assert m.cur_step_ind == 2 and m.count == 8
    # base_lr set later (as the optimizer does) is used by Factor, not by Poly/Cosine
    p = L.PolyScheduler(max_update=10, base_lr=1.0)
    p.base_lr = 0.5
    assert p(0) == 1.0


def test_factor_logging(caplog):
    s = L.FactorScheduler(step=1, factor=0.5, stop_factor_lr=0.3, base_lr=1.0)
    with caplog.at_level(logging.INFO):
        assert s(3) == 0.3
    assert "Change learning rate to 5.00000e-01" in caplog.text
    assert "now learning rate arrived at 3.00000e-01" in caplog.text


def test_argument_checks():
    with pytest.raises(ValueError, match="greater or equal than 1"):
        L.FactorScheduler(step=0)
    with pytest.raises(ValueError, match="no more than 1"):
        L.FactorScheduler(step=2, factor=1.5)
    with pytest.raises(ValueError, match="increasing"):
        L.MultiFactorScheduler(step=[3, 3])
    with pytest.raises(ValueError, match="higher than warmup_begin_lr"):
        L.PolyScheduler(max_update=10, base_lr=0.1, warmup_begin_lr=0.5)
    with pytest.raises(ValueError, match="linear and constant"):
        L.CosineScheduler(max_update=10, warmup_mode="exp")
    with pytest.raises(ValueError, match="strictly positive"):
        L.CosineScheduler(max_update=0)
    with pytest.raises(AssertionError):
        L.PolyScheduler(max_update=10.0)
    with pytest.raises(NotImplementedError):
        L.LRScheduler()(1)
