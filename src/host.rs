//! The measuring host: whether it is fixed (governor, turbo, SMT, clock,
//! counters, CPU allowed), the environment to record, and a fingerprint of
//! the state measurements depend on.

use std::path::Path;

pub use crate::records::host::HostCheck;

impl HostCheck {
    pub(crate) fn fixed(&self) -> bool {
        self.problems.is_empty()
    }
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Inspects the state of `cpu` and the machine.
pub fn check(cpu: usize) -> HostCheck {
    let base = format!("/sys/devices/system/cpu/cpu{cpu}");
    let governor = read(format!("{base}/cpufreq/scaling_governor"));
    let min_khz = read(format!("{base}/cpufreq/scaling_min_freq")).and_then(|s| s.parse().ok());
    let max_khz = read(format!("{base}/cpufreq/scaling_max_freq")).and_then(|s| s.parse().ok());
    let turbo = read("/sys/devices/system/cpu/intel_pstate/no_turbo")
        .map(|v| v == "0")
        .or_else(|| read("/sys/devices/system/cpu/cpufreq/boost").map(|v| v == "1"));
    let smt_siblings_online = read(format!("{base}/topology/thread_siblings_list"))
        .map(|l| parse_cpu_list(&l))
        .unwrap_or_default()
        .into_iter()
        .filter(|&c| c != cpu)
        .filter(|c| read(format!("/sys/devices/system/cpu/cpu{c}/online")).is_none_or(|v| v == "1"))
        .collect::<Vec<_>>();
    let perf_event_paranoid =
        read("/proc/sys/kernel/perf_event_paranoid").and_then(|s| s.parse().ok());
    let cpu_allowed = allowed_cpus().contains(&cpu);

    let mut problems = Vec::new();
    match &governor {
        Some(g) if g == "performance" => {}
        Some(g) => problems.push(format!("governor is `{g}`, not `performance`")),
        None => problems.push("no cpufreq control: governor and clock cannot be checked".into()),
    }
    if turbo == Some(true) {
        problems.push("turbo/boost is on".into());
    }
    if !smt_siblings_online.is_empty() {
        problems.push(format!(
            "SMT sibling CPU {:?} is online",
            smt_siblings_online
        ));
    }
    if let (Some(lo), Some(hi)) = (min_khz, max_khz) {
        if lo != hi {
            problems.push(format!("clock not fixed: {lo}–{hi} kHz"));
        }
    }
    if perf_event_paranoid.is_some_and(|p| p > 2) {
        problems.push(format!(
            "perf_event_paranoid is {}, above 2: user-mode cycle counters are refused",
            perf_event_paranoid.unwrap_or_default()
        ));
    }
    if let Err(why) = perf_cycles_available() {
        problems.push(format!(
            "hardware cycle counter unavailable ({why}): timing falls back to the TSC or clock"
        ));
    }
    if !cpu_allowed {
        problems.push(format!("CPU {cpu} is not in this process's allowed set"));
    }
    HostCheck {
        cpu,
        governor,
        turbo,
        smt_siblings_online,
        min_khz,
        max_khz,
        perf_event_paranoid,
        cpu_allowed,
        problems,
    }
}

/// Opens (and closes) a user-mode CPU-cycles perf event for this thread,
/// exactly as the driver would.
pub(crate) fn perf_cycles_available() -> Result<(), String> {
    // perf_event_attr, version 5 layout (112 bytes); only the fields we set.
    let mut attr = [0u8; 112];
    attr[0..4].copy_from_slice(&0u32.to_ne_bytes()); // PERF_TYPE_HARDWARE
    attr[4..8].copy_from_slice(&112u32.to_ne_bytes()); // size
    attr[8..16].copy_from_slice(&0u64.to_ne_bytes()); // PERF_COUNT_HW_CPU_CYCLES
                                                      // flags: disabled (bit 0), exclude_kernel (bit 5), exclude_hv (bit 6)
    let flags: u64 = 1 | (1 << 5) | (1 << 6);
    attr[40..48].copy_from_slice(&flags.to_ne_bytes());
    // SAFETY: the attribute buffer is valid for the size it declares.
    let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, attr.as_ptr(), 0, -1, -1, 0) };
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        return Err(match err.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => {
                "perf_event_open: cycles event not supported by this CPU or hypervisor".into()
            }
            Some(libc::EACCES) | Some(libc::EPERM) => {
                "perf_event_open: not permitted (see perf_event_paranoid)".into()
            }
            _ => format!("perf_event_open: {err}"),
        });
    }
    // SAFETY: closing the descriptor just opened.
    unsafe { libc::close(fd as i32) };
    Ok(())
}

/// "0-3,6" → [0,1,2,3,6].
pub(crate) fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<usize>().ok()),
        }
    }
    out
}

/// CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills a zeroed cpu_set_t of the size given.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

pub use crate::records::host::Environment;

pub fn environment() -> Environment {
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo
            .lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let cpu_model = field("model name")
        .or_else(|| field("Model"))
        .or_else(|| field("CPU part").map(|p| format!("CPU part {p}")))
        .unwrap_or_else(|| "unknown".into());
    let max_mhz = read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
        .and_then(|s| s.parse::<f64>().ok())
        .map(|khz| khz / 1000.0)
        .or_else(|| field("cpu MHz").and_then(|s| s.parse().ok()));
    let memory_mib = read("/proc/meminfo")
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|k| k.parse::<u64>().ok())
        })
        .map(|kib| kib / 1024)
        .unwrap_or(0);
    let os = read("/etc/os-release")
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("PRETTY_NAME="))
                .map(|l| l["PRETTY_NAME=".len()..].trim_matches('"').to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let kernel = read("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into());
    let flags = field("flags").unwrap_or_default();
    let virtualization = if flags.split_whitespace().any(|f| f == "hypervisor") {
        Some(
            read("/sys/class/dmi/id/sys_vendor")
                .map(|v| format!("virtual machine ({v})"))
                .unwrap_or_else(|| "virtual machine".into()),
        )
    } else {
        None
    };
    let load = read("/proc/loadavg").unwrap_or_default();
    let mut la = load
        .split_whitespace()
        .filter_map(|x| x.parse::<f64>().ok());
    Environment {
        cpu_model,
        cpus_online: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        max_mhz,
        memory_mib,
        os,
        kernel,
        virtualization,
        load_averages: [
            la.next().unwrap_or(0.0),
            la.next().unwrap_or(0.0),
            la.next().unwrap_or(0.0),
        ],
        utc: crate::records::utc_now(),
    }
}

/// What measurements depend on: the same fingerprint means a stored
/// measurement is still valid.
pub(crate) fn fingerprint(env: &Environment, checks: &[HostCheck], counter: &str) -> String {
    let state: Vec<String> = checks
        .iter()
        .map(|c| {
            format!(
                "cpu{}:{:?}:{:?}:{:?}:{:?}-{:?}",
                c.cpu, c.governor, c.turbo, c.smt_siblings_online, c.min_khz, c.max_khz
            )
        })
        .collect();
    crate::fsutil::sha256_hex(
        format!(
            "{}|{}|{}|{}",
            env.cpu_model,
            env.kernel,
            counter,
            state.join(";")
        )
        .as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_lists_parse() {
        assert_eq!(super::parse_cpu_list("0-3,6"), vec![0, 1, 2, 3, 6]);
        assert_eq!(super::parse_cpu_list("1"), vec![1]);
        assert!(super::parse_cpu_list("").is_empty());
    }
}
