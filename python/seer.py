"""Python binding of libseer (ctypes; nothing to compile beyond the library itself).

    import seer
    m = seer.Model("model.seer")
    m.metrics                      # [("titan_rtx_256_ms", "ms"), ...]
    y = m.predict(node_x, edge_index, edge_x, global_x)      # numpy arrays -> (M,) float64
    Y = m.predict_batch([(node_x, edge_index, edge_x, global_x), ...])   # (count, M)
    m.predict_onnx("net.onnx", batch=8)                      # {"titan_rtx_256_ms": 1.23, ...}

Graphs are PerfGraphs with raw features (datasets/FORMAT.md): node_x (N, Fn) float32,
edge_index (E, 2) int32 (src, dst), edge_x (E, Fe) float32, global_x (Fg,) float32, and for
models that read operator types (m.uses_op_types: PerfSAGE, linear) node_op (N,) int32 ids into
m.op_types (a fifth tuple element / the node_op argument); check_range reads them for every model
(an operator the training data never had).
The libraries are found through $SEER_LIB_DIR, then the build/ folder next to this file's folder,
then the system's library path (after `cmake --install`). ONNX paths need libseeronnx as well.
"""
import contextlib
import ctypes
import ctypes.util
import os

import numpy as np

__all__ = ["Model", "SeerError", "load_library", "onnx_graph", "onnx_info", "onnx_op_names"]


class SeerError(RuntimeError):
    pass


class _Graph(ctypes.Structure):
    _fields_ = [
        ("n_nodes", ctypes.c_int64), ("n_edges", ctypes.c_int64),
        ("n_node_features", ctypes.c_int), ("n_edge_features", ctypes.c_int),
        ("n_global_features", ctypes.c_int),
        ("node_x", ctypes.c_void_p), ("node_op", ctypes.c_void_p), ("edge_index", ctypes.c_void_p),
        ("edge_x", ctypes.c_void_p), ("global_x", ctypes.c_void_p),
    ]


_libs = {}


class _RangeItem(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("index", ctypes.c_int), ("value", ctypes.c_double),
                ("lo", ctypes.c_double), ("hi", ctypes.c_double)]


_RANGE_KINDS = ("node", "edge", "global", "nodes", "edges", "metric", "op", "calibration", "op_pair")
_RANGE_MAX = 64
SPREAD_WARN = 1.5  # libseer's SEER_SPREAD_WARN: the threshold of a file that sets none (Model.spread_warn)
UNSEEN_OP_WARN = 0.2  # libseer's SEER_UNSEEN_OP_WARN: the share of unseen operator types above which a prediction is a guess


def _find(name):
    dirs = []
    if os.environ.get("SEER_LIB_DIR"):
        dirs.append(os.environ["SEER_LIB_DIR"])
    dirs.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    for d in dirs:
        p = os.path.join(d, "lib%s.so" % name)
        if os.path.exists(p):
            return p
    p = ctypes.util.find_library(name)
    if p:
        return p
    raise SeerError("lib%s.so not found: build Seer (cmake --build build), set SEER_LIB_DIR, or "
                    "install it (cmake --install build)" % name)


def load_library(name="seer"):
    """The ctypes handle of libseer ("seer") or libseeronnx ("seeronnx"), with signatures set."""
    if name in _libs:
        return _libs[name]
    if name == "seeronnx":
        load_library("seer")  # its dependency, from the same place
    lib = ctypes.CDLL(_find(name), mode=ctypes.RTLD_GLOBAL)
    P, I, I64, D, S, E = (ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_double,
                          ctypes.c_char_p, ctypes.c_size_t)
    sigs = {
        "seer": {
            "seer_load": (I, [S, ctypes.POINTER(P), ctypes.c_char_p, E]),
            "seer_free": (None, [P]),
            "seer_predict_batch": (I, [P, P, I64, P, ctypes.c_char_p, E]),
            "seer_n_metrics": (I, [P]),
            "seer_metric_name": (S, [P, I]),
            "seer_metric_unit": (S, [P, I]),
            "seer_n_features": (I, [P, I]),
            "seer_feature_name": (S, [P, I, I]),
            "seer_info": (S, [P, S]),
            "seer_n_params": (I64, [P]),
            "seer_version": (S, []),
            "seer_uses_op_types": (I, [P]),
            "seer_n_op_types": (I, [P]),
            "seer_op_name": (S, [P, I]),
            "seer_check_range": (I, [P, P, P, ctypes.POINTER(_RangeItem), I, ctypes.POINTER(I),
                                     ctypes.c_char_p, E]),
            "seer_range_item_name": (S, [P, ctypes.POINTER(_RangeItem)]),
            "seer_member_spread": (I, [P, P, P, ctypes.c_char_p, E]),
            "seer_spread_warn": (D, [P, I]),
            "seer_unseen_op_share": (D, [P, P]),
        },
        "seeronnx": {
            "seer_onnx_load": (I, [S, I64, I, ctypes.POINTER(P), ctypes.c_char_p, E]),
            "seer_onnx_view": (ctypes.POINTER(_Graph), [P]),
            "seer_onnx_free": (None, [P]),
            "seer_onnx_flops": (D, [P]),
            "seer_onnx_params": (D, [P]),
            "seer_onnx_deep_windows": (I, [P]),
            "seer_onnx_check_schema": (I, [P, ctypes.c_char_p, E]),
            "seer_onnx_n_op_types": (I, []),
            "seer_onnx_op_name": (S, [I]),
            "seer_onnx_route": (I, [P, P, P, ctypes.POINTER(I), ctypes.POINTER(_RangeItem), I,
                                    ctypes.POINTER(I), ctypes.c_char_p, E]),
        },
    }[name]
    for fn, (res, args) in sigs.items():
        f = getattr(lib, fn)
        f.restype, f.argtypes = res, args
    _libs[name] = lib
    return lib


def _err():
    return ctypes.create_string_buffer(1024)


class Model:
    """A loaded .seer predictor. Thread-safe for prediction (libseer's guarantee)."""

    def __init__(self, path):
        self._lib = load_library("seer")
        self._m = ctypes.c_void_p()
        e = _err()
        if self._lib.seer_load(os.fsencode(path), ctypes.byref(self._m), e, len(e)):
            raise SeerError(e.value.decode())
        L = self._lib
        self.n_metrics = L.seer_n_metrics(self._m)
        self.metrics = [(L.seer_metric_name(self._m, i).decode(), L.seer_metric_unit(self._m, i).decode())
                        for i in range(self.n_metrics)]
        self.n_features = tuple(L.seer_n_features(self._m, k) for k in range(3))
        self.feature_names = [[L.seer_feature_name(self._m, k, i).decode() for i in range(self.n_features[k])]
                              for k in range(3)]
        self.uses_op_types = bool(L.seer_uses_op_types(self._m))
        self.op_types = [L.seer_op_name(self._m, i).decode() for i in range(L.seer_n_op_types(self._m))]

    def close(self):
        if self._m:
            self._lib.seer_free(self._m)
            self._m = ctypes.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def info(self, key):
        v = self._lib.seer_info(self._m, key.encode())
        return v.decode() if v is not None else None

    @property
    def n_params(self):
        return self._lib.seer_n_params(self._m)

    @staticmethod
    def _ids(a, what):
        """Integer ids as int32; a float array passes only when every value is a whole number
        within int32 (a cast would truncate 2.5 to 2 and wrap 2^31 silently)."""
        a = np.asarray(a)
        if a.dtype.kind not in "iub" and a.size:
            with np.errstate(invalid="ignore"):
                bad = a[~(np.isfinite(a) & (a == np.floor(a)))]
            if bad.size:
                raise SeerError("%s must hold whole numbers (node ids / op ids), got %s values such as %r"
                                % (what, a.dtype, bad.flat[0]))
        if a.size and (a.min() < -2**31 or a.max() >= 2**31):
            raise SeerError("%s holds %r, outside int32" % (what, a.max() if a.max() >= 2**31 else a.min()))
        return np.ascontiguousarray(a, dtype=np.int32)

    def _graph(self, g, keep):
        node_x, edge_index, edge_x, global_x = g[:4]
        # op ids into the model's table: read by models that use them, checked by check_range
        node_op = g[4] if len(g) > 4 and g[4] is not None and self.op_types else None
        if node_op is not None:
            node_op = self._ids(node_op, "node_op").reshape(-1)
            keep.append(node_op)
        node_x = np.ascontiguousarray(node_x, dtype=np.float32)
        edge_x = np.ascontiguousarray(edge_x, dtype=np.float32)
        global_x = np.ascontiguousarray(global_x, dtype=np.float32).reshape(-1)
        edge_index = self._ids(edge_index, "edge_index").reshape(-1, 2)
        Fn, Fe, Fg = self.n_features
        if node_x.size == 0:
            node_x = node_x.reshape(0, Fn)
        if edge_x.size == 0:
            edge_x = edge_x.reshape(0, Fe)
        if node_x.ndim != 2 or edge_x.ndim != 2:
            raise SeerError("node_x and edge_x must be 2-D arrays (rows, features), got shapes %s and %s"
                            % (node_x.shape, edge_x.shape))
        keep += [node_x, edge_x, global_x, edge_index]
        return _Graph(node_x.shape[0], edge_index.shape[0], node_x.shape[1], edge_x.shape[1],
                      global_x.shape[0], node_x.ctypes.data,
                      node_op.ctypes.data if node_op is not None else None, edge_index.ctypes.data,
                      edge_x.ctypes.data, global_x.ctypes.data)

    def predict_batch(self, graphs):
        """graphs: a list of (node_x, edge_index, edge_x, global_x[, node_op]) -> (count, M) float64."""
        keep = []
        arr = (_Graph * max(len(graphs), 1))(*[self._graph(g, keep) for g in graphs])
        out = np.empty((len(graphs), self.n_metrics), dtype=np.float64)
        e = _err()
        if self._lib.seer_predict_batch(self._m, ctypes.cast(arr, ctypes.c_void_p), len(graphs),
                                        out.ctypes.data, e, len(e)):
            raise SeerError(e.value.decode())
        return out

    def predict(self, node_x, edge_index, edge_x, global_x, node_op=None):
        """One graph -> (M,) float64 in the metrics' units."""
        return self.predict_batch([(node_x, edge_index, edge_x, global_x, node_op)])[0]

    def check_range(self, node_x, edge_index, edge_x, global_x, node_op=None, pred=None):
        """Is one graph (and its predictions pred, when given) inside what the model was trained on?
        Returns {"in_range": True/False (None: the model records no range), "count": how many
        quantities lie outside, "out_of_range": [{"kind", "name", "value", "lo", "hi"}, ...]}
        (kind: node/edge/global feature, nodes/edges count, metric: a prediction more than 10x
        beyond the training labels, op: an operator type the training data never had, its
        value the graph's nodes of it, node_op needed; op_pair: a watched operator pair the training
        graphs never had, named "producer>consumer", its value the graph's edges of it, node_op
        needed (libseer 0.13); or calibration: a batch beyond those seercalibrate fitted factors at,
        listed first), and "unseen_op_share": the share of its
        operators of types the model never trained on (seer_unseen_op_share; None: not recorded, or
        no node_op), above UNSEEN_OP_WARN a guess whatever the rest says."""
        keep = []
        g = self._graph((node_x, edge_index, edge_x, global_x, node_op), keep)
        p = None
        if pred is not None:
            p = np.ascontiguousarray(pred, dtype=np.float64).reshape(-1)
            if p.size != self.n_metrics:
                raise SeerError("pred has %d values, the model has %d metrics" % (p.size, self.n_metrics))
        items, n, e = (_RangeItem * _RANGE_MAX)(), ctypes.c_int(), _err()
        if self._lib.seer_check_range(self._m, ctypes.byref(g), p.ctypes.data if p is not None else None,
                                      items, _RANGE_MAX, ctypes.byref(n), e, len(e)):
            raise SeerError(e.value.decode())
        share = self._lib.seer_unseen_op_share(self._m, ctypes.byref(g))
        share = None if share != share else float(share)  # NaN: no operator counts, or no op ids
        if n.value < 0:
            return {"in_range": None, "count": 0, "out_of_range": [], "unseen_op_share": share}
        out = [{"kind": _RANGE_KINDS[it.kind], "name": self._lib.seer_range_item_name(self._m, ctypes.byref(it)).decode(),
                "value": it.value, "lo": it.lo, "hi": it.hi} for it in items[:min(n.value, _RANGE_MAX)]]
        return {"in_range": n.value == 0, "count": n.value, "out_of_range": out, "unseen_op_share": share}

    def member_spread(self, node_x, edge_index, edge_x, global_x, node_op=None):
        """An ensemble's disagreement on one graph: {metric name: its members' largest prediction
        over the smallest} (all 1 for a single model; seerpredict warns where it exceeds
        spread_warn)."""
        keep = []
        g = self._graph((node_x, edge_index, edge_x, global_x, node_op), keep)
        out, e = np.zeros(self.n_metrics), _err()
        if self._lib.seer_member_spread(self._m, ctypes.byref(g), out.ctypes.data, e, len(e)):
            raise SeerError(e.value.decode())
        return {name: float(v) for (name, _), v in zip(self.metrics, out)}

    @property
    def spread_warn(self):
        """{metric name: the member spread above which seerpredict warns that the members
        disagree}: the file's own thresholds (seerexport --spread-warn), else SPREAD_WARN."""
        return {name: float(self._lib.seer_spread_warn(self._m, k)) for k, (name, _) in enumerate(self.metrics)}


    def remap_ops(self, ids, names, what="graph"):
        """Operator ids into the table `names`, renumbered into the model's by name; an operator
        the model never saw is its Other (added to the converter after the model was trained),
        as seerpredict does."""
        index = {n: i for i, n in enumerate(self.op_types)}
        other = index.get("Other")
        missing = {names[k] for k in ids if names[k] not in index}
        if missing and other is None:
            raise SeerError("%s: operators the model was not trained on: %s" % (what, ", ".join(sorted(missing))))
        return np.array([index.get(names[k], other) for k in ids], dtype=np.int32)

    def predict_onnx(self, path, batch=0, fuse=False, with_range=False):
        """Converts an ONNX file (libseeronnx) and predicts it: {metric name: value}; with
        with_range=True, (that, check_range's report for the graph and its predictions, with one
        "structure" item more when the graph slides windows over 3 or more spatial dimensions)."""
        ox = load_library("seeronnx")
        e = _err()
        if ox.seer_onnx_check_schema(self._m, e, len(e)):
            raise SeerError(e.value.decode())
        g = list(onnx_graph(path, batch, fuse))
        if self.op_types:  # the converter's op ids, renumbered into the model's table
            try:
                g[4] = self.remap_ops(g[4], onnx_op_names(), path)
            except SeerError:
                if self.uses_op_types:
                    raise
                g[4] = None  # a model that does not read them: only the operator check goes without
        out = self.predict(*g)
        values = {name: float(v) for (name, _), v in zip(self.metrics, out)}
        if not with_range:
            return values
        rng = self.check_range(*g, pred=out)
        deep = onnx_info(path, batch, fuse)["deep_windows"]
        if deep:  # a structure no feature describes (seerpredict's "structure" item)
            rng["out_of_range"].append({"kind": "structure", "name": DEEP_WINDOW_TEXT, "value": float(deep),
                                        "lo": 0.0, "hi": 0.0})
            rng["in_range"], rng["count"] = False, rng["count"] + 1
        return values, rng


def structural_gap(rng):
    """The operators and watched operator pairs that a range report (Model.check_range,
    Model.predict_onnx's) says the training graphs never had: {(kind, name)}."""
    return {(i["kind"], i["name"]) for i in rng["out_of_range"] if i["kind"] in ("op", "op_pair")}


class Routed:
    """seerpredict --device's routing (libseeronnx's seer_onnx_route): a device's main predictor and
    its specialist (a file marked by seerexport --specialist; paths or Models). predict_onnx
    answers with the specialist where the main one reports an operator or a watched operator pair
    never trained on that the specialist does not report (structural_gap), else with the main one,
    and says which and why."""

    def __init__(self, main, specialist):
        self.main = main if isinstance(main, Model) else Model(main)
        self.specialist = specialist if isinstance(specialist, Model) else Model(specialist)
        if not self.specialist.info("specialist"):
            raise SeerError("the second model is not a specialist (mark it with seerexport --specialist)")
        if self.main.metrics != self.specialist.metrics:
            raise SeerError("the main model and the specialist predict other metrics: %s vs %s"
                            % (self.main.metrics[:2], self.specialist.metrics[:2]))

    def route(self, path, batch=0, fuse=False):
        """("main" or "specialist", why: the (kind, name) items the main one reports and the
        specialist does not, sorted; empty where the main one answers)."""
        items, n, answer, e = (_RangeItem * _RANGE_MAX)(), ctypes.c_int(), ctypes.c_int(), _err()
        with _onnx(path, batch, fuse) as (ox, h):
            if ox.seer_onnx_route(h, self.main._m, self.specialist._m, ctypes.byref(answer), items, _RANGE_MAX,
                                  ctypes.byref(n), e, len(e)):
                raise SeerError("%s: %s" % (path, e.value.decode()))
        L = self.main._lib
        why = sorted((_RANGE_KINDS[it.kind], L.seer_range_item_name(self.main._m, ctypes.byref(it)).decode())
                     for it in items[:min(n.value, _RANGE_MAX)])
        return ("specialist" if answer.value else "main"), why

    def predict_onnx(self, path, batch=0, fuse=False):
        """(values, range report, "main" or "specialist", why: as route's) from the model that
        answers."""
        who, why = self.route(path, batch, fuse)
        values, rng = (self.specialist if who == "specialist" else self.main).predict_onnx(path, batch, fuse,
                                                                                            with_range=True)
        return values, rng, who, why


@contextlib.contextmanager
def _onnx(path, batch, fuse):
    """(libseeronnx, handle) of a converted ONNX file, freed on exit."""
    ox = load_library("seeronnx")
    e = _err()
    h = ctypes.c_void_p()
    if ox.seer_onnx_load(os.fsencode(path), int(batch), int(bool(fuse)), ctypes.byref(h), e, len(e)):
        raise SeerError(e.value.decode())
    try:
        yield ox, h
    finally:
        ox.seer_onnx_free(h)


def onnx_graph(path, batch=0, fuse=False):
    """An ONNX file as PerfGraph arrays (libseeronnx): (node_x, edge_index, edge_x, global_x,
    node_op) with node_op naming operators by onnx_op_names()'s table."""
    with _onnx(path, batch, fuse) as (ox, h):
        g = ox.seer_onnx_view(h).contents
        N, E = g.n_nodes, g.n_edges

        def arr(ptr, n, w, ct, dt):
            if n * w == 0:
                return np.zeros((n, w), dtype=dt)
            return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ct)), shape=(n, w)).astype(dt, copy=True)
        return (arr(g.node_x, N, g.n_node_features, ctypes.c_float, np.float32),
                arr(g.edge_index, E, 2, ctypes.c_int32, np.int32),
                arr(g.edge_x, E, g.n_edge_features, ctypes.c_float, np.float32),
                arr(g.global_x, 1, g.n_global_features, ctypes.c_float, np.float32)[0],
                arr(g.node_op, N, 1, ctypes.c_int32, np.int32)[:, 0])


DEEP_WINDOW_TEXT = "operators sliding a window over 3 or more spatial dimensions"


def onnx_info(path, batch=0, fuse=False):
    """Seer's count for an ONNX file: {"flops", "params", "operators", "edges", "deep_windows"}
    (libseeronnx; deep_windows: operators sliding a window over 3 or more spatial dimensions, which
    the node features do not describe: predictions for such a graph are guesses)."""
    with _onnx(path, batch, fuse) as (ox, h):
        g = ox.seer_onnx_view(h).contents
        return {"flops": ox.seer_onnx_flops(h), "params": ox.seer_onnx_params(h),
                "operators": g.n_nodes, "edges": g.n_edges, "deep_windows": ox.seer_onnx_deep_windows(h)}


def onnx_op_names():
    """The ONNX front end's operator table (the ids onnx_graph's node_op uses)."""
    ox = load_library("seeronnx")
    return [ox.seer_onnx_op_name(i).decode() for i in range(ox.seer_onnx_n_op_types())]
