/* csmith.h for vsp-cc's random-program test (crates/cc/tests/csmith.rs): replaces Csmith's runtime
 * header. No C library (CAHPv3 has no printf and no room for crc32's 1 KiB table), so the types and
 * limits come from clang's predefined macros, the safe-math wrappers from Csmith's own safe_math.h,
 * and transparent_crc folds every global into a 16-bit value that main returns (`vsp_result`).
 * The same header builds the exact oracle (msp430 IR run by lli), which defines VSP_ORACLE. */
#ifndef RANDOM_RUNTIME_H
#define RANDOM_RUNTIME_H

typedef __INT8_TYPE__ int8_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT16_TYPE__ int16_t;
typedef __UINT16_TYPE__ uint16_t;
typedef __INT32_TYPE__ int32_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT64_TYPE__ uint64_t;

#define INT8_MIN (-__INT8_MAX__ - 1)
#define INT8_MAX __INT8_MAX__
#define UINT8_MAX __UINT8_MAX__
#define INT16_MIN (-__INT16_MAX__ - 1)
#define INT16_MAX __INT16_MAX__
#define UINT16_MAX __UINT16_MAX__
#define INT32_MIN (-__INT32_MAX__ - 1)
#define INT32_MAX __INT32_MAX__
#define UINT32_MAX __UINT32_MAX__
#define INT64_MIN (-__INT64_MAX__ - 1)
#define INT64_MAX __INT64_MAX__
#define UINT64_MAX __UINT64_MAX__
#define INT_MIN (-__INT_MAX__ - 1)
#define INT_MAX __INT_MAX__
#define CHAR_BIT __CHAR_BIT__
#define FLT_MAX __FLT_MAX__
#define DBL_MAX __DBL_MAX__

#define UNDEFINED(__val) (__val)
#define LOG_INDEX
#define LOG_EXEC
#define STATIC static
#define assert(x)
#define printf(...) 0
#define FUNC_NAME(x) (safe_##x)
#include "safe_math.h"
#undef FUNC_NAME
#define INT_BIT (sizeof(int) * CHAR_BIT)
#define _CSMITH_BITFIELD(x) (((x) > INT_BIT) ? ((x) % INT_BIT) : (x))

static uint16_t crc32_context = 0xFFFF;
static uint16_t vsp_result;

static void crc32_gentab(void) {}
static void platform_main_begin(void) {}

/* A rotate-and-xor fold: order-sensitive, every bit of every global counts. Macros drop the
 * variable names, which would otherwise take RAM as strings at -O0. */
static void vsp_fold(uint16_t v)
{
    crc32_context = (uint16_t)((crc32_context << 3) | (crc32_context >> 13)) ^ v;
}

#ifdef NO_LONGLONG
static void vsp_crc(uint32_t val)
{
    vsp_fold((uint16_t)val ^ (uint16_t)(val >> 16));
}
#else
static void vsp_crc(uint64_t val)
{
    vsp_fold((uint16_t)val ^ (uint16_t)(val >> 16) ^ (uint16_t)(val >> 32) ^ (uint16_t)(val >> 48));
}
#endif
#define transparent_crc(val, vname, flag) vsp_crc(val)

static void vsp_crc_bytes(char *ptr, int nbytes)
{
    for (int i = 0; i < nbytes; i++)
        vsp_fold((uint8_t)ptr[i]);
}
#define transparent_crc_bytes(ptr, nbytes, vname, flag) vsp_crc_bytes(ptr, nbytes)

static void platform_main_end(uint32_t crc, int flag)
{
    (void)flag;
    vsp_result = (uint16_t)crc;
}

/* Csmith's main becomes csmith_main; the test appends the real main (see csmith.rs). */
#define main csmith_main

#endif
