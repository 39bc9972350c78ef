#!/usr/bin/env python3
"""Regenerates the ONNX test fixtures in tests/data/onnx/: torchvision ResNet-18, ResNet-50,
MobileNetV2, VGG-16, DenseNet-121, GoogLeNet, Swin-T, MaxViT-T (its attention exports as Einsum),
EfficientNet-B0 (SiLU exports as Sigmoid and Mul) and ViT-B/16 (every linear layer on tokens exports as
MatMul(x, Transpose(W)): without constant folding the transposed weights are operators), timm's
MobileOne-S1 in its training form (each block a sum of convolution branches and a
BatchNormalization-only identity branch: the Relu -> BatchNormalization edges libseer watches),
and a small network that upsamples the two ways torch.onnx writes (Upsample and interpolate with a
scale factor: Resize whose scales are a Concat of constants), at 224x224, exported with a symbolic batch
dimension and weights stripped (floating-point initializers keep their dims, lose their data;
integer initializers, the shape constants, keep their data). BatchNormalization stays a node
(training-mode export keeps it from being folded into the convolutions), so parameter counts
match torchvision's.

Needs python3-torch, python3-torchvision and python3-onnx (Debian); mobileone_s1 also timm 0.9.16
(pip: scripts/setup.sh does not install it, the fixture is committed).
usage: scripts/onnx_fixtures.py [OUT_DIR [NAME...]]
"""
import os
import sys
import warnings

import onnx
import torch
import torchvision

warnings.filterwarnings("ignore")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {
    "resnet18": lambda: torchvision.models.resnet18(),
    "resnet50": lambda: torchvision.models.resnet50(),
    "mobilenet_v2": lambda: torchvision.models.mobilenet_v2(),
    "vgg16": lambda: torchvision.models.vgg16(),
    "densenet121": lambda: torchvision.models.densenet121(),
    "googlenet": lambda: torchvision.models.googlenet(aux_logits=False, init_weights=False),
    "swin_t": lambda: torchvision.models.swin_t(),
    "maxvit_t": lambda: torchvision.models.maxvit_t(),
    "efficientnet_b0": lambda: torchvision.models.efficientnet_b0(),
    "vit_b_16": lambda: torchvision.models.vit_b_16(),
    "mobileone_s1": lambda: __import__("timm").create_model("mobileone_s1", pretrained=False),

    "upsample": lambda: Upsample(),
}
FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE,
               onnx.TensorProto.BFLOAT16}


class Upsample(torch.nn.Module):
    """A feature-pyramid step: a strided convolution, nearest upsampling x2, bilinear downsampling
    x0.5, a convolution. At 224x224: 3*8*9 + 8 + 8*4*9 + 4 = 516 parameters; the convolutions'
    multiply-adds 112*112*8*27 + 112*112*4*72 = 6,322,176."""

    def __init__(self):
        super().__init__()
        self.down = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
        self.conv = torch.nn.Conv2d(8, 4, 3, padding=1)

    def forward(self, x):
        y = self.up(torch.relu(self.down(x)))
        y = torch.nn.functional.interpolate(y, scale_factor=0.5, mode="bilinear", align_corners=False)
        return self.conv(y).flatten(1)


def strip(model):
    for t in model.graph.initializer:
        if t.data_type in FLOAT_TYPES:
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.ClearField("double_data")
    return model


def export(m, path, side=224):
    """m (in eval mode) as the fixtures are: symbolic batch, BatchNormalization kept, weights
    stripped (benchmarks/real_networks.py exports its networks with it too)."""
    torch.onnx.export(m, torch.zeros(1, 3, side, side), path, opset_version=13,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    onnx.save(strip(onnx.load(path)), path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests/data/onnx")
    os.makedirs(out, exist_ok=True)
    names = sys.argv[2:] or list(MODELS)
    for name in names:
        m = MODELS[name]().eval()
        params = sum(p.numel() for p in m.parameters())
        path = os.path.join(out, name + ".onnx")
        export(m, path)
        print("%-14s %11d parameters (PyTorch), %7d bytes" % (name, params, os.path.getsize(path)))


if __name__ == "__main__":
    main()
