//! The HTML catalog in a real browser: `toolreg catalog --format html` of the reference tools,
//! opened in headless Chromium (Debian's `/usr/bin/chromium`) and driven through the DevTools
//! protocol. Every tool renders; typing in the search box, the permission filter and the
//! category and annotation filters hide what they should; a phone-wide window needs no sideways
//! scroll.
//!
//! `UPDATE_CATALOG_PNG=1 cargo test -p tool-registry-tools --test tools catalog_page::` also
//! writes the screenshots `docs/catalog.png` (1280x900) and `docs/catalog-phone.png` (375 wide).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use headless_chrome::protocol::cdp::{Emulation, Page};
use headless_chrome::{Browser, Tab};
use serde_json::Value;

use crate::common;
use common::{toolreg_command, workspace};

const CHROMIUM: &str = "/usr/bin/chromium";

#[test]
fn the_catalog_page_renders_every_tool_and_filters_them() {
    let dir = workspace();
    let page = dir.path().join("catalog.html");
    std::fs::write(&page, toolreg(dir.path(), &["catalog", "--format", "html"])).unwrap();
    let listed: Vec<String> = json(&toolreg(dir.path(), &["list", "--format", "json"]))
        .as_array()
        .expect("a list")
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();
    let catalog = json(&toolreg(dir.path(), &["catalog", "--format", "json"]));
    let tools = catalog["tools"].as_array().expect("tools");
    let total = listed.len();

    let chromium = Chromium::launch(dir.path());
    let browser = Browser::connect_with_timeout(chromium.devtools_url(), Duration::from_secs(60))
        .expect("connect to Chromium");
    let tab = browser.new_tab().expect("a tab");
    tab.set_default_timeout(Duration::from_secs(30));
    viewport(&tab, 1280, 900, false);
    let url = format!("file://{}", page.display());
    tab.navigate_to(&url)
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    loaded(&tab);

    // Every tool renders, in the order `toolreg list` gives, each at its own anchor.
    assert_eq!(visible(&tab), listed);
    for name in &listed {
        let id = eval(
            &tab,
            &format!("document.getElementById('tool-{name}') !== null"),
        );
        assert_eq!(id, true, "no #tool-{name}");
    }
    assert_eq!(count(&tab), format!("{total} tools"));
    let toc = eval(
        &tab,
        "document.querySelectorAll('#toc li:not([hidden]) a').length",
    );
    assert_eq!(toc, total);

    // `/` focuses the search box without typing into it; what is typed filters as it goes.
    tab.press_key("/").unwrap();
    assert_eq!(eval(&tab, "document.activeElement.id"), "q");
    let term = "recurring";
    tab.type_str(term).unwrap();
    assert_eq!(eval(&tab, "document.getElementById('q').value"), term);
    let expected = names_where(tools, |tool| haystack(tool).contains(term));
    assert!(
        !expected.is_empty() && expected.len() < total,
        "`{term}` should pick some tools: {expected:?}"
    );
    assert!(expected.contains(&"scheduler.add_job".to_owned()));
    assert_eq!(visible(&tab), expected);
    assert_eq!(count(&tab), format!("{} of {total} tools", expected.len()));
    assert_eq!(
        eval(
            &tab,
            "document.querySelectorAll('#toc li:not([hidden])').length"
        ),
        expected.len()
    );

    // Escape clears it.
    tab.press_key("Escape").unwrap();
    assert_eq!(eval(&tab, "document.getElementById('q').value"), "");
    assert_eq!(visible(&tab), listed);

    // The permission filter.
    choose(&tab, "permission", "admin");
    let admins = names_where(tools, |tool| tool["metadata"]["permission"] == "admin");
    assert!(!admins.is_empty() && admins.len() < total, "{admins:?}");
    assert_eq!(visible(&tab), admins);
    assert_eq!(count(&tab), format!("{} of {total} tools", admins.len()));
    choose(&tab, "permission", "");

    // The category filter, then the annotation filter on top of it.
    choose(&tab, "category", "files");
    let files = names_where(tools, |tool| tool["metadata"]["category"] == "files");
    assert!(!files.is_empty() && files.len() < total, "{files:?}");
    assert_eq!(visible(&tab), files);
    choose(&tab, "annotations", "read_only");
    let read_only_files = names_where(tools, |tool| {
        tool["metadata"]["category"] == "files" && tool["annotations"]["read_only"] == true
    });
    assert!(
        !read_only_files.is_empty() && read_only_files.len() < files.len(),
        "{read_only_files:?}"
    );
    assert_eq!(visible(&tab), read_only_files);
    choose(&tab, "category", "");
    let read_only = names_where(tools, |tool| tool["annotations"]["read_only"] == true);
    assert!(read_only.len() > read_only_files.len(), "{read_only:?}");
    assert_eq!(visible(&tab), read_only);
    choose(&tab, "annotations", "");
    assert_eq!(visible(&tab), listed);

    // Nothing matches: the empty state, and its button shows every tool again.
    tab.press_key("/").unwrap();
    tab.type_str("zzzz").unwrap();
    assert_eq!(visible(&tab), Vec::<String>::new());
    assert_eq!(count(&tab), format!("0 of {total} tools"));
    assert_eq!(eval(&tab, "document.getElementById('empty').hidden"), false);
    eval(&tab, "(document.getElementById('reset').click(), true)");
    assert_eq!(visible(&tab), listed);
    assert_eq!(eval(&tab, "document.getElementById('empty').hidden"), true);
    tab.press_key("Escape").unwrap();

    let screenshots = std::env::var_os("UPDATE_CATALOG_PNG").is_some();
    if screenshots {
        let top = eval(&tab, "window.scrollTo(0, 0), window.scrollY");
        assert_eq!(top, 0);
        save_screenshot(&tab, "catalog.png");
    }

    // On a phone: one column, nothing wider than the screen, every tool still there.
    viewport(&tab, 375, 812, true);
    tab.reload(true, None)
        .unwrap()
        .wait_until_navigated()
        .unwrap();
    loaded(&tab);
    assert_eq!(visible(&tab), listed);
    let overflow = eval(
        &tab,
        "document.documentElement.scrollWidth - document.documentElement.clientWidth",
    );
    assert_eq!(overflow, 0, "the page scrolls sideways at 375px");
    assert_eq!(eval(&tab, "document.getElementById('toc').open"), false);
    if screenshots {
        save_screenshot(&tab, "catalog-phone.png");
    }

    // Dark: the colours follow the system's choice.
    let light = eval(&tab, "getComputedStyle(document.body).backgroundColor");
    tab.call_method(Emulation::SetEmulatedMedia {
        media: None,
        features: Some(vec![Emulation::MediaFeature {
            name: "prefers-color-scheme".into(),
            value: "dark".into(),
        }]),
    })
    .unwrap();
    let dark = eval(&tab, "getComputedStyle(document.body).backgroundColor");
    assert_ne!(light, dark);
}

/// The names of the catalog's tools that `keep` keeps, in catalog order.
fn names_where(tools: &[Value], keep: impl Fn(&Value) -> bool) -> Vec<String> {
    tools
        .iter()
        .filter(|tool| keep(tool))
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

/// What the page's search looks in: name, description and tags.
fn haystack(tool: &Value) -> String {
    let mut text = format!("{} {}", tool["name"], tool["description"]);
    for tag in tool["metadata"]["tags"].as_array().into_iter().flatten() {
        text.push(' ');
        text.push_str(tag.as_str().unwrap_or_default());
    }
    text.to_lowercase()
}

/// Waits until the page is parsed and its script has run: a navigation can report done while
/// the document is still being read.
fn loaded(tab: &Tab) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while eval(tab, "document.readyState") != "complete" {
        assert!(
            std::time::Instant::now() < deadline,
            "the page never finished loading"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The names of the tool cards a person sees.
fn visible(tab: &Tab) -> Vec<String> {
    let names = eval(
        tab,
        "Array.from(document.querySelectorAll('article.tool'))\
         .filter(card => card.offsetParent !== null)\
         .map(card => card.querySelector('.tool-name').textContent)",
    );
    serde_json::from_value(names).expect("a list of names")
}

fn count(tab: &Tab) -> Value {
    eval(tab, "document.getElementById('count').textContent")
}

/// Picks `value` in the filter over `key`, as a person choosing an option does.
fn choose(tab: &Tab, key: &str, value: &str) {
    let chosen = eval(
        tab,
        &format!(
            "(() => {{ const select = document.querySelector('select[data-key={key}]');\
             select.value = '{value}';\
             select.dispatchEvent(new Event('change', {{ bubbles: true }}));\
             return select.value; }})()"
        ),
    );
    assert_eq!(chosen, value, "the {key} filter has no option `{value}`");
}

/// The value of a JavaScript expression, passed through JSON.
fn eval(tab: &Tab, expression: &str) -> Value {
    let result = tab
        .evaluate(&format!("JSON.stringify(({expression}))"), false)
        .unwrap_or_else(|e| panic!("evaluate {expression}: {e}"));
    match result.value {
        Some(Value::String(json)) => serde_json::from_str(&json).expect("JSON"),
        _ => panic!("{expression} failed: {:?}", result.description),
    }
}

fn viewport(tab: &Tab, width: u32, height: u32, mobile: bool) {
    tab.call_method(Emulation::SetDeviceMetricsOverride {
        width,
        height,
        device_scale_factor: 1.0,
        mobile,
        scale: None,
        screen_width: None,
        screen_height: None,
        position_x: None,
        position_y: None,
        dont_set_visible_size: None,
        screen_orientation: None,
        viewport: None,
        display_feature: None,
        device_posture: None,
    })
    .expect("set the viewport");
}

fn save_screenshot(tab: &Tab, file: &str) {
    let png = tab
        .capture_screenshot(Page::CaptureScreenshotFormatOption::Png, None, None, true)
        .expect("a screenshot");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(file);
    std::fs::write(&path, png).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn toolreg(root: &Path, args: &[&str]) -> Vec<u8> {
    let output = toolreg_command(root, args).output().expect("toolreg runs");
    assert!(output.status.success(), "toolreg {args:?}: {output:?}");
    output.stdout
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("JSON on stdout")
}

/// A headless Chromium with a fresh profile, killed (with every process it started) when
/// dropped, so that a failing assertion never leaves a browser behind.
struct Chromium {
    child: Child,
    profile: tempfile::TempDir,
    log: PathBuf,
}

impl Chromium {
    fn launch(dir: &Path) -> Chromium {
        assert!(
            Path::new(CHROMIUM).exists(),
            "{CHROMIUM} is missing: install it with `apt-get install -y chromium` \
             (or run `scripts/test`, which installs it and runs every test)"
        );
        let profile = tempfile::tempdir().expect("a profile folder");
        let log = dir.join("chromium.log");
        let mut command = Command::new(CHROMIUM);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&log).expect("a log file"));
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command.spawn().expect("start Chromium");
        Chromium {
            child,
            profile,
            log,
        }
    }

    /// The browser's DevTools address, from the `DevToolsActivePort` file Chromium writes into
    /// its profile once it listens (the port it chose, then the browser's path).
    fn devtools_url(&self) -> String {
        let file = self.profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                return format!("ws://127.0.0.1:{port}{path}");
            }
            let log = || std::fs::read_to_string(&self.log).unwrap_or_default();
            assert!(
                Instant::now() < deadline,
                "Chromium did not open its DevTools port in 30s:\n{}",
                log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        // The browser's renderers and helpers share its process group.
        #[cfg(unix)]
        if let Some(group) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
