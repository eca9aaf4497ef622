/* op_flops.c: FLOPs and bytes of one op call (model/op_flops.h).
 *
 * The recorded arguments are JSON texts: Input Dims an array with one
 * shape per argument ([] for a non-tensor, deeper for a tensor list),
 * Input type and Concrete Inputs arrays of strings.  They are parsed into
 * small fixed arrays (an op with more arguments or dimensions than these
 * hold is unsized), then the op's layout says which argument is which.
 * Counts are doubles: exact up to 2^53, past any single call's work. */
#include "model/op_flops.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 24
#define MAX_RANK 8
#define TEXT_MAX 2048

typedef struct shape {
    int rank;                  /* -1: not a tensor's shape (a list of them) */
    int64_t d[MAX_RANK];
} shape;

typedef struct strings {
    int n;
    const char *s[MAX_ARGS];
    char text[TEXT_MAX];
} strings;

typedef struct args {
    int n_dims;
    shape dims[MAX_ARGS];
    strings types, concrete;
} args;

static const char *skip_space(const char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    return p;
}

/* Skips one JSON value of arrays, numbers and plain strings; NULL when
 * malformed. */
static const char *skip_value(const char *p)
{
    p = skip_space(p);
    if (*p == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && p[1])
                p++;
        return *p == '"' ? p + 1 : NULL;
    }
    if (*p != '[') {
        const char *start = p;
        while (*p && *p != ',' && *p != ']' && !isspace((unsigned char)*p))
            p++;
        return p > start ? p : NULL;
    }
    p = skip_space(p + 1);
    if (*p == ']')
        return p + 1;
    for (;;) {
        if (!(p = skip_value(p)))
            return NULL;
        p = skip_space(p);
        if (*p == ']')
            return p + 1;
        if (*p != ',')
            return NULL;
        p++;
    }
}

/* One shape: an array of whole numbers; rank -1 for anything else. */
static const char *parse_shape(const char *p, shape *s)
{
    const char *end = skip_value(p);
    s->rank = -1;
    p = skip_space(p);
    if (!end || *p != '[')
        return end;
    int rank = 0;
    p = skip_space(p + 1);
    while (*p != ']') {
        char *after;
        long long v = strtoll(p, &after, 10);
        if (after == p || rank == MAX_RANK || v < 0)
            return end;
        s->d[rank++] = v;
        p = skip_space(after);
        if (*p == ',')
            p = skip_space(p + 1);
        else if (*p != ']')
            return end;
    }
    s->rank = rank;
    return end;
}

/* Input Dims into a->dims: 0, or -1 when it is not an array of values. */
static int parse_dims(const char *p, args *a)
{
    a->n_dims = 0;
    p = skip_space(p);
    if (*p != '[')
        return -1;
    p = skip_space(p + 1);
    while (*p && *p != ']') {
        if (a->n_dims == MAX_ARGS)
            return -1;
        if (!(p = parse_shape(p, &a->dims[a->n_dims++])))
            return -1;
        p = skip_space(p);
        if (*p == ',')
            p = skip_space(p + 1);
    }
    return *p == ']' ? 0 : -1;
}

/* An array of strings into s (escapes kept as written: the names and
 * values read here have none); 0, or -1 when it does not fit. */
static int parse_strings(const char *p, strings *s)
{
    size_t used = 0;
    s->n = 0;
    p = skip_space(p);
    if (*p != '[')
        return *p ? -1 : 0;
    p = skip_space(p + 1);
    while (*p == '"') {
        const char *end = skip_value(p);
        if (!end || s->n == MAX_ARGS || used + (size_t)(end - p) > TEXT_MAX)
            return -1;
        size_t len = (size_t)(end - p) - 2;
        memcpy(s->text + used, p + 1, len);
        s->text[used + len] = '\0';
        s->s[s->n++] = s->text + used;
        used += len + 1;
        p = skip_space(end);
        if (*p == ',')
            p = skip_space(p + 1);
    }
    return *p == ']' ? 0 : -1;
}

static const shape *tensor(const args *a, int i)
{
    return i < a->n_dims && a->dims[i].rank >= 0 ? &a->dims[i] : NULL;
}

static const char *concrete(const args *a, int i)
{
    return i < a->concrete.n ? a->concrete.s[i] : NULL;
}

static double product(const int64_t *d, int n)
{
    double p = 1;
    for (int i = 0; i < n; i++)
        p *= (double)d[i];
    return p;
}

hta_dtype hta_dtype_of(const char *t, int *element_bytes)
{
    static const struct {
        const char *name;
        hta_dtype dtype;
        int bytes;
    } TYPES[] = {
        {"c10::BFloat16", HTA_DTYPE_BF16, 2}, {"c10::Half", HTA_DTYPE_FP16, 2},
        {"float", HTA_DTYPE_FP32, 4},         {"double", HTA_DTYPE_FP64, 8},
        {"signed char", HTA_DTYPE_INT8, 1},   {"unsigned char", HTA_DTYPE_INT8, 1},
    };
    for (size_t i = 0; i < sizeof TYPES / sizeof *TYPES; i++)
        if (strcmp(t, TYPES[i].name) == 0) {
            *element_bytes = TYPES[i].bytes;
            return TYPES[i].dtype;
        }
    /* c10::Float8_e4m3fn, _e4m3fnuz, _e5m2, _e5m2fnuz */
    *element_bytes = strncmp(t, "c10::Float8_", 12) == 0 ? 1 : 0;
    return *element_bytes ? HTA_DTYPE_FP8 : HTA_DTYPE_UNKNOWN;
}

const char *hta_dtype_name(hta_dtype d)
{
    static const char *const NAMES[HTA_N_DTYPES] = {
        [HTA_DTYPE_UNKNOWN] = "", [HTA_DTYPE_FP8] = "fp8",   [HTA_DTYPE_BF16] = "bf16",
        [HTA_DTYPE_FP16] = "fp16", [HTA_DTYPE_TF32] = "tf32", [HTA_DTYPE_FP32] = "fp32",
        [HTA_DTYPE_FP64] = "fp64", [HTA_DTYPE_INT8] = "int8",
    };
    return d < HTA_N_DTYPES ? NAMES[d] : "";
}

/* The dtype and element size of argument i; 0 when unknown. */
static int element_bytes_of(const args *a, int i, hta_op_work *w)
{
    int bytes = 0;
    w->dtype = i < a->types.n ? hta_dtype_of(a->types.s[i], &bytes) : HTA_DTYPE_UNKNOWN;
    return bytes;
}

/* ---- GEMM ------------------------------------------------------------ */

typedef struct gemm_layout {
    const char *name;
    int bias, a, b;            /* argument indexes; bias -1: none */
    int batched;               /* 3-d operands, the batch first */
} gemm_layout;

static const gemm_layout GEMMS[] = {
    {"aten::mm", -1, 0, 1, 0},      {"aten::addmm", 0, 1, 2, 0},
    {"aten::bmm", -1, 0, 1, 1},     {"aten::baddbmm", 0, 1, 2, 1},
};

static void size_gemm(double batch, double m, double n, double k, int bias, int esize,
                      hta_op_work *w)
{
    w->flops = batch * (2 * m * n * k + (bias ? m * n : 0));
    w->bytes = batch * (m * k + k * n + m * n + (bias ? n : 0)) * esize;
    w->sized = esize > 0;
}

static void size_gemm_layout(const gemm_layout *g, const args *a, hta_op_work *w)
{
    const shape *x = tensor(a, g->a), *y = tensor(a, g->b);
    int rank = g->batched ? 3 : 2, esize = element_bytes_of(a, g->a, w);
    if (!x || !y || x->rank != rank || y->rank != rank)
        return;
    const int64_t *xd = x->d + g->batched, *yd = y->d + g->batched;
    if (xd[1] != yd[0] || (g->batched && x->d[0] != y->d[0]))
        return;
    size_gemm(g->batched ? (double)x->d[0] : 1, (double)xd[0], (double)yd[1], (double)xd[1],
              g->bias >= 0, esize, w);
}

/* aten::linear(input (..., K), weight (N, K), bias (N)?). */
static void size_linear(const args *a, hta_op_work *w)
{
    const shape *x = tensor(a, 0), *y = tensor(a, 1), *b = tensor(a, 2);
    int esize = element_bytes_of(a, 0, w);
    if (!x || !y || x->rank < 1 || y->rank != 2 || x->d[x->rank - 1] != y->d[1])
        return;
    size_gemm(1, product(x->d, x->rank - 1), (double)y->d[0], (double)y->d[1], b && b->rank > 0,
              esize, w);
}

/* aten::matmul: a matrix (or a stack of them) times a matrix, or two
 * stacks of the same batch shape; broadcasting and vectors are unsized. */
static void size_matmul(const args *a, hta_op_work *w)
{
    const shape *x = tensor(a, 0), *y = tensor(a, 1);
    int esize = element_bytes_of(a, 0, w);
    if (!x || !y || x->rank < 2 || y->rank < 2)
        return;
    double k = (double)x->d[x->rank - 1];
    if (k != (double)y->d[y->rank - 2])
        return;
    if (y->rank == 2) {
        size_gemm(1, product(x->d, x->rank - 1), (double)y->d[1], k, 0, esize, w);
        return;
    }
    if (x->rank != y->rank || memcmp(x->d, y->d, (size_t)(x->rank - 2) * sizeof *x->d) != 0)
        return;
    size_gemm(product(x->d, x->rank - 2), (double)x->d[x->rank - 2], (double)y->d[y->rank - 1], k,
              0, esize, w);
}

/* ---- Convolution ----------------------------------------------------- */

typedef struct conv_layout {
    const char *name;
    int input, weight, bias;   /* argument indexes; bias -1: none */
    int stride, padding, dilation, transposed, output_padding, groups; /* -1: absent */
    int backward;              /* convolution_backward: grad_output first, mask last */
} conv_layout;

static const conv_layout CONVS[] = {
    {"aten::convolution", 0, 1, 2, 3, 4, 5, 6, 7, 8, 0},
    {"aten::_convolution", 0, 1, 2, 3, 4, 5, 6, 7, 8, 0},
    {"aten::conv1d", 0, 1, 2, 3, 4, 5, -1, -1, 6, 0},
    {"aten::conv2d", 0, 1, 2, 3, 4, 5, -1, -1, 6, 0},
    {"aten::conv3d", 0, 1, 2, 3, 4, 5, -1, -1, 6, 0},
    {"aten::miopen_convolution", 0, 1, 2, 4, 3, 5, -1, -1, 6, 0},
    {"aten::cudnn_convolution", 0, 1, -1, 3, 2, 4, -1, -1, 5, 0},
    {"aten::convolution_backward", 1, 2, -1, 4, 5, 6, 7, 8, 9, 1},
};

/* A Concrete Input "[a, b]" or "a" into n values, the one value repeated
 * (PyTorch broadcasts a single value); absent gives `fallback`.  -1 when
 * it is not whole numbers. */
static int int_list(const char *text, int n, int64_t fallback, int64_t *out)
{
    if (!text || !*text) {
        for (int i = 0; i < n; i++)
            out[i] = fallback;
        return 0;
    }
    const char *p = skip_space(text);
    p = skip_space(p + (*p == '['));
    int k = 0;
    while (*p && *p != ']') {
        char *after;
        long long v = strtoll(p, &after, 10);
        if (after == p || k == n)
            return -1;
        out[k++] = v;
        p = skip_space(after);
        p = skip_space(p + (*p == ','));
    }
    if (k == 1)
        for (int i = 1; i < n; i++)
            out[i] = out[0];
    return k == 1 || k == n ? 0 : -1;
}

/* "True" 1, "False" 0, else -1. */
static int boolean(const char *text)
{
    return !text ? -1 : strcmp(text, "True") == 0 ? 1 : strcmp(text, "False") == 0 ? 0 : -1;
}

typedef struct conv_params {
    int64_t stride[MAX_RANK], padding[MAX_RANK], dilation[MAX_RANK], output_padding[MAX_RANK];
    int transposed;
} conv_params;

static int conv_params_of(const conv_layout *c, const args *a, int spatial, conv_params *p)
{
    p->transposed = c->transposed < 0 ? 0 : boolean(concrete(a, c->transposed));
    return p->transposed < 0 ||
                   int_list(c->stride >= 0 ? concrete(a, c->stride) : NULL, spatial, 1,
                            p->stride) ||
                   int_list(concrete(a, c->padding), spatial, 0, p->padding) ||
                   int_list(concrete(a, c->dilation), spatial, 1, p->dilation) ||
                   int_list(c->output_padding >= 0 ? concrete(a, c->output_padding) : NULL,
                            spatial, 0, p->output_padding)
               ? -1
               : 0;
}

/* The output's shape from the input's, the weight's and the parameters. */
static int conv_output(const shape *x, const shape *w, const conv_params *p, shape *out)
{
    out->rank = x->rank;
    out->d[0] = x->d[0];
    out->d[1] = p->transposed ? w->d[1] : w->d[0];
    for (int i = 2; i < x->rank; i++) {
        int64_t in = x->d[i], k = w->d[i], s = p->stride[i - 2], pad = p->padding[i - 2],
                dil = p->dilation[i - 2];
        if (s <= 0)
            return -1;
        out->d[i] = p->transposed ? (in - 1) * s - 2 * pad + dil * (k - 1) +
                                        p->output_padding[i - 2] + 1
                                  : (in + 2 * pad - dil * (k - 1) - 1) / s + 1;
        if (out->d[i] <= 0)
            return -1;
    }
    return 0;
}

static void size_conv(const conv_layout *c, const args *a, hta_op_work *w)
{
    const shape *x = tensor(a, c->input), *wt = tensor(a, c->weight);
    int esize = element_bytes_of(a, c->input, w);
    if (!x || !wt || x->rank < 3 || x->rank > MAX_RANK || wt->rank != x->rank)
        return;
    conv_params p;
    shape out;
    if (conv_params_of(c, a, x->rank - 2, &p) || conv_output(x, wt, &p, &out))
        return;
    /* Each of the input's and the weight's gradients costs what the
     * forward does (torch.utils.flop_counter and TraceLens agree). */
    double conv_flops = 2 * product(wt->d + 1, wt->rank - 1) *
                        (p.transposed ? product(x->d, x->rank) : product(out.d, out.rank));
    double x_n = product(x->d, x->rank), w_n = product(wt->d, wt->rank),
           out_n = product(out.d, out.rank);
    int grads[3] = {1, 1, 0}, bias = 0;
    if (c->backward) {
        const shape *dy = tensor(a, 0);
        if (!dy || dy->rank != out.rank ||
            memcmp(dy->d, out.d, (size_t)out.rank * sizeof *out.d) != 0)
            return;
        const char *mask = concrete(a, 10);
        if (mask && *mask) {
            const char *q = mask;
            for (int i = 0; i < 3; i++) {
                q = skip_space(q + (*q == '[' || *q == ','));
                grads[i] = strncmp(q, "True", 4) == 0 ? 1 : strncmp(q, "False", 5) == 0 ? 0 : -1;
                if (grads[i] < 0)
                    return;
                q = skip_space(q + (grads[i] ? 4 : 5));
            }
        }
        w->flops = (grads[0] + grads[1]) * conv_flops + grads[2] * out_n;
        w->bytes = ((grads[0] + grads[1]) * (out_n + w_n + x_n) + grads[2] * (out_n + out.d[1])) *
                   esize;
    } else {
        const shape *b = c->bias >= 0 ? tensor(a, c->bias) : NULL;
        bias = b && b->rank > 0;
        w->flops = conv_flops + (bias ? out_n : 0);
        w->bytes = (x_n + w_n + out_n + (bias ? (double)out.d[1] : 0)) * esize;
    }
    w->sized = esize > 0;
}

/* ---- Attention ------------------------------------------------------- */

typedef struct attention_layout {
    const char *name;
    int q;                     /* q, k, v follow each other */
    int heads_first;           /* (B, H, N, d); else (B, N, H, d) */
    int causal;                /* index of is_causal */
    int backward, recomputes;  /* a flash backward recomputes QK^T */
    int mask_type;             /* causal is xformers' custom_mask_type: 0 none, else causal */
} attention_layout;

static const attention_layout ATTENTIONS[] = {
    {"aten::_scaled_dot_product_flash_attention", 0, 1, 4, 0, 0, 0},
    {"aten::_scaled_dot_product_efficient_attention", 0, 1, 6, 0, 0, 0},
    {"aten::_scaled_dot_product_cudnn_attention", 0, 1, 6, 0, 0, 0},
    {"aten::_flash_attention_forward", 0, 0, 8, 0, 0, 0},
    {"aten::_scaled_dot_product_flash_attention_backward", 1, 1, 11, 1, 1, 0},
    {"aten::_scaled_dot_product_efficient_attention_backward", 1, 1, 11, 1, 0, 0},
    {"aten::_scaled_dot_product_cudnn_attention_backward", 1, 1, 14, 1, 0, 0},
    {"aten::_flash_attention_backward", 1, 0, 11, 1, 1, 0},
    /* The memory-efficient kernels the SDPA op above calls. */
    {"aten::_efficient_attention_forward", 0, 0, 9, 0, 0, 1},
    {"aten::_efficient_attention_backward", 1, 0, 14, 1, 0, 1},
};

/* "0" 0, another whole number 1, else -1. */
static int mask_type_is_causal(const char *text)
{
    char *end;
    long v = text && *text ? strtol(text, &end, 10) : -1;
    return !text || !*text || *end || v < 0 ? -1 : v != 0;
}

typedef struct bhnd {
    double b, h, n, d;
} bhnd;

static int bhnd_of(const shape *s, int heads_first, bhnd *out)
{
    if (!s || s->rank != 4)
        return -1;
    *out = (bhnd){(double)s->d[0], (double)s->d[heads_first ? 1 : 2],
                  (double)s->d[heads_first ? 2 : 1], (double)s->d[3]};
    return 0;
}

static void size_attention(const attention_layout *l, const args *a, hta_op_work *w)
{
    bhnd q, k, v;
    int esize = element_bytes_of(a, l->q, w);
    int causal = l->mask_type ? mask_type_is_causal(concrete(a, l->causal))
                              : boolean(concrete(a, l->causal));
    if (bhnd_of(tensor(a, l->q), l->heads_first, &q) ||
        bhnd_of(tensor(a, l->q + 1), l->heads_first, &k) ||
        bhnd_of(tensor(a, l->q + 2), l->heads_first, &v) || causal < 0 || q.b != k.b ||
        q.b != v.b || k.h != v.h || k.n != v.n || q.d != k.d || k.h <= 0 ||
        (causal && q.n != k.n))
        return;
    double b = q.b, hq = q.h, hkv = k.h, nq = q.n, nkv = k.n, dqk = q.d, dv = v.d;
    double qk = b * hq * 2 * nq * nkv * dqk, pv = b * hq * 2 * nq * nkv * dv;
    if (l->backward) {
        /* dV and dP (each like PV), dQ and dK (each like QK^T), the sums
         * over the query heads sharing a KV head, QK^T again in flash. */
        double group = hq / hkv - 1;
        w->flops = 2 * pv + 2 * qk + b * nkv * (dv + dqk) * group + (l->recomputes ? qk : 0);
        w->bytes = (2 * (b * nq * hq * dqk + b * nkv * hkv * (dqk + dv)) + b * nq * hq * dv) *
                   esize;
    } else {
        w->flops = qk + pv;
        w->bytes = (b * nq * hq * (dqk + dv) + b * nkv * hkv * (dqk + dv)) * esize;
    }
    if (causal)
        w->flops /= 2;
    w->sized = esize > 0;
}

/* ---- Dispatch -------------------------------------------------------- */

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

hta_op_kind hta_op_kind_of(const char *name)
{
    if (strncmp(name, "aten::", 6) != 0 && !strstr(name, "::"))
        return HTA_OP_OTHER;
    if (strstr(name, "attention") || strstr(name, "attn"))
        return HTA_OP_ATTENTION;
    if (strstr(name, "conv"))
        return HTA_OP_CONV;
    if (ends_with(name, "mm") || strstr(name, "matmul") || strstr(name, "linear") ||
        strstr(name, "gemm"))
        return HTA_OP_GEMM;
    return HTA_OP_OTHER;
}

int hta_op_needs_concrete_inputs(const char *name)
{
    hta_op_kind k = hta_op_kind_of(name);
    return k == HTA_OP_CONV || k == HTA_OP_ATTENTION;
}

#define FIND(table, name)                                                  \
    for (size_t i_ = 0; i_ < sizeof table / sizeof *table; i_++)          \
        if (strcmp(table[i_].name, name) == 0)

hta_op_work hta_op_work_of(const char *name, const char *input_dims, const char *input_type,
                           const char *concrete_inputs)
{
    hta_op_work w = {.kind = hta_op_kind_of(name)};
    if (w.kind == HTA_OP_OTHER)
        return w;
    args *a = malloc(sizeof *a);
    if (!a || parse_dims(input_dims, a) || parse_strings(input_type, &a->types) ||
        parse_strings(concrete_inputs, &a->concrete)) {
        free(a);
        return w;
    }
    FIND(GEMMS, name) size_gemm_layout(&GEMMS[i_], a, &w);
    FIND(CONVS, name) size_conv(&CONVS[i_], a, &w);
    FIND(ATTENTIONS, name) size_attention(&ATTENTIONS[i_], a, &w);
    if (strcmp(name, "aten::linear") == 0)
        size_linear(a, &w);
    else if (strcmp(name, "aten::matmul") == 0)
        size_matmul(a, &w);
    free(a);
    if (!w.sized)
        w.flops = w.bytes = 0;
    return w;
}
