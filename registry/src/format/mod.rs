//! What a model is shown of the tools: tool lists in the shapes model providers expect (each
//! format builds a tool's entry once and caches it), and the tag prompt block.
//!
//! | file | what |
//! | --- | --- |
//! | `openai.rs` | OpenAI Chat Completions `tools` |
//! | `prompt.rs` | the prompt block that teaches the response tags |

mod openai;
mod prompt;

pub use openai::openai_function;
