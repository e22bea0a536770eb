//! The tool files: every file of `src/tools/` is a module, found by [`tool_registry::tool_files`]
//! (a file starting with `_` is a helper the tool files share). Adding a tool is adding a file.

tool_registry::tool_files!("src/tools");
