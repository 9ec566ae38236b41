//! A family's settings on the command line: one option per field of its
//! settings (`--early-stop` for `early_stop`), generated from the family's
//! field list so that the command line and flowgraph files take the same
//! settings under the same names, and filled into the same resolver.

use super::count::parse_count;
use crate::codes::settings::{Field, FieldType, SettingError};
use crate::flowgraph::family::{Code, Family};
use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgMatches, Command};
use serde_json::{Map, Value};
use std::sync::Arc;

/// `command` with one option per field of `fields`.
pub fn with_fields(command: Command, fields: &'static [Field]) -> Command {
    command.args(fields.iter().map(|f| {
        let arg = Arg::new(f.name).long(f.name.replace('_', "-")).help(f.doc).value_name(f.name.to_uppercase());
        match f.ty {
            FieldType::Count => arg.value_parser(parse_count),
            FieldType::Real => arg.value_parser(parse_real).allow_hyphen_values(true),
            FieldType::Text | FieldType::InputFile => arg.allow_hyphen_values(true),
            FieldType::Choice(options) => arg.value_parser(PossibleValuesParser::new(options.iter().copied())),
        }
    }))
}

fn parse_real(text: &str) -> anyhow::Result<f64> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => anyhow::bail!("'{text}' is not a finite number"),
    }
}

/// The fields of `fields` the command line gave, as values.
pub fn given(m: &ArgMatches, fields: &'static [Field]) -> Map<String, Value> {
    let mut values = Map::new();
    for f in fields {
        let value = match f.ty {
            FieldType::Count => m.get_one::<u64>(f.name).map(|&v| Value::from(v)),
            FieldType::Real => m.get_one::<f64>(f.name).map(|&v| Value::from(v)),
            FieldType::Text | FieldType::InputFile | FieldType::Choice(_) => m.get_one::<String>(f.name).map(|v| Value::from(v.as_str())),
        };
        if let Some(v) = value {
            values.insert(f.name.to_string(), v);
        }
    }
    values
}

/// The option that sets `field`.
pub fn flag(field: &str) -> String {
    format!("--{}", field.replace('_', "-"))
}

/// `family`'s settings from `values`, resolved; an error names the option.
pub fn resolve(family: &Family, values: Map<String, Value>) -> anyhow::Result<Arc<dyn Code>> {
    (family.resolve)(values).map_err(|SettingError { field, problem }| anyhow::anyhow!("{}: {problem}", flag(field)))
}
