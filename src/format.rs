//! Number formats of the report pages.
//!
//! `pqbench check` regenerates published pages and requires them to be
//! byte-identical, so every function here is pure and reproduces C `printf`
//! behaviour exactly where the pages used it (`%.3g`, `%.2f`, ...). Rust's
//! float formatting is exact and rounds ties to even, like glibc, which is
//! what makes the emulation bit-for-bit faithful.
//!
//! Unit choice always happens *after* rounding: a value that rounds up into
//! the next unit is printed in that unit (9999.6 cycles is `10.0 k`, never
//! `10000`), so no page ever shows a mantissa outside its unit's range.

/// C `printf("%.*g", precision, v)`.
pub(crate) fn g(v: f64, precision: usize) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    // C treats a precision of 0 as 1 for %g.
    let p = precision.max(1);
    // The exponent %e would print decides between fixed and scientific form,
    // and it must be taken from the rounded value (9.996 at 3 digits is 10.0).
    let e_form = format!("{:.*e}", p - 1, v);
    let (mantissa, exp) = e_form
        .split_once('e')
        .expect("Rust's {:e} output always contains an exponent");
    let x: i64 = exp.parse().expect("Rust's {:e} exponent is an integer");
    if x < -4 || x >= p as i64 {
        let m = strip_fraction_zeros(mantissa);
        let sign = if x < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", x.unsigned_abs())
    } else {
        let decimals = (p as i64 - 1 - x) as usize;
        strip_fraction_zeros(&format!("{v:.decimals$}")).to_string()
    }
}

/// `%g` drops trailing zeros of the fraction and a dangling decimal point.
fn strip_fraction_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// C `printf("%.3g", v)`.
pub(crate) fn g3(v: f64) -> String {
    g(v, 3)
}

/// Cycle counts: `%.2f G`, `%.2f M`, `%.1f k` or a plain integer.
pub(crate) fn cycles(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    let a = v.abs();
    if a < 1e4 {
        let s = format!("{v:.0}");
        if parse(&s).abs() < 1e4 {
            return s;
        }
    }
    if a < 1e6 {
        let s = format!("{:.1}", v / 1e3);
        if parse(&s).abs() < 1e3 {
            return format!("{s} k");
        }
    }
    if a < 1e9 {
        let s = format!("{:.2}", v / 1e6);
        if parse(&s).abs() < 1e3 {
            return format!("{s} M");
        }
    }
    format!("{:.2} G", v / 1e9)
}

/// Durations in the first of s, ms, µs, ns whose value is ≥ 1, `%.3g`.
pub fn duration(seconds: f64) -> String {
    if !seconds.is_finite() {
        return "n/a".to_string();
    }
    const UNITS: [(&str, f64); 4] = [("s", 1.0), ("ms", 1e3), ("µs", 1e6), ("ns", 1e9)];
    let a = seconds.abs();
    let mut i = UNITS
        .iter()
        .position(|&(_, scale)| a * scale >= 1.0)
        .unwrap_or(UNITS.len() - 1);
    loop {
        let (unit, scale) = UNITS[i];
        let s = g3(seconds * scale);
        if i == 0 || parse(&s).abs() < 1e3 {
            return format!("{s} {unit}");
        }
        i -= 1;
    }
}

/// Operations per second, `%.3g`.
pub fn ops_per_sec(v: f64) -> String {
    g3(v)
}

/// A share given as a fraction: whole percent from 9.5 % on, one decimal below.
pub(crate) fn percent(share: f64) -> String {
    if !share.is_finite() {
        return "n/a".to_string();
    }
    let pct = share * 100.0;
    // Deciding on the unrounded value keeps the one-decimal branch below
    // 9.5, where `{:.1}` can reach at most "9.5" and never "10.0".
    if pct.abs() >= 9.5 {
        format!("{pct:.0}%")
    } else {
        format!("{pct:.1}%")
    }
}

/// Helper calls per operation, `%.3g`.
pub(crate) fn calls_per_op(v: f64) -> String {
    g3(v)
}

/// Timed-call count with its trial structure: `3045 (5 × 609)`, or
/// `3047 (5 trials of 609–610)` when trials differ in length.
pub(crate) fn count_n(per_trial_calls: &[u64]) -> String {
    let (Some(&lo), Some(&hi)) = (per_trial_calls.iter().min(), per_trial_calls.iter().max())
    else {
        return "0".to_string();
    };
    let total: u64 = per_trial_calls.iter().sum();
    let trials = per_trial_calls.len();
    if lo == hi {
        format!("{total} ({trials} × {lo})")
    } else {
        format!("{total} ({trials} trials of {lo}–{hi})")
    }
}

/// Suffix appended to `n` when signing needed retries.
pub(crate) fn retries_suffix(retries: u64) -> String {
    match retries {
        0 => String::new(),
        1 => "; 1 failed signing attempt retried".to_string(),
        r => format!("; {r} failed signing attempts retried"),
    }
}

/// Memory sizes already in KiB.
/// `1 warm-up call`, `3 warm-up calls`: `n` with the noun in its number.
pub(crate) fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `1234567` → `1,234,567`.
pub(crate) fn grouped(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(crate) fn kib(v: u64) -> String {
    format!("{v} KiB")
}

/// Abbreviated digest: the first 16 hex digits and an ellipsis; short input
/// is returned whole since nothing was cut.
pub(crate) fn hex_prefix(hex: &str) -> String {
    let mut chars = hex.chars();
    let head: String = chars.by_ref().take(16).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// Our own output is always a valid number; a failure would be a bug here.
/// Orders names as a reader does: runs of digits by their value, so
/// `hash_128` comes before `hash_1024` and `LARCH-3` before `LARCH-10`.
pub(crate) fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let run = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
                let (m, n) = (run(x), run(y));
                let trim = |s: &[u8]| {
                    let z = s.iter().take_while(|&&c| c == b'0').count();
                    s[z..].to_vec()
                };
                let (p, q) = (trim(&x[..m]), trim(&y[..n]));
                // Longer (without leading zeros) is larger; equal length
                // compares digit by digit.
                let by_value = p.len().cmp(&q.len()).then_with(|| p.cmp(&q));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                x = &x[m..];
                y = &y[n..];
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                x = &x[1..];
                y = &y[1..];
            }
        }
    }
}

fn parse(s: &str) -> f64 {
    s.parse().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_sort_by_the_value_of_their_numbers() {
        let mut v = vec![
            "hash_1024",
            "hash_128",
            "hash_32",
            "LARCH-10",
            "LARCH-3",
            "a",
            "hash_0128",
        ];
        v.sort_by(|a, b| super::natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "LARCH-3",
                "LARCH-10",
                "a",
                "hash_32",
                "hash_0128",
                "hash_128",
                "hash_1024"
            ]
        );
    }

    use super::*;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(123), "123");
        assert_eq!(grouped(1234), "1,234");
        assert_eq!(grouped(1234567), "1,234,567");
    }

    #[test]
    fn g3_examples() {
        let cases = [
            (1880.0, "1.88e+03"),
            (242.0, "242"),
            (0.105, "0.105"),
            (5.16, "5.16"),
            (100.0, "100"),
            (0.0, "0"),
            (1234567.0, "1.23e+06"),
            (0.0001234, "0.000123"),
            (0.00001234, "1.23e-05"),
            (999.5, "1e+03"),
            (9.996, "10"),
            (-0.5, "-0.5"),
            (1e100, "1e+100"),
            (1.5e-300, "1.5e-300"),
            (0.125, "0.125"),
            (0.0625, "0.0625"),
            (1.125, "1.12"),
            (f64::INFINITY, "inf"),
        ];
        for (v, want) in cases {
            assert_eq!(g3(v), want, "g3({v})");
        }
        assert_eq!(g(f64::NAN, 3), "nan");
        assert_eq!(g(-0.0, 3), "-0");
    }

    #[test]
    fn g_other_precisions() {
        assert_eq!(g(123456.0, 6), "123456");
        assert_eq!(g(1234567.0, 6), "1.23457e+06");
        assert_eq!(g(0.5, 0), "0.5");
        assert_eq!(g(2.5, 1), "2");
        assert_eq!(g(1.23456, 4), "1.235");
    }

    #[test]
    fn cycles_examples_and_boundaries() {
        let cases = [
            (8.65e6, "8.65 M"),
            (546_700.0, "546.7 k"),
            (1.51e9, "1.51 G"),
            (20.92e6, "20.92 M"),
            (405.85e6, "405.85 M"),
            (19.85e9, "19.85 G"),
            (9999.4, "9999"),
            (9999.6, "10.0 k"),
            (10_000.0, "10.0 k"),
            (999_949.0, "999.9 k"),
            (999_999.97, "1.00 M"),
            (999_995_000.0, "1.00 G"),
            (0.0, "0"),
            (42.4, "42"),
            (2.5, "2"),
        ];
        for (v, want) in cases {
            assert_eq!(cycles(v), want, "cycles({v})");
        }
        assert_eq!(cycles(f64::NAN), "n/a");
    }

    #[test]
    fn duration_examples_and_boundaries() {
        let cases = [
            (4.13e-3, "4.13 ms"),
            (532e-6, "532 µs"),
            (0.009996, "10 ms"),
            (9.99e-3, "9.99 ms"),
            (9.48, "9.48 s"),
            (0.722, "722 ms"),
            (0.00099996, "1 ms"),
            (0.9996, "1 s"),
            (999.6e-9, "1 µs"),
            (0.5e-9, "0.5 ns"),
            (0.0, "0 ns"),
            (1e-9, "1 ns"),
            (1234.0, "1.23e+03 s"),
            (1.0, "1 s"),
        ];
        for (v, want) in cases {
            assert_eq!(duration(v), want, "duration({v})");
        }
    }

    #[test]
    fn ops_and_calls() {
        assert_eq!(ops_per_sec(1880.0), "1.88e+03");
        assert_eq!(ops_per_sec(242.0), "242");
        assert_eq!(ops_per_sec(0.105), "0.105");
        assert_eq!(calls_per_op(1.03), "1.03");
        assert_eq!(calls_per_op(2290.0), "2.29e+03");
        assert_eq!(calls_per_op(1.0), "1");
        assert_eq!(calls_per_op(4000.0), "4e+03");
    }

    #[test]
    fn percent_examples_and_boundaries() {
        let cases = [
            (0.81, "81%"),
            (0.002, "0.2%"),
            (0.0, "0.0%"),
            (1.0, "100%"),
            (0.094, "9.4%"),
            (0.0949, "9.5%"),
            (0.095, "10%"),
            (0.0996, "10%"),
            (0.0999, "10%"),
            (0.98, "98%"),
            (0.00049, "0.0%"),
        ];
        for (v, want) in cases {
            assert_eq!(percent(v), want, "percent({v})");
        }
        for k in 0..=1000 {
            let s = percent(f64::from(k) * 1e-4);
            assert_ne!(s, "10.0%");
        }
    }

    #[test]
    fn counts_and_small_formats() {
        assert_eq!(
            counted(1, "warm-up call", "warm-up calls"),
            "1 warm-up call"
        );
        assert_eq!(
            counted(0, "warm-up call", "warm-up calls"),
            "0 warm-up calls"
        );
        assert_eq!(count_n(&[609; 5]), "3045 (5 × 609)");
        assert_eq!(
            count_n(&[609, 610, 609, 609, 610]),
            "3047 (5 trials of 609–610)"
        );
        assert_eq!(count_n(&[]), "0");
        assert_eq!(retries_suffix(0), "");
        assert_eq!(retries_suffix(1), "; 1 failed signing attempt retried");
        assert_eq!(retries_suffix(15), "; 15 failed signing attempts retried");
        assert_eq!(kib(1704), "1704 KiB");
        assert_eq!(
            hex_prefix("b0dadc14b16b5c1f00112233445566778899"),
            "b0dadc14b16b5c1f…"
        );
        assert_eq!(hex_prefix("abc"), "abc");
        assert_eq!(hex_prefix("0123456789abcdef"), "0123456789abcdef");
    }

    /// Compares `g` with the C library's own `%.*g` on many values, using a
    /// tiny C program as the oracle so the emulation cannot drift.
    #[test]
    fn g_matches_c_printf() {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let dir = std::env::temp_dir().join(format!("pqbench-fmt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("oracle.c");
        let exe = dir.join("oracle");
        std::fs::write(
            &src,
            "#include <stdio.h>\n#include <string.h>\n#include <stdint.h>\n\
             int main(void){unsigned long long b;int p;double d;\n\
             while(scanf(\"%llx %d\",&b,&p)==2){memcpy(&d,&b,8);printf(\"%.*g\\n\",p,d);}return 0;}\n",
        )
        .unwrap();
        let ok = Command::new("gcc")
            .arg("-O1")
            .arg("-o")
            .arg(&exe)
            .arg(&src)
            .status()
            .expect("gcc is needed to run this test");
        assert!(ok.success());

        // A fixed LCG keeps the value set reproducible without extra deps.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state
        };
        let mut values: Vec<(f64, usize)> = Vec::new();
        for _ in 0..3000 {
            let r = next();
            let mant = (r >> 11) as f64 / (1u64 << 53) as f64;
            let exp = (next() % 40) as i32 - 20;
            let v = mant * 10f64.powi(exp);
            let p = 1 + (next() % 6) as usize;
            values.push((v, p));
            values.push((-v, 3));
        }
        for d in [
            0.5, 1.5, 2.5, 0.125, 0.375, 1.125, 9.995, 99.95, 999.5, 0.00015, 1e-5, 1e21,
        ] {
            for p in 1..=4 {
                values.push((d, p));
            }
        }
        let mut child = Command::new(&exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        {
            let mut stdin = child.stdin.take().unwrap();
            for (v, p) in &values {
                writeln!(stdin, "{:x} {p}", v.to_bits()).unwrap();
            }
        }
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), values.len());
        for ((v, p), want) in values.iter().zip(lines) {
            assert_eq!(g(*v, *p), want, "g({v:e}, {p})");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
