"""How data/mx*.onnx were made: MXNet 1.9.1 (with onnx 1.14) exports two Gluon
models with mx.onnx.export_model and saves their inputs and MXNet's outputs.

    python mxnet_export.py tests/onnx/data
"""
import mxnet as mx, numpy as np, os, sys
from mxnet.gluon import nn
out = sys.argv[1]
mx.random.seed(0); np.random.seed(0)
def save(name, net, x, opset, dynamic=False):
    net.initialize(mx.init.Xavier(magnitude=2.0))
    net.hybridize()
    y = net(mx.nd.array(x))
    for p in net.collect_params().values():
        if p.name.endswith('running_mean'): p.set_data(mx.nd.random.uniform(-.5,.5,p.shape))
        if p.name.endswith('running_var'): p.set_data(mx.nd.random.uniform(.5,2,p.shape))
    y = net(mx.nd.array(x))
    net.export(os.path.join(out, name))
    sym = os.path.join(out, name + '-symbol.json'); prm = os.path.join(out, name + '-0000.params')
    kw = dict(dynamic=True, dynamic_input_shapes=[(None,) + x.shape[1:]]) if dynamic else {}
    mx.onnx.export_model(sym, prm, [x.shape], [np.float32], os.path.join(out, name + '.onnx'), **kw)
    np.save(os.path.join(out, name + '.in.npy'), x); np.save(os.path.join(out, name + '.out.npy'), y.asnumpy())
cnn = nn.HybridSequential()
cnn.add(nn.Conv2D(6, 3, padding=1), nn.BatchNorm(), nn.Activation('relu'), nn.MaxPool2D(2),
        nn.Conv2D(8, 3, strides=2), nn.LeakyReLU(0.1), nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(4))
save('mxcnn', cnn, np.random.randn(2, 3, 12, 12).astype(np.float32), 13, dynamic=True)
mlp = nn.HybridSequential()
mlp.add(nn.Dense(10, activation='tanh'), nn.Dropout(0.3), nn.Dense(5, activation='sigmoid'), nn.Dense(3))
save('mxmlp', mlp, np.random.randn(4, 7).astype(np.float32), 12)
