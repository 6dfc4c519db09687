//! What a Vivado run of the SUME project reports: the worst slack (from `reports/summary.txt`,
//! which `emu_sume.tcl` writes) and the utilisation (from `reports/utilization.rpt`).

/// The figures of a finished run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Results {
    /// Worst negative (setup) slack in ns; negative means timing is not met.
    pub wns: Option<f64>,
    /// Worst hold slack in ns.
    pub whs: Option<f64>,
    /// Utilisation rows: (site type, used, available).
    pub utilisation: Vec<(String, u64, u64)>,
}

/// The rows of `report_utilization` that matter for an NF.
const ROWS: &[&str] = &["Slice LUTs", "LUT as Memory", "Slice Registers", "Block RAM Tile", "DSPs"];

/// Reads `summary.txt` (`wns X`, `whs X`).
pub fn summary(text: &str) -> (Option<f64>, Option<f64>) {
    let find = |key: &str| {
        text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some(key)).then(|| w.next().and_then(|v| v.parse().ok())).flatten()
        })
    };
    (find("wns"), find("whs"))
}

/// Reads the first table rows of `report_utilization` named in [`ROWS`]:
/// `| Slice LUTs | 12345 | 0 | 433200 | 2.85 |`.
pub fn utilisation(text: &str) -> Vec<(String, u64, u64)> {
    let mut rows: Vec<(String, u64, u64)> = vec![];
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // ["", name, used, fixed, (prohibited,) available, util%, ""]
        if cells.len() < 6 {
            continue;
        }
        let name = cells[1].trim_end_matches('*').trim();
        if !ROWS.contains(&name) || rows.iter().any(|(n, ..)| n == name) {
            continue;
        }
        let numbers: Vec<u64> = cells[2..].iter().filter_map(|c| c.parse::<f64>().ok()).map(|v| v as u64).collect();
        // used … available util%: available is the last whole number before the percentage.
        if numbers.len() >= 3 {
            rows.push((name.to_string(), numbers[0], numbers[numbers.len() - 2]));
        }
    }
    rows
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn reads_the_reports() {
        assert_eq!(summary("wns -0.125\nwhs 0.031\n"), (Some(-0.125), Some(0.031)));
        assert_eq!(summary("nothing"), (None, None));
        let rpt = "\
+----------------------------+-------+-------+-----------+-------+
|          Site Type         |  Used | Fixed | Available | Util% |
+----------------------------+-------+-------+-----------+-------+
| Slice LUTs*                | 41234 |     0 |    433200 |  9.52 |
|   LUT as Logic             | 39000 |     0 |    433200 |  9.00 |
|   LUT as Memory            |  2234 |     0 |    174200 |  1.28 |
| Slice Registers            | 50123 |     0 |    866400 |  5.79 |
+----------------------------+-------+-------+-----------+-------+
| Block RAM Tile    |  120.5 |     0 |      1470 |  8.20 |
";
        let u = utilisation(rpt);
        assert_eq!(u[0], ("Slice LUTs".to_string(), 41234, 433200));
        assert_eq!(u[1], ("LUT as Memory".to_string(), 2234, 174200));
        assert_eq!(u[2], ("Slice Registers".to_string(), 50123, 866400));
        assert_eq!(u[3], ("Block RAM Tile".to_string(), 120, 1470));
    }
}
