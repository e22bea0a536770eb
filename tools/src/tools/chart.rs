//! `chart.*`: tools that answer with media, not only JSON. `chart.draw` draws a bar chart and
//! returns it as a PNG image with a summary of what it drew; `chart.export` returns the values
//! as a CSV file and a link to the chart drawn from them. Both declare output schemas, derived
//! from their summaries' types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_registry::content::{Content, File, Image, ResourceLink};
use tool_registry::{ToolError, tool};

use crate::error::{failed, invalid};

/// The most bars a chart has.
pub const MAX_BARS: usize = 64;

/// Pixels per bar, gap included.
const BAR_WIDTH: u32 = 12;

/// The chart's height in pixels.
const HEIGHT: u32 = 96;

/// What `chart.draw` drew.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Drawn {
    /// The image's width in pixels.
    pub width: u32,
    /// The image's height in pixels.
    pub height: u32,
    /// How many bars it shows.
    pub bars: usize,
    /// The value of the tallest bar.
    pub max: f64,
}

/// What `chart.export` exported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Exported {
    /// The CSV file's name.
    pub file: String,
    /// How many rows of values it holds.
    pub rows: usize,
    /// Its size in bytes.
    pub bytes: usize,
}

/// Draw a bar chart of `values` and return it as a PNG image, with its size and scale.
#[tool(
    name = "chart.draw",
    version = "1.0.0",
    category = "charts",
    tags(chart, image),
    returns(image),
    read_only,
    idempotent,
    open_world = false
)]
pub fn draw(
    #[arg(desc = "The bars' heights: 1 to 64 numbers, none negative")] values: Vec<f64>,
) -> Result<Content<Drawn>, ToolError> {
    let max = check_values(&values)?;
    let width = BAR_WIDTH * values.len() as u32;
    let png = bar_chart(&values, max, width)?;
    let drawn = Drawn {
        width,
        height: HEIGHT,
        bars: values.len(),
        max,
    };
    Ok(Content::value(drawn).image(Image::png(png)))
}

/// Export `values` as a CSV file named `<name>.csv`, with a link to the chart `chart.draw`
/// draws from them.
#[tool(
    name = "chart.export",
    version = "1.0.0",
    category = "charts",
    tags(chart, file),
    returns(file, resource_link),
    read_only,
    idempotent,
    open_world = false
)]
pub fn export(
    #[arg(desc = "The file's name without extension: letters, digits, `_` and `-`")] name: String,
    #[arg(desc = "The values: 1 to 64 numbers, none negative")] values: Vec<f64>,
) -> Result<Content<Exported>, ToolError> {
    check_name(&name)?;
    check_values(&values)?;
    let mut csv = String::from("index,value\n");
    for (index, value) in values.iter().enumerate() {
        csv.push_str(&format!("{index},{value}\n"));
    }
    let file = format!("{name}.csv");
    let exported = Exported {
        file: file.clone(),
        rows: values.len(),
        bytes: csv.len(),
    };
    let link = ResourceLink::new(format!("chart://{name}.png"), format!("{name}.png"))
        .with_description("the bar chart of these values, as `chart.draw` draws it")
        .with_mime_type("image/png");
    Ok(Content::value(exported)
        .file(File::new(file, csv.into_bytes()))
        .link(link))
}

/// The values' maximum, after checking there are 1 to [`MAX_BARS`] finite, non-negative ones.
fn check_values(values: &[f64]) -> Result<f64, ToolError> {
    if values.is_empty() || values.len() > MAX_BARS {
        return Err(invalid(
            "values",
            format!("give 1 to {MAX_BARS} values, not {}", values.len()),
        ));
    }
    if let Some(at) = values.iter().position(|v| !v.is_finite() || *v < 0.0) {
        return Err(invalid(
            &format!("values[{at}]"),
            "a bar's height is a finite number, 0 or more",
        ));
    }
    Ok(values.iter().copied().fold(0.0, f64::max))
}

/// A file name of 1 to 64 letters, digits, `_` and `-`.
fn check_name(name: &str) -> Result<(), ToolError> {
    let fits = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if fits {
        Ok(())
    } else {
        Err(invalid(
            "name",
            "use 1 to 64 letters, digits, `_` and `-`",
        ))
    }
}

/// The PNG of a bar chart: dark bars on white, each `BAR_WIDTH` pixels wide with a gap.
fn bar_chart(values: &[f64], max: f64, width: u32) -> Result<Vec<u8>, ToolError> {
    let mut pixels = vec![255u8; (width * HEIGHT * 3) as usize];
    for (bar, value) in values.iter().enumerate() {
        let tall = if max > 0.0 {
            ((value / max) * f64::from(HEIGHT - 4)).round() as u32
        } else {
            0
        };
        for y in HEIGHT - tall..HEIGHT {
            for x in 1..BAR_WIDTH - 1 {
                let at = ((y * width + bar as u32 * BAR_WIDTH + x) * 3) as usize;
                pixels[at..at + 3].copy_from_slice(&[0x2b, 0x4c, 0x7e]);
            }
        }
    }
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, width, HEIGHT);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder
        .write_header()
        .map_err(|e| failed(format!("cannot encode the chart: {e}")))?;
    writer
        .write_image_data(&pixels)
        .map_err(|e| failed(format!("cannot encode the chart: {e}")))?;
    writer
        .finish()
        .map_err(|e| failed(format!("cannot encode the chart: {e}")))?;
    Ok(png)
}
