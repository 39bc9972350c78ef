/* infer: .seer helpers (see seer_format.h). */
#include "seer_format.h"

#include <math.h>
#include <string.h>

const char *export_dtype_name(int dtype) {
    return dtype == EXPORT_FP16 ? "fp16" : dtype == EXPORT_INT8 ? "int8" : "fp32";
}

int export_dtype_parse(const char *s) {
    if (!strcmp(s, "fp32")) return EXPORT_FP32;
    if (!strcmp(s, "fp16")) return EXPORT_FP16;
    if (!strcmp(s, "int8")) return EXPORT_INT8;
    return -1;
}

uint16_t f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, e = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (e == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0)); // inf, NaN
    int exp = (int)e - 127 + 15;
    if (exp >= 31) return (uint16_t)(sign | 0x7c00u); // overflow -> inf
    if (exp <= 0) {
        // subnormal half (or zero): shift the full mantissa, round to nearest even
        if (exp < -10) return (uint16_t)sign;
        uint32_t m = man | 0x800000u;
        int shift = 14 - exp;
        uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)exp << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++; // may carry into the exponent: fine
    return (uint16_t)(sign | h);
}

float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, man = h & 0x3ffu, x;
    if (e == 0) {
        if (!man) x = sign;
        else { // subnormal: normalise
            int sh = 0;
            while (!(man & 0x400u)) man <<= 1, sh++;
            x = sign | ((uint32_t)(127 - 15 + 1 - sh) << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (e == 31) x = sign | 0x7f800000u | (man << 13);
    else x = sign | ((e - 15 + 127) << 23) | (man << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

void quantize_rows_i8(const float *w, int64_t rows, int64_t cols, int8_t *q, float *scale) {
    for (int64_t r = 0; r < rows; r++) {
        const float *row = w + r * cols;
        float mx = 0.0f;
        for (int64_t c = 0; c < cols; c++) mx = fmaxf(mx, fabsf(row[c]));
        float s = mx > 0.0f ? mx / 127.0f : 1.0f;
        scale[r] = s;
        for (int64_t c = 0; c < cols; c++) {
            float v = roundf(row[c] / s);
            q[r * cols + c] = (int8_t)(v > 127.0f ? 127 : v < -127.0f ? -127 : v);
        }
    }
}

const char *metric_unit(const char *name) {
    static const char *const units[] = {"ms", "s", "us", "ns", "mb", "mib", "gb", "gib", "kb",
                                        "bytes", "pct", "percent", "j", "mj", "w", "fps"};
    const char *u = strrchr(name, '_');
    if (!u) return "";
    u++;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (!strcmp(u, units[i])) return u;
    return "";
}
