"""An MCP server written with the official MCP Python SDK's `MCPServer`, on stdio, for
`tools/tests/mcp_python.rs` to mount with `McpModule`.

    python server.py PICTURE

- `picture(name)` answers a structured value, the image in the file PICTURE (a PNG) and a
  link to where the picture lives, as the SDK's own types write them;
- `numbers(n)` answers a list, which the SDK wraps as `{"result": [...]}` in its output schema
  and structured content (without a marker of ours);
- `liar(case, size)` declares an output schema like any tool, then answers what the `case`
  names: base64 that is not, an image whose bytes are not its MIME type, `file:` and
  `javascript:` links, a value that breaks the schema, an image of `size` bytes (`big` or
  `huge`), and for `fine` an honest answer.
"""

import base64
import json
import pathlib
import sys
from typing import Annotated, Any

import mcp_types as types
from mcp.server.mcpserver import Context, Image, MCPServer
from pydantic import BaseModel

PICTURE = pathlib.Path(sys.argv[1]).read_bytes()
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class Picture(BaseModel):
    """What `picture` answers besides the image."""

    name: str
    bytes: int
    source: str


class Count(BaseModel):
    """What `liar` promises to answer."""

    n: int


class Pictures(MCPServer):
    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None):
        # The liar's answers skip the SDK's own check of its output, as a broken server would.
        if name == "liar":
            return lie(arguments.get("case", ""), int(arguments.get("size", 0)))
        return await super().call_tool(name, arguments, context)


server = Pictures("pictures")


@server.tool()
def picture(name: str) -> Annotated[types.CallToolResult, Picture]:
    """A picture, its size and where it comes from."""
    value = Picture(name=name, bytes=len(PICTURE), source=f"https://example.com/pictures/{name}.png")
    link = types.ResourceLink(uri=value.source, name=f"{name}.png", mime_type="image/png", size=len(PICTURE))
    return types.CallToolResult(
        content=[
            types.TextContent(text=value.model_dump_json()),
            Image(data=PICTURE, format="png").to_image_content(),
            link,
        ],
        structured_content=value.model_dump(mode="json"),
    )


@server.tool()
def numbers(n: int) -> list[int]:
    """The numbers from 0 to n - 1."""
    return list(range(n))


@server.tool()
def liar(case: str, size: int = 0) -> Annotated[types.CallToolResult, Count]:
    """Answers what `case` names (see `Pictures.call_tool`)."""
    raise AssertionError("answered by Pictures.call_tool")


def image(data: str, mime_type: str = "image/png") -> types.ImageContent:
    return types.ImageContent(data=data, mime_type=mime_type)


def lie(case: str, size: int) -> types.CallToolResult:
    value = {"n": 1}
    blocks: list[types.ContentBlock] = []
    if case == "bad_base64":
        blocks = [image("not base64 at all!")]
    elif case == "not_png":
        blocks = [image(base64.b64encode(b"GIF89a\x01\x00\x01\x00").decode())]
    elif case == "file_link":
        blocks = [types.ResourceLink(uri="file:///etc/shadow", name="shadow")]
    elif case == "javascript_link":
        blocks = [types.ResourceLink(uri="javascript:alert(1)", name="click")]
    elif case == "wrong_value":
        value = {"n": "many"}
    elif case in ("big", "huge"):
        blocks = [image(base64.b64encode(PNG_SIGNATURE + bytes(max(size - 8, 0))).decode())]
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(value)), *blocks], structured_content=value)


if __name__ == "__main__":
    server.run("stdio")
