"""mx.metric against MXNet 1.9.1: the expected numbers were printed by the real
MXNet 1.9.1 on the same inputs (numpy's legacy RandomState(3) makes them)."""
import math
from collections import OrderedDict

import numpy as np
import pytest

import aiond as mx
import aiond.metric  # noqa: F401  (until aiond/__init__ imports it)
from aiond.base import MXNetError

metric = aiond.metric
nd = mx.nd
approx = lambda v: pytest.approx(v, rel=1e-6, abs=1e-9)  # noqa: E731


def _data():
    rng = np.random.RandomState(3)
    P = rng.rand(12, 5).astype('float32')
    P /= P.sum(1, keepdims=True)
    L = rng.randint(0, 5, 12).astype('float32')
    P2 = rng.rand(12, 2).astype('float32')
    P2 /= P2.sum(1, keepdims=True)
    L2 = rng.randint(0, 2, 12).astype('float32')
    return P, L, P2, L2


P, L, P2, L2 = _data()
DOC_PREDS = [nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])]
DOC_LABELS = [nd.array([0, 1, 1])]


def check(m, name, value, gvalue, num, gnum):
    n, v = m.get()
    gn, gv = m.get_global()
    assert n == name and gn == name
    for got, want in ((v, value), (gv, gvalue)):
        if isinstance(want, float) and math.isnan(want):
            assert math.isnan(got)
        else:
            assert got == approx(want)
    assert (m.num_inst, m.global_num_inst) == (num, gnum)


@pytest.mark.parametrize("m,name,value,num", [
    (metric.Accuracy(), 'accuracy', 0.6666666666666666, 3),
    (metric.F1(), 'f1', 0.8, 1),
    (metric.CrossEntropy(), 'cross-entropy', 0.5715994834899902, 3),
    (metric.NegativeLogLikelihood(), 'nll-loss', 0.5715994834899902, 3),
    (metric.Perplexity(ignore_label=None), 'perplexity', 1.7710976285155853, 3),
    (metric.MCC(), 'mcc', 0.0, 1.0),
    (metric.PCC(), 'pcc', float('nan'), 1.0),
])
def test_doc_examples(m, name, value, num):
    m.update(DOC_LABELS, DOC_PREDS)
    check(m, name, value, value, num, num)


@pytest.mark.parametrize("make,name,value,gvalue,num,gnum", [
    (lambda: metric.Accuracy(), 'accuracy', 0.25, 0.25, 4, 12),
    (lambda: metric.TopKAccuracy(3), 'top_k_accuracy_3', 0.75, 0.5833333333333334, 4, 12),
    (lambda: metric.create('top_k_accuracy', top_k=2), 'top_k_accuracy_2', 0.75, 0.5, 4, 12),
    (lambda: metric.create('ce'), 'cross-entropy', 1.5338997840881348, 2.025634010632833, 4, 12),
    (lambda: metric.create('nll_loss'), 'nll-loss', 1.5338997840881348, 2.025634010632833, 4, 12),
    (lambda: metric.Perplexity(ignore_label=2), 'perplexity', 4.636221877828218,
     7.580915802535816, 4.0, 12.0),
    (lambda: metric.Perplexity(ignore_label=None), 'perplexity', 4.636221877828218,
     7.580915802535816, 4, 12),
    (lambda: metric.PCC(), 'pcc', 0.1, -0.019622937706955574, 1.0, 3.0),
    (lambda: metric.Loss(), 'loss', 0.2, 0.2, 20, 60),
    (lambda: metric.MAE(), 'mae', 1.3999998569488525, 1.2166665246089299, 1, 3),
    (lambda: metric.MSE(), 'mse', 3.946127414703369, 3.300101508696874, 1, 3),
    (lambda: metric.RMSE(), 'rmse', 1.9864861965179443, 1.5456987122694652, 1, 3),
])
def test_three_batches_with_reset_local(make, name, value, gvalue, num, gnum):
    m = make()
    for i in range(3):
        m.update([nd.array(L[i * 4:(i + 1) * 4])], [nd.array(P[i * 4:(i + 1) * 4])])
        if i == 1:
            m.reset_local()
    check(m, name, value, gvalue, num, gnum)


def _onehot(c):
    return nd.array(np.eye(2)[c] * 0.8 + 0.1)


@pytest.mark.parametrize("cls,avg,value,gvalue,num,gnum", [
    (metric.F1, 'macro', 0.8, 0.7111111111111111, 1, 3),
    (metric.MCC, 'macro', 0.5773502691896258, 0.41467231195209747, 1.0, 3.0),
    (metric.F1, 'micro', 0.8, 0.7142857142857143, 4, 12),
    (metric.MCC, 'micro', 0.5773502691896258, 0.3142857142857143, 4, 12),
])
def test_f1_mcc_macro_micro(cls, avg, value, gvalue, num, gnum):
    m = cls(average=avg)
    batches = [([0, 1, 1, 0, 1], [1, 1, 0, 0, 1]), ([1, 1, 0], [1, 0, 0]),
               ([0, 0, 1, 1], [0, 1, 1, 1])]
    for i, (lab, pred) in enumerate(batches):
        m.update([nd.array(lab)], [_onehot(pred)])
        if i == 1:
            m.reset_local()
    check(m, cls(average=avg).name, value, gvalue, num, gnum)


def test_binary_rare_class_example():
    fp, fn, tp, tn = 1000, 1, 10000, 1
    preds = [nd.array([[.3, .7]] * fp + [[.7, .3]] * tn + [[.7, .3]] * fn + [[.3, .7]] * tp)]
    labels = [nd.array([0.] * (fp + tn) + [1.] * (fn + tp))]
    for cls, want in ((metric.F1, 0.9523356030665205), (metric.MCC, 0.01917751877733392),
                      (metric.PCC, 0.01917751877733392)):
        m = cls()
        m.update(labels, preds)
        assert m.get()[1] == approx(want)


def test_pcc_grows_with_classes():
    m = metric.PCC()
    m.update([nd.array([0, 1, 2, 3, 2])], [nd.array([0, 1, 2, 2, 2])])
    m.update([nd.array([4, 0])], [nd.array(np.eye(5)[[4, 1]])])
    assert m.get() == ('pcc', approx(0.6676978608895887))
    assert m.get_global()[1] == approx(0.6676978608895887)
    assert m.k == 5


def test_pearson():
    m = metric.PearsonCorrelation()
    m.update([nd.array([[1, 0], [0, 1], [0, 1]])], [nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
    assert m.get() == ('pearsonr', approx(0.4216370454401618))
    for avg, value, gvalue, num in (('macro', -0.7492211387983553, float('nan'), 1),
                                    ('micro', -0.28633753497430625, 0.0, 3)):
        m = metric.PearsonCorrelation(average=avg)
        for i in range(3):
            with np.errstate(invalid='ignore', divide='ignore'):
                m.update([nd.array(L2[i * 4:(i + 1) * 4])], [nd.array(P2[i * 4:(i + 1) * 4, 1])])
            if i == 1 and avg == 'macro':
                m.reset_local()
        check(m, 'pearsonr', value, gvalue, num, 3)
    with pytest.raises(ValueError, match="does not match shape"):
        metric.PearsonCorrelation().update(DOC_LABELS, DOC_PREDS)


def test_accuracy_shapes():
    m = metric.Accuracy()  # predictions already class indices
    m.update([nd.array([1, 2, 3, 0])], [nd.array([1, 2, 0, 0])])
    check(m, 'accuracy', 0.75, 0.75, 4, 4)
    m = metric.Accuracy()  # bare NDArrays are wrapped; (N,1) vs (N,1)
    m.update(nd.array([[1], [2]]), nd.array([[1], [0]]))
    check(m, 'accuracy', 0.5, 0.5, 2, 2)
    m = metric.Accuracy(axis=0)
    m.update([nd.array([0, 1, 1])], [nd.array(P[:2, :3])])
    check(m, 'accuracy', 0.3333333333333333, 0.3333333333333333, 3, 3)
    m = metric.Accuracy()  # (N, C, T) scores vs (N, T) labels
    m.update([nd.array([[0, 1], [2, 1]])], [nd.array(np.random.RandomState(1).rand(2, 3, 2))])
    assert m.num_inst == 4
    m = metric.Accuracy()  # numpy inputs are accepted too
    m.update([np.array([0, 1])], [np.array([[0.9, 0.1], [0.2, 0.8]])])
    assert m.get() == ('accuracy', 1.0)


def test_shape_errors():
    with pytest.raises(ValueError, match="Shape of labels 1 does not match shape of predictions 2"):
        metric.Accuracy().update([nd.array([1, 2])], [nd.array([1, 2]), nd.array([1])])
    with pytest.raises(MXNetError):  # MXNet: argmax over a missing axis
        metric.Accuracy().update([nd.array([1, 2, 3])], [nd.array([1, 2])])
    with pytest.raises(ValueError, match="only supports binary classification"):
        metric.F1().update([nd.array([0, 1, 2])], [nd.array(P[:3, :3])])
    with pytest.raises(AssertionError, match="Please use Accuracy"):
        metric.TopKAccuracy(1)


def test_topk_1d_and_loss_single_array():
    m = metric.TopKAccuracy(3)
    m.update([nd.array([1, 0, 3, 3, 0])], [nd.array([1, 2, 3, 0, 4])])
    check(m, 'top_k_accuracy_3', 0.2, 0.0, 5, 5)  # MXNet skips the global sum for 1-D
    m = metric.Loss()
    m.update(None, nd.array([1, 2, 3]))
    check(m, 'loss', 2.0, 2.0, 3, 3)


def test_perplexity_ignore_and_clip():
    m = metric.Perplexity(ignore_label=0, axis=-1)
    m.update([nd.array(np.array([[1, 0, 2], [3, 4, 0]]))], [nd.array(P[:6])])
    check(m, 'perplexity', 4.393116488, 4.393116488, 4.0, 4.0)
    m = metric.Perplexity(ignore_label=-1)  # -1 is clipped by pick, then ignored
    m.update([nd.array([-1, 1, 2])], [nd.array(P[:3])])
    check(m, 'perplexity', 6.644093445, 6.644093445, 2.0, 2.0)


def test_regression_shapes():
    m = metric.MSE()
    m.update([nd.array([1, 2, 3])], [nd.array([[1.5], [2], [2]])])
    check(m, 'mse', 0.416666657, 0.416666657, 1, 1)
    m = metric.MAE()
    m.update([nd.array(np.array([2.5, 0.0, 2, 8]).reshape(4, 1))],
             [nd.array(np.array([3, -0.5, 2, 7]).reshape(4, 1))])
    check(m, 'mae', 0.5, 0.5, 1, 1)
    m = metric.RMSE()
    m.update([nd.array(np.array([2.5, 0.0, 2, 8]).reshape(4, 1))],
             [nd.array(np.array([3, -0.5, 2, 7]).reshape(4, 1))])
    assert m.get()[1] == approx(0.6123724356957945)


def test_composite():
    c = metric.create(['acc', 'ce', metric.F1()])
    assert isinstance(c, metric.CompositeEvalMetric)
    c.update([nd.array(L2[:6])], [nd.array(P2[:6])])
    names, values = c.get()
    assert names == ['accuracy', 'cross-entropy', 'f1']
    assert values == [approx(0.5), approx(0.72135329246521), 0.0]
    assert c.get_global() == (names, values)
    assert c.get_name_value() == [('accuracy', 0.5), ('cross-entropy', approx(0.72135329246521)),
                                  ('f1', 0.0)]
    assert isinstance(c.get_metric(5), ValueError)  # returned, not raised, as MXNet
    assert c.get_metric(1).name == 'cross-entropy'
    c.reset_local()
    assert all(math.isnan(v) for v in c.get()[1])
    assert str(c) == "EvalMetric: {'accuracy': nan, 'cross-entropy': nan, 'f1': nan}"
    c2 = metric.CompositeEvalMetric(['mse', 'mae'])
    assert c2.get_config() == {
        'metric': 'CompositeEvalMetric', 'name': 'composite', 'output_names': None,
        'label_names': None, 'metrics': [
            {'metric': 'MSE', 'name': 'mse', 'output_names': None, 'label_names': None},
            {'metric': 'MAE', 'name': 'mae', 'output_names': None, 'label_names': None}]}
    c2.add('rmse')
    assert [m.name for m in c2.metrics] == ['mse', 'mae', 'rmse']


def test_update_dict():
    m = metric.Accuracy(output_names=['o2'], label_names=['l1'])
    m.update_dict({'l1': nd.array([0, 1]), 'l0': nd.array([1, 1])},
                  {'o1': nd.array([[1, 0], [1, 0]]), 'o2': nd.array([[1, 0], [0, 1]])})
    check(m, 'accuracy', 1.0, 1.0, 2, 2)
    c = metric.CompositeEvalMetric(['acc', 'mse'], label_names=['l1'], output_names=['o2'])
    c.update_dict(OrderedDict([('l1', nd.array([0, 1])), ('zz', nd.array([5, 5]))]),
                  OrderedDict([('o2', nd.array([[1, 0], [0, 1]]))]))
    assert c.get() == (['accuracy', 'mse'], [1.0, 0.5])


def test_create_and_config():
    names = ['acc', 'accuracy', 'ce', 'f1', 'mae', 'mse', 'rmse', 'loss', 'composite', 'nll_loss',
             'pearsonr', 'mcc', 'pcc', 'MSE', 'crossentropy', 'top_k_acc']
    kinds = [type(metric.create(n) if n != 'top_k_acc' else metric.create(n, 2)).__name__
             for n in names]
    assert kinds == ['Accuracy', 'Accuracy', 'CrossEntropy', 'F1', 'MAE', 'MSE', 'RMSE', 'Loss',
                     'CompositeEvalMetric', 'NegativeLogLikelihood', 'PearsonCorrelation', 'MCC',
                     'PCC', 'MSE', 'CrossEntropy', 'TopKAccuracy']
    assert type(metric.create('perplexity', None)).__name__ == 'Perplexity'
    assert metric.create('perplexity', ignore_label=None).name == 'perplexity'
    assert metric.create('acc').get_config() == {
        'axis': 1, 'metric': 'Accuracy', 'name': 'accuracy', 'output_names': None,
        'label_names': None}
    assert metric.create('top_k_acc', 4).get_config() == {
        'top_k': 4, 'metric': 'TopKAccuracy', 'name': 'top_k_accuracy_4', 'output_names': None,
        'label_names': None}
    assert metric.create(metric.create('acc').get_config()).name == 'accuracy'
    assert metric.create('["top_k_accuracy", {"top_k": 3}]').name == 'top_k_accuracy_3'
    assert metric.create('{"metric": "mse", "name": "xx"}').name == 'xx'
    a = metric.Accuracy()
    assert metric.create(a) is a
    with pytest.raises(AssertionError, match="is not registered"):
        metric.create('nope')


def test_custom_and_np():
    def mydiff(label, pred):
        return np.abs(label - pred.ravel()).sum()
    m = metric.create(mydiff)
    m.update([nd.array([1, 2])], [nd.array([1.5, 1.0])])
    check(m, 'mydiff', 1.5, 1.5, 1, 1)
    m = metric.np(lambda l, p: (float((l == p.argmax(1)).sum()), len(l)))
    m.update([nd.array(L)], [nd.array(P)])
    check(m, 'custom(<lambda>)', 0.25, 0.25, 12, 12)
    m = metric.CustomMetric(lambda l, p: 1.0, name='one', allow_extra_outputs=True)
    m.update([nd.array(L)], [nd.array(P), nd.array(P)])
    check(m, 'one', 1.0, 1.0, 1, 1)
    with pytest.raises(NotImplementedError, match="CustomMetric cannot be serialized"):
        m.get_config()


def test_base_class_and_register():
    assert str(metric.Accuracy()) == "EvalMetric: {'accuracy': nan}"
    assert metric.Accuracy().get_global_name_value()[0][0] == 'accuracy'
    nv = metric.MSE().get_name_value()
    assert nv[0][0] == 'mse' and math.isnan(nv[0][1])

    @metric.register
    class MyM(metric.EvalMetric):
        def __init__(self, name='mym'):
            super().__init__(name)

        def update(self, labels, preds):
            self.sum_metric += 1
            self.num_inst += 2

    mm = metric.create('mym')
    mm.update(None, None)
    check(mm, 'mym', 0.5, 0.5, 2, 0)  # no global stats: get_global() is get()
    metric.alias('mym2')(MyM)
    assert type(metric.create('mym2')) is MyM
    with pytest.warns(UserWarning, match="overriding"):
        metric.register(MyM)
    with pytest.raises(NotImplementedError):
        metric.EvalMetric('x').update([], [])
    m = metric.Accuracy()
    m.update(DOC_LABELS, DOC_PREDS)
    m.reset()
    assert (m.num_inst, m.sum_metric, m.global_num_inst, m.global_sum_metric) == (0, 0.0, 0, 0.0)
