//! Framing of a tool's results channel. A pipe cannot be rewritten, but a
//! process the job forked (without exec) inherits the channel and could
//! append to it or interleave its own lines. So each pqbench tool ends its
//! channel with `end bytes=<n> fnv1a64=<hex>`: the number of bytes it wrote
//! before that line and their FNV-1a 64-bit hash. What pqbench accepts is
//! exactly what the tool wrote, or an error. (Code inside the tool's own
//! process can still write anything; see the README's Isolation section.)

/// FNV-1a, 64 bits.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Why a channel is not what the tool wrote.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FrameError {
    #[error("no end line: the tool did not finish its results")]
    Unterminated,
    #[error("{0}")]
    Tampered(String),
}

/// The body of a framed channel (everything before its end line) when it
/// is exactly what the tool wrote.
pub(crate) fn verify(channel: &[u8]) -> Result<&[u8], FrameError> {
    let text = channel.strip_suffix(b"\n").unwrap_or(channel);
    let start = text
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|i| i + 1)
        .unwrap_or(0);
    let last = std::str::from_utf8(&text[start..]).unwrap_or("");
    let mut words = last.split(' ');
    if words.next() != Some("end") {
        // The tool's end line may be followed by bytes someone else wrote.
        return Err(
            if channel
                .windows(5)
                .any(|w| w == b"\nend " || w.starts_with(b"end "))
            {
                FrameError::Tampered("bytes follow the tool's end line".into())
            } else {
                FrameError::Unterminated
            },
        );
    }
    let mut bytes = None;
    let mut hash = None;
    for w in words {
        match w.split_once('=') {
            Some(("bytes", v)) => bytes = v.parse::<usize>().ok(),
            Some(("fnv1a64", v)) => hash = u64::from_str_radix(v, 16).ok(),
            _ => {}
        }
    }
    let (Some(bytes), Some(hash)) = (bytes, hash) else {
        return Err(FrameError::Tampered(format!("malformed end line `{last}`")));
    };
    if bytes != start {
        return Err(FrameError::Tampered(format!(
            "the tool wrote {bytes} bytes, the channel holds {start} before its end line"
        )));
    }
    let body = &channel[..start];
    if fnv1a64(body) != hash {
        return Err(FrameError::Tampered(
            "the channel's bytes differ from those the tool wrote".into(),
        ));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(body: &str) -> Vec<u8> {
        let mut v = body.as_bytes().to_vec();
        v.extend(
            format!(
                "end bytes={} fnv1a64={:016x}\n",
                body.len(),
                fnv1a64(body.as_bytes())
            )
            .bytes(),
        );
        v
    }

    #[test]
    fn fnv_matches_the_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn only_what_the_tool_wrote_is_accepted() {
        let ok = framed("meta a=1\ndone\n");
        assert_eq!(verify(&ok).unwrap(), b"meta a=1\ndone\n");
        assert_eq!(verify(&framed("")).unwrap(), b"");
        // Appended after the end line.
        let mut after = ok.clone();
        after.extend(b"trial calls=1\n");
        assert!(matches!(verify(&after), Err(FrameError::Tampered(_))));
        // Interleaved before it.
        let mut inter = b"status = PASS\n".to_vec();
        inter.extend(&ok);
        assert!(matches!(verify(&inter), Err(FrameError::Tampered(_))));
        // Same length, other bytes.
        let forged = String::from_utf8(ok.clone()).unwrap().replace("a=1", "a=2");
        assert!(matches!(
            verify(forged.as_bytes()),
            Err(FrameError::Tampered(_))
        ));
        assert_eq!(verify(b"meta a=1\n"), Err(FrameError::Unterminated));
    }
}
