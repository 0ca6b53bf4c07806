//! The rules of an algorithm file that need no file system: names, C
//! symbols, header paths, references between its tables.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component as PathPart, Path};

use super::algorithm::Resolver;
use super::names::{self, NAME_RULE};
use super::*;
use crate::config::algorithm::DefineValue;
use crate::config::Step;

impl Resolver<'_> {
    /// The API binding shared by every instance (a set may change the
    /// NIST namespace), with its names checked.
    pub(super) fn binding(&mut self) -> Binding {
        let raw = self.raw;
        let a = &raw.value;
        match a.api {
            ApiFamily::Ngcc => {
                let headers = a
                    .ngcc
                    .as_ref()
                    .map_or_else(|| vec!["api.h".to_string()], |n| n.headers.clone());
                for (i, h) in headers.iter().enumerate() {
                    let at = [Step::Key("ngcc"), Step::Key("headers"), Step::Index(i)];
                    self.header_name(h, &at);
                }
                Binding::Ngcc { headers }
            }
            ApiFamily::Nist => {
                let (header, namespace, suffix, randombytes, lengths, kat_rng) = match &a.nist {
                    Some(n) => (
                        n.header.clone(),
                        n.namespace.clone(),
                        n.suffix.clone(),
                        n.randombytes.clone(),
                        n.lengths,
                        n.kat_rng,
                    ),
                    None => (
                        "api.h".into(),
                        String::new(),
                        String::new(),
                        "randombytes".into(),
                        LengthType::UnsignedLongLong,
                        KatRng::Builtin,
                    ),
                };
                self.header_name(&header, &[Step::Key("nist"), Step::Key("header")]);
                self.namespace(&namespace, &[Step::Key("nist"), Step::Key("namespace")]);
                self.suffix(&suffix, &[Step::Key("nist"), Step::Key("suffix")]);
                if !names::is_c_identifier(&randombytes) {
                    let at = [Step::Key("nist"), Step::Key("randombytes")];
                    self.p.push(
                        raw.error_at_value(
                            &at,
                            format!("`randombytes` = `{randombytes}` is not a C symbol name"),
                        )
                        .help("name the function the code calls for random bytes"),
                    );
                }
                let rng_init = self.rng_init(kat_rng);
                let signature_api = self.signature_api();
                Binding::Nist {
                    header,
                    namespace,
                    suffix,
                    randombytes,
                    lengths,
                    kat_rng,
                    rng_init,
                    signature_api,
                }
            }
        }
    }

    /// `signature-api` (default: the classic form); that only signatures
    /// have one is a kind rule (`plan::kinds`).
    fn signature_api(&self) -> SignatureApi {
        self.raw
            .value
            .nist
            .as_ref()
            .and_then(|n| n.signature_api.as_ref())
            .map_or(SignatureApi::Classic, |s| *s.get_ref())
    }

    /// `randombytes-init` and its argument shape: a C symbol, and only with
    /// the submission's own KAT RNG (pqbench's own needs no init symbol).
    fn rng_init(&mut self, kat_rng: KatRng) -> Option<RngInit> {
        let raw = self.raw;
        let n = raw.value.nist.as_ref();
        let symbol = n.and_then(|n| n.randombytes_init.as_ref());
        let args = n.and_then(|n| n.randombytes_init_args);
        if kat_rng == KatRng::Builtin {
            for (set, key) in [
                (symbol.is_some(), "randombytes-init"),
                (args.is_some(), "randombytes-init-args"),
            ] {
                if set {
                    self.p.push(
                        raw.error_at_key(
                            &[Step::Key("nist"), Step::Key(key)],
                            format!("`{key}` applies only to the submission's own KAT RNG"),
                        )
                        .help("set kat-rng = \"submission\" or remove the key"),
                    );
                }
            }
            return None;
        }
        let name = symbol.map_or("randombytes_init", |s| s.get_ref().as_str());
        if !names::is_c_identifier(name) {
            if let Some(s) = symbol {
                self.p.push(
                    raw.error_at(
                        s,
                        format!("`randombytes-init` = `{name}` is not a C symbol name"),
                    )
                    .help("name the function that seeds the submission's KAT RNG"),
                );
            }
        }
        Some(RngInit {
            symbol: name.to_string(),
            args: args.unwrap_or_default(),
        })
    }

    /// Headers are force-included from the include directories: a plain
    /// relative path that cannot climb out of them.
    fn header_name(&mut self, h: &str, at: &[Step]) {
        let plain = !h.is_empty()
            && Path::new(h)
                .components()
                .all(|c| matches!(c, PathPart::Normal(_)));
        if !plain {
            self.p.push(
                self.raw
                    .error_at_value(at, format!("header `{h}` is not a relative path inside the include directories"))
                    .help("name the header as it is included, e.g. \"api.h\" or \"include/api.h\", without `..`"),
            );
        }
    }

    fn namespace(&mut self, ns: &str, at: &[Step]) {
        if !ns.is_empty() && !names::is_c_identifier(ns) {
            self.p.push(
                self.raw
                    .error_at_value(
                        at,
                        format!("namespace `{ns}` is not the start of a C symbol name"),
                    )
                    .help("a namespace is a prefix such as \"PQB_LARCH1_\": letters, digits and _"),
            );
        }
    }

    fn suffix(&mut self, sfx: &str, at: &[Step]) {
        if !sfx.is_empty() && !sfx.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            self.p.push(
                self.raw
                    .error_at_value(at, format!("suffix `{sfx}` is not the end of a C symbol name"))
                    .help("a suffix is the tail of the function names, such as \"_Frodo640\": letters, digits and _"),
            );
        }
    }

    /// Rules within the file that do not need the file system.
    pub(super) fn rules(&mut self) {
        self.required_tables();
        self.implementation_rules();
        self.parameter_set_rules();
        self.known_issue_rules();
        self.ct_annotation_rules();
    }

    /// At least one implementation and one parameter set.
    fn required_tables(&mut self) {
        let raw = self.raw;
        let a = &raw.value;
        if a.implementations.is_empty() {
            self.p.push(
                raw.error("no [[implementation]]")
                    .help("add an [[implementation]] table with a `root`"),
            );
        }
        if a.parameter_sets.is_empty() {
            self.p.push(
                raw.error("no [[parameter-set]]")
                    .help("add a [[parameter-set]] table with a `label`"),
            );
        }
    }

    /// Each implementation: a distinct valid name, known CPU features and
    /// architectures, C macro names, and a namespace only under the NIST API.
    fn implementation_rules(&mut self) {
        let raw = self.raw;
        let a = &raw.value;
        let mut seen = BTreeSet::new();
        for (i, imp) in a.implementations.iter().enumerate() {
            let name = imp.name.get_ref();
            if let Err(why) = names::check_name(name) {
                self.p.push(
                    raw.error_at(&imp.name, format!("implementation name `{name}` {why}"))
                        .help(NAME_RULE),
                );
            }
            if !seen.insert(name) {
                self.p.push(
                    raw.error_at(&imp.name, format!("duplicate implementation `{name}`"))
                        .help("give every implementation a distinct name"),
                );
            }
            self.cpu_features(
                &[Step::Key("implementation"), Step::Index(i)],
                &imp.cpu_features,
            );
            for (j, u) in imp.units.iter().enumerate() {
                let at = [
                    Step::Key("implementation"),
                    Step::Index(i),
                    Step::Key("unit"),
                    Step::Index(j),
                ];
                self.cpu_features(&at, &u.cpu_features);
                self.define_names(&u.defines, &at);
            }
            self.libraries(&imp.libraries);
            self.archs(i, &imp.arch);
            self.submitter_cflags(i, imp.submitter_cflags.as_deref().unwrap_or_default());
            self.define_names(&imp.defines, &[Step::Key("implementation"), Step::Index(i)]);
            if let Some(ns) = &imp.namespace {
                self.implementation_namespace(i, ns);
            }
        }
    }

    /// The CPU features of the table at `table` (an implementation or one
    /// of its units).
    fn cpu_features(&mut self, table: &[Step], features: &[String]) {
        for (n, f) in features.iter().enumerate() {
            // Each becomes `-m<feature>`.
            if names::check_name(f).is_err() {
                let mut at = table.to_vec();
                at.extend([Step::Key("cpu-features"), Step::Index(n)]);
                self.p.push(
                    self.raw
                        .error_at_value(&at, format!("CPU feature `{f}` is not a feature name"))
                        .help("write features as gcc's -m options name them: avx2, bmi2, aes, ..."),
                );
            }
        }
    }

    /// System libraries: each becomes `-l<name>`, so only a library's name
    /// (`crypto`, `gmp`), never a flag or a path.
    fn libraries(&mut self, libraries: &[toml::Spanned<String>]) {
        for l in libraries {
            let name = l.get_ref();
            let plain = !name.is_empty()
                && !name.starts_with('-')
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_+.-".contains(c));
            if !plain {
                self.p.push(
                    self.raw
                        .error_at(l, format!("`{name}` is not a library name"))
                        .help("name a system library as -l takes it: \"crypto\" for libcrypto, \"gmp\" for libgmp"),
                );
            }
        }
    }

    /// The submitter's own flags of implementation `i`: a submission's
    /// build file may hold flags that escape the build.
    fn submitter_cflags(&mut self, i: usize, flags: &[String]) {
        for (n, flag) in flags.iter().enumerate() {
            if let Some(why) = super::flags::refused(flag) {
                let at = [
                    Step::Key("implementation"),
                    Step::Index(i),
                    Step::Key("submitter-cflags"),
                    Step::Index(n),
                ];
                self.p.push(
                    self.raw
                        .error_at_value(&at, format!("flag `{flag}` is refused: it {why}"))
                        .help("remove it: the submitter profile holds code-generation and warning flags only"),
                );
            }
        }
    }

    /// The architectures of implementation `i`.
    fn archs(&mut self, i: usize, archs: &[String]) {
        for (n, a) in archs.iter().enumerate() {
            if !["x86_64", "aarch64"].contains(&a.as_str()) {
                let at = [
                    Step::Key("implementation"),
                    Step::Index(i),
                    Step::Key("arch"),
                    Step::Index(n),
                ];
                self.p.push(
                    self.raw
                        .error_at_value(&at, format!("unknown architecture `{a}`"))
                        .help("use x86_64 or aarch64"),
                );
            }
        }
    }

    /// The namespace of implementation `i`: a C prefix, of a NIST-API one.
    fn implementation_namespace(&mut self, i: usize, ns: &str) {
        let at = [
            Step::Key("implementation"),
            Step::Index(i),
            Step::Key("namespace"),
        ];
        self.namespace(ns, &at);
        if self.raw.value.api != ApiFamily::Nist {
            self.p.push(
                self.raw
                    .error_at_key(&at, "`namespace` applies to NIST-API implementations")
                    .help("remove it, or set api = \"nist\""),
            );
        }
    }

    /// Each parameter set: C macro names, a C namespace, and only
    /// implementations the file has.
    fn parameter_set_rules(&mut self) {
        let raw = self.raw;
        let a = &raw.value;
        let imp_names: Vec<&String> = a.implementations.iter().map(|i| i.name.get_ref()).collect();
        for (j, ps) in a.parameter_sets.iter().enumerate() {
            let at = [Step::Key("parameter-set"), Step::Index(j)];
            self.define_names(&ps.defines, &at);
            if let Some(ns) = &ps.namespace {
                self.namespace(ns, &[at[0], at[1], Step::Key("namespace")]);
            }
            if let Some(sfx) = &ps.suffix {
                self.suffix(sfx, &[at[0], at[1], Step::Key("suffix")]);
            }
            if let Some(h) = &ps.header {
                self.header_name(h.get_ref(), &[at[0], at[1], Step::Key("header")]);
            }
            for (key, given) in [
                ("suffix", ps.suffix.is_some()),
                ("header", ps.header.is_some()),
            ] {
                if given && a.api != ApiFamily::Nist {
                    self.p.push(
                        raw.error_at_key(
                            &[at[0], at[1], Step::Key(key)],
                            format!("`{key}` applies to NIST-API algorithms"),
                        )
                        .help("remove it, or set `api = \"nist\"`"),
                    );
                }
            }
            for n in ps.implementations.iter().flatten() {
                if !imp_names.contains(&n) {
                    let list: Vec<&str> = imp_names.iter().map(|s| s.as_str()).collect();
                    self.p.push(
                        raw.error_at(
                            &ps.label,
                            format!("parameter set names unknown implementation `{n}`"),
                        )
                        .help(format!("use one of: {}", list.join(", "))),
                    );
                }
            }
        }
    }

    /// Known issues' label patterns are regular expressions.
    fn known_issue_rules(&mut self) {
        let raw = self.raw;
        for k in &raw.value.known_issues {
            if let Err(e) = regex::Regex::new(k.labels.get_ref()) {
                self.p.push(
                    raw.error_at(&k.labels, format!("bad label pattern: {e}"))
                        .help("write a regular expression over instance labels"),
                );
            }
        }
    }

    /// Each constant-time annotation's problems, at the key they concern.
    fn ct_annotation_rules(&mut self) {
        let raw = self.raw;
        let a = &raw.value;
        for c in &a.ct_annotations {
            for e in super::exact::annotation_problems(c, a.kind) {
                let (at, help) = match &e {
                    super::exact::AnnotationProblem::Labels(_) => (
                        c.labels.as_ref().unwrap_or(&c.site),
                        "write a regular expression over instance labels".to_string(),
                    ),
                    super::exact::AnnotationProblem::Site(_) => (
                        &c.site,
                        "write a glob over a function name or `file:line`, e.g. \"wots.c:62\""
                            .to_string(),
                    ),
                    super::exact::AnnotationProblem::Op(_, ops) => (
                        &c.site,
                        format!("operations of this kind: {}", ops.join(", ")),
                    ),
                };
                self.p.push(raw.error_at(at, e.to_string()).help(help));
            }
        }
    }

    /// Define names become `-DNAME`: they must be C macro names.
    fn define_names(&mut self, defines: &BTreeMap<String, DefineValue>, table: &[Step]) {
        for name in defines.keys().filter(|n| !names::is_c_identifier(n)) {
            let mut at = table.to_vec();
            at.extend([Step::Key("defines"), Step::Key(name)]);
            self.p.push(
                self.raw
                    .error_at_key(&at, format!("define `{name}` is not a C macro name"))
                    .help("use letters, digits and _, not starting with a digit"),
            );
        }
    }
}
