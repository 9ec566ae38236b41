//! Typed block parameters: what a block kind declares, how a TOML value is
//! checked against it, and typed access for the code that builds the block.

use std::collections::BTreeMap;
use std::fmt;

/// The type of a block parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamType {
    /// A whole number ≥ 0; `1e7` is accepted when it is whole.
    Count,
    /// A real number; integers are accepted.
    Real,
    /// A string.
    Text,
    /// The path of a file the block reads or writes (checked as text; the
    /// builder refuses an output that is one of the run's inputs).
    Path(Access),
    /// A SigMF recording: its base path or either of its files (the builder
    /// checks both files, `.sigmf-meta` and `.sigmf-data`, as [`Self::Path`]'s).
    Recording(Access),
    /// A code rate in (0, 1]: a number, or a fraction written `"3/4"`.
    Rate,
    /// One of the listed strings.
    Choice(&'static [&'static str]),
    /// `true` or `false`.
    Flag,
}

/// Whether a block reads or writes the file a [`ParamType::Path`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// An input of the run.
    Reads,
    /// An output of the run.
    Writes,
}

impl fmt::Display for ParamType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamType::Count => write!(f, "a whole number ≥ 0"),
            ParamType::Real => write!(f, "a number"),
            ParamType::Text => write!(f, "a string"),
            ParamType::Path(_) => write!(f, "a path"),
            ParamType::Recording(_) => write!(f, "a path (a SigMF recording)"),
            ParamType::Rate => write!(f, "a rate in (0, 1] (a number or a fraction such as \"3/4\")"),
            ParamType::Choice(options) => write!(f, "one of {}", options.join(", ")),
            ParamType::Flag => write!(f, "true or false"),
        }
    }
}

/// Whether a parameter must be given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Need {
    /// The file must give it.
    Required,
    /// It may be absent; the block then does without.
    Optional,
    /// Absent means this value.
    Default(Literal),
}

/// A default value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Literal {
    /// A count.
    Count(u64),
    /// A string (also a choice).
    Text(&'static str),
    /// A flag.
    Flag(bool),
}

/// One parameter a block kind declares.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// Field name in the file.
    pub name: &'static str,
    /// Its type.
    pub ty: ParamType,
    /// Whether it must be given.
    pub need: Need,
    /// One line saying what it sets.
    pub doc: &'static str,
}

impl Param {
    /// A parameter the file must give.
    pub const fn required(name: &'static str, ty: ParamType, doc: &'static str) -> Self {
        Self { name, ty, need: Need::Required, doc }
    }

    /// A parameter that may be absent.
    pub const fn optional(name: &'static str, ty: ParamType, doc: &'static str) -> Self {
        Self { name, ty, need: Need::Optional, doc }
    }

    /// A parameter that takes `default` when absent.
    pub const fn with_default(name: &'static str, ty: ParamType, default: Literal, doc: &'static str) -> Self {
        Self { name, ty, need: Need::Default(default), doc }
    }
}

/// A checked parameter value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Count(u64),
    Real(f64),
    Text(String),
    Flag(bool),
}

impl Value {
    /// The value as JSON, as a family's settings take it.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Count(c) => (*c).into(),
            Value::Real(x) => (*x).into(),
            Value::Text(s) => s.clone().into(),
            Value::Flag(b) => (*b).into(),
        }
    }
}

/// Check `value` against `ty`; the error says what was expected and found.
pub(crate) fn check(ty: ParamType, value: &toml::Value) -> Result<Value, String> {
    let found = || format!("expected {ty}, found {}", describe(value));
    match (ty, value) {
        (ParamType::Count, toml::Value::Integer(i)) => u64::try_from(*i).map(Value::Count).map_err(|_| found()),
        (ParamType::Count, toml::Value::Float(x)) if x.fract() == 0.0 && (0.0..9.007e15).contains(x) => {
            Ok(Value::Count(*x as u64))
        }
        (ParamType::Count, toml::Value::Float(x)) if *x >= 9.007e15 && x.is_finite() => {
            Err(format!("{}: a count written as a number with a fraction or exponent is exact only below 2^53 (9.007e15); write a larger one in digits", found()))
        }
        (ParamType::Real, toml::Value::Integer(i)) => Ok(Value::Real(*i as f64)),
        (ParamType::Real, toml::Value::Float(x)) if x.is_finite() => Ok(Value::Real(*x)),
        (ParamType::Real, toml::Value::Float(x)) => Err(format!("{x} is not finite: give a finite number")),
        (ParamType::Text | ParamType::Path(_) | ParamType::Recording(_), toml::Value::String(s)) => Ok(Value::Text(s.clone())),
        (ParamType::Flag, toml::Value::Boolean(b)) => Ok(Value::Flag(*b)),
        (ParamType::Choice(options), toml::Value::String(s)) if options.contains(&s.as_str()) => {
            Ok(Value::Text(s.clone()))
        }
        (ParamType::Rate, v) => {
            let r = match v {
                toml::Value::Integer(i) => Some(*i as f64),
                toml::Value::Float(x) => Some(*x),
                toml::Value::String(s) => parse_fraction(s),
                _ => None,
            };
            match r {
                Some(r) if r > 0.0 && r <= 1.0 => Ok(Value::Real(r)),
                _ => Err(found()),
            }
        }
        _ => Err(found()),
    }
}

/// `"a/b"` as a / b, for whole a and b.
fn parse_fraction(s: &str) -> Option<f64> {
    let (a, b) = s.split_once('/')?;
    let (a, b) = (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?);
    (b > 0).then(|| a as f64 / b as f64)
}

fn describe(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => format!("the string \"{s}\""),
        toml::Value::Integer(i) => format!("the integer {i}"),
        toml::Value::Float(x) => format!("the number {x}"),
        toml::Value::Boolean(b) => format!("the boolean {b}"),
        toml::Value::Datetime(d) => format!("the date {d}"),
        toml::Value::Array(_) => "an array".to_string(),
        toml::Value::Table(_) => "a table".to_string(),
    }
}

/// The checked parameters of one block, with the place they came from, so
/// that every later complaint names the file, the block and the field.
#[derive(Debug, Clone)]
pub struct Args {
    /// `FILE: block 'NAME' (KIND)`.
    pub(crate) place: String,
    pub(crate) values: BTreeMap<&'static str, Value>,
}

impl Args {
    /// An error about `field` of this block.
    pub fn invalid(&self, field: &str, problem: impl fmt::Display) -> anyhow::Error {
        anyhow::anyhow!("{}: field '{field}': {problem}", self.place)
    }

    /// `result`, with its error about the block as a whole (no one field is at fault).
    pub fn whole<T, E: fmt::Display>(&self, result: Result<T, E>) -> anyhow::Result<T> {
        result.map_err(|e| anyhow::anyhow!("{}: {e}", self.place))
    }

    /// An error saying that `field` is missing, with a `hint`.
    pub fn missing(&self, field: &str, hint: &str) -> anyhow::Error {
        anyhow::anyhow!("{}: field '{field}' is missing ({hint})", self.place)
    }

    /// `result`, with its error named after `field`.
    pub fn about<T, E: fmt::Display>(&self, field: &str, result: Result<T, E>) -> anyhow::Result<T> {
        result.map_err(|e| self.invalid(field, e))
    }

    /// Whether `field` was given (or has a default).
    pub fn has(&self, field: &str) -> bool {
        self.values.contains_key(field)
    }

    fn get(&self, field: &str) -> anyhow::Result<&Value> {
        self.values.get(field).ok_or_else(|| self.invalid(field, "is required here"))
    }

    /// A count parameter.
    pub fn count(&self, field: &str) -> anyhow::Result<u64> {
        match self.get(field)? {
            Value::Count(c) => Ok(*c),
            other => Err(self.invalid(field, format!("holds {other:?}, not a count"))),
        }
    }

    /// A count parameter that fits a `usize`.
    pub fn size(&self, field: &str) -> anyhow::Result<usize> {
        let c = self.count(field)?;
        self.about(field, usize::try_from(c))
    }

    /// A count parameter that must lie in `range` (the limit a size is
    /// checked against before anything is allocated).
    pub fn size_in(&self, field: &str, range: std::ops::RangeInclusive<usize>) -> anyhow::Result<usize> {
        let c = self.count(field)?;
        match usize::try_from(c) {
            Ok(v) if range.contains(&v) => Ok(v),
            _ => Err(self.invalid(field, format!("{c} is outside {}..={}", range.start(), range.end()))),
        }
    }

    /// A flag parameter.
    pub fn flag(&self, field: &str) -> anyhow::Result<bool> {
        match self.get(field)? {
            Value::Flag(b) => Ok(*b),
            other => Err(self.invalid(field, format!("holds {other:?}, not true or false"))),
        }
    }

    /// An optional real parameter.
    pub fn real_opt(&self, field: &str) -> anyhow::Result<Option<f64>> {
        if self.has(field) { self.real(field).map(Some) } else { Ok(None) }
    }

    /// An optional count parameter.
    pub fn count_opt(&self, field: &str) -> anyhow::Result<Option<u64>> {
        if self.has(field) { self.count(field).map(Some) } else { Ok(None) }
    }

    /// A real (or rate) parameter.
    pub fn real(&self, field: &str) -> anyhow::Result<f64> {
        match self.get(field)? {
            Value::Real(x) => Ok(*x),
            other => Err(self.invalid(field, format!("holds {other:?}, not a number"))),
        }
    }

    /// A text (or choice) parameter.
    pub fn text(&self, field: &str) -> anyhow::Result<&str> {
        match self.get(field)? {
            Value::Text(s) => Ok(s),
            other => Err(self.invalid(field, format!("holds {other:?}, not a string"))),
        }
    }

    /// An optional text parameter.
    pub fn text_opt(&self, field: &str) -> anyhow::Result<Option<&str>> {
        if self.has(field) { self.text(field).map(Some) } else { Ok(None) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_against_their_type() {
        use toml::Value as V;
        assert_eq!(check(ParamType::Count, &V::Integer(5)), Ok(Value::Count(5)));
        assert_eq!(check(ParamType::Count, &V::Float(1e7)), Ok(Value::Count(10_000_000)));
        let e = check(ParamType::Count, &V::Float(1e18)).unwrap_err();
        assert!(e.contains("found the number 1000000000000000000") && e.contains("in digits"), "{e}");
        assert!(check(ParamType::Count, &V::Float(1.5)).is_err());
        assert!(check(ParamType::Count, &V::Integer(-1)).is_err());
        assert_eq!(check(ParamType::Real, &V::Integer(4)), Ok(Value::Real(4.0)));
        assert!(check(ParamType::Real, &V::Float(f64::NAN)).is_err());
        assert_eq!(check(ParamType::Rate, &V::String("3/4".into())), Ok(Value::Real(0.75)));
        assert_eq!(check(ParamType::Rate, &V::Float(0.5)), Ok(Value::Real(0.5)));
        assert!(check(ParamType::Rate, &V::String("4/3".into())).is_err());
        assert!(check(ParamType::Rate, &V::String("1/0".into())).is_err());
        let choice = ParamType::Choice(&["i8", "f32"]);
        assert!(check(choice, &V::String("i8".into())).is_ok());
        let e = check(choice, &V::String("i16".into())).unwrap_err();
        assert_eq!(e, "expected one of i8, f32, found the string \"i16\"");
        let e = check(ParamType::Text, &V::Integer(3)).unwrap_err();
        assert_eq!(e, "expected a string, found the integer 3");
        assert_eq!(check(ParamType::Flag, &V::Boolean(true)), Ok(Value::Flag(true)));
        let e = check(ParamType::Flag, &V::String("yes".into())).unwrap_err();
        assert_eq!(e, "expected true or false, found the string \"yes\"");
        assert!(check(ParamType::Flag, &V::Integer(0)).is_err());
    }
}
