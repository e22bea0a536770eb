//! `toolreg`: the reference tools on the command line.
//!
//! ```text
//! toolreg [--kb DIR] [--inbox DIR] [--sandbox DIR] [--schedule FILE] <command>
//! ```
//!
//! The folders default to `TOOLREG_KB`, `TOOLREG_INBOX`, `TOOLREG_SANDBOX` and
//! `TOOLREG_SCHEDULE`, then to `./kb`, `./kb/inbox`, `./sandbox` and `./scheduler.json`.
//!
//! The command line is `tool_registry::cli`, which a library user does not build unless asked:
//! this crate turns on the `cli` feature (and `http`, `mcp`, `redis` for `serve`, `mcp` and
//! `--redis`) in its `Cargo.toml`.

use std::ffi::OsString;
use std::path::PathBuf;

use tool_registry::Registry;
use tool_registry_tools::Config;

/// What `--help` says of the flags this binary reads before the shared command line does.
const PATHS_HELP: &str = "\
The reference tools' files (each flag before or after the command):
      --kb <DIR>          The knowledge base `research` searches [default: $TOOLREG_KB or ./kb]
      --inbox <DIR>       Where `claim` drafts go [default: $TOOLREG_INBOX or KB/inbox]
      --sandbox <DIR>     The file manager's folder [default: $TOOLREG_SANDBOX or ./sandbox]
      --schedule <FILE>   The scheduler's jobs [default: $TOOLREG_SCHEDULE or ./scheduler.json]
";

fn main() {
    let (config, args) = match take_paths(Config::from_env(), std::env::args_os()) {
        Ok(split) => split,
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(tool_registry::cli::EXIT_USAGE);
        }
    };
    let help = args
        .iter()
        .skip(1)
        .any(|arg| arg == "--help" || arg == "-h")
        || args.get(1).is_some_and(|arg| arg == "help");
    let builder = Registry::builder()
        .state(config)
        .allow_lists(tool_registry_tools::allow_lists())
        .hook(tool_registry_tools::RedactSecrets);
    tool_registry::cli::log_to_stderr();
    let code = tool_registry::cli::run(
        args,
        builder,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    if help && code == tool_registry::cli::EXIT_OK {
        println!("\n{PATHS_HELP}");
    }
    std::process::exit(code);
}

/// Takes the path options out of the command line, wherever they stand, and leaves the rest
/// for the shared command line.
fn take_paths(
    mut config: Config,
    args: impl IntoIterator<Item = OsString>,
) -> Result<(Config, Vec<OsString>), String> {
    let mut rest = Vec::new();
    let mut args = args.into_iter();
    let inbox_follows_kb =
        std::env::var_os(tool_registry_tools::config::ENV_INBOX).is_none_or(|v| v.is_empty());
    let mut inbox_given = false;
    let mut kb_given =
        std::env::var_os(tool_registry_tools::config::ENV_KB).is_some_and(|v| !v.is_empty());
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        let (flag, inline) = match text.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (text.clone(), None),
        };
        let slot = match flag.as_str() {
            "--kb" => {
                kb_given = true;
                &mut config.kb_dir
            }
            "--inbox" => {
                inbox_given = true;
                &mut config.inbox_dir
            }
            "--sandbox" => &mut config.sandbox_root,
            "--schedule" => &mut config.schedule_file,
            _ => {
                rest.push(arg);
                continue;
            }
        };
        let value = match inline {
            Some(value) => PathBuf::from(value),
            None => PathBuf::from(
                args.next()
                    .ok_or_else(|| format!("`{flag}` needs a path"))?,
            ),
        };
        *slot = value;
    }
    // A knowledge base named that is not there is a mistake to say, not an empty search.
    if kb_given && !config.kb_dir.is_dir() {
        return Err(format!(
            "the knowledge base {} is not a folder (from --kb or $TOOLREG_KB); name a folder of Markdown notes",
            config.kb_dir.display()
        ));
    }
    if inbox_follows_kb && !inbox_given {
        config.inbox_dir = config.kb_dir.join("inbox");
    }
    Ok((config, rest))
}
