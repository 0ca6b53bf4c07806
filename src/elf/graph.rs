//! The link graph over the objects of one library: functions' code and
//! whole data sections as nodes, relocations and decoded branches as
//! edges.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::PathBuf;

use super::relocatable::{read_relocatable, RelSection, RelocTarget};
use anyhow::Result;

/// A piece of a [`LinkGraph`]: a function's code (a region of a code
/// section) or a whole data section, as (object, section, start, end).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Node {
    pub object: usize,
    pub section: usize,
    pub start: u64,
    pub end: u64,
}

impl Node {
    pub(crate) fn contains(&self, object: usize, section: usize, offset: u64) -> bool {
        (self.object, self.section) == (object, section) && (self.start..self.end).contains(&offset)
    }
}

/// A symbol's place: (object, section, address).
type Place = (usize, usize, u64);

/// The function-level view of a set of relocatable objects: code sections
/// cut into functions, data sections whole, the references between them
/// (relocations, and the direct calls and jumps the assembler resolved
/// inside a section), and where each global name is defined.
pub(crate) struct LinkGraph {
    pub objects: Vec<BTreeMap<usize, RelSection>>,
    defs: HashMap<String, Vec<(Place, bool)>>,
}

impl LinkGraph {
    pub(crate) fn load(
        paths: &[PathBuf],
        keep_data: impl Fn(&str) -> bool + Copy,
    ) -> Result<LinkGraph> {
        let mut graph = LinkGraph {
            objects: Vec::new(),
            defs: HashMap::new(),
        };
        for (oi, path) in paths.iter().enumerate() {
            let (sections, globals) = read_relocatable(path, keep_data)?;
            for g in globals {
                let def = ((oi, g.section, g.address), g.weak);
                graph.defs.entry(g.name).or_default().push(def);
            }
            graph.objects.push(sections);
        }
        Ok(graph)
    }

    /// The node holding `offset` of a section: in code, the smallest region
    /// covering it (none past the end: an empty node there); data sections
    /// are whole.
    pub(crate) fn node_at(&self, object: usize, section: usize, offset: u64) -> Node {
        let node = |start, end| Node {
            object,
            section,
            start,
            end,
        };
        let Some(s) = self.objects.get(object).and_then(|o| o.get(&section)) else {
            return node(0, 0);
        };
        if !s.is_text {
            return node(0, s.size);
        }
        let covering = s.regions.iter().filter(|(a, z)| (*a..*z).contains(&offset));
        let smallest = covering.min_by_key(|(a, z)| z - a);
        smallest.map_or(node(offset, offset), |&(a, z)| node(a, z))
    }

    fn is_code(&self, n: &Node) -> bool {
        let section = self.objects.get(n.object).and_then(|o| o.get(&n.section));
        section.is_some_and(|s| s.is_text)
    }

    /// The node defining global `name` as a static link binds it: the
    /// referring object's own definition, else a strong one, else a weak one.
    pub(crate) fn resolve(&self, name: &str, from: Option<usize>) -> Option<Node> {
        let c = self.defs.get(name)?;
        let same_object = c.iter().find(|(d, _)| Some(d.0) == from);
        let strong = || c.iter().find(|(_, weak)| !weak);
        let &((o, s, a), _) = same_object.or_else(strong).or(c.first())?;
        Some(self.node_at(o, s, a))
    }

    /// What the code or data of `node` refers to: relocations inside it
    /// and, for code, the targets of its resolved direct branches that lie
    /// outside it. Global names for which `stop` holds are returned apart.
    fn edges<'a>(&'a self, node: Node, stop: &impl Fn(&str) -> bool) -> (Vec<Node>, Vec<&'a str>) {
        let Some(s) = self
            .objects
            .get(node.object)
            .and_then(|o| o.get(&node.section))
        else {
            return (Vec::new(), Vec::new());
        };
        let inside = |at: u64| (node.start..node.end).contains(&at);
        let first = s.relocations.partition_point(|r| r.offset < node.start);
        let relocations = s.relocations[first..]
            .iter()
            .take_while(|r| inside(r.offset));
        let (mut targets, mut stopped) = (Vec::new(), Vec::new());
        for r in relocations {
            match &r.target {
                RelocTarget::Global(g) if stop(g) => stopped.push(g.as_str()),
                RelocTarget::Global(g) => targets.extend(self.resolve(g, Some(node.object))),
                RelocTarget::Local { section, offset } => {
                    targets.push(self.node_at(node.object, *section, *offset))
                }
            }
        }
        let first = s.local_refs.partition_point(|r| r.0 < node.start);
        let refs = s.local_refs[first..].iter().take_while(|r| inside(r.0));
        let out = refs.filter(|r| !inside(r.1));
        targets.extend(out.map(|r| self.node_at(node.object, node.section, r.1)));
        (targets, stopped)
    }

    /// The nodes defining a global name for which `stop` holds, with the
    /// name: a call the assembler resolved inside a section names no
    /// symbol, yet reaches such a definition all the same.
    fn definitions(&self, stop: &impl Fn(&str) -> bool) -> HashMap<Node, &str> {
        let mut found = HashMap::new();
        for (name, defs) in self.defs.iter().filter(|(name, _)| stop(name)) {
            for &((o, s, a), _) in defs {
                found.insert(self.node_at(o, s, a), name.as_str());
            }
        }
        found
    }

    /// Nodes reachable from `root`: from code along everything its own
    /// code refers to (calls, jumps, addresses it takes, data it uses),
    /// from data only to further data. Data is read, not run: a function
    /// pointer stored in a table is no call made by the code that reads the
    /// table, and a section of data shared by several functions' tables
    /// would otherwise lend each function every other's callees. A global
    /// name for which `stop` holds is reported to `seen` with the code node
    /// referring to it (by name, or by a resolved call into its definition)
    /// and not followed; nodes defining such a name are never entered
    /// (except `root` itself).
    pub(crate) fn reach(
        &self,
        root: Node,
        stop: impl Fn(&str) -> bool,
        mut seen: impl FnMut(Node, &str),
    ) -> HashSet<Node> {
        let barrier = self.definitions(&stop);
        let mut visited = HashSet::from([root]);
        let mut queue = VecDeque::from([root]);
        while let Some(node) = queue.pop_front() {
            let code = self.is_code(&node);
            let (mut targets, stopped) = self.edges(node, &stop);
            if code {
                stopped.iter().for_each(|g| seen(node, g));
            } else {
                targets.retain(|t| !self.is_code(t));
            }
            for t in targets {
                match barrier.get(&t) {
                    Some(name) if code => seen(node, name),
                    Some(_) => {}
                    None if visited.insert(t) => queue.push_back(t),
                    None => {}
                }
            }
        }
        visited
    }
}
