/* The contamination scanner's hot loops in C: the same hashes as the numpy code in ngrams.py and
 * index.py (tests/integrity/test_contamination_kernel.py checks them equal, bit for bit), in one
 * pass over the bytes and one over the tokens instead of a few dozen numpy passes each.
 *
 * Built by `pip install` as an optional extension (no compiler: the numpy code runs, at about half
 * the speed). Arrays cross as buffers (the buffer protocol): no numpy headers at build time.
 *
 *   spans(padded, out_hash, out_start, out_len, mul1) -> n
 *       the tokens of normalised bytes with 8 spaces on each side (runs of non-space bytes):
 *       hash, start (in the unpadded bytes), length. The out arrays hold (len(padded) + 1) // 2.
 *   window_candidates(toks, k, tag, base, base_inv, hi, lo, hi_shift, lo_mask, out_pos, out_hash) -> m
 *       every window of k tokens whose hash has its high bits set in bitmap `hi` and its low bits
 *       in bitmap `lo`: its position and hash. The out arrays hold len(toks) - k + 1.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static const uint64_t M1 = 0xBF58476D1CE4E5B9ULL;

static inline uint64_t mix(uint64_t x) {
    x ^= x >> 31;
    x *= M1;
    x ^= x >> 29;
    return x;
}

static inline uint64_t load64(const unsigned char *p) {
    uint64_t w;
    memcpy(&w, p, 8); /* little-endian machines: the numpy code reads "<u8" */
    return w;
}

/* Bit j set where p[j] is a space, for j < len (<= 64); bits from len on are set (spaces). */
static inline uint64_t space_mask(const unsigned char *p, Py_ssize_t len) {
    uint64_t m = 0;
    if (len == 64) {
#if defined(__SSE2__)
        const __m128i sp = _mm_set1_epi8(0x20);
        for (int q = 0; q < 4; q++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * q));
            m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, sp)) << (16 * q);
        }
#else
        for (int j = 0; j < 64; j++) m |= (uint64_t)(p[j] == 0x20) << j;
#endif
        return m;
    }
    for (Py_ssize_t j = 0; j < len; j++) m |= (uint64_t)(p[j] == 0x20) << j;
    return m | (~0ULL << len);
}

static int get(PyObject *obj, Py_buffer *view, int writable, Py_ssize_t itemsize, const char *what) {
    if (PyObject_GetBuffer(obj, view, writable ? PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS : PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if (view->len % itemsize != 0) {
        PyErr_Format(PyExc_ValueError, "%s: a buffer of %zd-byte items expected", what, itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *spans(PyObject *self, PyObject *args) {
    PyObject *o_in, *o_h, *o_s, *o_l;
    unsigned long long mul1;
    if (!PyArg_ParseTuple(args, "OOOOK", &o_in, &o_h, &o_s, &o_l, &mul1))
        return NULL;
    Py_buffer in, bh, bs, bl;
    if (get(o_in, &in, 0, 1, "padded") < 0) return NULL;
    if (get(o_h, &bh, 1, 8, "out_hash") < 0) goto fail_in;
    if (get(o_s, &bs, 1, 8, "out_start") < 0) goto fail_h;
    if (get(o_l, &bl, 1, 8, "out_len") < 0) goto fail_s;
    const unsigned char *a = in.buf;
    Py_ssize_t n = in.len, cap = (n + 1) / 2;
    if (n < 16 || bh.len / 8 < cap || bs.len / 8 < cap || bl.len / 8 < cap) {
        PyErr_SetString(PyExc_ValueError, "spans: padded input or output arrays too short");
        goto fail_l;
    }
    uint64_t *oh = bh.buf;
    int64_t *os = bs.buf, *ol = bl.buf;
    Py_ssize_t count = 0;
    Py_BEGIN_ALLOW_THREADS
    /* 64 bytes at a time: a bit per byte that is not a space; a token starts where such a bit follows
     * a clear one and ends (exclusive) where a clear bit follows a set one. Starts and ends alternate. */
    uint64_t carry = 0; /* the last byte of the previous block was inside a token */
    Py_ssize_t s = 0;
    int open = 0;
    for (Py_ssize_t b = 0; b < n; b += 64) {
        uint64_t inside = ~space_mask(a + b, n - b < 64 ? n - b : 64);
        uint64_t prev = (inside << 1) | carry;
        uint64_t edges = (inside & ~prev) | (~inside & prev);
        carry = inside >> 63;
        while (edges) {
            Py_ssize_t j = b + __builtin_ctzll(edges);
            edges &= edges - 1;
            if (!open) {
                s = j;
                open = 1;
                continue;
            }
            open = 0;
            Py_ssize_t len = j - s;
            unsigned sh = len < 8 ? (unsigned)len : 8;
            uint64_t first = load64(a + s);
            if (sh < 8) first &= (1ULL << (8 * sh)) - 1;
            uint64_t last = load64(a + j - 8) >> (8 * (8 - sh));
            last += (uint64_t)len * (uint64_t)mul1;
            oh[count] = mix(first ^ mix(last));
            os[count] = s - 8;
            ol[count] = len;
            count++;
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&bl);
    PyBuffer_Release(&bs);
    PyBuffer_Release(&bh);
    PyBuffer_Release(&in);
    return PyLong_FromSsize_t(count);
fail_l:
    PyBuffer_Release(&bl);
fail_s:
    PyBuffer_Release(&bs);
fail_h:
    PyBuffer_Release(&bh);
fail_in:
    PyBuffer_Release(&in);
    return NULL;
}

static PyObject *window_candidates(PyObject *self, PyObject *args) {
    PyObject *o_t, *o_hi, *o_lo, *o_pos, *o_w;
    Py_ssize_t k;
    unsigned long long tag, base, base_inv, lo_mask;
    unsigned int hi_shift;
    if (!PyArg_ParseTuple(args, "OnKKKOOIKOO", &o_t, &k, &tag, &base, &base_inv, &o_hi, &o_lo, &hi_shift, &lo_mask,
                          &o_pos, &o_w))
        return NULL;
    Py_buffer bt, bhi, blo, bp, bw;
    if (get(o_t, &bt, 0, 8, "toks") < 0) return NULL;
    if (get(o_hi, &bhi, 0, 1, "hi") < 0) goto fail_t;
    if (get(o_lo, &blo, 0, 1, "lo") < 0) goto fail_hi;
    if (get(o_pos, &bp, 1, 8, "out_pos") < 0) goto fail_lo;
    if (get(o_w, &bw, 1, 8, "out_hash") < 0) goto fail_p;
    const uint64_t *t = bt.buf;
    Py_ssize_t n = bt.len / 8, m = n - k + 1;
    if (k < 1 || hi_shift < 3 || hi_shift > 63) {
        PyErr_SetString(PyExc_ValueError, "window_candidates: k must be >= 1 and 3 <= hi_shift <= 63");
        goto fail_w;
    }
    if (m < 0) m = 0;
    if (bp.len / 8 < m || bw.len / 8 < m || (uint64_t)bhi.len * 8 < (1ULL << (64 - hi_shift)) ||
        (uint64_t)blo.len * 8 <= lo_mask) {
        PyErr_SetString(PyExc_ValueError, "window_candidates: an output array or a bitmap is too short");
        goto fail_w;
    }
    const unsigned char *hi = bhi.buf, *lo = blo.buf;
    int64_t *op = bp.buf;
    uint64_t *ow = bw.buf;
    Py_ssize_t count = 0;
    Py_BEGIN_ALLOW_THREADS
    if (m > 0) {
        /* g_i = sum_j t[i+j] * base**j (mod 2**64); g_{i+1} = (g_i - t[i]) * base**-1 + t[i+k] * base**(k-1) */
        uint64_t top = 1, g = 0, p = 1;
        for (Py_ssize_t j = 0; j < k; j++) {
            g += t[j] * p;
            if (j < k - 1) top *= base;
            p *= base;
        }
        for (Py_ssize_t i = 0;; i++) {
            uint64_t w = mix(g ^ tag);
            uint64_t h = w >> hi_shift, l = w & lo_mask;
            if (((hi[h >> 3] >> (h & 7)) & 1) && ((lo[l >> 3] >> (l & 7)) & 1)) {
                op[count] = i;
                ow[count] = w;
                count++;
            }
            if (i + 1 >= m) break;
            g = (g - t[i]) * base_inv + t[i + k] * top;
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&bw);
    PyBuffer_Release(&bp);
    PyBuffer_Release(&blo);
    PyBuffer_Release(&bhi);
    PyBuffer_Release(&bt);
    return PyLong_FromSsize_t(count);
fail_w:
    PyBuffer_Release(&bw);
fail_p:
    PyBuffer_Release(&bp);
fail_lo:
    PyBuffer_Release(&blo);
fail_hi:
    PyBuffer_Release(&bhi);
fail_t:
    PyBuffer_Release(&bt);
    return NULL;
}

static PyMethodDef methods[] = {
    {"spans", spans, METH_VARARGS, "Token hashes, starts and lengths of padded normalised bytes."},
    {"window_candidates", window_candidates, METH_VARARGS, "Windows of k tokens whose hash is in both bitmaps."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernel", NULL, -1, methods};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module); }
