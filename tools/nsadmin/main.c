/* nsadmin: mqadmin's NameServer commands without a JVM, and compareNamesrv (see app.c and
 * man/nsadmin.1). */
#include <stdio.h>

#include "nsadmin.h"

int main(int argc, char **argv)
{
    return nsa_main(argc, argv, stdout, stderr);
}
