//! Differences between a recorded value and a recomputed one, named by
//! field path, for `check` and the stages' record checks.

use serde::Serialize;

/// The first field where two serialisations differ, as `a.b: x vs y`.
pub(crate) fn first_difference(
    prefix: &str,
    a: &serde_json::Value,
    b: &serde_json::Value,
) -> Option<String> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k)));
            keys.map(|k| {
                let null = Value::Null;
                let path = format!("{prefix}.{k}");
                first_difference(&path, x.get(k).unwrap_or(&null), y.get(k).unwrap_or(&null))
            })
            .find_map(|d| d)
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(&format!("{prefix}[{i}]"), p, q)),
        _ if a == b => None,
        _ => Some(format!("{prefix}: recorded {a}, recomputed {b}")),
    }
}

/// The first difference between two values' serialisations under `field`.
pub(crate) fn differ<T: Serialize>(field: &str, recorded: &T, recomputed: &T) -> Option<String> {
    let (a, b) = (
        serde_json::to_value(recorded).ok()?,
        serde_json::to_value(recomputed).ok()?,
    );
    first_difference(field, &a, &b)
}

#[cfg(test)]
mod tests {
    #[test]
    fn differences_name_the_field() {
        let a = serde_json::json!({"n": 5, "ci": [1.0, 2.0]});
        let b = serde_json::json!({"n": 5, "ci": [1.0, 2.5]});
        assert_eq!(
            super::first_difference("statistics", &a, &b).unwrap(),
            "statistics.ci[1]: recorded 2.0, recomputed 2.5"
        );
        assert_eq!(super::first_difference("s", &a, &a), None);
        assert_eq!(
            super::differ("x", &1, &2).unwrap(),
            "x: recorded 1, recomputed 2"
        );
    }
}
