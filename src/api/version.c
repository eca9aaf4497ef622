/* version.c: the loaded library's version (hta/version.h). */
#include "hta/version.h"

const char *hta_version(void)
{
    return HTA_VERSION_STRING;
}
