//! Latency histograms: thin helpers around `hdrhistogram` for values in nanoseconds with three
//! significant digits, jHiccup-style coordinated-omission correction, and the percentile
//! summary (count, min, p50, p90, p99, p99.9, max, mean) that reports and JSON show. A heap
//! keeps one per kind of event (`stats::EventTotals`), as ZGC's statistics keep a running
//! aggregate per sampler (`ZStatSampler`) rather than every sample; the workloads harness
//! uses the same type for its hiccup meters and request latencies.
//!
//! Coordinated omission: a measuring loop that is stalled for 10 ms records one 10 ms sample
//! where an undisturbed loop would have taken ten samples, most of them large. Recording with
//! [`LatencyHistogram::record_correct`] adds the samples the stall swallowed (value − interval,
//! value − 2·interval, … while ≥ interval), which is HdrHistogram's `recordValueWithExpectedInterval`.
//!
//! In JSON a [`LatencyHistogram`] is its [`PercentileSummary`] plus the whole histogram as
//! `hdr`, HdrHistogram's V2 compressed encoding in base64, so a `results.json` read back gives
//! the same histogram (and the same summary) again.

use base64::Engine as _;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::{Deserializer as HdrDeserializer, Serializer as _};
use hdrhistogram::Histogram;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Precision of every histogram of this crate: values are kept to 3 significant digits (0.1%).
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// Largest value recorded as is; larger values (over 146 years in ns) are clamped to it.
const MAX_VALUE_NS: u64 = 1 << 62;

/// An auto-resizing HDR histogram of nanosecond values.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram (lowest discernible value 1 ns, 3 significant digits, auto-resizing).
    pub fn new() -> Self {
        LatencyHistogram {
            hist: Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits is valid"),
        }
    }

    /// Record one value as measured.
    pub fn record(&mut self, value_ns: u64) {
        self.hist
            .record(value_ns.min(MAX_VALUE_NS))
            .expect("an auto-resizing histogram records any value up to 2^62");
    }

    /// Record one value measured by a loop that expected one sample every
    /// `expected_interval_ns`, adding the samples a stall of that length hid
    /// (coordinated-omission correction; an interval of 0 records the value alone).
    pub fn record_correct(&mut self, value_ns: u64, expected_interval_ns: u64) {
        self.hist
            .record_correct(value_ns.min(MAX_VALUE_NS), expected_interval_ns)
            .expect("an auto-resizing histogram records any value up to 2^62");
    }

    /// Add every value of `other`.
    pub fn add(&mut self, other: &LatencyHistogram) {
        self.hist
            .add(&other.hist)
            .expect("auto-resizing histograms of equal precision can be added");
    }

    /// Number of recorded values.
    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    /// True if nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// The value at `quantile` (0.0–1.0); 0 for an empty histogram.
    pub fn value_at_quantile(&self, quantile: f64) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.hist.value_at_quantile(quantile)
        }
    }

    /// The underlying `hdrhistogram` histogram.
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.hist
    }

    /// The percentile summary (values are HDR-equivalent: within 0.1% of the recorded ones).
    pub fn summary(&self) -> PercentileSummary {
        if self.is_empty() {
            return PercentileSummary::default();
        }
        let h = &self.hist;
        PercentileSummary {
            count: h.len(),
            min_ns: h.min(),
            p50_ns: h.value_at_quantile(0.50),
            p90_ns: h.value_at_quantile(0.90),
            p99_ns: h.value_at_quantile(0.99),
            p99_9_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
            mean_ns: h.mean(),
        }
    }

    /// HdrHistogram's V2 compressed encoding, in standard base64 (what `hdr` holds in JSON).
    pub fn to_base64(&self) -> String {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.hist, &mut bytes)
            .expect("serializing into a Vec cannot fail for a valid histogram");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Decode what [`to_base64`](Self::to_base64) produced.
    pub fn from_base64(text: &str) -> Result<Self, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| format!("histogram is not valid base64: {e}"))?;
        let hist: Histogram<u64> = HdrDeserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("histogram is not a valid HdrHistogram encoding: {e:?}"))?;
        Ok(LatencyHistogram { hist })
    }
}

/// Percentiles of a set of nanosecond values. All zero (and `count` 0) when there are none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PercentileSummary {
    pub count: u64,
    pub min_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    #[serde(rename = "p99_9_ns")]
    pub p99_9_ns: u64,
    pub max_ns: u64,
    pub mean_ns: f64,
}

impl PercentileSummary {
    /// Exact percentiles (nearest rank) of a few values, e.g. the pauses of a run, where an
    /// HDR histogram's rounding would only blur a short list.
    pub fn from_values(values: &[u64]) -> Self {
        if values.is_empty() {
            return PercentileSummary::default();
        }
        let mut v = values.to_vec();
        v.sort_unstable();
        let n = v.len();
        // Nearest rank: the smallest value with at least q·n values at or below it.
        let rank = |q: f64| -> u64 {
            let r = (q * n as f64).ceil() as usize;
            v[r.clamp(1, n) - 1]
        };
        PercentileSummary {
            count: n as u64,
            min_ns: v[0],
            p50_ns: rank(0.50),
            p90_ns: rank(0.90),
            p99_ns: rank(0.99),
            p99_9_ns: rank(0.999),
            max_ns: v[n - 1],
            mean_ns: v.iter().map(|&x| x as f64).sum::<f64>() / n as f64,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct HistogramRepr {
    #[serde(flatten)]
    summary: PercentileSummary,
    /// The whole histogram: HdrHistogram V2 compressed encoding, base64.
    hdr: String,
}

impl Serialize for LatencyHistogram {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        HistogramRepr {
            summary: self.summary(),
            hdr: self.to_base64(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let repr = HistogramRepr::deserialize(deserializer)?;
        let hist = LatencyHistogram::from_base64(&repr.hdr).map_err(serde::de::Error::custom)?;
        if hist.len() != repr.summary.count {
            return Err(serde::de::Error::custom(format!(
                "histogram holds {} values but its summary says count {}",
                hist.len(),
                repr.summary.count
            )));
        }
        Ok(hist)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn record_correct_backfills_the_samples_a_stall_hid() {
        let mut h = LatencyHistogram::new();
        // A 5 ms stall in a loop expecting a sample every 1 ms: 5, 4, 3, 2 and 1 ms.
        h.record_correct(5 * MS, MS);
        assert_eq!(h.len(), 5);
        let s = h.summary();
        assert!(s.min_ns.abs_diff(MS) <= MS / 1000, "min {}", s.min_ns);
        assert!(
            s.max_ns.abs_diff(5 * MS) <= 5 * MS / 1000,
            "max {}",
            s.max_ns
        );
        // Below the interval nothing is added.
        h.record_correct(MS / 2, MS);
        assert_eq!(h.len(), 6);
        // Plain record never adds.
        h.record(50 * MS);
        assert_eq!(h.len(), 7);
        // Interval 0 means "no correction".
        h.record_correct(50 * MS, 0);
        assert_eq!(h.len(), 8);
    }

    #[test]
    fn correction_moves_the_percentiles() {
        // 1000 quick rounds and one 100 ms stall: uncorrected p99 sees no stall, corrected does.
        let mut plain = LatencyHistogram::new();
        let mut corrected = LatencyHistogram::new();
        for _ in 0..1000 {
            plain.record(10_000);
            corrected.record_correct(10_000, MS);
        }
        plain.record(100 * MS);
        corrected.record_correct(100 * MS, MS);
        assert_eq!(plain.len(), 1001);
        assert_eq!(corrected.len(), 1100);
        assert!(plain.summary().p99_ns < 20_000);
        assert!(corrected.summary().p99_ns > 80 * MS);
    }

    #[test]
    fn summary_of_a_histogram_is_within_hdr_precision() {
        let mut h = LatencyHistogram::new();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        assert_eq!(s.count, 10_000);
        let close = |got: u64, want: u64| got.abs_diff(want) as f64 <= want as f64 * 0.001 + 1.0;
        assert!(close(s.min_ns, 1000));
        assert!(close(s.p50_ns, 5_000_000), "{}", s.p50_ns);
        assert!(close(s.p90_ns, 9_000_000), "{}", s.p90_ns);
        assert!(close(s.p99_ns, 9_900_000), "{}", s.p99_ns);
        assert!(close(s.p99_9_ns, 9_990_000), "{}", s.p99_9_ns);
        assert!(close(s.max_ns, 10_000_000), "{}", s.max_ns);
        assert!((s.mean_ns - 5_000_500.0).abs() < 5_000.0, "{}", s.mean_ns);
    }

    #[test]
    fn empty_histogram_summary_is_zero() {
        let h = LatencyHistogram::new();
        assert!(h.is_empty());
        assert_eq!(h.summary(), PercentileSummary::default());
        assert_eq!(h.value_at_quantile(0.99), 0);
    }

    #[test]
    fn exact_percentiles_use_nearest_rank() {
        let values: Vec<u64> = (1..=100).rev().collect();
        let s = PercentileSummary::from_values(&values);
        assert_eq!(s.count, 100);
        assert_eq!(s.min_ns, 1);
        assert_eq!(s.p50_ns, 50);
        assert_eq!(s.p90_ns, 90);
        assert_eq!(s.p99_ns, 99);
        assert_eq!(s.p99_9_ns, 100);
        assert_eq!(s.max_ns, 100);
        assert_eq!(s.mean_ns, 50.5);
        let one = PercentileSummary::from_values(&[7]);
        assert_eq!((one.p50_ns, one.p99_ns, one.max_ns), (7, 7, 7));
        assert_eq!(
            PercentileSummary::from_values(&[]),
            PercentileSummary::default()
        );
    }

    #[test]
    fn json_keeps_the_summary_and_the_whole_histogram() {
        let mut h = LatencyHistogram::new();
        for v in [1_000, 20_000, 300_000, 4_000_000, 4_000_000] {
            h.record(v);
        }
        let json = serde_json::to_value(&h).unwrap();
        for key in [
            "count", "min_ns", "p50_ns", "p90_ns", "p99_ns", "p99_9_ns", "max_ns", "mean_ns", "hdr",
        ] {
            assert!(json.get(key).is_some(), "missing {key} in {json}");
        }
        assert_eq!(json["count"], 5);
        let back: LatencyHistogram = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.summary(), h.summary());

        let mut tampered = json;
        tampered["count"] = 6.into();
        let err = serde_json::from_value::<LatencyHistogram>(tampered).unwrap_err();
        assert!(err.to_string().contains("count 6"), "{err}");
    }
}
