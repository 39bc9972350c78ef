/* infer: libseer, the public inference API of include/seer/seer.h.
 *
 * A loaded model is the .seer container (kept for its strings), the model's parameter table
 * rebuilt from model.sizes, and the weights expanded to fp32. Prediction runs the trainer's own
 * forward pass (src/model, src/backend/cpu_ops.c) compiled for this library without BLAS or
 * OpenMP (src/backend/mini_blas.c), so an fp32 export predicts what the trainer predicts.
 *
 * Threads: the model is read-only after loading. A call's scratch (indexes, standardised
 * features, activations: one buffer) comes from a small pool of slots in the model, each taken
 * with an atomic flag and grown as needed, so repeated calls reuse warm memory instead of
 * mapping fresh pages; when every slot is busy the call uses a buffer of its own.
 *
 * An ensemble (seerexport --ensemble) is a .seer file whose tensors are whole member .seer files
 * ("ensemble.member.<i>", bytes) and whose "ensemble.members" counts them; its prediction is the
 * geometric mean of the members' (they predict log-scale quantities), weighted by
 * "ensemble.weights" where the file has them (seerexport --weights). The members must share
 * metrics, feature schema and op table (checked on load); the training range and the metadata
 * are the first member's, unless the ensemble file has its own info.* key. */
#include "seer/seer.h"

#include <math.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/container.h"
#include "data/coverage.h"
#include "data/prep.h"
#include "graph/batch.h"
#include "infer/seer_format.h"
#include "model/model.h"
#include "model/ridge.h"

#define SEER_VERSION_STRING "0.13.0"
// One forward pass covers about 32 MiB of activations (a SeerNet keeps some 24 H-wide rows per
// node or edge); larger batches run in chunks of whole graphs.
#define CHUNK_FLOATS ((int64_t)8 << 20)

#define POOL_SLOTS 16
#define SEER_MAX_MEMBERS 16

typedef struct {
    atomic_int busy;
    void *buf;
    size_t cap;
} scratch_slot;

struct seer_model {
    scratch_slot *pool; // (POOL_SLOTS) the only state calls change (through the flags)
    seer_container c;
    char origin[256];
    const model_ops *ops;
    model net;
    float *params; // (P) fp32
    int M, F[3], n_ops, dtype;
    int closed;        // a closed-form model (the ridge baseline) instead of a network
    ridge_model ridge; // its solution, pointing into c's tensors
    char *const *metric_names, *const *metric_units, *const *features[3], *const *op_types;
    norm_stats norm; // pointers into c's arrays
    coverage cov;    // the training data's ranges, pointers into c's arrays
    int has_cov;
    seer_model **members; // an ensemble: its members (the fields above point into members[0])
    int n_members, uses_ops;
    double member_w[SEER_MAX_MEMBERS]; // their weights in the geometric mean, summing to 1
    double spread_warn[SEER_MAX_METRICS]; // per metric: a spread above it is disagreement
};

static seer_status fail(seer_status st, char *err, size_t err_len, const char *msg) {
    if (err && err_len) snprintf(err, err_len, "%s", msg);
    return st;
}

/* Looks up a string array of n items (n < 0: any length, returned through n). */
static int get_strs(const seer_model *m, const char *key, int *n, char *const **out, seer_err *e) {
    const ctr_kv *kv = ctr_get(&m->c, key, KV_STRARR, m->origin, e);
    if (!kv) return -1;
    if (*n >= 0 && kv->n != *n)
        return seer_fail(e, "%s: %s has %lld names, the model needs %d", m->origin, key,
                         (long long)kv->n, *n);
    *n = (int)kv->n;
    *out = kv->data;
    return 0;
}

static int get_f64s(const seer_model *m, const char *key, int n, double **out, seer_err *e) {
    const ctr_kv *kv = ctr_get(&m->c, key, KV_F64ARR, m->origin, e);
    if (!kv) return -1;
    if (kv->n != n)
        return seer_fail(e, "%s: %s has %lld values, the model needs %d", m->origin, key,
                         (long long)kv->n, n);
    *out = kv->data;
    return 0;
}

/* Checks one tensor against the parameter's shape and expands it to fp32 into dst. */
static int load_tensor(seer_model *m, const param_info *pi, float *dst, seer_err *e) {
    int is_bias = pi->rows == 1 && strstr(pi->name, ".bias") != NULL;
    int64_t count = pi->rows * pi->cols;
    const ctr_tensor *t = ctr_tensor_find(&m->c, pi->name);
    if (!t) return seer_fail(e, "%s: tensor %s is missing (the tensor table does not match the "
                                "architecture)", m->origin, pi->name);
    int want_dtype = m->dtype == EXPORT_FP16 ? DT_F16
                     : m->dtype == EXPORT_INT8 && !is_bias ? DT_I8 : DT_F32;
    int want_ndim = is_bias ? 1 : 2;
    if (t->dtype != want_dtype || t->ndim != want_ndim ||
        (is_bias ? t->dims[0] != pi->cols : (t->dims[0] != pi->rows || t->dims[1] != pi->cols)))
        return seer_fail(e, "%s: tensor %s has dtype %d and shape (%lld, %lld); the architecture "
                            "needs dtype %d and (%lld, %lld)", m->origin, pi->name, t->dtype,
                         (long long)t->dims[0], (long long)(t->ndim > 1 ? t->dims[1] : 0),
                         want_dtype, (long long)pi->rows, (long long)pi->cols);
    if (t->dtype == DT_F32) memcpy(dst, t->data, sizeof(float) * (size_t)count);
    else if (t->dtype == DT_F16) {
        const uint8_t *p = t->data;
        for (int64_t i = 0; i < count; i++) {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            dst[i] = f16_to_f32(h);
        }
    } else {
        char sn[96];
        snprintf(sn, sizeof sn, "%s.scale", pi->name);
        const ctr_tensor *s = ctr_tensor_find(&m->c, sn);
        if (!s || s->dtype != DT_F32 || s->ndim != 1 || s->dims[0] != pi->rows)
            return seer_fail(e, "%s: int8 tensor %s needs %s, fp32 (%lld)", m->origin, pi->name,
                             sn, (long long)pi->rows);
        const int8_t *q = t->data;
        for (int64_t r = 0; r < pi->rows; r++) {
            float sc;
            memcpy(&sc, (const uint8_t *)s->data + 4 * r, 4);
            for (int64_t c = 0; c < pi->cols; c++) dst[r * pi->cols + c] = q[r * pi->cols + c] * sc;
        }
    }
    for (int64_t i = 0; i < count; i++)
        if (!isfinite(dst[i]))
            return seer_fail(e, "%s: tensor %s holds a non-finite value at %lld", m->origin,
                             pi->name, (long long)i);
    return 0;
}

static int build(seer_model *m, seer_err *e) {
    const ctr_kv *kv = ctr_get(&m->c, "model.name", KV_STR, m->origin, e);
    if (!kv) return -1;
    const char *name = kv->data;
    if (!(m->ops = model_find(name)))
        return seer_fail(e, "%s: model '%s' is not one this build knows (%s)", m->origin, name,
                         model_names());
    m->closed = (m->ops->flags & MODEL_CLOSED_FORM) != 0;
    const char *dt = (kv = ctr_get(&m->c, "export.dtype", KV_STR, m->origin, e)) ? kv->data : NULL;
    if (!dt) return -1;
    if (m->closed ? strcmp(dt, "fp64") != 0 : (m->dtype = export_dtype_parse(dt)) < 0)
        return seer_fail(e, "%s: export.dtype '%s' is not fp32, fp16 or int8 (fp64 for linear)",
                         m->origin, dt);
    int M, n_ops = -1;
    if (m->closed) {
        const ctr_kv *lb = ctr_get(&m->c, "metrics.names", KV_STRARR, m->origin, e);
        if (!lb) return -1;
        if (lb->n < 1 || lb->n > MODEL_MAX_HEADS)
            return seer_fail(e, "%s: %lld metrics (1..%d)", m->origin, (long long)lb->n, MODEL_MAX_HEADS);
        m->M = (int)lb->n;
        m->F[0] = m->F[1] = m->F[2] = -1; // any length, checked below
        M = m->M;
        if (get_strs(m, "schema.node_features", &m->F[0], &m->features[0], e) ||
            get_strs(m, "schema.edge_features", &m->F[1], &m->features[1], e) ||
            get_strs(m, "schema.global_features", &m->F[2], &m->features[2], e))
            return -1;
        if (m->F[0] < 1 || m->F[0] > 4096 || m->F[1] < 1 || m->F[1] > 4096 || m->F[2] < 1 || m->F[2] > 4096)
            return seer_fail(e, "%s: feature widths out of range", m->origin);
    } else {
        if (!(kv = ctr_get(&m->c, "model.sizes", KV_I64ARR, m->origin, e))) return -1;
        model_sizes ms; // every size bounded before anything is sized from it
        if (model_sizes_from_stored(name, kv->data, kv->n, m->origin, &ms, e)) return -1;
        model_init(&m->net, &ms);
        m->M = ms.M;
        m->F[0] = ms.Fn, m->F[1] = ms.Fe, m->F[2] = ms.Fg;
        M = m->M;
    }
    if (get_strs(m, "metrics.names", &M, &m->metric_names, e) ||
        get_strs(m, "metrics.units", &M, &m->metric_units, e) ||
        get_strs(m, "schema.node_features", &m->F[0], &m->features[0], e) ||
        get_strs(m, "schema.edge_features", &m->F[1], &m->features[1], e) ||
        get_strs(m, "schema.global_features", &m->F[2], &m->features[2], e) ||
        get_strs(m, "schema.op_types", &n_ops, &m->op_types, e))
        return -1;
    m->n_ops = n_ops;
    if (!m->closed && (m->ops->flags & MODEL_OP_TYPES) && m->net.n_ops != n_ops)
        return seer_fail(e, "%s: the operator embedding has %d rows, schema.op_types %d names",
                         m->origin, m->net.n_ops, n_ops);
    norm_stats *n = &m->norm;
    n->Fn = m->F[0], n->Fe = m->F[1], n->Fg = m->F[2], n->M = M;
    if (get_f64s(m, "norm.node_mean", n->Fn, &n->node_mean, e) ||
        get_f64s(m, "norm.node_std", n->Fn, &n->node_std, e) ||
        get_f64s(m, "norm.edge_mean", n->Fe, &n->edge_mean, e) ||
        get_f64s(m, "norm.edge_std", n->Fe, &n->edge_std, e) ||
        get_f64s(m, "norm.global_mean", n->Fg, &n->global_mean, e) ||
        get_f64s(m, "norm.global_std", n->Fg, &n->global_std, e) ||
        get_f64s(m, "norm.label_mu", M, &n->label_mu, e) ||
        get_f64s(m, "norm.label_sigma", M, &n->label_sigma, e))
        return -1;
    for (int k = 0; k < 3; k++) {
        const double *sd = k == 0 ? n->node_std : k == 1 ? n->edge_std : n->global_std;
        const double *mu = k == 0 ? n->node_mean : k == 1 ? n->edge_mean : n->global_mean;
        for (int i = 0; i < m->F[k]; i++)
            if (!isfinite(mu[i]) || !isfinite(sd[i]) || sd[i] <= 0)
                return seer_fail(e, "%s: normalisation statistics of feature %d (kind %d) are not "
                                    "finite and positive", m->origin, i, k);
    }
    for (int i = 0; i < M; i++)
        if (!isfinite(n->label_mu[i]) || !isfinite(n->label_sigma[i]) || n->label_sigma[i] <= 0)
            return seer_fail(e, "%s: label statistics of metric %d are not finite and positive",
                             m->origin, i);
    int cov = coverage_load(&m->cov, &m->c, m->F, M, m->n_ops, m->op_types, m->origin, e);
    if (cov < 0) return -1;
    m->has_cov = cov == 0;
    const ctr_kv *tk = ctr_find(&m->c, "norm.target"); // absent: trained on log y, unclamped
    if (tk && tk->type != KV_F64ARR)
        return seer_fail(e, "%s: norm.target is not a float64 array", m->origin);
    if (tk && norm_target_unpack(n, tk->data, tk->n, m->origin, e)) return -1;
    const ctr_kv *cb = ctr_find(&m->c, "calib.batch"); // seercalibrate's factors by batch
    if (cb && cb->type != KV_F64ARR)
        return seer_fail(e, "%s: calib.batch is not a float64 array", m->origin);
    if (cb && norm_calib_unpack(n, cb->data, cb->n, m->origin, e)) return -1;
    const ctr_kv *cf = ctr_find(&m->c, "calib.flops"); // seercalibrate --with-flops
    if (cf && cf->type != KV_F64ARR)
        return seer_fail(e, "%s: calib.flops is not a float64 array", m->origin);
    if (cf && norm_affine_unpack(n, cf->data, cf->n, m->origin, e)) return -1;
    if (n->clamp && !m->has_cov)
        return seer_fail(e, "%s: the model clamps its features to the training range, but the "
                            "file records no range (coverage.*): re-export it", m->origin);
    if (m->closed) return ridge_load_stored(&m->ridge, M, &m->c, 0, m->origin, e);
    // Every tensor in the file must be a parameter (or an int8 scale), and every parameter present.
    int expected = m->net.pt.n;
    if (m->dtype == EXPORT_INT8)
        for (int i = 0; i < m->net.pt.n; i++) expected += !strstr(m->net.pt.p[i].name, ".bias");
    if (m->c.n_t != expected)
        return seer_fail(e, "%s: %d tensors, the architecture has %d: the tensor table does not "
                            "match the architecture", m->origin, m->c.n_t, expected);
    m->params = aligned_alloc(64, ((size_t)m->net.pt.total * sizeof(float) + 63) & ~(size_t)63);
    if (!m->params) return seer_fail(e, "%s: out of memory for %lld parameters", m->origin,
                                     (long long)m->net.pt.total);
    memset(m->params, 0, sizeof(float) * (size_t)m->net.pt.total);
    for (int i = 0; i < m->net.pt.n; i++)
        if (load_tensor(m, &m->net.pt.p[i], m->params + m->net.pt.p[i].offset, e)) return -1;
    return 0;
}

static int same_names(char *const *a, char *const *b, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(a[i], b[i])) return 0;
    return 1;
}

/* An ensemble's members: loaded from its byte tensors, checked to predict the same metrics from
 * the same schema; the ensemble's tables point into the first, its op table (and training range)
 * into the member with the longest one. Op tables only grow at the end (src/onnx/onnx_ops.h), so
 * members trained before operators were added join members trained after: one table must be the
 * start of the other, and an operator beyond a member's table is its Other (predict_ensemble). */
static seer_status load_memory(const void *buf, size_t len, const char *origin, int member,
                               seer_model **out, char *err, size_t err_len);

static int build_ensemble(seer_model *m, const ctr_kv *kv, seer_err *e) {
    if (kv->type != KV_I64)
        return seer_fail(e, "%s: ensemble.members is not an integer", m->origin);
    int64_t n = *(const int64_t *)kv->data;
    if (n < 2 || n > SEER_MAX_MEMBERS)
        return seer_fail(e, "%s: ensemble.members = %lld: an ensemble has 2 to %d members",
                         m->origin, (long long)n, SEER_MAX_MEMBERS);
    if (m->c.n_t != n)
        return seer_fail(e, "%s: %d tensors for %lld ensemble members", m->origin, m->c.n_t, (long long)n);
    m->members = calloc((size_t)n, sizeof *m->members);
    if (!m->members) return seer_fail(e, "%s: out of memory", m->origin);
    int ref = 0; // the member with the longest op table
    for (int i = 0; i < n; i++) {
        char name[64], origin[320], msg[1024];
        snprintf(name, sizeof name, "ensemble.member.%d", i);
        const ctr_tensor *t = ctr_tensor_find(&m->c, name);
        if (!t || t->dtype != DT_I8 || t->ndim != 1)
            return seer_fail(e, "%s: %s is missing or not a byte tensor", m->origin, name);
        snprintf(origin, sizeof origin, "%.200s (member %d)", m->origin, i);
        if (load_memory(t->data, (size_t)t->dims[0], origin, 1, &m->members[i], msg, sizeof msg))
            return seer_fail(e, "%s", msg);
        m->n_members = i + 1;
        const seer_model *a = m->members[0], *b = m->members[i];
        if (b->M != a->M || !same_names(a->metric_names, b->metric_names, a->M) ||
            !same_names(a->metric_units, b->metric_units, a->M))
            return seer_fail(e, "%s: predicts other metrics than member 0 (%s, ...): an ensemble's "
                                "members must be trained on the same labels", origin, a->metric_names[0]);
        for (int k = 0; k < 3; k++)
            if (b->F[k] != a->F[k] || !same_names(a->features[k], b->features[k], a->F[k]))
                return seer_fail(e, "%s: its %s features differ from member 0's: an ensemble's "
                                    "members must be trained on the same dataset schema", origin,
                                 k == 0 ? "node" : k == 1 ? "edge" : "global");
        const seer_model *r = m->members[ref];
        if (!same_names(r->op_types, b->op_types, r->n_ops < b->n_ops ? r->n_ops : b->n_ops))
            return seer_fail(e, "%s: its op table differs from member 0's (beyond operators appended "
                                "since): an ensemble's members must be trained on the same dataset "
                                "schema", origin);
        if (b->n_ops > r->n_ops) ref = i;
        m->uses_ops |= (b->ops->flags & MODEL_OP_TYPES) != 0;
    }
    // ensemble.weights (seerexport --weights; absent: equal), one positive weight per member
    const ctr_kv *wk = ctr_find(&m->c, "ensemble.weights");
    double wsum = 0;
    if (wk && (wk->type != KV_F64ARR || wk->n != n))
        return seer_fail(e, "%s: ensemble.weights is not %lld float64 values", m->origin, (long long)n);
    for (int i = 0; i < n; i++) {
        double w = wk ? ((const double *)wk->data)[i] : 1.0;
        if (!(w > 0) || !isfinite(w))
            return seer_fail(e, "%s: ensemble.weights[%d] = %g: a member's weight must be positive "
                                "and finite", m->origin, i, w);
        m->member_w[i] = w, wsum += w;
    }
    for (int i = 0; i < n; i++) m->member_w[i] /= wsum;
    const seer_model *a = m->members[0], *r = m->members[ref];
    // ensemble.spread_warn (seerexport --spread-warn; absent: SEER_SPREAD_WARN), one per metric
    const ctr_kv *sk = ctr_find(&m->c, "ensemble.spread_warn");
    if (sk && (sk->type != KV_F64ARR || sk->n != a->M))
        return seer_fail(e, "%s: ensemble.spread_warn is not %d float64 values (one per metric)",
                         m->origin, a->M);
    for (int k = 0; sk && k < a->M; k++) {
        double v = ((const double *)sk->data)[k];
        if (!(v > 1))
            return seer_fail(e, "%s: ensemble.spread_warn[%d] = %g: a threshold on the largest over "
                                "the smallest member prediction must be above 1", m->origin, k, v);
        m->spread_warn[k] = v;
    }
    m->ops = a->ops, m->dtype = a->dtype, m->M = a->M, m->n_ops = r->n_ops;
    m->metric_names = a->metric_names, m->metric_units = a->metric_units, m->op_types = r->op_types;
    for (int k = 0; k < 3; k++) m->F[k] = a->F[k], m->features[k] = a->features[k];
    m->cov = r->cov, m->has_cov = r->has_cov;
    return 0;
}

/* gs as member mb sees them: node_op ids beyond its op table (operators added after it was
 * trained) become its Other; NULL with *ops NULL when nothing needs changing, or on failure
 * (*bad set: mb has no Other). The copies' node_op point into *ops. */
static seer_graph *member_view(const seer_model *mb, const seer_graph *gs, int64_t count,
                               int32_t **ops, int *bad) {
    *ops = NULL, *bad = 0;
    int64_t total = 0, beyond = 0;
    for (int64_t i = 0; i < count; i++)
        for (int64_t v = 0; gs[i].node_op && v < gs[i].n_nodes; v++, total++) beyond += gs[i].node_op[v] >= mb->n_ops;
    if (!beyond || mb->n_ops == 0) return NULL;
    int other = -1;
    for (int k = 0; k < mb->n_ops; k++)
        if (!strcmp(mb->op_types[k], "Other")) other = k;
    seer_graph *view = other < 0 ? NULL : malloc(sizeof *view * (size_t)count);
    int32_t *o = view ? malloc(sizeof(int32_t) * (size_t)total) : NULL;
    if (!o) {
        free(view);
        *bad = 1;
        return NULL;
    }
    for (int64_t i = 0, at = 0; i < count; i++) {
        view[i] = gs[i];
        if (!gs[i].node_op) continue;
        view[i].node_op = o + at;
        for (int64_t v = 0; v < gs[i].n_nodes; v++, at++)
            o[at] = gs[i].node_op[v] < mb->n_ops ? gs[i].node_op[v] : other;
    }
    *ops = o;
    return view;
}

seer_status seer_load_memory(const void *buf, size_t len, const char *origin, seer_model **out,
                             char *err, size_t err_len) {
    return load_memory(buf, len, origin, 0, out, err, err_len);
}

/* member: loading an ensemble's member, which must not be an ensemble itself (refused before
 * its own members are copied, so nesting cannot pile up memory). */
static seer_status load_memory(const void *buf, size_t len, const char *origin, int member,
                               seer_model **out, char *err, size_t err_len) {
    if (!out || (!buf && len)) return fail(SEER_ERR_INVALID, err, err_len, "seer_load_memory: NULL argument");
    *out = NULL;
    seer_model *m = calloc(1, sizeof *m);
    if (!m) return fail(SEER_ERR_NOMEM, err, err_len, "seer_load: out of memory");
    m->pool = calloc(POOL_SLOTS, sizeof *m->pool);
    if (!m->pool) {
        free(m);
        return fail(SEER_ERR_NOMEM, err, err_len, "seer_load: out of memory");
    }
    snprintf(m->origin, sizeof m->origin, "%s", origin ? origin : "(memory)");
    seer_err e = {{0}};
    if (ctr_read_mem(&m->c, buf, len, m->origin, SEER_MODEL_MAGIC, SEER_MODEL_VERSION, &e)) {
        free(m->pool);
        free(m);
        return fail(SEER_ERR_FORMAT, err, err_len, e.msg);
    }
    // out of memory inside build (the model's tables) returns here instead of ending the host
    jmp_buf trap, *prev = seer_oom_trap;
    if (setjmp(trap)) {
        seer_oom_trap = prev;
        snprintf(e.msg, sizeof e.msg, "%s: %s", m->origin, seer_oom_msg);
        return fail(SEER_ERR_NOMEM, err, err_len, e.msg); // m is leaked: it may be half built
    }
    seer_oom_trap = &trap;
    const ctr_kv *ens = ctr_find(&m->c, "ensemble.members");
    int bad = ens && member ? seer_fail(&e, "%s: is an ensemble itself; give seerexport "
                                            "--ensemble the single models", m->origin)
              : ens ? build_ensemble(m, ens, &e) : build(m, &e);
    seer_oom_trap = prev;
    if (bad) {
        seer_free(m);
        return fail(strstr(e.msg, "out of memory") ? SEER_ERR_NOMEM : SEER_ERR_FORMAT, err,
                    err_len, e.msg);
    }
    *out = m;
    return SEER_OK;
}

seer_status seer_load(const char *path, seer_model **out, char *err, size_t err_len) {
    if (!path || !out) return fail(SEER_ERR_INVALID, err, err_len, "seer_load: NULL argument");
    *out = NULL;
    seer_err e = {{0}};
    size_t len;
    char *buf = seer_read_file(path, &len, &e);
    if (!buf) return fail(strstr(e.msg, "out of memory") ? SEER_ERR_NOMEM : SEER_ERR_IO, err,
                          err_len, e.msg);
    seer_status st = seer_load_memory(buf, len, path, out, err, err_len);
    free(buf);
    return st;
}

void seer_free(seer_model *m) {
    if (!m) return;
    for (int i = 0; m->pool && i < POOL_SLOTS; i++) free(m->pool[i].buf);
    free(m->pool);
    free(m->params);
    model_free(&m->net);
    ridge_free(&m->ridge);
    ctr_free(&m->c);
    for (int i = 0; i < m->n_members; i++) seer_free(m->members[i]);
    free(m->members);
    free(m);
}

static int check_block(const float *x, int64_t n, int w, const char *what, int64_t gi, seer_err *e) {
    for (int64_t i = 0; i < n * w; i++)
        if (!isfinite(x[i]))
            return seer_fail(e, "graph %lld: %s feature %lld of row %lld is not finite", (long long)gi,
                             what, (long long)(i % w), (long long)(i / w));
    return 0;
}

static int check_graph(const seer_model *m, const seer_graph *g, int64_t gi, seer_err *e) {
    if (g->n_nodes < 0 || g->n_edges < 0 || g->n_nodes > (int64_t)1 << 30 || g->n_edges > (int64_t)1 << 30)
        return seer_fail(e, "graph %lld: %lld nodes / %lld edges is out of range", (long long)gi,
                         (long long)g->n_nodes, (long long)g->n_edges);
    // global features beyond the model's are ones a later converter appended: the model reads
    // its own leading ones (seer.h)
    if (g->n_node_features != m->F[0] || g->n_edge_features != m->F[1] ||
        g->n_global_features < m->F[2])
        return seer_fail(e, "graph %lld: feature widths %d/%d/%d (node/edge/global), the model "
                            "needs %d/%d/%d", (long long)gi, g->n_node_features,
                         g->n_edge_features, g->n_global_features, m->F[0], m->F[1], m->F[2]);
    if ((g->n_nodes && !g->node_x) || (g->n_edges && (!g->edge_x || !g->edge_index)) || !g->global_x)
        return seer_fail(e, "graph %lld: a feature or index array is NULL", (long long)gi);
    for (int64_t k = 0; k < 2 * g->n_edges; k++)
        if (g->edge_index[k] < 0 || g->edge_index[k] >= g->n_nodes)
            return seer_fail(e, "graph %lld: edge %lld names node %d, outside 0..%lld",
                             (long long)gi, (long long)(k / 2), g->edge_index[k],
                             (long long)g->n_nodes - 1);
    if (!g->node_op && g->n_nodes && seer_uses_op_types(m))
        return seer_fail(e, "graph %lld: this model (%s) reads operator types: node_op is NULL",
                         (long long)gi, m->ops->name);
    if (g->node_op && m->n_ops > 0)
        for (int64_t v = 0; v < g->n_nodes; v++)
            if (g->node_op[v] < 0 || g->node_op[v] >= m->n_ops)
                return seer_fail(e, "graph %lld: node %lld has op id %d, outside the model's op "
                                    "table (0..%d)", (long long)gi, (long long)v, g->node_op[v],
                                 m->n_ops - 1);
    return check_block(g->node_x, g->n_nodes, m->F[0], "node", gi, e) ||
           check_block(g->edge_x, g->n_edges, m->F[1], "edge", gi, e) ||
           check_block(g->global_x, 1, m->F[2], "global", gi, e);
}

/* One forward pass over graphs [0, G) (already checked). */
static seer_status forward(const seer_model *m, const seer_graph *gs, int64_t G, int64_t first,
                           double *out, seer_err *e) {
    int64_t N = 0, E = 0;
    for (int64_t i = 0; i < G; i++) N += gs[i].n_nodes, E += gs[i].n_edges;
    int Fn = m->F[0], Fe = m->F[1], Fg = m->F[2];
    // one buffer: activations (floats, then int64), indexes, standardised features
    size_t af, ai;
    model_acts_size(&m->net, N, E, G, &af, &ai);
    // the extra indexes (PerfSAGE, GCN), and the op ids (int32)
    int extra = (m->ops->flags & MODEL_EXTRA_INDEX) != 0;
    size_t nx = extra ? extra_index_words(N, E, G, m->n_ops) + (size_t)(N + 1) / 2 : 0;
    size_t ni = (size_t)(2 * (G + 1) + 4 * E + 2 * N + 1) + ai + nx;
    size_t nf = (size_t)(N * Fn + E * Fe + G * Fg) + af + (size_t)(2 * G * m->M + 1); // + log costs
    size_t bytes = ((nf * sizeof(float) + 63) & ~(size_t)63) + ni * sizeof(int64_t);
    scratch_slot *slot = NULL;
    void *own = NULL, *buf = NULL;
    for (int s = 0; s < POOL_SLOTS && !slot; s++)
        if (!atomic_exchange_explicit(&m->pool[s].busy, 1, memory_order_acquire)) slot = &m->pool[s];
    if (slot && slot->cap < bytes) {
        free(slot->buf);
        slot->buf = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
        slot->cap = slot->buf ? bytes : 0;
    }
    buf = slot ? slot->buf : (own = aligned_alloc(64, (bytes + 63) & ~(size_t)63));
    if (!buf) {
        if (slot) atomic_store_explicit(&slot->busy, 0, memory_order_release);
        seer_fail(e, "out of memory for a batch of %lld graphs (%lld nodes, %lld edges)",
                  (long long)G, (long long)N, (long long)E);
        return SEER_ERR_NOMEM;
    }
    float *fb = buf;
    int64_t *ib = (int64_t *)((char *)buf + ((nf * sizeof(float) + 63) & ~(size_t)63));
    model_acts a;
    const seer_backend *be = backend_cpu();
    model_acts_bind(&a, &m->net, N, E, G, fb, ib); // activations first: 64-byte aligned
    int64_t *node_ptr = ib + ai, *edge_ptr = node_ptr + G + 1, *src = edge_ptr + G + 1, *dst = src + E;
    int64_t *edge_graph = dst + E, *in_idx = edge_graph + E, *node_graph = in_idx + E;
    int64_t *in_ptr = node_graph + N, *xbuf = in_ptr + N + 1;
    int32_t *op = (int32_t *)(xbuf + (nx ? nx - (size_t)(N + 1) / 2 : 0));
    float *xn = fb + af, *xe = xn + N * Fn, *xg = xe + E * Fe;
    double *lc = (double *)(void *)(xg + G * Fg + ((af + N * Fn + E * Fe + G * Fg) & 1)); // (G, M)
    node_ptr[0] = edge_ptr[0] = 0;
    for (int64_t i = 0; i < G; i++) {
        const seer_graph *g = &gs[i];
        int64_t n0 = node_ptr[i], e0 = edge_ptr[i];
        node_ptr[i + 1] = n0 + g->n_nodes, edge_ptr[i + 1] = e0 + g->n_edges;
        if (g->n_nodes) memcpy(xn + n0 * Fn, g->node_x, sizeof(float) * (size_t)(g->n_nodes * Fn));
        if (g->n_edges) memcpy(xe + e0 * Fe, g->edge_x, sizeof(float) * (size_t)(g->n_edges * Fe));
        memcpy(xg + i * Fg, g->global_x, sizeof(float) * (size_t)Fg);
        for (int k = 0; k < m->M; k++) lc[i * m->M + k] = norm_log_cost(&m->norm, k, g->global_x);
        for (int64_t v = 0; v < g->n_nodes; v++) node_graph[n0 + v] = i;
        if (extra && g->node_op) memcpy(op + n0, g->node_op, sizeof(int32_t) * (size_t)g->n_nodes);
        else if (extra) memset(op + n0, 0, sizeof(int32_t) * (size_t)g->n_nodes); // unused ids
        for (int64_t k = 0; k < g->n_edges; k++) {
            src[e0 + k] = n0 + g->edge_index[2 * k];
            dst[e0 + k] = n0 + g->edge_index[2 * k + 1];
            edge_graph[e0 + k] = i;
        }
    }
    if (m->norm.clamp) {
        coverage_clamp(&m->cov, 0, xn, N);
        coverage_clamp(&m->cov, 1, xe, E);
        coverage_clamp(&m->cov, 2, xg, G);
    }
    norm_rows(xn, N, Fn, m->norm.node_mean, m->norm.node_std);
    norm_rows(xe, E, Fe, m->norm.edge_mean, m->norm.edge_std);
    norm_rows(xg, G, Fg, m->norm.global_mean, m->norm.global_std);
    batch_index(in_ptr, in_idx, dst, N, E);
    extra_index x;
    if (extra) extra_index_build(&x, xbuf, src, dst, node_graph, op, N, E, G, m->n_ops);
    model_input in = {
        .G = G, .N = N, .E = E, .node_ptr = node_ptr, .edge_ptr = edge_ptr, .src = src,
        .dst = dst, .node_graph = node_graph, .edge_graph = edge_graph, .in_ptr = in_ptr,
        .in_idx = in_idx, .xn = xn, .xe = xe, .xg = xg, .x = extra ? &x : NULL,
    };
    model_forward(&m->net, be, m->params, &in, &a);
    for (int64_t i = 0; i < G; i++)
        for (int k = 0; k < m->M; k++)
            out[(first + i) * m->M + k] =
                norm_to_native(&m->norm, k, a.pred[i * m->M + k], lc[i * m->M + k]);
    if (slot) atomic_store_explicit(&slot->busy, 0, memory_order_release);
    free(own);
    return SEER_OK;
}

/* The ridge baseline: features of each graph, standardised, one dot product per metric. */
static seer_status predict_ridge(const seer_model *m, const seer_graph *gs, int64_t count,
                                 double *out) {
    double *x = malloc(sizeof(double) * (size_t)m->ridge.s.F);
    float *clamped = NULL; // [model] clamp = range: a clamped copy of each graph's features
    int64_t cap = 0;
    if (!x) return SEER_ERR_NOMEM;
    for (int64_t i = 0; i < count; i++) {
        const float *xn = gs[i].node_x, *xg = gs[i].global_x;
        if (m->norm.clamp) {
            int64_t need = gs[i].n_nodes * m->F[0] + m->F[2];
            if (need > cap) {
                float *grown = realloc(clamped, sizeof(float) * (size_t)need);
                if (!grown) {
                    free(x), free(clamped);
                    return SEER_ERR_NOMEM;
                }
                clamped = grown, cap = need;
            }
            memcpy(clamped, xn, sizeof(float) * (size_t)(gs[i].n_nodes * m->F[0]));
            memcpy(clamped + gs[i].n_nodes * m->F[0], xg, sizeof(float) * (size_t)m->F[2]);
            xn = clamped, xg = clamped + gs[i].n_nodes * m->F[0];
            coverage_clamp(&m->cov, 0, clamped, gs[i].n_nodes);
            coverage_clamp(&m->cov, 2, clamped + gs[i].n_nodes * m->F[0], 1);
        }
        linear_features(&m->ridge.s, xn, m->F[0], gs[i].node_op, gs[i].n_nodes, xg, x);
        ridge_standardise(&m->ridge, x);
        for (int k = 0; k < m->M; k++)
            out[i * m->M + k] = norm_to_native(&m->norm, k, (float)ridge_predict(&m->ridge, k, x),
                                               norm_log_cost(&m->norm, k, gs[i].global_x));
    }
    free(x), free(clamped);
    return SEER_OK;
}

static seer_status predict_checked(const seer_model *m, const seer_graph *gs, int64_t count,
                                   double *out, char *err, size_t err_len);

/* Member i's predictions of gs, seen through its own op table (gs checked against the ensemble,
 * whose members share its schema: not again for each member). */
static seer_status predict_member(const seer_model *m, int i, const seer_graph *gs, int64_t count,
                                  double *out, char *err, size_t err_len) {
    int32_t *ops;
    int bad;
    seer_graph *view = member_view(m->members[i], gs, count, &ops, &bad);
    seer_status st = bad ? fail(SEER_ERR_NOMEM, err, err_len, "member without an Other operator, or out of memory")
                         : predict_checked(m->members[i], view ? view : gs, count, out, err, err_len);
    free(view), free(ops);
    return st;
}

/* The geometric mean of the members' predictions (each a positive quantity on a log scale),
 * weighted by ensemble.weights when the file has them; spread (may be NULL; count x M) gets the
 * largest over the smallest member prediction. */
static seer_status predict_ensemble(const seer_model *m, const seer_graph *gs, int64_t count,
                                    double *out, double *spread, char *err, size_t err_len) {
    size_t n = (size_t)count * (size_t)m->M;
    double *one = malloc(sizeof(double) * (n ? n : 1) * (spread ? 3 : 1));
    if (!one) return fail(SEER_ERR_NOMEM, err, err_len, "out of memory");
    double *lo = one + n, *hi = lo + n;
    memset(out, 0, sizeof(double) * n);
    for (int i = 0; i < m->n_members; i++) {
        seer_status st = predict_member(m, i, gs, count, one, err, err_len);
        if (st) {
            free(one);
            return st;
        }
        for (size_t j = 0; j < n; j++) out[j] += log(one[j] > 1e-300 ? one[j] : 1e-300) * m->member_w[i];
        for (size_t j = 0; spread && j < n; j++)
            lo[j] = i ? fmin(lo[j], one[j]) : one[j], hi[j] = i ? fmax(hi[j], one[j]) : one[j];
    }
    for (size_t j = 0; j < n; j++) out[j] = exp(out[j]);
    for (size_t j = 0; spread && j < n; j++) spread[j] = lo[j] > 0 ? hi[j] / lo[j] : INFINITY;
    free(one);
    return SEER_OK;
}

seer_status seer_predict_spread(const seer_model *m, const seer_graph *gs, int64_t count, double *out,
                                double *spread, char *err, size_t err_len) {
    if (!m || (!gs && count) || (!out && count) || count < 0)
        return fail(SEER_ERR_INVALID, err, err_len, "seer_predict: NULL argument or negative count");
    seer_err e = {{0}};
    for (int64_t i = 0; i < count; i++)
        if (check_graph(m, &gs[i], i, &e)) return fail(SEER_ERR_INVALID, err, err_len, e.msg);
    if (m->n_members) return predict_ensemble(m, gs, count, out, spread, err, err_len);
    for (int64_t j = 0; spread && j < count * m->M; j++) spread[j] = 1;
    return predict_checked(m, gs, count, out, err, err_len);
}

seer_status seer_member_spread(const seer_model *m, const seer_graph *g, double *spread, char *err,
                               size_t err_len) {
    if (!spread) return fail(SEER_ERR_INVALID, err, err_len, "seer_member_spread: NULL argument");
    if (m && g && !m->n_members) { // a single model: checked, then 1 without predicting
        seer_err e = {{0}};
        if (check_graph(m, g, 0, &e)) return fail(SEER_ERR_INVALID, err, err_len, e.msg);
        for (int k = 0; k < m->M; k++) spread[k] = 1;
        return SEER_OK;
    }
    double out[SEER_MAX_METRICS];
    return seer_predict_spread(m, g, 1, out, spread, err, err_len);
}

double seer_spread_warn(const seer_model *m, int k) {
    if (!m || k < 0 || k >= m->M) return NAN;
    return m->n_members && m->spread_warn[k] > 0 ? m->spread_warn[k] : SEER_SPREAD_WARN;
}

double seer_unseen_op_share(const seer_model *m, const seer_graph *g) {
    if (!m || !g || !m->has_cov || g->n_nodes <= 0) return NAN;
    int64_t k = coverage_unseen_nodes(&m->cov, g->node_op, g->n_nodes);
    return k < 0 ? NAN : (double)k / (double)g->n_nodes;
}

seer_status seer_predict_batch(const seer_model *m, const seer_graph *gs, int64_t count,
                               double *out, char *err, size_t err_len) {
    return seer_predict_spread(m, gs, count, out, NULL, err, err_len);
}

/* seer_predict_batch after its checks. */
static seer_status predict_checked(const seer_model *m, const seer_graph *gs, int64_t count,
                                   double *out, char *err, size_t err_len) {
    seer_err e = {{0}};
    if (m->n_members) return predict_ensemble(m, gs, count, out, NULL, err, err_len);
    if (m->closed) {
        if (predict_ridge(m, gs, count, out)) return fail(SEER_ERR_NOMEM, err, err_len, "out of memory");
    } else { // chunks of whole graphs (one graph may exceed the limit alone)
        int64_t chunk_rows = CHUNK_FLOATS / (24 * (int64_t)m->net.H);
        for (int64_t i = 0; i < count;) {
            int64_t j = i, rows = 0;
            while (j < count && (j == i || rows + gs[j].n_nodes + gs[j].n_edges <= chunk_rows))
                rows += gs[j].n_nodes + gs[j].n_edges, j++;
            seer_status st = forward(m, gs + i, j - i, i, out, &e);
            if (st) return fail(st, err, err_len, e.msg);
            i = j;
        }
    }
    for (int64_t i = 0; m->norm.aff && i < count; i++) // seercalibrate --with-flops
        for (int k = 0; k < m->M; k++)
            out[i * m->M + k] = norm_affine(&m->norm, k, out[i * m->M + k], gs[i].global_x);
    return SEER_OK;
}

seer_status seer_predict(const seer_model *m, const seer_graph *g, double *out, char *err,
                         size_t err_len) {
    return seer_predict_batch(m, g, 1, out, err, err_len);
}

// the public item is the internal one
_Static_assert(sizeof(seer_range_item) == sizeof(coverage_item) &&
                   offsetof(seer_range_item, value) == offsetof(coverage_item, value) &&
                   offsetof(seer_range_item, hi) == offsetof(coverage_item, hi),
               "seer_range_item and coverage_item differ");
_Static_assert(SEER_NODE == 0 && SEER_EDGE == 1 && SEER_GLOBAL == 2 &&
                   (int)SEER_NODE_COUNT == (int)COV_KIND_NODES && (int)SEER_EDGE_COUNT == (int)COV_KIND_EDGES &&
                   (int)SEER_METRIC == (int)COV_KIND_METRIC && (int)SEER_OP == (int)COV_KIND_OP &&
                   (int)SEER_OP_PAIR == (int)COV_KIND_PAIR && SEER_OP_PAIR_NAME_MAX == COV_PAIR_NAME,
               "range kinds differ");

/* The calibration by batch of a model or of its members (each member of a calibrated ensemble
 * carries the same), or NULL. */
static const norm_stats *calib_stats(const seer_model *m) {
    if (!m->n_members) return m->norm.calib_n || m->norm.aff ? &m->norm : NULL;
    for (int i = 0; i < m->n_members; i++)
        if (m->members[i]->norm.calib_n || m->members[i]->norm.aff) return &m->members[i]->norm;
    return NULL;
}

/* 1 and *it filled when global feature col of g lies outside the calibrated lo .. hi. */
static int calib_beyond(const seer_graph *g, int col, double lo, double hi, seer_range_item *it) {
    double v = (double)g->global_x[col];
    if (v >= lo - 1e-6 && v <= hi + 1e-6) return 0;
    *it = (seer_range_item){SEER_CALIB, col, v, lo, hi};
    return 1;
}

seer_status seer_check_range(const seer_model *m, const seer_graph *g, const double *pred,
                             seer_range_item *items, int max_items, int *n_out, char *err,
                             size_t err_len) {
    if (!m || !g || !n_out || max_items < 0 || (max_items && !items))
        return fail(SEER_ERR_INVALID, err, err_len, "seer_check_range: NULL argument");
    seer_err e = {{0}};
    if (check_graph(m, g, 0, &e)) return fail(SEER_ERR_INVALID, err, err_len, e.msg);
    *n_out = -1;
    if (!m->has_cov) return SEER_OK;
    // a batch or FLOPs beyond the calibrated ones come first (the others describe the training)
    const norm_stats *cs = calib_stats(m);
    seer_range_item cal[2];
    int n_cal = 0;
    if (cs && cs->calib_n) // by batch
        n_cal += calib_beyond(g, cs->calib_col, cs->calib_x[0], cs->calib_x[cs->calib_n - 1], &cal[n_cal]);
    if (cs && cs->aff) // --with-flops
        n_cal += calib_beyond(g, cs->aff_col, cs->aff_lo, cs->aff_hi, &cal[n_cal]);
    int skip = n_cal < max_items ? n_cal : max_items;
    for (int i = 0; i < skip; i++) items[i] = cal[i];
    *n_out = n_cal + coverage_check(&m->cov, g->n_nodes, g->n_edges, g->node_op, g->edge_index, g->node_x, g->edge_x,
                                    g->global_x, pred, (coverage_item *)items + skip, max_items - skip);
    return SEER_OK;
}

const char *seer_range_item_name(const seer_model *m, const seer_range_item *it) {
    if (!m || !it) return NULL;
    switch (it->kind) {
    case SEER_NODE: case SEER_EDGE: case SEER_GLOBAL: return seer_feature_name(m, it->kind, it->index);
    case SEER_NODE_COUNT: return "nodes";
    case SEER_EDGE_COUNT: return "edges";
    case SEER_METRIC: return seer_metric_name(m, it->index);
    case SEER_OP: return seer_op_name(m, it->index);
    case SEER_CALIB: return seer_feature_name(m, SEER_GLOBAL, it->index);
    case SEER_OP_PAIR: return it->index >= 0 && it->index < m->cov.n_pairs ? m->cov.pair_name[it->index] : NULL;
    default: return NULL;
    }
}

int seer_n_metrics(const seer_model *m) { return m ? m->M : 0; }

const char *seer_metric_name(const seer_model *m, int i) {
    return m && i >= 0 && i < m->M ? m->metric_names[i] : NULL;
}

const char *seer_metric_unit(const seer_model *m, int i) {
    return m && i >= 0 && i < m->M ? m->metric_units[i] : NULL;
}

int seer_n_features(const seer_model *m, int kind) {
    return m && kind >= 0 && kind < 3 ? m->F[kind] : 0;
}

const char *seer_feature_name(const seer_model *m, int kind, int i) {
    return m && kind >= 0 && kind < 3 && i >= 0 && i < m->F[kind] ? m->features[kind][i] : NULL;
}

int seer_n_op_types(const seer_model *m) { return m ? m->n_ops : 0; }

const char *seer_op_name(const seer_model *m, int i) {
    return m && i >= 0 && i < m->n_ops ? m->op_types[i] : NULL;
}

int seer_uses_op_types(const seer_model *m) {
    return m && (m->n_members ? m->uses_ops : (m->ops->flags & MODEL_OP_TYPES) != 0);
}

const char *seer_info(const seer_model *m, const char *key) {
    if (!m || !key) return NULL;
    if (!strcmp(key, "dtype") && !m->n_members) return export_dtype_name(m->dtype);
    if (!strcmp(key, "target")) { // what the network learns; an ensemble's members may differ
        if (!m->n_members) return norm_target_name(m->norm.target);
        const char *t = seer_info(m->members[0], key);
        for (int i = 1; i < m->n_members; i++)
            if (strcmp(t, seer_info(m->members[i], key))) return "mixed";
        return t;
    }
    char k[128];
    if (!strcmp(key, "model")) snprintf(k, sizeof k, "model.name");
    else snprintf(k, sizeof k, "info.%s", key);
    const ctr_kv *kv = ctr_find(&m->c, k);
    if (kv && kv->type == KV_STR) return kv->data;
    return m->n_members ? seer_info(m->members[0], key) : NULL; // the first member's provenance
}

int64_t seer_n_params(const seer_model *m) {
    if (!m) return 0;
    if (m->n_members) {
        int64_t n = 0;
        for (int i = 0; i < m->n_members; i++) n += seer_n_params(m->members[i]);
        return n;
    }
    if (m->closed) return (int64_t)m->M * (m->ridge.s.F + 1);
    int64_t n = 0;
    for (int i = 0; i < m->net.pt.n; i++) n += m->net.pt.p[i].rows * m->net.pt.p[i].cols;
    return n;
}

const char *seer_version(void) { return SEER_VERSION_STRING; }
