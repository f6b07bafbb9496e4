/* CRC-32 by folding with carry-less multiplication (ns_crc32.h): four 128-bit lanes folded
 * over 64 bytes per step, then to one lane, then a Barrett reduction to 32 bits, as in Intel's
 * "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction" (2009) for the
 * bit-reflected polynomial. The constants are x^k mod P(x) for the fold distances (k = 4*128
 * +- 32 + ..., bit-reflected, as that paper derives them), P(x)' and the Barrett constant u'.
 * Short inputs and the tail go to zlib. */
#include "ns_crc32.h"

#include <string.h>
#include <zlib.h>

uint32_t ns__crc32_zlib(uint32_t crc, const uint8_t *data, size_t len)
{
    uLong c = crc;
    while (len > 0) {
        uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
        c = crc32(c, data, n);
        data += n;
        len -= n;
    }
    return (uint32_t)c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define FAST_MIN 64

/* Folds len bytes (a multiple of 16, >= 64) into the running, non-inverted crc. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t fold(uint32_t crc, const uint8_t *p,
                                                              size_t len)
{
    const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4); /* 4 lanes: 512 +- 64 bits */
    const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0); /* 1 lane: 128 +- 64 bits */
    const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124);             /* 64 -> 32 bits */
    const __m128i poly = _mm_set_epi64x(0x1f7011641, 0x1db710641); /* u', P(x)' */
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);

    __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)(p + 0));
    __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
    x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)crc));
    p += 64;
    len -= 64;
#define FOLD(x, k, next)                                                                           \
    _mm_xor_si128(                                                                                 \
        _mm_xor_si128(_mm_clmulepi64_si128((x), (k), 0x00), _mm_clmulepi64_si128((x), (k), 0x11)), \
        (next))
    while (len >= 64) {
        x0 = FOLD(x0, k1k2, _mm_loadu_si128((const __m128i *)(const void *)(p + 0)));
        x1 = FOLD(x1, k1k2, _mm_loadu_si128((const __m128i *)(const void *)(p + 16)));
        x2 = FOLD(x2, k1k2, _mm_loadu_si128((const __m128i *)(const void *)(p + 32)));
        x3 = FOLD(x3, k1k2, _mm_loadu_si128((const __m128i *)(const void *)(p + 48)));
        p += 64;
        len -= 64;
    }
    x0 = FOLD(x0, k3k4, x1);
    x0 = FOLD(x0, k3k4, x2);
    x0 = FOLD(x0, k3k4, x3);
    while (len >= 16) {
        x0 = FOLD(x0, k3k4, _mm_loadu_si128((const __m128i *)(const void *)p));
        p += 16;
        len -= 16;
    }
#undef FOLD
    /* 128 -> 64 bits */
    __m128i t = _mm_clmulepi64_si128(x0, k3k4, 0x10);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), t);
    /* 64 -> 32 bits */
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), k5, 0x00);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 4), t);
    /* Barrett reduction */
    t = _mm_and_si128(x0, mask32);
    t = _mm_clmulepi64_si128(t, poly, 0x10);
    t = _mm_and_si128(t, mask32);
    t = _mm_clmulepi64_si128(t, poly, 0x00);
    x0 = _mm_xor_si128(x0, t);
    return (uint32_t)_mm_extract_epi32(x0, 1);
}

static int has_pclmul(void)
{
    static int cached = -1; /* benign race: every thread computes the same value */
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
}

uint32_t ns_crc32(uint32_t crc, const uint8_t *data, size_t len)
{
    if (len < FAST_MIN || !has_pclmul())
        return ns__crc32_zlib(crc, data, len);
    size_t body = len & ~(size_t)15;
    uint32_t c = ~fold(~crc, data, body);
    return ns__crc32_zlib(c, data + body, len - body);
}

#else

uint32_t ns_crc32(uint32_t crc, const uint8_t *data, size_t len)
{
    return ns__crc32_zlib(crc, data, len);
}

#endif
