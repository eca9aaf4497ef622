/* hta/api.h: HTA_API marks what the shared libhta exports.
 *
 * The library is compiled with -fvisibility=hidden, so only the functions
 * declared with HTA_API in these headers are symbols of libhta.so; the
 * rooms under src/ stay internal (the static libhta.a still holds them, for
 * the project's own unit tests). */
#ifndef HTA_PUBLIC_API_H
#define HTA_PUBLIC_API_H

#if defined(__GNUC__)
#define HTA_API __attribute__((visibility("default")))
#else
#define HTA_API
#endif

#endif
