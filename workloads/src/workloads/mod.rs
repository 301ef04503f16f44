//! The registry of the harness's workloads: one line per workload names its module and its
//! [`Workload`] type, and `workload_registry!` builds from that list everything that used to
//! be written out per workload: the name enum [`WorkloadKind`] (`--workload`, the
//! subcommands, `RunConfig::workload`), the options enum [`WorkloadParams`] (a run's options,
//! in `results.json` just the workload's options object) and the dispatch from both to the
//! workload's items (defaults, validation, buffers, clap's arguments, the thread function).
//! It is the harness's counterpart of the JMH/DaCapo benchmark list: the one place that says
//! which programs exist.
//!
//! A workload thread first builds its share of the live set, then calls
//! [`Ctx::ready`](crate::ctx::Ctx::ready) (a barrier the runner waits on before it starts
//! measuring), then runs operations until [`Ctx::running`](crate::ctx::Ctx::running) turns
//! false. Everything is seeded from `RunConfig::seed` and the thread index, so a run is
//! reproducible.

use crate::buffer_kind::BufferKind;
use crate::ctx::Ctx;
use crate::workload::{LiveOption, ThreadOutcome, Workload};
use clap::builder::PossibleValue;
use gc_runtime::Mutator;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// Builds the registry from `Variant => module::Type` lines, in report order: declares each
/// module, and makes one variant per workload in [`WorkloadKind`] and
/// [`WorkloadParams`], with the matches that dispatch to the type's [`Workload`] items.
macro_rules! workload_registry {
    ($($kind:ident => $module:ident :: $ty:ident),+ $(,)?) => {
        $(pub mod $module;)+

        /// A workload of the harness, by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum WorkloadKind {
            $($kind,)+
        }

        impl WorkloadKind {
            /// Every workload, in report order.
            pub const ALL: &'static [WorkloadKind] = &[$(WorkloadKind::$kind,)+];

            /// The command-line and JSON name (`heap-churn`, ...).
            pub fn name(self) -> &'static str {
                match self {
                    $(WorkloadKind::$kind => <$module::$ty as Workload>::NAME,)+
                }
            }

            /// One line for the list of `--workload` values.
            pub fn summary(self) -> &'static str {
                match self {
                    $(WorkloadKind::$kind => <$module::$ty as Workload>::SUMMARY,)+
                }
            }

            /// The help of the workload's subcommand.
            pub fn about(self) -> &'static str {
                match self {
                    $(WorkloadKind::$kind => <$module::$ty as Workload>::ABOUT,)+
                }
            }

            /// The subcommand's live-set option, if the workload has one.
            pub fn live_option(self) -> Option<LiveOption> {
                match self {
                    $(WorkloadKind::$kind => <$module::$ty as Workload>::LIVE_OPTION,)+
                }
            }

            /// True for workloads that serve requests and so record a request-latency
            /// histogram.
            pub fn has_requests(self) -> bool {
                match self {
                    $(WorkloadKind::$kind => <$module::$ty as Workload>::HAS_REQUESTS,)+
                }
            }

            /// Add the workload's own options to its subcommand.
            pub fn augment_args(self, cmd: clap::Command) -> clap::Command {
                match self {
                    $(WorkloadKind::$kind => {
                        <<$module::$ty as Workload>::Params as clap::Args>::augment_args(cmd)
                    })+
                }
            }
        }

        /// The options of one run's workload. In JSON it is just the workload's options
        /// object; which workload it belongs to is `RunConfig::workload` (and the keys tell
        /// them apart).
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(untagged)]
        pub enum WorkloadParams {
            $($kind(<$module::$ty as Workload>::Params),)+
        }

        impl WorkloadParams {
            /// Every option of `w` at its default.
            pub fn defaults(w: WorkloadKind) -> Self {
                match w {
                    $(WorkloadKind::$kind => WorkloadParams::$kind(Default::default()),)+
                }
            }

            /// The workload these options belong to.
            pub fn workload(&self) -> WorkloadKind {
                match self {
                    $(WorkloadParams::$kind(_) => WorkloadKind::$kind,)+
                }
            }

            /// The buffer kind of a workload that takes `--buffers`, `None` for the others.
            pub fn buffers(&self) -> Option<BufferKind> {
                match self {
                    $(WorkloadParams::$kind(p) => <$module::$ty as Workload>::buffers(p),)+
                }
            }

            fn buffers_mut(&mut self) -> Option<&mut BufferKind> {
                match self {
                    $(WorkloadParams::$kind(p) => <$module::$ty as Workload>::buffers_mut(p),)+
                }
            }

            /// Check what clap cannot check option by option.
            pub fn validate(&self) -> Result<(), String> {
                match self {
                    $(WorkloadParams::$kind(p) => <$module::$ty as Workload>::validate(p),)+
                }
            }

            /// The options of `w`'s subcommand as clap parsed them.
            pub fn from_arg_matches(
                w: WorkloadKind,
                matches: &clap::ArgMatches,
            ) -> Result<Self, clap::Error> {
                Ok(match w {
                    $(WorkloadKind::$kind => WorkloadParams::$kind(
                        <<$module::$ty as Workload>::Params as clap::FromArgMatches>
                            ::from_arg_matches(matches)?,
                    ),)+
                })
            }

            /// Run the workload with these options on one mutator thread.
            pub fn run_thread(
                &self,
                ctx: &Ctx<'_>,
                m: &mut Mutator,
            ) -> Result<ThreadOutcome, String> {
                match self {
                    $(WorkloadParams::$kind(p) => <$module::$ty as Workload>::run(ctx, m, p),)+
                }
            }
        }
    };
}

workload_registry! {
    HeapChurn => heap_churn::HeapChurnWorkload,
    BinaryTrees => binary_trees::BinaryTreesWorkload,
    LruCache => lru_cache::LruCacheWorkload,
    MessageEngine => message_engine::MessageEngineWorkload,
    BufferEcho => buffer_echo::BufferEchoWorkload,
}

impl WorkloadKind {
    /// True for workloads that take `--buffers heap|direct|pooled`.
    pub fn takes_buffers(self) -> bool {
        WorkloadParams::defaults(self).buffers().is_some()
    }

    /// The names of the workloads that take `--buffers`.
    pub fn with_buffers() -> Vec<&'static str> {
        WorkloadKind::ALL
            .iter()
            .filter(|w| w.takes_buffers())
            .map(|w| w.name())
            .collect()
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for WorkloadKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        WorkloadKind::ALL
            .iter()
            .copied()
            .find(|w| w.name() == s.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = WorkloadKind::ALL.iter().map(|w| w.name()).collect();
                format!("unknown workload {s:?}: use one of {}", names.join(", "))
            })
    }
}

/// `--workload`'s values: the names, each with its summary in the long help.
impl clap::ValueEnum for WorkloadKind {
    fn value_variants<'a>() -> &'a [Self] {
        WorkloadKind::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()).help(self.summary()))
    }
}

/// In JSON a workload is its name.
impl Serialize for WorkloadKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for WorkloadKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl WorkloadParams {
    /// Set the buffer kind; an error naming the workloads that take `--buffers` for the others.
    pub fn set_buffers(&mut self, kind: BufferKind) -> Result<(), String> {
        let workload = self.workload();
        match self.buffers_mut() {
            Some(b) => {
                *b = kind;
                Ok(())
            }
            None => Err(format!(
                "--buffers: {workload} keeps no I/O buffers; it applies to {} only (drop \
                 --buffers or pick one of them with --workload)",
                WorkloadKind::with_buffers().join(" and ")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;
    use serde_json::json;

    #[test]
    fn names_round_trip() {
        for &w in WorkloadKind::ALL {
            assert_eq!(w.name().parse::<WorkloadKind>().unwrap(), w);
            assert_eq!(serde_json::to_value(w).unwrap(), json!(w.name()));
            assert_eq!(
                serde_json::from_value::<WorkloadKind>(json!(w.name())).unwrap(),
                w
            );
            // clap's value names are the same as ours.
            assert_eq!(w.to_possible_value().unwrap().get_name(), w.name());
        }
        let err = "heap_churn".parse::<WorkloadKind>().unwrap_err();
        assert!(
            err.contains("heap-churn, binary-trees, lru-cache, message-engine, buffer-echo"),
            "{err}"
        );
        assert!(serde_json::from_value::<WorkloadKind>(json!("dacapo")).is_err());
        assert_eq!(
            WorkloadKind::with_buffers(),
            ["message-engine", "buffer-echo"]
        );
    }

    #[test]
    fn defaults_round_trip_through_json_as_plain_objects() {
        for &w in WorkloadKind::ALL {
            let p = WorkloadParams::defaults(w);
            assert_eq!(p.workload(), w);
            let v = serde_json::to_value(&p).unwrap();
            assert!(v.is_object(), "{w}: {v}");
            let back: WorkloadParams = serde_json::from_value(v).unwrap();
            assert_eq!(back, p);
        }
        let v = serde_json::to_value(WorkloadParams::defaults(WorkloadKind::HeapChurn)).unwrap();
        assert_eq!(v["subgraph_nodes"], json!(16));
        assert_eq!(v["garbage_bytes"], json!(512));
        assert_eq!(v["mutations"], json!(1));
        assert_eq!(v["ops_per_sec"], json!(0));
        let v = serde_json::to_value(WorkloadParams::defaults(WorkloadKind::BinaryTrees)).unwrap();
        assert!(v.get("depth").is_none(), "{v}");
        let v =
            serde_json::to_value(WorkloadParams::defaults(WorkloadKind::MessageEngine)).unwrap();
        assert_eq!(v["topics"], json!(90));
    }

    #[test]
    fn a_results_file_of_the_string_keyed_form_still_reads() {
        // The options object as results.json has always written it.
        let old = json!({"hit_rate": 0.75, "get_fraction": 0.9, "min_value_bytes": 64,
                         "max_value_bytes": 100, "ops_per_sec": 0});
        let p: WorkloadParams = serde_json::from_value(old).unwrap();
        match p {
            WorkloadParams::LruCache(p) => assert_eq!(p.max_value_bytes, 100),
            other => panic!("read as {other:?}"),
        }
        let bt: WorkloadParams =
            serde_json::from_value(json!({"min_depth": 4, "depth": 18})).unwrap();
        assert_eq!(
            bt,
            WorkloadParams::BinaryTrees(binary_trees::BinaryTreesParams {
                min_depth: 4,
                depth: Some(18)
            })
        );
    }

    #[test]
    fn validation_names_the_options_to_change() {
        let p = lru_cache::LruCacheParams {
            min_value_bytes: 500,
            max_value_bytes: 100,
            ..Default::default()
        };
        let e = WorkloadParams::LruCache(p).validate().unwrap_err();
        assert!(e.contains("--min-value-bytes 500"), "{e}");
        let m = message_engine::MessageEngineParams {
            queues: 0,
            topics: 0,
            ..Default::default()
        };
        assert!(WorkloadParams::MessageEngine(m).validate().is_err());
    }
}
