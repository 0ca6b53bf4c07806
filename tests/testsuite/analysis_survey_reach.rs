//! What the survey means by "reaches": a helper is reached from an API
//! function only along calls, jumps and address-takings of code, starting
//! from that function's own code. A C fixture compiled here, without and
//! with `-ffunction-sections`, for the host and for AArch64: a function
//! returning a constant sits in the same `.text` as functions that call the
//! helpers and reaches nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

use pqbench::objscan::{scan, ObjectEvidence, DEFAULT_HELPERS};

const REACH_C: &str = r#"
int get_random_number(const void *alg, unsigned char *out, unsigned long long bits);
int pseudohash(unsigned long long bits, const unsigned char *in, unsigned long long n,
               unsigned char *out);
extern const int drng_algorithm;

/* Returns a constant: reaches nothing, whatever shares its section. */
unsigned long long kex_get_passes_num(void) { return 2; }

/* A static function called inside .text: the assembler resolves the call
   and no relocation records it. */
static __attribute__((noinline)) int draw(unsigned char *out)
{
    return get_random_number(&drng_algorithm, out, 256) ? -1 : 0;
}
int kex_init_a(unsigned char *sk) { return draw(sk) + draw(sk + 32); }

/* Through another global function of the same object. */
int kex_init_b(unsigned char *sk) { return kex_init_a(sk) ? -1 : 0; }

/* Another constant, between the callers. */
unsigned long long kex_get_ss_len_bytes(void) { return 32; }

/* A static function reached by a (possibly tail) call. */
static __attribute__((noinline)) int digest(unsigned char *out, const unsigned char *in)
{
    return pseudohash(256, in, 256, out);
}
int kex_derive_ss_a(unsigned char *out, const unsigned char *in) { return digest(out, in); }

/* A table of function pointers: data that names a function calling a
   helper. Handing out the table calls nothing. */
typedef int (*op)(unsigned char *, const unsigned char *);
static __attribute__((noinline)) int hash_op(unsigned char *o, const unsigned char *i)
{
    return pseudohash(256, i, 8, o);
}
static const op ops[] = {hash_op};
const op *kex_ops(void) { return ops; }
"#;

/// The helpers each API function reaches, scanned one function at a time,
/// then all together (where the first API name reaching a helper is the
/// one the page cites).
fn reaches(object: &Path) -> (Vec<(&'static str, Vec<String>)>, ObjectEvidence) {
    let helpers = DEFAULT_HELPERS.map(String::from);
    let api = [
        "kex_get_passes_num",
        "kex_init_a",
        "kex_init_b",
        "kex_get_ss_len_bytes",
        "kex_derive_ss_a",
        "kex_ops",
    ];
    let objects = [object.to_path_buf()];
    let one = |name: &'static str| {
        let ev = scan(&objects, &[name.to_string()], &helpers).unwrap();
        assert_eq!(ev.api_found, [name], "{}", object.display());
        let reached = ev.reachable_helpers.iter().map(|h| h.helper.clone());
        (name, reached.collect())
    };
    let each = api.map(one).to_vec();
    let all = scan(&objects, &api.map(String::from), &helpers).unwrap();
    (each, all)
}

fn check(cc: &str, flags: &[&str], dir: &Path) {
    let tag = flags.concat().replace('-', "");
    let (src, obj): (PathBuf, PathBuf) = (dir.join("reach.c"), dir.join(format!("{tag}.o")));
    std::fs::write(&src, REACH_C).unwrap();
    let out = Command::new(cc)
        .args(["-c", "-fPIC"])
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{cc} {flags:?}: {err}");

    let (each, all) = reaches(&obj);
    let want: Vec<(&str, Vec<String>)> = [
        ("kex_get_passes_num", &[][..]),
        ("kex_init_a", &["get_random_number"][..]),
        ("kex_init_b", &["get_random_number"][..]),
        ("kex_get_ss_len_bytes", &[][..]),
        ("kex_derive_ss_a", &["pseudohash"][..]),
        ("kex_ops", &[][..]),
    ]
    .into_iter()
    .map(|(f, h)| (f, h.iter().map(|s| s.to_string()).collect()))
    .collect();
    assert_eq!(each, want, "{cc} {flags:?}");

    let cited: Vec<(&str, &str)> = all
        .reachable_helpers
        .iter()
        .map(|h| (h.helper.as_str(), h.reached_from.as_str()))
        .collect();
    assert_eq!(
        cited,
        [
            ("get_random_number", "kex_init_a"),
            ("pseudohash", "kex_derive_ss_a")
        ],
        "{cc} {flags:?}"
    );
}

const VARIANTS: [&[&str]; 4] = [
    &["-O2"],
    &["-O2", "-ffunction-sections", "-fdata-sections"],
    &["-O0"],
    &["-Os"],
];

#[test]
fn survey_reach_follows_only_code_host() {
    if !common::skip::tools_or_skip(&["gcc"], "apt-get install gcc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for flags in VARIANTS {
        check("gcc", flags, dir.path());
    }
}

#[test]
fn survey_reach_follows_only_code_aarch64() {
    let cc = "aarch64-linux-gnu-gcc";
    if !common::skip::tools_or_skip(&[cc], "apt-get install gcc-aarch64-linux-gnu") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for flags in VARIANTS {
        check(cc, flags, dir.path());
    }
}
