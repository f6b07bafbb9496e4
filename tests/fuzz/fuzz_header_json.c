/* Fuzzes the JSON header decoder and encoder (see roundtrip.h). */
#include "roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    roundtrip(data, size, NS_SERIALIZE_JSON);
    return 0;
}
