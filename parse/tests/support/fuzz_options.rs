//! The parse options a fuzz input's first byte picks: one file, included by the fuzz targets
//! (`fuzz/fuzz_targets/common.rs`) and by the test that replays their findings
//! (`parse/tests/cases.rs`), so that a replay reads an input exactly as the target did. The
//! including module brings `Options` and `Thinking` into scope (the parser's, by whichever path
//! its crate names them).

use super::{Options, Thinking};

/// Options chosen by one byte of the input.
pub fn options(byte: u8) -> Options {
    let thinking = match byte % 3 {
        0 => Thinking::Auto,
        1 => Thinking::ExplicitOnly,
        _ => Thinking::StartsInside,
    };
    let options = Options::new()
        .thinking(thinking)
        .calls_in_thinking(byte & 4 != 0);
    // Without a generation prompt (the seeds' byte 0), or with one whose markup the parse
    // reads before the output.
    match (byte >> 3) % 8 {
        1 => options
            .generation_prompt("<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>"),
        2 => options.generation_prompt("<|start|>assistant"),
        3 => options.generation_prompt("[INST]x[/INST][THINK]"),
        4 => options.generation_prompt("<|im_start|>assistant\n<think>\n"),
        5 => options.generation_prompt("<|turn>model\n<|channel>thought"),
        _ => options,
    }
}
