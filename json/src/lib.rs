//! The JSON that both [`tool-registry`](https://docs.rs/tool-registry) and
//! [`tool-registry-parse`](https://docs.rs/tool-registry-parse) read the same way: the one walk
//! over JSON Schemas ([`schema`]), objects that write each key once ([`unique`]), and the one
//! bound on how deep a value nests ([`depth`]).
//!
//! A support crate: its items serve those two crates, which re-export what users name; its API
//! follows their needs and may change in any release.
//!
//! | file | what |
//! | --- | --- |
//! | `schema/` | the one walk over JSON Schemas: `$ref`s, the budget, what a schema admits, what validating against it can cost |
//! | `unique.rs` | JSON read from a model with each object's keys written once: the one rule for a repeated key |
//! | `depth.rs` | [`MAX_DEPTH`](depth::MAX_DEPTH), measuring a value's depth and dropping it without recursion |
//! | `testing.rs` | the walk's visit count and hostile shapes, for the tests of the crates above (feature `testing`) |

pub mod depth;
pub mod schema;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod unique;
