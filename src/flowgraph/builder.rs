//! From a [`FlowgraphFile`] to a FutureSDR flowgraph: every code, block and
//! connection is checked before anything is built, and each complaint names
//! the file, the code or block, and the field (or port).

use super::assembly::{Assembly, Built, Node};
use super::family::{Code, family, families};
use super::file::{BlockEntry, CodeEntry, FlowgraphFile, list};
use super::params::{Access, Args, Literal, Need, ParamType, Value, check};
use crate::files::Use;
use crate::codes::settings::FieldType;
use super::registry::{Kind, Ports, StreamType, feature_of, kind, kinds};
use crate::gpu::Backend;
use anyhow::bail;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// Choices the caller makes for the whole flowgraph.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Backend for every decoder block, overriding their `backend` parameter.
    pub backend: Option<Backend>,
    /// Time every block's work calls, for a per-block profile of the run.
    pub profile: bool,
    /// Files the command writes beside the blocks (`run --json`): refused
    /// with theirs when one is a file of the run.
    pub also_writes: Vec<Use>,
    /// GPUs for every decoder block, overriding their `gpu_devices` and
    /// `gpu_device` (`run --gpu-devices`).
    pub gpu_devices: Option<crate::gpu::DeviceList>,
}

/// A block whose parameters passed their checks.
struct Checked<'a> {
    entry: &'a BlockEntry,
    kind: &'static Kind,
    args: Args,
    ports: Ports,
}

/// One stream connection: (block index, port) → (block index, port).
struct Edge {
    from: (usize, &'static str),
    to: (usize, &'static str),
}

/// Build the flowgraph `file` describes.
pub fn build(file: &FlowgraphFile, options: &BuildOptions) -> anyhow::Result<Built> {
    let codes = file.codes.iter().map(|c| resolve_code(file, c)).collect::<anyhow::Result<Vec<_>>>()?;
    let mut checked = file.blocks.iter().map(|b| check_block(file, b)).collect::<anyhow::Result<Vec<_>>>()?;
    let edges = plan_edges(file, &checked)?;
    refuse_overwriting(file, &checked, &options.also_writes)?;
    let mut asm = Assembly::new(options.backend, options.profile, codes);
    asm.gpu_devices = options.gpu_devices.clone();
    let mut ids = vec![None; checked.len()];
    for i in sinks_first(file, &checked, &edges)? {
        asm.name = checked[i].entry.name.clone();
        // What it feeds is built already: the units it must send whole are known.
        trim_total(file, &mut checked, i, &edges, &ids, &asm)?;
        ids[i] = Some((checked[i].kind.add)(&checked[i].args, &mut asm)?);
    }
    let ids: Vec<Node> = ids.into_iter().flatten().collect();
    for e in &edges {
        let Node::Block(to_id) = ids[e.to.0] else { continue };
        let from = feeder(e.from, &edges, &ids);
        let Node::Block(from_id) = ids[from.0] else { unreachable!("feeder follows wires back to a block") };
        let (from_port, to_port) = (checked[from.0].ports.block_port(from.1), checked[e.to.0].ports.block_port(e.to.1));
        asm.fg.stream_dyn(from_id, from_port, to_id, to_port).map_err(|err| {
            let (a, b) = (&checked[from.0].entry.name, &checked[e.to.0].entry.name);
            anyhow::anyhow!("{}: connecting {a}.{} to {b}.{}: {err}", file.label, from.1, e.to.1)
        })?;
    }
    Ok(asm.finish())
}

/// A source whose `total` is not a whole number of the units of a block it
/// feeds (an encoder's frames) stops at the last whole one, and says so on
/// stderr before the run (the run would otherwise fail at its end, when the
/// last unit cannot be completed); a total below one unit is refused.
fn trim_total(file: &FlowgraphFile, blocks: &mut [Checked], i: usize, edges: &[Edge], ids: &[Option<Node>], asm: &Assembly) -> anyhow::Result<()> {
    let Some(&Value::Count(total)) = blocks[i].args.values.get("total") else { return Ok(()) };
    let mut readers = Vec::new();
    fed_by(i, edges, ids, &mut readers);
    let from = &blocks[i].entry.name;
    let mut sends = total;
    for r in readers {
        let Some(&unit) = asm.units.get(&blocks[r].entry.name) else { continue };
        let whole = sends / unit * unit;
        let (label, to) = (&file.label, &blocks[r].entry.name);
        if whole == 0 {
            bail!("{label}: block '{from}' sends {sends} bits, fewer than one of the {unit}-bit frames block '{to}' encodes: set its total to a multiple of {unit}");
        }
        if whole < sends {
            eprintln!(
                "{label}: block '{from}' sends {sends} bits, not a whole number of the {unit}-bit frames block '{to}' encodes: it stops after {whole} ({}), dropping the last {} bits",
                crate::codes::words::count_of(whole / unit, "frame"),
                sends - whole
            );
            sends = whole;
        }
    }
    blocks[i].args.values.insert("total", Value::Count(sends));
    Ok(())
}

/// The blocks that output `i`'s streams reach, through wires (built
/// already: they read `i`).
fn fed_by(i: usize, edges: &[Edge], ids: &[Option<Node>], out: &mut Vec<usize>) {
    for e in edges.iter().filter(|e| e.from.0 == i) {
        match ids[e.to.0] {
            Some(Node::Wire) => fed_by(e.to.0, edges, ids, out),
            _ => out.push(e.to.0),
        }
    }
}

/// Refuse a sink path that is one of the run's inputs (a block's file, a
/// code's file, the flowgraph file itself) or another sink's, before any
/// block opens anything.
fn refuse_overwriting(file: &FlowgraphFile, blocks: &[Checked], also_writes: &[Use]) -> anyhow::Result<()> {
    let (mut inputs, mut outputs) = (Vec::new(), also_writes.to_vec());
    if let Some(path) = &file.path {
        inputs.push(Use::new("the flowgraph file", path));
    }
    for code in &file.codes {
        let Some(fam) = family(&code.family) else { continue };
        for f in fam.fields.iter().filter(|f| f.ty == FieldType::InputFile) {
            if let Some(path) = code.fields.get(f.name).and_then(|raw| resolve(file, raw).ok()).and_then(|(v, _)| v.as_str()) {
                inputs.push(Use::new(format!("code '{}', its {}", code.name, f.name), path));
            }
        }
    }
    for b in blocks {
        for p in b.kind.params() {
            let Some(Value::Text(path)) = b.args.values.get(p.name) else { continue };
            let (access, paths) = match p.ty {
                ParamType::Path(access) => (access, vec![path.into()]),
                ParamType::Recording(access) => {
                    let (meta, data) = crate::dsp::sigmf_paths(path.as_ref());
                    (access, vec![meta, data])
                }
                _ => continue,
            };
            let by = format!("block '{}'", b.entry.name);
            for path in paths {
                match access {
                    Access::Reads => inputs.push(Use::new(&by, path)),
                    Access::Writes => outputs.push(Use::new(&by, path)),
                }
            }
        }
    }
    crate::files::refuse_overwriting(&inputs, &outputs).map_err(|e| anyhow::anyhow!("{}: {e}", file.label))
}

/// The block output that really feeds `output`: itself, or, when its block
/// is a [`Node::Wire`], what feeds the wire's one input, and so on back.
/// Every input is fed exactly once (`plan_edges`) and the connections form
/// no loop (`sinks_first`), so the walk ends at a block.
fn feeder(mut output: (usize, &'static str), edges: &[Edge], ids: &[Node]) -> (usize, &'static str) {
    while let Node::Wire = ids[output.0] {
        output = edges.iter().find(|e| e.to.0 == output.0).expect("a wire's input is connected").from;
    }
    output
}

/// Resolve one `[codes.NAME]` table by its family's settings: every field
/// known to the family and of its type, then the family's own rules.
fn resolve_code(file: &FlowgraphFile, entry: &CodeEntry) -> anyhow::Result<(String, Arc<dyn Code>)> {
    let label = &file.label;
    let Some(fam) = family(&entry.family) else {
        bail!("{label}: code '{}': unknown family '{}' (families: {})", entry.name, entry.family, list(families().map(|f| f.name)));
    };
    let place = format!("{label}: code '{}' ({})", entry.name, fam.name);
    let origin = |field: &str, var: Option<&str>| match var {
        Some(v) => format!(" (from ${v})"),
        None if entry.overridden.contains(field) => " (set by --set)".to_string(),
        None => String::new(),
    };
    let mut values = serde_json::Map::new();
    let mut vars: HashMap<&str, &str> = HashMap::new();
    for (name, raw) in &entry.fields {
        let Some(field) = fam.fields.iter().find(|f| f.name == name) else {
            bail!("{place}: unknown field '{name}'{} (its settings: {})", origin(name, None), list(fam.fields.iter().map(|f| f.name)));
        };
        let (raw, var) = resolve(file, raw).map_err(|e| anyhow::anyhow!("{place}: field '{name}': {e}"))?;
        if let Some(v) = var {
            vars.insert(field.name, v);
        }
        let value = check(param_type(field.ty), raw).map_err(|e| anyhow::anyhow!("{place}: field '{name}'{}: {e}", origin(name, var)))?;
        values.insert(name.clone(), value.to_json());
    }
    let code = (fam.resolve)(values).map_err(|e| anyhow::anyhow!("{place}: field '{}'{}: {}", e.field, origin(e.field, vars.get(e.field).copied()), e.problem))?;
    Ok((entry.name.clone(), code))
}

/// The parameter type that checks a settings field's values.
fn param_type(ty: FieldType) -> ParamType {
    match ty {
        FieldType::Count => ParamType::Count,
        FieldType::Real => ParamType::Real,
        FieldType::Text => ParamType::Text,
        FieldType::InputFile => ParamType::Path(Access::Reads),
        FieldType::Choice(options) => ParamType::Choice(options),
    }
}

fn check_block<'a>(file: &FlowgraphFile, entry: &'a BlockEntry) -> anyhow::Result<Checked<'a>> {
    let label = &file.label;
    let Some(kind) = kind(&entry.kind) else {
        if let Some(feature) = feature_of(&entry.kind) {
            bail!(
                "{label}: block '{}': block type '{}' needs the cargo feature {feature} (cargo build --release --features {feature})",
                entry.name,
                entry.kind
            );
        }
        bail!(
            "{label}: block '{}': unknown block type '{}' (known types: {})",
            entry.name,
            entry.kind,
            list(kinds().map(|k| k.name))
        );
    };
    let place = format!("{label}: block '{}' ({})", entry.name, kind.name);
    let origin = |field: &str| if entry.overridden.contains(field) { " (set by --set)" } else { "" };
    if let Some(field) = entry.fields.keys().find(|f| !kind.params().any(|p| p.name == f.as_str())) {
        let known = list(kind.params().map(|p| p.name));
        bail!("{place}: unknown field '{field}'{} (its parameters: {})", origin(field), or_none(&known));
    }
    let mut values = BTreeMap::new();
    for p in kind.params() {
        let value = match (entry.fields.get(p.name), p.need) {
            (Some(raw), _) => {
                let (raw, var) = resolve(file, raw).map_err(|e| anyhow::anyhow!("{place}: field '{}': {e}", p.name))?;
                let from = match var {
                    Some(v) => format!(" (from ${v})"),
                    None => origin(p.name).to_string(),
                };
                check(p.ty, raw).map_err(|e| anyhow::anyhow!("{place}: field '{}'{from}: {e}", p.name))?
            }
            (None, Need::Required) => bail!("{place}: field '{}' is missing ({}: {})", p.name, p.ty, p.doc),
            (None, Need::Optional) => continue,
            (None, Need::Default(Literal::Count(c))) => Value::Count(c),
            (None, Need::Default(Literal::Text(t))) => Value::Text(t.to_string()),
            (None, Need::Default(Literal::Flag(b))) => Value::Flag(b),
        };
        values.insert(p.name, value);
    }
    let args = Args { place, values };
    let ports = (kind.ports)(&args)?;
    Ok(Checked { entry, kind, args, ports })
}

/// The blocks in the order to add them: every block before the blocks that
/// feed it.
///
/// FutureSDR 0.0.40 initializes blocks in the order they were added, and a
/// block starts working as soon as it is initialized itself; a block that
/// receives "your input is finished" before its own initialization drops that
/// message and then waits for the end of its input forever. Adding readers
/// before writers queues every reader's initialization ahead of anything its
/// writers can send it.
fn sinks_first(file: &FlowgraphFile, blocks: &[Checked], edges: &[Edge]) -> anyhow::Result<Vec<usize>> {
    let mut readers_left: Vec<usize> = vec![0; blocks.len()];
    for e in edges {
        readers_left[e.from.0] += 1;
    }
    let mut order: Vec<usize> = (0..blocks.len()).filter(|&i| readers_left[i] == 0).collect();
    let mut next = 0;
    while next < order.len() {
        let reader = order[next];
        next += 1;
        for e in edges.iter().filter(|e| e.to.0 == reader) {
            readers_left[e.from.0] -= 1;
            if readers_left[e.from.0] == 0 {
                order.push(e.from.0);
            }
        }
    }
    if let Some(i) = (0..blocks.len()).find(|i| !order.contains(i)) {
        bail!("{}: block '{}': the connections form a loop through it", file.label, blocks[i].entry.name);
    }
    Ok(order)
}

/// The value itself, or the variable it names as `"$name"` (and that name).
fn resolve<'f>(file: &'f FlowgraphFile, raw: &'f toml::Value) -> Result<(&'f toml::Value, Option<&'f str>), String> {
    match raw.as_str().and_then(|s| s.strip_prefix('$')) {
        None => Ok((raw, None)),
        Some(var) => match file.vars.get(var) {
            Some(v) => Ok((v, Some(var))),
            None => Err(format!("unknown variable '${var}' (variables: {})", list(file.vars.keys()))),
        },
    }
}

fn plan_edges(file: &FlowgraphFile, blocks: &[Checked]) -> anyhow::Result<Vec<Edge>> {
    let label = &file.label;
    let mut edges = Vec::new();
    let mut fed: HashMap<(usize, &'static str), &str> = HashMap::new();
    let mut feeding: HashSet<(usize, &'static str)> = HashSet::new();
    for chain in &file.connections {
        let at = |problem: String| anyhow::anyhow!("{label}: connection \"{chain}\": {problem}");
        let parts: Vec<&str> = chain.split('>').map(str::trim).collect();
        if parts.len() < 2 || parts.iter().any(|p| p.is_empty()) {
            return Err(at("expected blocks joined by '>', such as \"a > b > c.port\"".into()));
        }
        let last = parts.len() - 1;
        let mut ends = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            let (name, port) = match part.split_once('.') {
                Some((n, p)) if i == 0 || i == last => (n.trim(), Some(p.trim())),
                Some(_) => return Err(at(format!("'{part}': only the first and last block of a chain may name a port"))),
                None => (*part, None),
            };
            let index = blocks.iter().position(|b| b.entry.name == name).ok_or_else(|| {
                at(format!("no block named '{name}' (blocks: {})", list(blocks.iter().map(|b| &b.entry.name))))
            })?;
            ends.push((index, port));
        }
        for (i, pair) in ends.windows(2).enumerate() {
            let ((src, src_port), (dst, dst_port)) = (pair[0], pair[1]);
            let from = pick_port(&blocks[src], "output", if i == 0 { src_port } else { None }).map_err(&at)?;
            let to = pick_port(&blocks[dst], "input", if i + 1 == last { dst_port } else { None }).map_err(&at)?;
            let (a, b) = (&blocks[src].entry.name, &blocks[dst].entry.name);
            if from.1 != to.1 {
                return Err(at(format!("{a}.{} carries {} but {b}.{} takes {}", from.0, from.1, to.0, to.1)));
            }
            if let Some(earlier) = fed.insert((dst, to.0), chain) {
                return Err(at(format!("input {b}.{} is already connected by \"{earlier}\"", to.0)));
            }
            feeding.insert((src, from.0));
            edges.push(Edge { from: (src, from.0), to: (dst, to.0) });
        }
    }
    for (i, b) in blocks.iter().enumerate() {
        let place = format!("{label}: block '{}' ({})", b.entry.name, b.kind.name);
        if let Some((port, _)) = b.ports.inputs.iter().find(|(p, _)| !fed.contains_key(&(i, *p))) {
            bail!("{place}: input '{port}' is not connected");
        }
        if let Some((port, _)) = b.ports.outputs.iter().find(|(p, _)| !feeding.contains(&(i, *p))) {
            bail!("{place}: output '{port}' is not connected (every output needs a reader)");
        }
    }
    Ok(edges)
}

/// The `side` ("input" or "output") port of `block` named `port`, or its only
/// one when `port` is `None`.
fn pick_port(block: &Checked, side: &str, port: Option<&str>) -> Result<(&'static str, StreamType), String> {
    let ports = if side == "input" { &block.ports.inputs } else { &block.ports.outputs };
    let (name, kind) = (&block.entry.name, block.kind.name);
    let names = list(ports.iter().map(|(p, _)| *p));
    match port {
        Some(p) => ports
            .iter()
            .find(|(n, _)| *n == p)
            .copied()
            .ok_or_else(|| format!("block '{name}' ({kind}) has no {side} '{p}' (its {side}s: {})", or_none(&names))),
        None => match ports[..] {
            [only] => Ok(only),
            [] => Err(format!("block '{name}' ({kind}) has no {side}s")),
            _ => Err(format!("block '{name}' ({kind}) has several {side}s ({names}): name one, as {name}.PORT")),
        },
    }
}

fn or_none(names: &str) -> &str {
    if names.is_empty() { "none" } else { names }
}
