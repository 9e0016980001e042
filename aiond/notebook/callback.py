"""Training callbacks for notebooks (MXNet 1.9.1's
``mxnet.notebook.callback``): ``PandasLogger`` keeps the metrics of every
``frequent``-th batch, of each evaluation and of each epoch in pandas
DataFrames; ``LiveLearningCurve`` and ``LiveTimeSeries`` draw them live
with bokeh.

    logger = PandasLogger(batch_size=32)
    mod.fit(train, eval_data=val, num_epoch=3, **logger.callback_args())
    logger.train_df

pandas and bokeh are imported when an object is created (an ImportError
names the one that is missing).
"""
from __future__ import annotations

import datetime
import importlib
import time
from collections import defaultdict

__all__ = ["PandasLogger", "LiveBokehChart", "LiveTimeSeries", "LiveLearningCurve",
           "args_wrapper", "Pandas_Failed_To_Import"]


class Pandas_Failed_To_Import:  # noqa: N801  (MXNet's name)
    """Stands for the ``pandas`` module when it is not installed."""


def _need(module, what):
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError("%s needs the %s package, which is not installed (pip install %s)"
                          % (what, module.split('.')[0], module.split('.')[0])) from None


def _add_new_columns(dataframe, metrics):
    for col in set(metrics.keys()) - set(dataframe.columns):
        dataframe[col] = None


def _extend(base, new):
    """Append to ``base`` the items of ``new`` beyond its length."""
    base.extend(new[len(base):])


def _batch_metrics(param):
    if param.eval_metric is not None:
        metrics = dict(param.eval_metric.get_name_value())
        param.eval_metric.reset()
    else:
        metrics = {}
    return metrics


class PandasLogger(object):
    """Metrics in pandas DataFrames: ``train_df`` (every ``frequent``-th
    batch, with speed and elapsed time), ``eval_df`` and ``epoch_df``."""

    def __init__(self, batch_size, frequent=50):
        pd = _need("pandas", "PandasLogger")
        self.batch_size = batch_size
        self.frequent = frequent
        self._dataframes = {'train': pd.DataFrame(), 'eval': pd.DataFrame(),
                            'epoch': pd.DataFrame()}
        self.last_time = time.time()
        self.start_time = datetime.datetime.now()
        self.last_epoch_time = datetime.datetime.now()

    @property
    def train_df(self):
        return self._dataframes['train']

    @property
    def eval_df(self):
        return self._dataframes['eval']

    @property
    def epoch_df(self):
        return self._dataframes['epoch']

    @property
    def all_dataframes(self):
        """``{'train': df, 'eval': df, 'epoch': df}``."""
        return self._dataframes

    def elapsed(self):
        """Time since the logger was created (a ``timedelta``)."""
        return datetime.datetime.now() - self.start_time

    def append_metrics(self, metrics, df_name):
        """Append the dict ``metrics`` as a row of DataFrame ``df_name``."""
        dataframe = self._dataframes[df_name]
        _add_new_columns(dataframe, metrics)
        dataframe.loc[len(dataframe)] = metrics

    def train_cb(self, param):
        """``batch_end_callback``: log every ``frequent``-th batch."""
        if param.nbatch % self.frequent == 0:
            self._process_batch(param, 'train')

    def eval_cb(self, param):
        """``eval_end_callback``: log the evaluation."""
        self._process_batch(param, 'eval')

    def _process_batch(self, param, dataframe):
        now = time.time()
        metrics = _batch_metrics(param)
        try:
            speed = self.frequent / (now - self.last_time)
        except ZeroDivisionError:
            speed = float('inf')
        # MXNet's column names (the two rates are named the other way round there)
        metrics['batches_per_sec'] = speed * self.batch_size
        metrics['records_per_sec'] = speed
        metrics['elapsed'] = self.elapsed()
        metrics['minibatch_count'] = param.nbatch
        metrics['epoch'] = param.epoch
        self.append_metrics(metrics, dataframe)
        self.last_time = now

    def epoch_cb(self, *args):
        """``epoch_end_callback``: log the epoch's time (the callback's
        ``(epoch, symbol, arg_params, aux_params)`` are not needed)."""
        now = datetime.datetime.now()
        self.append_metrics({'elapsed': self.elapsed(),
                             'epoch_time': now - self.last_epoch_time}, 'epoch')
        self.last_epoch_time = now

    def callback_args(self):
        """The keyword arguments to pass to ``fit``."""
        return {'batch_end_callback': self.train_cb, 'eval_end_callback': self.eval_cb,
                'epoch_end_callback': self.epoch_cb}


class LiveBokehChart(object):
    """Base class of the live bokeh charts: re-draws at most every
    ``display_freq`` seconds from batch callbacks, and after each
    evaluation. Subclasses give ``setup_chart`` and ``update_chart_data``."""

    def __init__(self, pandas_logger, metric_name, display_freq=10, batch_size=None,
                 frequent=50):
        self._bokeh_io = _need("bokeh.io", type(self).__name__)
        if pandas_logger:
            self.pandas_logger = pandas_logger
        else:
            self.pandas_logger = PandasLogger(batch_size=batch_size, frequent=frequent)
        self.display_freq = display_freq
        self.last_update = time.time()
        self.metric_name = metric_name
        self._bokeh_io.output_notebook()
        self.handle = self.setup_chart()

    def setup_chart(self):
        """Draw the empty chart; return its notebook handle."""
        raise NotImplementedError("Incomplete base class: LiveBokehChart must be sub-classed")

    def update_chart_data(self):
        """Copy new data into the chart's sources."""
        raise NotImplementedError("Incomplete base class: LiveBokehChart must be sub-classed")

    def interval_elapsed(self):
        """Whether ``display_freq`` seconds passed since the last draw."""
        return time.time() - self.last_update > self.display_freq

    def _push_render(self):
        self._bokeh_io.push_notebook(handle=self.handle)
        self.last_update = time.time()

    def _do_update(self):
        self.update_chart_data()
        self._push_render()

    def batch_cb(self, param):
        if self.interval_elapsed():
            self._do_update()

    def eval_cb(self, param):
        self._do_update()

    def callback_args(self):
        return {'batch_end_callback': self.batch_cb, 'eval_end_callback': self.eval_cb}


class LiveTimeSeries(LiveBokehChart):
    """A line of values against elapsed time (``update_chart_data(value)``)."""

    def __init__(self, **fig_params):
        plotting = _need("bokeh.plotting", "LiveTimeSeries")
        figure = getattr(plotting, "Figure", None) or plotting.figure
        self.fig = figure(x_axis_type='datetime', x_axis_label='Elapsed time', **fig_params)
        super(LiveTimeSeries, self).__init__(None, None)

    def setup_chart(self):
        plotting = _need("bokeh.plotting", "LiveTimeSeries")
        self.start_time = datetime.datetime.now()
        self.x_axis_val = []
        self.y_axis_val = []
        self.fig.line(self.x_axis_val, self.y_axis_val)
        return plotting.show(self.fig, notebook_handle=True)

    def elapsed(self):
        return datetime.datetime.now() - self.start_time

    def update_chart_data(self, value):
        self.x_axis_val.append(self.elapsed())
        self.y_axis_val.append(value)
        self._push_render()


class LiveLearningCurve(LiveBokehChart):
    """The training (dotted) and validation (green) curves of
    ``metric_name`` against training time."""

    def __init__(self, metric_name, display_freq=10, frequent=50):
        self.frequent = frequent
        self.start_time = datetime.datetime.now()
        self._data = {'train': {'elapsed': []}, 'eval': {'elapsed': []}}
        super(LiveLearningCurve, self).__init__(None, metric_name, display_freq, frequent)

    def setup_chart(self):
        plotting = _need("bokeh.plotting", "LiveLearningCurve")
        figure = getattr(plotting, "Figure", None) or plotting.figure
        self.fig = figure(x_axis_type='datetime', x_axis_label='Training time')
        self.x_axis_val1, self.y_axis_val1 = [], []
        self.train1 = self.fig.line(self.x_axis_val1, self.y_axis_val1, line_dash='dotted',
                                    alpha=0.3, legend_label="train")
        self.train2 = self.fig.circle(self.x_axis_val1, self.y_axis_val1, size=1.5,
                                      line_alpha=0.3, fill_alpha=0.3, legend_label="train")
        self.train2.visible = False
        self.x_axis_val2, self.y_axis_val2 = [], []
        self.valid1 = self.fig.line(self.x_axis_val2, self.y_axis_val2, line_color='green',
                                    line_width=2, legend_label="validation")
        self.valid2 = self.fig.circle(self.x_axis_val2, self.y_axis_val2, line_color='green',
                                      line_width=2)
        self.fig.legend.location = "bottom_right"
        self.fig.yaxis.axis_label = self.metric_name
        return plotting.show(self.fig, notebook_handle=True)

    def _do_update(self):
        self.update_chart_data()
        self._push_render()

    def batch_cb(self, param):
        if param.nbatch % self.frequent == 0:
            self._process_batch(param, 'train')
        if self.interval_elapsed():
            self._do_update()

    def eval_cb(self, param):
        self._process_batch(param, 'eval')
        self._do_update()

    def _process_batch(self, param, df_name):
        metrics = _batch_metrics(param)
        metrics['elapsed'] = datetime.datetime.now() - self.start_time
        for key, value in metrics.items():
            self._data[df_name].setdefault(key, []).append(value)

    def update_chart_data(self):
        data = self._data['train']
        if data['elapsed']:
            _extend(self.x_axis_val1, data['elapsed'])
            _extend(self.y_axis_val1, data[self.metric_name])
        data = self._data['eval']
        if data['elapsed']:
            _extend(self.x_axis_val2, data['elapsed'])
            _extend(self.y_axis_val2, data[self.metric_name])
        if len(data) > 10:
            self.train1.visible = False
            self.train2.visible = True


def args_wrapper(*args):
    """Merge the ``callback_args()`` of several callbacks into lists per
    keyword, for ``fit(**args_wrapper(logger, chart))``."""
    out = defaultdict(list)
    for callback in args:
        for k, v in callback.callback_args().items():
            out[k].append(v)
    return dict(out)
