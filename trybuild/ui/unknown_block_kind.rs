use tool_registry::content::Image;
use tool_registry::tool;

/// Take a picture.
#[tool(returns(image, hologram))]
fn picture() -> Image {
    Image::png(vec![0x89, b'P', b'N', b'G'])
}

fn main() {}
