//! The sandbox's own tests. The test binary serves as the launcher too: a
//! constructor runs `jail_entry_from` before the test harness starts, as
//! pqbench's `main` does (the harness would take the hidden argument for a
//! test filter).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::*;
use crate::plan::system::passed_variable_refused;

#[ctor::ctor(unsafe)]
fn launcher_hook() {
    // std's view of the arguments may not be set up yet this early.
    let cmdline = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    let args: Vec<std::ffi::OsString> = cmdline
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .skip(1)
        .map(|a| <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(a).to_os_string())
        .collect();
    if let Some(code) = jail_entry_from(args.into_iter()) {
        std::process::exit(code);
    }
}

fn job_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("pqbench-sandbox-test-")
        .tempdir()
        .unwrap()
}

fn sh_in(dir: &Path, script: &str, timeout_ms: u64) -> Output {
    let mut spec = Spec::submission("/bin/sh", vec!["-c".into(), script.into()], dir);
    spec.timeout = Duration::from_millis(timeout_ms);
    run(&spec).unwrap()
}

fn sh(script: &str, timeout_ms: u64) -> Output {
    sh_in(job_dir().path(), script, timeout_ms)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn layer_active(out: &Output, name: &str) -> Option<bool> {
    out.layers.iter().find(|l| l.name == name).map(|l| l.active)
}

#[test]
fn exit_codes_signals_and_timeouts_become_outcomes() {
    assert_eq!(sh("echo hi; exit 3", 5000).outcome, Outcome::Exited(3));
    assert_eq!(sh("echo hi", 5000).stdout, b"hi\n");
    assert_eq!(
        sh("kill -SEGV $$", 5000).outcome,
        Outcome::Signaled(libc::SIGSEGV)
    );
    let t = sh("sleep 30 & sleep 30", 200);
    assert_eq!(t.outcome, Outcome::TimedOut);
    assert!(t.wall < Duration::from_secs(5));
}

#[test]
fn a_missing_program_is_an_error_not_an_outcome() {
    let dir = job_dir();
    let spec = Spec::submission("/nonexistent/pqb-tool", vec![], dir.path());
    let err = run(&spec).unwrap_err().to_string();
    assert!(err.contains("/nonexistent/pqb-tool"), "{err}");
}

#[test]
fn the_results_channel_is_separate_from_stdout() {
    let out = sh("echo 'trial calls=1' ; echo 'done' >&3; echo err >&2", 5000);
    assert_eq!(out.outcome, Outcome::Exited(0));
    assert_eq!(out.channels[0], b"done\n");
    assert_eq!(out.stdout, b"trial calls=1\n");
    assert_eq!(out.stderr, b"err\n");
}

#[test]
fn stdout_keeps_only_its_last_bytes() {
    let out = sh("head -c 5000000 /dev/zero | tr '\\0' x; echo END", 20000);
    assert_eq!(out.outcome, Outcome::Exited(0));
    assert_eq!(out.stdout_bytes, 5_000_004);
    assert_eq!(out.stdout.len(), TAIL_BYTES);
    assert!(out.stdout.ends_with(b"xxxEND\n"));
}

#[test]
fn a_channel_beyond_its_cap_is_an_overflow() {
    let dir = job_dir();
    let mut spec = Spec::submission(
        "/bin/sh",
        vec!["-c".into(), "head -c 300000 /dev/zero >&3; sleep 30".into()],
        dir.path(),
    );
    spec.channels[0].cap = 100_000;
    spec.timeout = Duration::from_secs(20);
    let started = Instant::now();
    let out = run(&spec).unwrap();
    assert_eq!(out.overflow.as_deref(), Some("results"));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "not killed at the overflow"
    );
    assert!(out.channels[0].len() <= 100_000);
}

#[test]
fn a_descendant_holding_the_pipes_does_not_hold_the_job() {
    // setsid puts the sleeper out of the job's process group; it keeps
    // stdout, stderr and the results channel open.
    let started = Instant::now();
    let out = sh("setsid sleep 60 & echo started; exit 0", 3000);
    assert!(started.elapsed() < Duration::from_secs(3 + 5));
    assert_eq!(out.outcome, Outcome::Exited(0));
    assert_eq!(out.stdout, b"started\n");
}

#[test]
fn the_job_gets_its_rusage() {
    let out = sh("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done", 60000);
    assert_eq!(out.outcome, Outcome::Exited(0));
    let ru = out.rusage.expect("rusage");
    assert!(ru.cpu_seconds() > 0.01, "{ru:?}");
    assert!(
        ru.cpu_seconds() <= out.wall.as_secs_f64() + 0.05,
        "{ru:?} {:?}",
        out.wall
    );
}

#[test]
fn the_environment_is_minimal() {
    // SAFETY: tests of this module read no PQB_ variable concurrently.
    unsafe { std::env::set_var("PQB_SECRET_PROBE", "s3cret") };
    let out = sh("env", 5000);
    let env = text(&out.stdout);
    assert!(!env.contains("s3cret"), "{env}");
    assert!(env.contains("LANG=C"), "{env}");
}

#[test]
fn limits_above_the_hard_limit_are_clamped() {
    assert_eq!(confine::clamp_limit(1 << 30, 20 * 1024), 20 * 1024);
    assert_eq!(confine::clamp_limit(100, u64::MAX), 100);
}

#[test]
fn every_layer_is_reported_with_a_reason() {
    let report = layers();
    assert!(report.layers.len() >= 15, "{report:#?}");
    for l in &report.layers {
        assert!(!l.detail.is_empty(), "{l:?}");
    }
    // The layers a job ran under are the ones the probe reports.
    let out = sh("true", 5000);
    let names: Vec<&str> = out.layers.iter().map(|l| l.name.as_str()).collect();
    let probed: Vec<&str> = report.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, probed);
}

/// Skips (returns true) when the layer is not active here, after checking
/// the report says why.
fn missing(out: &Output, name: &str) -> bool {
    match out.layers.iter().find(|l| l.name == name) {
        Some(l) if l.active => false,
        Some(l) => {
            assert!(!l.detail.is_empty());
            eprintln!("layer {name} not active here: {}", l.detail);
            true
        }
        None => panic!("layer {name} not reported: {:#?}", out.layers),
    }
}

#[test]
fn writes_outside_the_job_directory_are_denied() {
    let outside = job_dir();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "intact").unwrap();
    let target = outside.path().join("escaped");
    let script = format!(
        "echo x > {t}; rm -f {v}; echo inside > ./mine && cat ./mine",
        t = target.display(),
        v = victim.display()
    );
    let out = sh(&script, 5000);
    if missing(&out, layer::LANDLOCK_FS) && layer_active(&out, layer::JOB_UID) != Some(true) {
        return;
    }
    assert!(!target.exists());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "intact");
    assert_eq!(out.stdout, b"inside\n", "{}", text(&out.stderr));
}

#[test]
fn network_sockets_are_denied() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // bash's /dev/tcp is not everywhere; perl's socket() is not either:
    // use the shell only to see whether a TCP connect succeeds.
    let script = format!("exec 5<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let dir = job_dir();
    let mut spec = Spec::submission("/bin/bash", vec!["-c".into(), script], dir.path());
    spec.timeout = Duration::from_secs(5);
    let out = run(&spec).unwrap();
    let net = layer_active(&out, layer::NET_NS) == Some(true)
        || layer_active(&out, layer::SECCOMP) == Some(true)
        || layer_active(&out, layer::LANDLOCK_NET) == Some(true);
    if !net {
        return;
    }
    assert!(
        !text(&out.stdout).contains("connected"),
        "{}",
        text(&out.stderr)
    );
    // bash reached connect() and was refused by the sandbox, not by a
    // missing /dev/tcp.
    let err = text(&out.stderr);
    assert!(
        err.contains("unreachable") || err.contains("not permitted") || err.contains("denied"),
        "{err}"
    );
}

#[test]
fn descendants_die_with_the_job() {
    let dir = job_dir();
    let marker = format!("pqbsbx{}", std::process::id());
    let script = format!(
        "(setsid sh -c 'exec -a {marker} sleep 300' </dev/null >/dev/null 2>&1 &) ; sleep 0.2"
    );
    let out = sh_in(dir.path(), &script, 5000);
    assert_eq!(out.outcome, Outcome::Exited(0));
    if missing(&out, layer::REAPER) {
        return;
    }
    std::thread::sleep(Duration::from_millis(200));
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| text(&c))
        .filter(|c| c.starts_with(&marker))
        .collect();
    assert!(survivors.is_empty(), "{survivors:?}");
}

#[test]
fn a_fork_bomb_is_contained() {
    let dir = job_dir();
    let src = dir.path().join("bomb.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include <unistd.h>\n\
         int main(void) { int n = 0;\n\
           for (; n < 5000; n++) { pid_t p = fork(); if (p < 0) break;\n\
             if (p == 0) { pause(); _exit(0); } }\n\
           printf(\"%d\\n\", n); return 0; }\n",
    )
    .unwrap();
    let bomb = dir.path().join("bomb");
    let cc = std::process::Command::new("cc")
        .arg(&src)
        .arg("-o")
        .arg(&bomb)
        .status()
        .unwrap();
    assert!(cc.success());
    let mut spec = Spec::submission(&bomb, vec![], dir.path());
    spec.timeout = Duration::from_secs(30);
    let out = run(&spec).unwrap();
    assert_eq!(out.outcome, Outcome::Exited(0), "{}", text(&out.stderr));
    let forks: u64 = text(&out.stdout).trim().parse().unwrap();
    if missing(&out, layer::PROCESSES) {
        return;
    }
    assert!(forks < JOB_PROCESSES, "{forks} forks");
}

#[test]
fn the_toolchain_writes_only_its_output_directory() {
    // A write beside the output directory is denied (Landlock, and the
    // read-only mount view), one inside it goes through.
    let out_dir = job_dir();
    let beside = job_dir();
    let target = beside.path().join("escaped");
    let script = format!(
        "echo x > {t}; echo ok > {o}/made && cat {o}/made",
        t = target.display(),
        o = out_dir.path().display()
    );
    let spec = Spec::toolchain(
        "/bin/sh",
        vec!["-c".into(), script],
        vec![out_dir.path().to_path_buf()],
    );
    let out = run(&spec).unwrap();
    assert_eq!(out.stdout, b"ok\n", "{}", text(&out.stderr));
    if missing(&out, layer::LANDLOCK_FS) {
        return;
    }
    assert!(!target.exists());
    let err = text(&out.stderr);
    assert!(
        err.contains("Permission denied") || err.contains("Read-only file system"),
        "{err}"
    );
}

/// A C program that says, one line each, what a toolchain job is: its uid,
/// its environment's names, whether socket() and a connect to `argv[1]`
/// go through, whether it can read `argv[3]` and run `argv[2]`.
const TOOLCHAIN_PROBE: &str = r#"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
extern char **environ;
int main(int argc, char **argv) {
    printf("uid %d\n", (int)getuid());
    for (char **e = environ; *e; e++) printf("env %.*s\n", (int)strcspn(*e, "="), *e);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    printf("socket %s\n", s < 0 ? strerror(errno) : "ok");
    if (s >= 0 && argc > 1) {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
        int c = connect(s, (struct sockaddr *)&a, sizeof a);
        printf("connect %s\n", c < 0 ? strerror(errno) : "ok");
    }
    int sp[2];
    printf("socketpair %s\n", socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0 ? strerror(errno) : "ok");
    if (argc > 3) {
        FILE *f = fopen(argv[3], "r");
        printf("read %s\n", f ? "ok" : strerror(errno));
    }
    if (argc > 2) {
        execl(argv[2], argv[2], (char *)0);
        printf("exec %s\n", strerror(errno));
    }
    return 0;
}
"#;

#[test]
fn a_toolchain_job_has_its_own_uid_no_socket_and_none_of_pqbenchs_environment() {
    // The probe stands in for a compiler: a program in a folder that only
    // root may search (0700, like a home or a test's temporary folder).
    let home = job_dir();
    let tools = home.path().join("tools");
    std::fs::create_dir(&tools).unwrap();
    std::fs::set_permissions(home.path(), PermissionsExt::from_mode(0o700)).unwrap();
    let src = tools.join("probe.c");
    std::fs::write(&src, TOOLCHAIN_PROBE).unwrap();
    let probe = tools.join("probe");
    let cc = std::process::Command::new("cc")
        .arg(&src)
        .arg("-o")
        .arg(&probe)
        .status()
        .unwrap();
    assert!(cc.success());
    // A host socket pqbench's user may reach: a daemon's, by path.
    let host = job_dir();
    let socket_path = host.path().join("daemon.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
    // A program the job itself could leave in its scratch folder.
    let scratch = job_dir();
    let own = scratch.path().join("own-tool");
    std::fs::copy("/bin/true", &own).unwrap();
    let spec = Spec::toolchain(
        &probe,
        vec![
            socket_path.display().to_string(),
            own.display().to_string(),
            src.display().to_string(),
        ],
        vec![scratch.path().to_path_buf()],
    )
    .executing([tools.clone()]);
    let out = run(&spec).unwrap();
    let said = text(&out.stdout);
    assert_eq!(
        out.outcome,
        Outcome::Exited(0),
        "{said}{}",
        text(&out.stderr)
    );
    let env: Vec<&str> = said
        .lines()
        .filter_map(|l| l.strip_prefix("env "))
        .collect();
    for name in &env {
        assert!(
            ["PATH", "LANG", "LC_ALL", "HOME", "TMPDIR"].contains(name),
            "{name} of pqbench's environment reached the toolchain: {said}"
        );
    }
    assert!(said.contains("socketpair ok"), "{said}");
    if !missing(&out, layer::SECCOMP) {
        assert!(said.contains("socket Operation not permitted"), "{said}");
        assert!(!said.contains("connect"), "{said}");
    }
    if !missing(&out, layer::LANDLOCK_FS) {
        assert!(said.contains("exec Permission denied"), "{said}");
    }
    if rustix::process::geteuid().is_root() && !missing(&out, layer::JOB_UID) {
        let uid: u32 = said
            .lines()
            .find_map(|l| l.strip_prefix("uid "))
            .and_then(|u| u.parse().ok())
            .unwrap();
        assert!(uid >= uids::JOB_UID_BASE, "{said}");
        assert!(!missing(&out, layer::CAPABILITIES));
        if !missing(&out, layer::MOUNT_NS) {
            // Its own compiler's folder, reached through a folder only
            // root may search, and nothing else there.
            assert!(said.contains("read ok"), "{said}");
            let mount = out
                .layers
                .iter()
                .find(|l| l.name == layer::MOUNT_NS)
                .unwrap();
            assert!(
                mount.detail.contains(&home.path().display().to_string()),
                "{}",
                mount.detail
            );
        }
    }
}

#[test]
fn a_toolchain_job_gets_the_variables_its_system_names_and_a_measured_job_none() {
    // SAFETY: tests of this module read no PQB_ variable concurrently; no
    // other test reads these names.
    unsafe {
        std::env::set_var("PQB_TEST_PASSED", "passed value=1");
        std::env::set_var("PQB_TEST_UNNAMED", "unnamed");
        std::env::set_var("PQB_TEST_AGENT_SOCK", "/run/agent.sock");
        std::env::remove_var("PQB_TEST_UNSET");
    }
    let names: Vec<String> = [
        "PQB_TEST_PASSED",
        "PQB_TEST_UNSET",
        // Refused at plan time; never passed, whoever asks.
        "PQB_TEST_AGENT_SOCK",
        // The job's own, never replaced by pqbench's.
        "HOME",
    ]
    .map(String::from)
    .to_vec();
    let scratch = job_dir();
    let spec = Spec::toolchain(
        "/bin/sh",
        vec!["-c".into(), "env".into()],
        vec![scratch.path().to_path_buf()],
    )
    .passing(&names);
    let out = run(&spec).unwrap();
    assert_eq!(out.outcome, Outcome::Exited(0), "{}", text(&out.stderr));
    let env = text(&out.stdout);
    assert!(
        env.lines().any(|l| l == "PQB_TEST_PASSED=passed value=1"),
        "{env}"
    );
    assert!(!env.contains("PQB_TEST_UNNAMED"), "{env}");
    assert!(!env.contains("PQB_TEST_UNSET"), "{env}");
    assert!(!env.contains("PQB_TEST_AGENT_SOCK"), "{env}");
    assert!(
        env.lines()
            .any(|l| l == format!("HOME={}", scratch.path().display())),
        "{env}"
    );
    // A measured job never gets them: a submission spec has no names to
    // pass, and `passing` leaves it as it is.
    let dir = job_dir();
    let mut spec =
        Spec::submission("/bin/sh", vec!["-c".into(), "env".into()], dir.path()).passing(&names);
    spec.timeout = Duration::from_secs(5);
    let out = run(&spec).unwrap();
    let env = text(&out.stdout);
    assert!(env.contains("LANG=C"), "{env}");
    assert!(!env.contains("PQB_TEST_"), "{env}");
}

#[test]
fn passed_variables_that_would_undo_the_confinement_are_refused() {
    for ok in ["CCACHE_DISABLE", "SOURCE_DATE_EPOCH", "_X", "a1"] {
        assert_eq!(passed_variable_refused(ok), None, "{ok}");
    }
    for bad in [
        "",
        "1A",
        "A-B",
        "A=B",
        "A B",
        "É",
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "LD_BIND_NOW",
        "GCONV_PATH",
        "SSH_AUTH_SOCK",
        "GPG_AGENT_SOCK",
        "SSH_CONNECTION",
        "DBUS_SESSION_BUS_ADDRESS",
        "XDG_RUNTIME_DIR",
    ] {
        assert!(passed_variable_refused(bad).is_some(), "{bad:?}");
    }
}

#[test]
fn the_launchers_share_of_a_jobs_peak_rss_is_measured() {
    // A program of no memory of its own: its ru_maxrss is its pre-exec
    // copy's high-water mark, carried across exec, and nothing else.
    let dir = job_dir();
    let src = dir.path().join("nothing.c");
    std::fs::write(
        &src,
        "void _start(void) {\n\
         #if defined(__x86_64__)\n\
           __asm__ volatile(\"mov $60, %eax\\n xor %edi, %edi\\n syscall\");\n\
         #elif defined(__aarch64__)\n\
           __asm__ volatile(\"mov x8, #93\\n mov x0, #0\\n svc #0\");\n\
         #endif\n\
         }\n",
    )
    .unwrap();
    let nothing = dir.path().join("nothing");
    let cc = std::process::Command::new("cc")
        .args(["-O1", "-static", "-nostdlib", "-o"])
        .arg(&nothing)
        .arg(&src)
        .status()
        .unwrap();
    assert!(cc.success());
    let mut spec = Spec::submission(&nothing, vec![], dir.path());
    let plain = run(&spec).unwrap();
    assert_eq!(plain.outcome, Outcome::Exited(0));
    assert_eq!(plain.rusage.unwrap().launcher_rss_kib, None);
    spec.rss_floor = true;
    for _ in 0..3 {
        let out = run(&spec).unwrap();
        assert_eq!(out.outcome, Outcome::Exited(0));
        if missing(&out, layer::LAUNCHER) {
            return;
        }
        let ru = out.rusage.unwrap();
        let own = ru.launcher_rss_kib.expect("the launcher's share");
        // Equal under this test binary (1,432 KiB); under an unoptimised
        // pqbench the job's copy held up to 128 KiB more. The memory check
        // allows 512 (`memory::below_kernel`).
        assert!(own > 0 && ru.max_rss_kib.abs_diff(own) <= 512, "{ru:?}");
    }
}
