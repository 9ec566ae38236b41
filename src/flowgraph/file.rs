//! A flowgraph file as read: its codes and blocks with their raw fields, its
//! variables and its connections, plus the `--set` overrides applied on top.

use anyhow::{Context, bail};
use std::collections::BTreeSet;
use std::path::Path;

/// One `[blocks.NAME]` table.
#[derive(Debug, Clone)]
pub struct BlockEntry {
    /// The block's name (the table key).
    pub name: String,
    /// Its `type`.
    pub kind: String,
    /// Its other fields, as written (variables not yet substituted).
    pub fields: toml::Table,
    /// Fields whose value came from `--set`.
    pub(crate) overridden: BTreeSet<String>,
}

/// One `[codes.NAME]` table: a code of a family, named once for every block
/// of the chain that encodes, punctures, cuts or decodes it.
#[derive(Debug, Clone)]
pub struct CodeEntry {
    /// The code's name (the table key).
    pub name: String,
    /// Its `family`.
    pub family: String,
    /// Its settings, as written (variables not yet substituted).
    pub fields: toml::Table,
    /// Fields whose value came from `--set`.
    pub(crate) overridden: BTreeSet<String>,
}

/// A parsed flowgraph file.
#[derive(Debug, Clone)]
pub struct FlowgraphFile {
    /// How messages name the file (its path as given).
    pub label: String,
    /// The file it was read from (`None` when parsed from text): an input
    /// of its run, which no sink may write.
    pub path: Option<std::path::PathBuf>,
    /// The optional one-line `description`.
    pub description: Option<String>,
    /// The `[vars]` table.
    pub vars: toml::Table,
    /// The codes, in name order.
    pub codes: Vec<CodeEntry>,
    /// The blocks, in name order.
    pub blocks: Vec<BlockEntry>,
    /// The `connections` chains, in file order.
    pub connections: Vec<String>,
}

/// One `--set TARGET.FIELD=VALUE`: a block parameter, a code's setting, or
/// a variable when TARGET is `vars`.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// Block or code name, or `vars`.
    pub target: String,
    /// Parameter or variable name.
    pub field: String,
    /// The value: read as a TOML value when it is one (`3`, `2.5`, `1e7`,
    /// `"text"`), otherwise taken as a string (`3/4`, `171,133`, `cpu`).
    pub value: toml::Value,
}

impl std::str::FromStr for Override {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> anyhow::Result<Self> {
        let usage = || format!("--set '{s}' is not of the form block.param=value (or vars.name=value)");
        let (key, text) = s.split_once('=').ok_or_else(|| anyhow::anyhow!(usage()))?;
        let (target, field) = key.trim().split_once('.').ok_or_else(|| anyhow::anyhow!(usage()))?;
        if target.is_empty() || field.is_empty() {
            bail!(usage());
        }
        let text = text.trim();
        let value = toml::from_str::<toml::Table>(&format!("v = {text}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(text.to_string()));
        Ok(Self { target: target.to_string(), field: field.to_string(), value })
    }
}

/// Largest flowgraph file read, bytes: a flowgraph is a page of TOML, and a
/// Most blocks in one flowgraph: far more than a receive chain needs, and
/// few enough that their stream buffers (up to 64 MiB each, mapped twice)
/// fit a 4 GiB address space limit, where 500 blocks made FutureSDR's buffer
/// allocation panic.
pub const MAX_BLOCKS: usize = 64;

/// file that never ends (`/dev/zero`) must not fill the memory.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

impl FlowgraphFile {
    /// Read (at most [`MAX_FILE_BYTES`]) and parse the file at `path`.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        use std::io::Read;
        let label = path.display().to_string();
        let file = std::fs::File::open(path).with_context(|| format!("cannot read flowgraph file {label}"))?;
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).with_context(|| format!("cannot read flowgraph file {label}"))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            bail!("{label}: longer than {MAX_FILE_BYTES} bytes; a flowgraph file is a page of TOML");
        }
        let text = String::from_utf8(bytes).map_err(|e| anyhow::anyhow!("{label}: not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))?;
        Ok(Self { path: Some(path.to_path_buf()), ..Self::parse(&label, &text)? })
    }

    /// Parse `text`, naming it `label` in messages.
    pub fn parse(label: &str, text: &str) -> anyhow::Result<Self> {
        let mut top: toml::Table = toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| line_col(text, s.start)).unwrap_or_default();
            let message: Vec<&str> = e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            anyhow::anyhow!("{label}{at}: malformed TOML: {}", message.join("; "))
        })?;
        let description = match top.remove("description") {
            None => None,
            Some(toml::Value::String(s)) => Some(s),
            Some(_) => bail!("{label}: 'description' must be a string"),
        };
        let vars = match top.remove("vars") {
            None => toml::Table::new(),
            Some(toml::Value::Table(t)) => t,
            Some(_) => bail!("{label}: 'vars' must be a table ([vars])"),
        };
        let connections = match top.remove("connections") {
            None => Vec::new(),
            Some(toml::Value::Array(a)) => a
                .into_iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s),
                    other => bail!("{label}: 'connections' must hold strings such as \"a > b\", found {other}"),
                })
                .collect::<anyhow::Result<_>>()?,
            Some(_) => bail!("{label}: 'connections' must be an array of strings such as \"a > b > c\""),
        };
        let codes = match top.remove("codes") {
            None => Vec::new(),
            Some(toml::Value::Table(t)) => t.into_iter().map(|(name, v)| code_entry(label, name, v)).collect::<anyhow::Result<_>>()?,
            Some(_) => bail!("{label}: 'codes' must hold one table per code ([codes.NAME])"),
        };
        let blocks: Vec<BlockEntry> = match top.remove("blocks") {
            None => bail!("{label}: no [blocks.NAME] tables: a flowgraph needs blocks"),
            Some(toml::Value::Table(t)) => t
                .into_iter()
                .map(|(name, v)| block_entry(label, name, v))
                .collect::<anyhow::Result<_>>()?,
            Some(_) => bail!("{label}: 'blocks' must hold one table per block ([blocks.NAME])"),
        };
        if blocks.len() > MAX_BLOCKS {
            bail!("{label}: {} blocks; a flowgraph has at most {MAX_BLOCKS} (each holds stream buffers of up to 64 MiB, mapped twice)", blocks.len());
        }
        if let Some(key) = top.keys().next() {
            bail!("{label}: unknown top-level key '{key}' (expected description, vars, codes, blocks, connections)");
        }
        if let Some(c) = codes.iter().find(|c: &&CodeEntry| blocks.iter().any(|b: &BlockEntry| b.name == c.name)) {
            bail!("{label}: '{}' names both a code and a block: give each its own name", c.name);
        }
        Ok(Self { label: label.to_string(), path: None, description, vars, codes, blocks, connections })
    }

    /// Apply one `--set`: the block, code (or variable) must exist; whether
    /// the block kind or the code's family has the field is checked when the
    /// flowgraph is built.
    pub fn apply(&mut self, o: &Override) -> anyhow::Result<()> {
        let (target, field) = (&o.target, &o.field);
        if target == "vars" {
            anyhow::ensure!(
                self.vars.contains_key(field),
                "--set vars.{field}: {} has no variable '{field}' (its variables: {})",
                self.label,
                list(self.vars.keys())
            );
            self.vars.insert(field.clone(), o.value.clone());
            return Ok(());
        }
        if let Some(code) = self.codes.iter_mut().find(|c| &c.name == target) {
            anyhow::ensure!(field != "family", "--set {target}.family: a code's family cannot be overridden");
            code.fields.insert(field.clone(), o.value.clone());
            code.overridden.insert(field.clone());
            return Ok(());
        }
        let names = list(self.blocks.iter().map(|b| &b.name));
        let codes = if self.codes.is_empty() { String::new() } else { format!("; its codes: {}", list(self.codes.iter().map(|c| &c.name))) };
        let block = self.blocks.iter_mut().find(|b| &b.name == target).ok_or_else(|| {
            anyhow::anyhow!("--set {target}.{field}: {} has no block or code '{target}' (its blocks: {names}{codes})", self.label)
        })?;
        anyhow::ensure!(field != "type", "--set {target}.type: a block's type cannot be overridden");
        block.fields.insert(field.clone(), o.value.clone());
        block.overridden.insert(field.clone());
        Ok(())
    }
}

fn block_entry(label: &str, name: String, value: toml::Value) -> anyhow::Result<BlockEntry> {
    let toml::Value::Table(mut fields) = value else {
        bail!("{label}: block '{name}' must be a table ([blocks.{name}])");
    };
    let kind = match fields.remove("type") {
        Some(toml::Value::String(k)) => k,
        Some(_) => bail!("{label}: block '{name}': field 'type' must be a string naming the block kind"),
        None => bail!("{label}: block '{name}': field 'type' is missing (it names the block kind)"),
    };
    Ok(BlockEntry { name, kind, fields, overridden: BTreeSet::new() })
}

fn code_entry(label: &str, name: String, value: toml::Value) -> anyhow::Result<CodeEntry> {
    let toml::Value::Table(mut fields) = value else {
        bail!("{label}: code '{name}' must be a table ([codes.{name}])");
    };
    let family = match fields.remove("family") {
        Some(toml::Value::String(f)) => f,
        Some(_) => bail!("{label}: code '{name}': field 'family' must be a string naming the code family"),
        None => bail!("{label}: code '{name}': field 'family' is missing (it names the code family, e.g. \"conv\")"),
    };
    Ok(CodeEntry { name, family, fields, overridden: BTreeSet::new() })
}

/// `:LINE:COL` of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.chars().rev().take_while(|&c| c != '\n').count() + 1;
    format!(":{line}:{col}")
}

/// Comma-separated names.
pub(crate) fn list<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    names.into_iter().map(|s| s.as_ref().to_string()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_read_toml_values_or_plain_strings() {
        let o: Override = "awgn.ebn0_db=3.5".parse().unwrap();
        assert_eq!((o.target.as_str(), o.field.as_str(), o.value), ("awgn", "ebn0_db", toml::Value::Float(3.5)));
        let o: Override = "source.total=1e7".parse().unwrap();
        assert_eq!(o.value, toml::Value::Float(1e7));
        let o: Override = "puncture.rate=3/4".parse().unwrap();
        assert_eq!(o.value, toml::Value::String("3/4".into()));
        let o: Override = "enc.polys = 171,133".parse().unwrap();
        assert_eq!(o.value, toml::Value::String("171,133".into()));
        assert!("nodot=1".parse::<Override>().is_err());
        assert!("a.b".parse::<Override>().is_err());
        assert!(".b=1".parse::<Override>().is_err());
    }

    #[test]
    fn malformed_toml_names_file_line_and_column() {
        let e = FlowgraphFile::parse("x.toml", "[blocks.a]\ntype = \"RandomBits\"\nseed = \n").unwrap_err().to_string();
        assert!(e.starts_with("x.toml:3:"), "{e}");
        assert!(e.contains("malformed TOML"), "{e}");
    }
}
