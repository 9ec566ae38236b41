//! The points of a curve on its axis (Eb/N0 in dB, a probability): a list
//! `1,2,3.5` or a range `START:STEP:STOP`, negative values as written.

/// Values on a curve's axis, in the order given.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid(pub Vec<f64>);

/// Most points one curve may have.
const MAX_POINTS: usize = 1000;

impl Grid {
    /// Parse `s`, calling its values `label` in messages (`Eb/N0`).
    pub fn parse(s: &str, label: &str) -> anyhow::Result<Self> {
        let number = |t: &str| -> anyhow::Result<f64> {
            match t.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(x),
                _ => anyhow::bail!("{label} '{}' is not a number", t.trim()),
            }
        };
        let points: Vec<f64> = match s.split(':').collect::<Vec<_>>()[..] {
            [start, step, stop] => {
                let (start, step, stop) = (number(start)?, number(step)?, number(stop)?);
                anyhow::ensure!(step > 0.0, "{label} range: STEP must be positive");
                anyhow::ensure!(stop >= start, "{label} range: STOP is below START");
                // Tolerate rounding so that 0:0.1:1 ends at 1; counted in f64, since a
                // tiny step gives more points than any integer holds.
                let n = ((stop - start) / step + 1e-9).floor() + 1.0;
                anyhow::ensure!(n <= MAX_POINTS as f64, "{label} range has {n:.3e} points; at most {MAX_POINTS}");
                let n = n as usize;
                // Rounded to 1e-9 dB so that 0:0.1:1 reads 0.3, not 0.30000000000000004.
                (0..n).map(|i| ((start + i as f64 * step) * 1e9).round() / 1e9).collect()
            }
            [_] => {
                // The value is echoed once already (by the option's error): count, do not repeat it.
                let n = s.split(',').count();
                anyhow::ensure!(n <= MAX_POINTS, "{label} list has {n} points; at most {MAX_POINTS}");
                s.split(',').map(number).collect::<anyhow::Result<_>>()?
            }
            _ => anyhow::bail!("{label}: neither a list such as 1,2,3 nor a range START:STEP:STOP"),
        };
        Ok(Self(points))
    }
}

impl std::str::FromStr for Grid {
    type Err = anyhow::Error;

    /// [`Grid::parse`] of values called "value".
    ///
    /// # Example
    /// ```
    /// use gpufec::cli::Grid;
    /// let g: Grid = "0:0.5:2".parse().unwrap();
    /// assert_eq!(g.0, vec![0.0, 0.5, 1.0, 1.5, 2.0]);
    /// let g: Grid = "4, 2,3".parse().unwrap();
    /// assert_eq!(g.0, vec![4.0, 2.0, 3.0]);
    /// let g: Grid = "-4:2:0".parse().unwrap();
    /// assert_eq!(g.0, vec![-4.0, -2.0, 0.0]);
    /// assert!("1:0:3".parse::<Grid>().is_err());
    /// assert!(Grid::parse("1:x:3", "Eb/N0").unwrap_err().to_string().contains("Eb/N0 'x'"));
    /// assert!("0:1e-300:1".parse::<Grid>().unwrap_err().to_string().contains("at most 1000"));
    /// let long = vec!["1"; 2000].join(",");
    /// assert_eq!(long.parse::<Grid>().unwrap_err().to_string(), "value list has 2000 points; at most 1000");
    /// ```
    fn from_str(s: &str) -> anyhow::Result<Self> {
        Self::parse(s, "value")
    }
}
