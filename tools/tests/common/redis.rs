//! A `redis-server` of one test on a free loopback port, stopped when dropped (even when the
//! test fails). `scripts/test` installs `redis-server` where it is missing.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The server, killed when dropped.
pub struct Redis {
    child: Child,
    /// Its URL: `redis://127.0.0.1:PORT/0`.
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Redis {
    /// Starts one and waits until it answers `PING`.
    pub fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", ""])
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot start redis-server ({error}): run scripts/test, which installs it, or `apt-get install -y redis-server`"
                )
            });
        let redis = Self {
            child,
            url: format!("redis://127.0.0.1:{port}/0"),
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !pong(port) {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        redis
    }
}

fn pong(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut answer = [0u8; 5];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut answer).is_ok()
        && &answer == b"+PONG"
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
