/*
 * driver_load.c - loading the instance library: its entry table, whether
 * it has the settings' operation, and the profiling runtime's hooks.
 */
#include "driver.h"

#include <dlfcn.h>

void *sym(void *lib, const char *name)
{
    dlerror();
    return dlsym(lib, name);
}

typedef const pqb_entry *(*entry_fn)(void);

void *load(const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *p;
    entry_fn get;

    if (!lib) {
        const char *e = dlerror();
        fail("load", "dlopen_failed:%s", e ? e : "unknown");
    }
    p = sym(lib, "pqb_entry_table");
    if (!p)
        fail("load", "no_pqb_entry_table");
    /* dlsym returns an object pointer; copy it into a function pointer
     * (POSIX guarantees the representation). */
    memcpy(&get, &p, sizeof get);
    E = get();
    if (!E)
        fail("load", "pqb_entry_table_returned_null");
    if (E->abi_version != PQB_ABI_VERSION)
        fail("load", "abi_version_%d_driver_expects_%d", E->abi_version, PQB_ABI_VERSION);
    if (!pqb_kind_name(E->kind))
        fail("load", "unknown_kind_%d", E->kind);
    return lib;
}

/* Whether the loaded library's kind has the settings' operation (a load
 * failure, as before the operation came in the settings). */
void check_op_fits(void)
{
    int ok;
    if (g_op == OP_EXT || E->kind == PQB_KIND_KEX || E->kind == PQB_KIND_HASH) {
        if (g_op != OP_EXT || !ext_fits_kind())
            fail("load", "op_does_not_fit_kind_%s_or_the_entry_table_lacks_a_function",
                 pqb_kind_name(E->kind));
        return;
    }
    if (E->kind == PQB_KIND_SIGN)
        ok = g_op == OP_KEYGEN || g_op == OP_SIGN || g_op == OP_VERIFY;
    else
        ok = g_op == OP_KEYGEN || g_op == OP_ENC || g_op == OP_DEC;
    if (!ok)
        fail("load", "op_%s_does_not_fit_kind_%s", op_names[g_op], pqb_kind_name(E->kind));
    if (!pqb_kind_complete(E))
        fail("load", "entry_table_lacks_a_function");
}

struct drv_prof P;


static int prof_sym(void *lib, const char *name, void *fn, size_t fn_size)
{
    void *p = sym(lib, name);
    if (!p)
        return 0;
    memcpy(fn, &p, fn_size);
    return 1;
}

void prof_load(void *lib)
{
    int ok = prof_sym(lib, "pqb_prof_enable", &P.enable, sizeof P.enable) &&
             prof_sym(lib, "pqb_prof_reset", &P.reset, sizeof P.reset) &&
             prof_sym(lib, "pqb_prof_ticks", &P.ticks, sizeof P.ticks) &&
             prof_sym(lib, "pqb_prof_tick_hz", &P.tick_hz, sizeof P.tick_hz) &&
             prof_sym(lib, "pqb_prof_count", &P.count, sizeof P.count) &&
             prof_sym(lib, "pqb_prof_get", &P.get, sizeof P.get);
    if (!ok)
        fail("profile", "library-not-instrumented");
}
