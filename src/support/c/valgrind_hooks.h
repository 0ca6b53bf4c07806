/*
 * valgrind_hooks.h - Valgrind client requests for pqbench's exact counts and
 * constant-time check, compiled to nothing where the headers are absent.
 *
 * The client requests are a few no-op instructions when the program does
 * not run under Valgrind, and are recognised by Valgrind when it does:
 *   callgrind  (the `count` stage) collection switched on only around the
 *              counted call, one statistics dump per call;
 *   memcheck   (the `ct` stage) secret inputs marked undefined before the
 *              operation, public outputs marked defined after it, and error
 *              reporting enabled only while the operation runs.
 *
 * PQB_HAVE_CALLGRIND / PQB_HAVE_MEMCHECK say whether the headers were found
 * when the file was compiled (`__has_include`); without them the tools
 * still build and the stages report why they cannot run.
 */
#ifndef PQB_VALGRIND_HOOKS_H
#define PQB_VALGRIND_HOOKS_H

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>) && __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>
#define PQB_HAVE_MEMCHECK 1
#endif
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define PQB_HAVE_CALLGRIND 1
#endif
#endif

#ifndef PQB_HAVE_MEMCHECK
#define PQB_HAVE_MEMCHECK 0
#endif
#ifndef PQB_HAVE_CALLGRIND
#define PQB_HAVE_CALLGRIND 0
#endif

#if PQB_HAVE_MEMCHECK
#define PQB_VG_RUNNING() ((int)RUNNING_ON_VALGRIND)
/* Secret: every bit of [p, p + n) undefined, so memcheck reports each
 * branch and each address computed from it. */
#define PQB_CT_SECRET(p, n) ((void)VALGRIND_MAKE_MEM_UNDEFINED((p), (n)))
/* Public: defined again (an output the protocol publishes). */
#define PQB_CT_PUBLIC(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#define PQB_CT_REPORT_ON() VALGRIND_ENABLE_ERROR_REPORTING
#define PQB_CT_REPORT_OFF() VALGRIND_DISABLE_ERROR_REPORTING
#else
#define PQB_VG_RUNNING() 0
#define PQB_CT_SECRET(p, n) ((void)(p), (void)(n))
#define PQB_CT_PUBLIC(p, n) ((void)(p), (void)(n))
#define PQB_CT_REPORT_ON() ((void)0)
#define PQB_CT_REPORT_OFF() ((void)0)
#endif

#if PQB_HAVE_CALLGRIND
#define PQB_CG_START() CALLGRIND_START_INSTRUMENTATION
#define PQB_CG_ZERO() CALLGRIND_ZERO_STATS
#define PQB_CG_TOGGLE() CALLGRIND_TOGGLE_COLLECT
#define PQB_CG_DUMP(name) CALLGRIND_DUMP_STATS_AT(name)
#else
#define PQB_CG_START() ((void)0)
#define PQB_CG_ZERO() ((void)0)
#define PQB_CG_TOGGLE() ((void)0)
#define PQB_CG_DUMP(name) ((void)(name))
#endif

#endif
