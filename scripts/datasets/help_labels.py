"""HELP's latency tables (NAS-Bench-201, FBNet): their columns in DESIGN.md's label convention.

A column `<gpu>_<batch>` (gpu one of HELP's GPUs) is that GPU measured at that batch; any other
column is a device measured at batch 1 (`essential_ph_1` is a phone, not a batch size). The label
of a device is `<device>_infer_ms`: one graph per (architecture, batch) carries it where the device
was measured at that batch, NaN elsewhere."""
GPUS = ("1080ti", "2080ti", "titan_rtx", "titanx", "titanxp")


def label_columns(names):
    """names: the latency columns in order. Returns [(device, batch, position in names)] and the
    label names (one per device, first-seen order)."""
    cols, labels = [], []
    for j, name in enumerate(names):
        dev, _, bs = name.rpartition("_")
        cols.append((dev, int(bs), j) if dev in GPUS and bs.isdigit() else (name, 1, j))
    for dev, _, _ in cols:
        if dev + "_infer_ms" not in labels:
            labels.append(dev + "_infer_ms")
    return cols, labels


def row_labels(cols, labels, values, batch):
    """The label values (strings, "" where not measured) of one architecture at one batch."""
    y = {dev + "_infer_ms": values[j] for dev, bs, j in cols if bs == batch}
    return [y.get(l, "") for l in labels]
