"""Weight-stripped ONNX models for the dataset builders (nb201_build.py, fbnet_build.py):
initializers carry dims only, since the PerfGraph features need shapes, not values."""
import numpy as np
from onnx import TensorProto as T, helper as h, numpy_helper


class Builder:
    """Nodes and initializers of one model, each name made unique by a running counter."""

    def __init__(self):
        self.nodes, self.inits, self.k = [], [], 0

    def name(self, base):
        self.k += 1
        return "%s_%d" % (base, self.k)

    def weight(self, dims):
        t = T()
        t.name, t.data_type = self.name("w"), T.FLOAT
        t.dims.extend(dims)
        self.inits.append(t)
        return t.name

    def const_i64(self, values):
        """An int64 initializer holding values (a shape for Reshape or ConstantOfShape)."""
        s = numpy_helper.from_array(np.array(values, np.int64), self.name("shape"))
        self.inits.append(s)
        return s.name

    def const_f32(self, value):
        """A float32 scalar initializer holding value (the operand of an elementwise op)."""
        s = numpy_helper.from_array(np.array(value, np.float32), self.name("scalar"))
        self.inits.append(s)
        return s.name

    def op(self, op_type, inputs, **attrs):
        out = self.name(op_type.lower())
        self.nodes.append(h.make_node(op_type, inputs, [out], name=self.name(op_type), **attrs))
        return out

    def bn(self, x, c):
        return self.op("BatchNormalization", [x] + [self.weight([c]) for _ in range(4)])

    def save(self, path, graph_name, input_shape, logits, n_classes, producer):
        """Ends the model with a Gemm from logits (n_features) to n_classes and writes it."""
        self.nodes.append(h.make_node("Gemm", [logits[0], self.weight([n_classes, logits[1]]),
                                               self.weight([n_classes])], ["logits"],
                                      name="classifier", transB=1))
        graph = h.make_graph(self.nodes, graph_name, [h.make_tensor_value_info("input", T.FLOAT, input_shape)],
                             [h.make_tensor_value_info("logits", T.FLOAT, ["batch", n_classes])], self.inits)
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)], producer_name=producer)
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
