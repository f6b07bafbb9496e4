/* CRC-32 of zlib (ISO-HDLC, reflected polynomial 0xEDB88320), the one Java's
 * java.util.zip.CRC32 and the brokers' bodyCrc32 use, computed with carry-less multiplication
 * (PCLMULQDQ) where the CPU has it and by zlib's crc32() otherwise: a REGISTER_BROKER body of
 * 16 MB is checked in about a tenth of zlib's instructions (docs/performance.md).
 *
 * ns_crc32(crc, data, len) has the semantics of zlib's crc32(): start with crc 0, feed the
 * previous result to continue. Pure, any thread. */
#ifndef NS_CRC32_H
#define NS_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t ns_crc32(uint32_t crc, const uint8_t *data, size_t len);

/* zlib's crc32() over any length (the reference the fast path is tested against). */
uint32_t ns__crc32_zlib(uint32_t crc, const uint8_t *data, size_t len);

#endif
