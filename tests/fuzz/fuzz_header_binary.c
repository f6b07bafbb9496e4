/* Fuzzes the ROCKETMQ binary header decoder and encoder (see roundtrip.h). */
#include "roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    roundtrip(data, size, NS_SERIALIZE_ROCKETMQ);
    return 0;
}
