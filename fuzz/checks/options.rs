//! The parse options a fuzz input's first byte picks (`text`, `stream`).

use tool_registry::parse::{Options, Thinking};

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
