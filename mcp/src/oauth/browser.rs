//! The person who authorizes: a [`Browser`] sends them to the authorization URL and gives back
//! the redirect; [`LoopbackBrowser`] prints or opens the URL and listens on the loopback
//! redirect, as a command line does.

use std::time::Duration;

use futures::future::BoxFuture;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long [`LoopbackBrowser`] waits for the authorization server to send the person back.
pub const AUTHORIZATION_WAIT: Duration = Duration::from_secs(300);

/// Sends a person (or an agent acting for one) to an authorization URL and gives back the URL
/// the authorization server redirected to: the code, the state and, where the server sends
/// it, the issuer (RFC 9207), which are checked before the code is exchanged.
pub trait Browser: Send + Sync + 'static {
    /// Visits `url`; the redirect URL it ended on, or why there is none.
    fn visit(&self, url: String) -> BoxFuture<'static, Result<String, String>>;
}

/// The command line's browser: prints the authorization URL (and opens it with `xdg-open` or
/// `open` where asked), then listens on the redirect URI's loopback port for the person to be
/// sent back, at most [`AUTHORIZATION_WAIT`]. The redirect URI must be `http://127.0.0.1:PORT/…`
/// or `http://localhost:PORT/…`.
#[derive(Clone, Debug, Default)]
pub struct LoopbackBrowser {
    open: bool,
}

impl LoopbackBrowser {
    /// Prints the URL only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also opens the URL in the desktop's browser.
    pub fn opening(mut self) -> Self {
        self.open = true;
        self
    }
}

impl Browser for LoopbackBrowser {
    fn visit(&self, url: String) -> BoxFuture<'static, Result<String, String>> {
        let open = self.open;
        Box::pin(async move {
            let redirect = redirect_of(&url)?;
            let (port, path) = loopback_target(&redirect)?;
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
                .await
                .map_err(|error| {
                    format!("cannot listen on 127.0.0.1:{port} for the redirect: {error}")
                })?;
            eprintln!("To authorize, open this URL in a browser:\n\n  {url}\n");
            if open {
                let opener = if cfg!(target_os = "macos") {
                    "open"
                } else {
                    "xdg-open"
                };
                let _ = std::process::Command::new(opener)
                    .arg(&url)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn();
            }
            tokio::time::timeout(AUTHORIZATION_WAIT, wait_for_redirect(listener, &path))
                .await
                .map_err(|_| {
                    format!(
                        "no one came back to {redirect} within {} s",
                        AUTHORIZATION_WAIT.as_secs()
                    )
                })?
                .map(|query| format!("http://127.0.0.1:{port}{path}?{query}"))
        })
    }
}

/// The `redirect_uri` of an authorization URL.
pub(super) fn redirect_of(url: &str) -> Result<String, String> {
    let parsed = reqwest::Url::parse(url).map_err(|error| format!("{url}: {error}"))?;
    parsed
        .query_pairs()
        .find(|(key, _)| key == "redirect_uri")
        .map(|(_, value)| value.into_owned())
        .ok_or_else(|| "the authorization URL names no redirect_uri".to_owned())
}

/// The port and path of a loopback redirect URI.
pub(super) fn loopback_target(redirect: &str) -> Result<(u16, String), String> {
    let parsed = reqwest::Url::parse(redirect).map_err(|error| format!("{redirect}: {error}"))?;
    let loopback = matches!(parsed.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    match (parsed.scheme(), loopback, parsed.port()) {
        ("http", true, Some(port)) => Ok((port, parsed.path().to_owned())),
        _ => Err(format!(
            "the redirect URI {redirect} is not a loopback address with a port; use http://127.0.0.1:PORT/callback"
        )),
    }
}

/// Answers requests on `listener` until one comes to `path` with a query; that query.
pub(super) async fn wait_for_redirect(
    listener: tokio::net::TcpListener,
    path: &str,
) -> Result<String, String> {
    loop {
        let (mut stream, _) = listener
            .accept()
            .await
            .map_err(|error| format!("the redirect listener failed: {error}"))?;
        let mut head = vec![0u8; 8192];
        let mut read = 0;
        while read < head.len() && !head[..read].windows(4).any(|w| w == b"\r\n\r\n") {
            match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut head[read..]))
                .await
            {
                Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
                Ok(Ok(n)) => read += n,
            }
        }
        let head = String::from_utf8_lossy(&head[..read]);
        let target = head
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_default();
        let (at, query) = target.split_once('?').unwrap_or((target, ""));
        let ours = at == path && !query.is_empty();
        let page = if ours {
            "Authorized. You may close this window."
        } else {
            "Not found."
        };
        let status = if ours { "200 OK" } else { "404 Not Found" };
        let _ = stream
            .write_all(
                format!(
                    "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                    page.len()
                )
                .as_bytes(),
            )
            .await;
        if ours {
            return Ok(query.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loopback_redirect_must_be_a_loopback_address_with_a_port() {
        assert_eq!(
            loopback_target("http://127.0.0.1:8914/callback").unwrap(),
            (8914, "/callback".to_owned())
        );
        for refused in [
            "https://127.0.0.1:8914/callback",
            "http://example.com:8914/callback",
            "http://127.0.0.1/callback",
        ] {
            assert!(loopback_target(refused).is_err(), "{refused}");
        }
        let url =
            "https://as.example/authorize?client_id=x&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb";
        assert_eq!(redirect_of(url).unwrap(), "http://127.0.0.1:9/cb");
    }

    #[tokio::test]
    async fn the_loopback_browser_returns_the_query_of_the_redirect() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let waiting = tokio::spawn(async move { wait_for_redirect(listener, "/cb").await });
        let send = |target: &'static str| async move {
            let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap();
            stream
                .write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).await.unwrap();
            answer
        };
        assert!(send("/favicon.ico").await.starts_with("HTTP/1.1 404"));
        assert!(
            send("/cb?code=abc&state=xyz")
                .await
                .starts_with("HTTP/1.1 200")
        );
        assert_eq!(waiting.await.unwrap().unwrap(), "code=abc&state=xyz");
    }
}
