#!/usr/bin/env bash
# Compile-time cost of `#[tool]`: a crate of N `#[tool]` fns against the same fns written with
# plain serde derives (an args struct per fn, and a `match` that reads a fn's arguments and
# returns its call as a boxed future, as the registry does) and with serde + schemars derives
# (the same plus a schema listing), in one run:
#
#   - RUNS clean builds of each 100-tool crate, the crates taking turns;
#   - RUNS incremental rebuilds of each after editing one tool's body;
#   - one clean build of each 1,000-tool crate (skipped when BIG is 0).
#
#   core/benches/compile_time.sh [RUNS [BIG]]     # RUNS defaults to 5, BIG to 1000
#   OUTPUT_SCHEMAS=off core/benches/compile_time.sh  # every tool `output_schema = false`
#
# By default every #[tool] fn's output schema is generated from its return type (all four
# shapes return types with a JSON Schema); OUTPUT_SCHEMAS=off measures the macro without them.
#
# All crates have the same dependencies, built once and not timed; a clean build is
# `cargo clean -p <crate>` then `cargo build` (debug profile) of that crate alone. Generated
# crates and their target dir live under target/compile-time/, apart from the workspace's own
# target dir so that they do not contend with other builds for its lock.
set -euo pipefail

RUNS=${1:-5}
BIG=${2:-1000}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT="$ROOT/target/compile-time"
export CARGO_TARGET_DIR="$OUT/target"

mkdir -p "$OUT"

# Prints the manifest of generated crate $1. The empty [workspace] keeps cargo from taking the
# crate for an unlisted member of the workspace it sits inside.
manifest() {
    cat <<EOF
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
tool-registry = { path = "$ROOT/registry" }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
schemars = "1"
EOF
}

# The fn shapes, cycled through: 2-3 arguments each, a default, optionals, a fallible one.
# Prints fn $1 of shape $1 % 4; $2 is "macro" (with `#[tool]`/`#[arg]`) or "plain".
function_item() {
    local i=$1 style=$2 tool="" desc_q="" desc_l="" desc_g=""
    case $((i % 4)) in
    0)
        if [[ $style == macro ]]; then
            tool='#[tool(category = "search", read_only, tags(notes, search), cost = "cheap")]'
            desc_q='#[arg(desc = "What to look for")] '
            desc_l='#[arg(desc = "How many notes", default = 5)] '
        fi
        cat <<EOF
/// Searches the notes for a term (variant $i).
///
/// Returns the best matching note titles, best first.
$tool
pub async fn search_$i(${desc_q}query: String, ${desc_l}limit: u32) -> Vec<String> {
    (0..limit).map(|n| format!("{query} #{n} (edit 0)")).collect()
}
EOF
        ;;
    1)
        [[ $style == macro ]] && tool='#[tool(category = "math", read_only, idempotent)]'
        cat <<EOF
/// Adds two integers, optionally rounding to a multiple of ten (variant $i).
$tool
pub async fn add_$i(a: i64, b: i64, round: bool) -> i64 {
    let sum = a + b;
    if round { sum / 10 * 10 } else { sum }
}
EOF
        ;;
    2)
        if [[ $style == macro ]]; then
            tool='#[tool(category = "chat", read_only, tier = "high")]'
            desc_g='#[arg(desc = "The greeting, Hello when absent")] '
        fi
        cat <<EOF
/// Greets someone (variant $i).
$tool
pub async fn greet_$i(name: String, ${desc_g}greeting: Option<String>) -> String {
    format!("{}, {name}!", greeting.as_deref().unwrap_or("Hello"))
}
EOF
        ;;
    3)
        [[ $style == macro ]] && tool='#[tool(category = "files", destructive, cooldown = "1s", daily_limit = 100)]'
        cat <<EOF
/// Writes a note (variant $i).
///
/// Refuses to replace an existing note unless \`overwrite\` is set.
$tool
pub async fn write_$i(path: String, content: String, overwrite: Option<bool>) -> Result<String, String> {
    if path.is_empty() { return Err("empty path".to_owned()); }
    Ok(format!("{} {} bytes to {path}", if overwrite.unwrap_or(false) { "replaced" } else { "wrote" }, content.len()))
}
EOF
        ;;
    esac
}

fn_name() {
    case $(($1 % 4)) in 0) echo "search_$1" ;; 1) echo "add_$1" ;; 2) echo "greet_$1" ;; 3) echo "write_$1" ;; esac
}

# The args struct one derives by hand for fn $1; $2 is "serde" or "schemars" (serde + schemars).
plain_struct() {
    local i=$1 derive="serde::Deserialize"
    [[ $2 == schemars ]] && derive="serde::Deserialize, schemars::JsonSchema"
    case $((i % 4)) in
    0) cat <<EOF
fn default_limit_$i() -> u32 { 5 }
#[derive($derive)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs$i {
    /// What to look for
    pub query: String,
    /// How many notes
    #[serde(default = "default_limit_$i")]
    pub limit: u32,
}
EOF
        ;;
    1) cat <<EOF
#[derive($derive)]
#[serde(deny_unknown_fields)]
pub struct AddArgs$i { pub a: i64, pub b: i64, pub round: bool }
EOF
        ;;
    2) cat <<EOF
#[derive($derive)]
#[serde(deny_unknown_fields)]
pub struct GreetArgs$i {
    pub name: String,
    /// The greeting, Hello when absent
    pub greeting: Option<String>,
}
EOF
        ;;
    3) cat <<EOF
#[derive($derive)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs$i { pub path: String, pub content: String, pub overwrite: Option<bool> }
EOF
        ;;
    esac
}

# The dispatcher's match arm that parses fn $1's arguments and calls it.
plain_arm() {
    local i=$1
    case $((i % 4)) in
    0) echo "        \"search_$i\" => { let a: SearchArgs$i = from_str(text)?; Box::pin(async move { to_value(search_$i(a.query, a.limit).await) }) }" ;;
    1) echo "        \"add_$i\" => { let a: AddArgs$i = from_str(text)?; Box::pin(async move { to_value(add_$i(a.a, a.b, a.round).await) }) }" ;;
    2) echo "        \"greet_$i\" => { let a: GreetArgs$i = from_str(text)?; Box::pin(async move { to_value(greet_$i(a.name, a.greeting).await) }) }" ;;
    3) echo "        \"write_$i\" => { let a: WriteArgs$i = from_str(text)?; Box::pin(async move { to_value(write_$i(a.path, a.content, a.overwrite).await?) }) }" ;;
    esac
}

# $1: the crate's name; $2: how many tools.
generate_macro() {
    local name=$1 n=$2 dir="$OUT/$1"
    mkdir -p "$dir/src"
    manifest "$name" >"$dir/Cargo.toml"
    {
        echo "//! $n tools declared with \`#[tool]\` (generated by core/benches/compile_time.sh)."
        echo "use tool_registry::tool;"
        for ((i = 0; i < n; i++)); do
            echo
            function_item "$i" macro
        done
    } >"$dir/src/lib.rs"
    if [[ ${OUTPUT_SCHEMAS:-on} == off ]]; then
        sed -i 's/^#\[tool(\(.*\))\]$/#[tool(\1, output_schema = false)]/' "$dir/src/lib.rs"
    fi
}

# $1: the crate's name; $2: how many tools; $3: "serde" or "schemars" (serde + schemars, with
# a listing of every fn's schema).
generate_plain() {
    local name=$1 n=$2 derives=$3 dir="$OUT/$1"
    mkdir -p "$dir/src"
    manifest "$name" >"$dir/Cargo.toml"
    {
        echo "//! The same $n fns with hand-written args structs and dispatcher"
        echo "//! (generated by core/benches/compile_time.sh)."
        echo "use serde_json::Value;"
        echo
        echo "fn from_str<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {"
        echo "    serde_json::from_str(text).map_err(|e| e.to_string())"
        echo "}"
        echo
        echo "fn to_value<T: serde::Serialize>(value: T) -> Result<Value, String> {"
        echo "    serde_json::to_value(value).map_err(|e| e.to_string())"
        echo "}"
        for ((i = 0; i < n; i++)); do
            echo
            function_item "$i" plain
            plain_struct "$i" "$derives"
        done
        echo
        echo "/// A call whose arguments were read, not started yet."
        echo "pub type Call = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, String>> + Send>>;"
        echo
        echo "/// Reads the JSON arguments of the fn of this name: the call, or what is wrong."
        echo "pub fn call(name: &str, text: &str) -> Result<Call, String> {"
        echo "    Ok(match name {"
        for ((i = 0; i < n; i++)); do
            plain_arm "$i"
        done
        echo "        _ => return Err(format!(\"unknown tool {name}\")),"
        echo "    })"
        echo "}"
        if [[ $derives == schemars ]]; then
            echo
            echo "/// Every fn's name, description and argument schema."
            echo "pub fn schemas() -> Vec<(&'static str, &'static str, schemars::Schema)> {"
            echo "    vec!["
            for ((i = 0; i < n; i++)); do
                local ty
                case $((i % 4)) in 0) ty=SearchArgs ;; 1) ty=AddArgs ;; 2) ty=GreetArgs ;; 3) ty=WriteArgs ;; esac
                echo "        (\"$(fn_name "$i")\", \"variant $i\", schemars::schema_for!($ty$i)),"
            done
            echo "    ]"
            echo "}"
        fi
    } >"$dir/src/lib.rs"
}

now() { date +%s.%N; }

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { printf "%.2f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }

# Times `cargo build` of crate $1 and prints the seconds; fails unless exactly the crate itself
# was compiled.
timed_build() {
    local crate=$1 dir="$OUT/$1" start end log
    start=$(now)
    log=$(cd "$dir" && cargo build --color never 2>&1)
    end=$(now)
    if [[ $(grep -c '^ *Compiling' <<<"$log") -ne 1 ]]; then
        return 1
    fi
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}

# One clean build of crate $1, timed. A build that also compiled a dependency (the first one,
# or the registry changed since: it is a path dependency) is done again.
clean_build() {
    local crate=$1 dir="$OUT/$1"
    for _ in 1 2 3; do
        (cd "$dir" && cargo clean --quiet -p "$crate")
        timed_build "$crate" && return
    done
    echo "error: dependencies of $crate kept changing during the timed build" >&2
    exit 1
}

# Rebuild of crate $1 after editing the body of one tool (the `(edit K)` text of fn 0, run $2),
# timed, the crate having been built before.
incremental_build() {
    local crate=$1 run=$2 dir="$OUT/$1"
    (cd "$dir" && cargo build --quiet)
    sed -i "0,/(edit [0-9]*)/s//(edit $run)/" "$dir/src/lib.rs"
    timed_build "$crate" || {
        echo "error: editing $crate rebuilt more than the crate" >&2
        exit 1
    }
}

LABELS=("#[tool]" "serde" "serde + schemars")
generate_all() {
    local n=$1
    generate_macro "ct_tool_$n" "$n"
    generate_plain "ct_serde_$n" "$n" serde
    generate_plain "ct_schemars_$n" "$n" schemars
}
crates() { echo "ct_tool_$1 ct_serde_$1 ct_schemars_$1"; }

# Prints one table row: label, then the median of each list of times, and the ratios to the
# serde and serde + schemars medians.
row() {
    local label=$1 tool=$2 serde=$3 schemars=$4
    printf '%-40s %8s %8s %8s %8s %10s\n' "$label" "$tool" "$serde" "$schemars" \
        "$(ratio "$tool" "$serde")" "$(ratio "$tool" "$schemars")"
}

generate_all 100
read -r -a SMALL <<<"$(crates 100)"
echo "compile time of #[tool] against plain serde and serde + schemars, debug profile"
echo "(generated crates and target dir under $OUT)"

declare -A CLEAN INCR
for ((run = 1; run <= RUNS; run++)); do
    for i in "${!SMALL[@]}"; do
        seconds=$(clean_build "${SMALL[$i]}")
        CLEAN[$i]+="$seconds "
        printf '  clean 100 tools, run %d  %-18s %6.2f s\n' "$run" "${LABELS[$i]}" "$seconds"
    done
done
for ((run = 1; run <= RUNS; run++)); do
    for i in "${!SMALL[@]}"; do
        seconds=$(incremental_build "${SMALL[$i]}" "$run")
        INCR[$i]+="$seconds "
        printf '  edit one tool, run %d    %-18s %6.2f s\n' "$run" "${LABELS[$i]}" "$seconds"
    done
done

declare -a BIGT
if ((BIG > 0)); then
    generate_all "$BIG"
    read -r -a LARGE <<<"$(crates "$BIG")"
    for i in "${!LARGE[@]}"; do
        BIGT[$i]=$(clean_build "${LARGE[$i]}")
        printf '  clean %d tools          %-18s %6.2f s\n' "$BIG" "${LABELS[$i]}" "${BIGT[$i]}"
    done
fi

echo
printf '%-40s %8s %8s %8s %8s %10s\n' "seconds (median)" "#[tool]" "serde" "+schemars" "/serde" "/+schemars"
# shellcheck disable=SC2086 # the times are space-separated lists
row "clean build, 100 tools ($RUNS runs)" "$(median ${CLEAN[0]})" "$(median ${CLEAN[1]})" "$(median ${CLEAN[2]})"
# shellcheck disable=SC2086
row "rebuild after editing one tool ($RUNS runs)" "$(median ${INCR[0]})" "$(median ${INCR[1]})" "$(median ${INCR[2]})"
if ((BIG > 0)); then
    row "clean build, $BIG tools (1 run)" "${BIGT[0]}" "${BIGT[1]}" "${BIGT[2]}"
fi
