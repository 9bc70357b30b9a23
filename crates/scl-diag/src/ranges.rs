//! A set of byte ranges that answers "does this position or span touch one
//! of them?" in O(log n), for filtering cascades of diagnostics without
//! comparing every pair.

/// Byte ranges `(start, end)`, both inclusive for [`Ranges::contains`] and
/// end-exclusive for [`Ranges::overlaps`] (as their callers need).
#[derive(Clone, Debug, Default)]
pub struct Ranges {
    /// Starts, sorted.
    starts: Vec<u32>,
    /// `max_end[i]`: the largest end among the ranges `0..=i` (by start).
    max_end: Vec<u32>,
}

impl Ranges {
    /// Indexes `ranges` (O(n log n)).
    pub fn new(mut ranges: Vec<(u32, u32)>) -> Ranges {
        ranges.sort_unstable();
        let mut max = 0;
        let max_end = ranges
            .iter()
            .map(|&(_, e)| {
                max = max.max(e);
                max
            })
            .collect();
        Ranges {
            starts: ranges.into_iter().map(|(s, _)| s).collect(),
            max_end,
        }
    }

    /// True when some range has `start <= pos <= end`.
    pub fn contains(&self, pos: u32) -> bool {
        let i = self.starts.partition_point(|&s| s <= pos);
        i > 0 && self.max_end[i - 1] >= pos
    }

    /// True when some range has `start < end_` and `start_ < end`, that is,
    /// overlaps `[start_, end_)`.
    pub fn overlaps(&self, start_: u32, end_: u32) -> bool {
        let i = self.starts.partition_point(|&s| s < end_);
        i > 0 && self.max_end[i - 1] > start_
    }
}

#[cfg(test)]
mod tests {
    use super::Ranges;

    #[test]
    fn matches_the_pairwise_definition() {
        let rs = vec![(10, 20), (15, 16), (30, 31), (40, 60), (45, 50)];
        let r = Ranges::new(rs.clone());
        for p in 0..70 {
            assert_eq!(
                r.contains(p),
                rs.iter().any(|&(s, e)| s <= p && p <= e),
                "contains {p}"
            );
            for q in p + 1..72 {
                assert_eq!(
                    r.overlaps(p, q),
                    rs.iter().any(|&(s, e)| s < q && p < e),
                    "overlaps {p}..{q}"
                );
            }
        }
        assert!(!Ranges::default().contains(0));
    }
}
