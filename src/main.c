/* mqnamesrv entry point (placeholder until the server lands). */
#include <stdio.h>

int main(void)
{
    fputs("mqnamesrv: not built yet\n", stderr);
    return 1;
}
