#!/usr/bin/env python3
"""Time one depthwise convolution in PyTorch on this CPU at kernels 3, 5 and 7: its training step
(forward and backward) and its no-grad forward, the median of --repeats timed runs after two warm-up
runs, on one thread. A 5x5 kernel has 25/9 = 2.78 times a 3x3's FLOPs; the table gives the time
ratios beside it, and each kernel's FLOP rate.

    taskset -c 0 /usr/bin/python3 benchmarks/dw_backward.py [--repeats 7]

Why (benchmarks/RESULTS.md, "Depthwise convolutions' training step"): real networks with 5x5 or
larger depthwise kernels were predicted 9 to 22% fast on their training step on the 2.6 GHz Xeon.
This shows what the cost lacked. PyTorch's CPU training step of a depthwise convolution runs at a
few GFLOP/s whatever its kernel, far below the dense convolution timed last. So a 5x5 network pays
that rate on 2.8 times the FLOPs, which log_flops_dw and [model] target = roofline_dw price apart.
"""
import argparse
import time

SHAPES = ((240, 28, 1, 16), (480, 14, 1, 16), (144, 56, 2, 16), (72, 56, 1, 16), (240, 28, 1, 1), (672, 14, 1, 4))


def timed(conv, x, repeats):
    """(training step ms, no-grad forward ms): medians over repeats, after two warm-ups."""
    import torch
    train, infer = [], []
    for i in range(repeats + 2):
        t = time.perf_counter()
        conv(x).sum().backward()
        t1 = time.perf_counter() - t
        with torch.no_grad():
            t = time.perf_counter()
            conv(x)
            t2 = time.perf_counter() - t
        if i >= 2:
            train.append(t1), infer.append(t2)
    return 1e3 * sorted(train)[len(train) // 2], 1e3 * sorted(infer)[len(infer) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=7, help="timed runs per case (default 7)")
    a = ap.parse_args()
    if a.repeats < 1:
        ap.error("--repeats %d: at least 1" % a.repeats)
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(0)
    print("PyTorch %s, one thread. Training step = forward, sum, backward; GFLOP/s counts 2 FLOPs per "
          "multiply-add, three passes in training.\n" % torch.__version__)
    print("| channels | side | stride | batch | k3 train ms | k5 / k3 | k7 / k3 | k3 infer ms | k5 / k3 infer "
          "| GFLOP/s train k3 / k5 / k7 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c, h, s, b in SHAPES:
        r, rate = {}, {}
        for k in (3, 5, 7):
            conv = torch.nn.Conv2d(c, c, k, s, k // 2, groups=c, bias=False)
            x = torch.randn(b, c, h, h, requires_grad=True)
            r[k] = timed(conv, x, a.repeats)
            out = h // s
            rate[k] = 3 * 2 * b * c * out * out * k * k / (r[k][0] * 1e-3) / 1e9
        print("| %d | %d | %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f / %.1f / %.1f |" % (
            c, h, s, b, r[3][0], r[5][0] / r[3][0], r[7][0] / r[3][0], r[3][1], r[5][1] / r[3][1],
            rate[3], rate[5], rate[7]), flush=True)
    conv = torch.nn.Conv2d(128, 128, 3, 1, 1, bias=False)  # a dense convolution, for the rate it reaches
    x = torch.randn(16, 128, 28, 28, requires_grad=True)
    ms = timed(conv, x, a.repeats)[0]
    print("\nA dense 3x3 convolution, 128 to 128 channels at 28x28, batch 16: training step %.2f ms, %.1f GFLOP/s."
          % (ms, 3 * 2 * 16 * 128 * 128 * 28 * 28 * 9 / (ms * 1e-3) / 1e9))


if __name__ == "__main__":
    main()
