/*
 * The fast lane of core/log_validator.py in C: the same function as `_fast_lane` there,
 * which stays the specification and the fallback when this module is not built.
 *
 * fast_lane(buf, pos, end, index, count, low, high, keyless) -> (pos, index, low, high, keyless)
 *
 * Walks records `index`.. of a v2 batch's records section from `pos` while they use the
 * encodings real clients write (short varints, non-negative lengths, offset delta equal to
 * the record's index, fields ending exactly at the record's end) and stops at the first
 * other one, leaving it to the exact reader. Every read is bounded by the buffer's length,
 * as Python's IndexError bounds the pure-Python lane, so both stop at the same record.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The position after the varint at p if it encodes exactly `raw` (zigzag applied), else -1. */
static Py_ssize_t skip_expected_varint(const unsigned char *b, Py_ssize_t n, Py_ssize_t p, unsigned long long raw)
{
    while (raw >= 0x80) {
        if (p >= n || b[p] != ((raw & 0x7F) | 0x80))
            return -1;
        raw >>= 7;
        p++;
    }
    if (p >= n || b[p] != raw)
        return -1;
    return p + 1;
}

/* Whether a short header count and headers with short, non-negative lengths end at record_end. */
static int headers_end_at(const unsigned char *b, Py_ssize_t n, Py_ssize_t p, unsigned int count_byte,
                          Py_ssize_t record_end)
{
    if (count_byte >= 0x80 || (count_byte & 1))
        return 0;
    for (unsigned int h = 0; h < (count_byte >> 1); h++) {
        if (p >= n)
            return 0;
        unsigned int v = b[p];
        if (v >= 0x80 || (v & 1))
            return 0;
        p += 1 + (v >> 1);
        if (p >= n)
            return 0;
        v = b[p];
        if (v == 1)
            p += 1;
        else if (v < 0x80 && !(v & 1))
            p += 1 + (v >> 1);
        else
            return 0;
    }
    return p == record_end;
}

static PyObject *fast_lane(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t pos, end, index, count;
    long long low, high;
    int keyless;
    if (!PyArg_ParseTuple(args, "y*nnnnLLp", &view, &pos, &end, &index, &count, &low, &high, &keyless))
        return NULL;
    const unsigned char *b = (const unsigned char *)view.buf;
    const Py_ssize_t n = view.len;
    Py_ssize_t i = index;
    for (; i < count; i++) {
        Py_ssize_t p;
        unsigned int v, c;
        /* sizeOfBody */
        if (pos >= n) break;
        v = b[pos];
        if (v < 0x80) {
            p = pos + 1;
        } else {
            if (pos + 1 >= n) break;
            c = b[pos + 1];
            if (c >= 0x80) break;
            v = (v & 0x7F) | (c << 7);
            p = pos + 2;
        }
        if (v & 1) break;
        Py_ssize_t record_end = p + (v >> 1);
        if (record_end > end) break;
        /* attributes (one byte, not interpreted), then timestampDelta */
        if (p + 1 >= n) break;
        v = b[p + 1];
        if (v < 0x80) {
            p += 2;
        } else {
            if (p + 2 >= n) break;
            c = b[p + 2];
            if (c >= 0x80) break;
            v = (v & 0x7F) | (c << 7);
            p += 3;
        }
        long long delta = (long long)(v >> 1) ^ -(long long)(v & 1);
        /* offsetDelta must be the record's index */
        p = skip_expected_varint(b, n, p, (unsigned long long)i << 1);
        if (p < 0) break;
        /* key, then value: null (-1) or a short non-negative length */
        int stop = 0;
        for (int field = 0; field < 2 && !stop; field++) {
            if (p >= n) { stop = 1; break; }
            v = b[p];
            if (v == 1) {
                if (field == 0)
                    keyless = 1;
                p += 1;
            } else if (v < 0x80) {
                if (v & 1) { stop = 1; break; }
                p += 1 + (v >> 1);
            } else {
                if (p + 1 >= n) { stop = 1; break; }
                c = b[p + 1];
                if (c >= 0x80 || (v & 1)) { stop = 1; break; }
                p += 2 + ((((v & 0x7F) | (c << 7))) >> 1);
            }
        }
        if (stop) break;
        /* headers */
        if (p >= n) break;
        v = b[p];
        p += 1;
        if (v ? !headers_end_at(b, n, p, v, record_end) : p != record_end) break;
        if (delta < low) low = delta;
        if (delta > high) high = delta;
        pos = record_end;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("nnLLO", pos, i, low, high, keyless ? Py_True : Py_False);
}

static PyMethodDef methods[] = {
    {"fast_lane", fast_lane, METH_VARARGS,
     "fast_lane(buf, pos, end, index, count, low, high, keyless) -> (pos, index, low, high, keyless)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_validator_speedups", "The record walk's fast lane in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__validator_speedups(void)
{
    return PyModule_Create(&module);
}
