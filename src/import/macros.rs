//! Macro expansion just deep enough to see which symbol a definition
//! produces: object-like aliases, one-parameter namespacing wrappers and
//! `##` pasting, with every alternative definition of a macro (from
//! different `#if` branches) giving a candidate.

use std::collections::BTreeSet;

/// A `#define`: object-like, or function-like with its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Macro {
    pub name: String,
    /// Parameter names of a function-like macro.
    pub params: Option<Vec<String>>,
    pub body: String,
}

/// All names a definition may stand for once macros are expanded: the
/// plain name, object-like aliases of it (`#define crypto_sign_keypair
/// NS(keypair)`), and namespacing wrappers (`NS(crypto_sign)` with
/// `#define NS(x) PREFIX_##x`). Alternative definitions of a macro (under
/// different `#if` branches) each give a candidate.
pub(crate) fn expansions(name: &str, via: Option<&str>, macros: &[&Macro]) -> BTreeSet<String> {
    let start = match via {
        Some(m) => format!("{m}({name})"),
        None => name.to_string(),
    };
    let mut out = BTreeSet::new();
    expand_into(&start, macros, 0, &mut out);
    out.insert(name.to_string());
    out
}

fn expand_into(text: &str, macros: &[&Macro], depth: usize, out: &mut BTreeSet<String>) {
    let text = text.trim();
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ident(text) {
        out.insert(text.to_string());
    }
    if depth > 4 {
        return;
    }
    // `M(arg)`: a function-like macro call.
    if let Some((m, arg)) = text
        .strip_suffix(')')
        .and_then(|t| t.split_once('('))
        .filter(|(m, _)| ident(m.trim()))
    {
        for mac in macros
            .iter()
            .filter(|x| x.name == m.trim() && x.params.as_ref().is_some_and(|p| p.len() == 1))
        {
            let p = &mac.params.as_ref().expect("function-like")[0];
            let body = substitute(&mac.body, p, arg.trim());
            expand_into(&body, macros, depth + 1, out);
        }
        return;
    }
    if ident(text) {
        for mac in macros
            .iter()
            .filter(|x| x.name == text && x.params.is_none())
        {
            expand_into(&mac.body, macros, depth + 1, out);
        }
    } else if let Some((a, b)) = text.split_once("##") {
        // `PREFIX ## name` where PREFIX is itself a macro.
        let mut heads = BTreeSet::new();
        expand_into(a, macros, depth + 1, &mut heads);
        for h in heads {
            out.insert(format!("{h}{}", b.trim()));
        }
    }
}

/// Replaces the parameter `p` by `arg` in a macro body; `expand_into`
/// then resolves any `##` pasting, whose left side may itself be a macro.
fn substitute(body: &str, p: &str, arg: &str) -> String {
    let re = regex::Regex::new(&format!(r"\b{}\b", regex::escape(p))).expect("identifier regex");
    re.replace_all(body, regex::NoExpand(arg)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::csource::CFile;

    fn macro_of(line: &str) -> Macro {
        CFile::parse("m.h", &format!("#define {line}\n"))
            .macros
            .remove(0)
    }

    #[test]
    fn expands_namespacing_macros() {
        let a = macro_of("NS(name) PFX1_##name");
        let b = macro_of("NS(name) PFX3_ ## name");
        let c = macro_of("crypto_sign NSB(sign)");
        let d = macro_of("NSB(s) PQCLEAN_X_##s");
        let all = [&a, &b, &c, &d];
        let got = expansions("crypto_sign_keypair", Some("NS"), &all);
        assert!(
            got.contains("PFX1_crypto_sign_keypair") && got.contains("PFX3_crypto_sign_keypair")
        );
        let got = expansions("crypto_sign", None, &all);
        assert!(got.contains("PQCLEAN_X_sign"), "{got:?}");
    }
}
