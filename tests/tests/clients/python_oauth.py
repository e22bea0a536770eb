"""A protected MCP server driven by the official MCP Python SDK 2.3's OAuth client: it is refused
`401`, follows the server's protected resource metadata to the authorization server, registers
itself, is sent through the authorization (whose redirect it reads, as a headless browser
would), exchanges the code with PKCE for a token for this server, and lists the tools.

Usage: python_oauth.py URL. Prints the challenge it met, then the tools it sees (one line,
comma-separated), then "all checks passed".
"""

import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

URL = sys.argv[1]
REDIRECT = "http://127.0.0.1:9/callback"


class Memory:
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def main():
    async with httpx2.AsyncClient(timeout=10) as plain:
        refused = await plain.post(URL, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        challenge = refused.headers.get("www-authenticate", "")
        if refused.status_code != 401 or "resource_metadata=" not in challenge:
            raise SystemExit(f"FAILED: no 401 challenge: {refused.status_code} {challenge}")
        print(f"challenge: {challenge}")

    redirected = {}

    async def redirect_handler(url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False) as browser:
            answer = await browser.get(url)
        location = httpx2.URL(answer.headers["location"])
        redirected["code"] = location.params["code"]
        redirected["state"] = location.params.get("state")
        redirected["iss"] = location.params.get("iss")

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(**redirected)

    provider = OAuthClientProvider(
        server_url=URL,
        client_metadata=OAuthClientMetadata(
            client_name="python-sdk-oauth",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=Memory(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
        async with Client(streamable_http_client(URL, http_client=http)) as client:
            tools = await client.list_tools()
            print("tools: " + ",".join(sorted(tool.name for tool in tools.tools)))
    print("all checks passed")


anyio.run(main)
